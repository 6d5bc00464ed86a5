/**
 * The webhook worker, one per replica, off the request path: it fans new events out into
 * deliveries (webhook.store.ts `fanOut`), claims due deliveries under a lease, sends each through
 * the outbound door, signed, and records the attempt. Every replica runs it; the lease makes each
 * attempt one replica's, and an attempt whose replica died is taken by another once its lease has
 * run out. At least once: a receiver may get a message twice (same `webhook-id`), never none while
 * the subscription is enabled.
 */
import type { WebhooksConfig } from "../config.ts";
import type { Db } from "../db/client.ts";
import { groupCommit } from "../db/group.commit.ts";
import { type Outbound, OutboundError } from "../outbound/outbound.ts";
import { attemptOutcome, messageBody, nextAttemptAt, signedHeaders } from "./webhook.rules.ts";
import {
  type AttemptRecord,
  behindWebhooks,
  type Claimed,
  claimDue,
  fanOut,
  recordAttempt,
  recordAttempts,
} from "./webhook.store.ts";

/** Events turned into deliveries per subscription per transaction. */
const FAN_OUT_BATCH = 200;
/** How long new events wait for others before they are fanned out. */
const FAN_OUT_DELAY_MS = 10;
/** Subscriptions fanned out per pass; the next pass takes the rest. */
const FAN_OUT_WEBHOOKS = 100;

/** Where new events are announced (the event log's tail); the worker also polls. */
export interface EventTail {
  onAppended(listener: () => void): () => void;
}

export interface WebhookWorkerOptions {
  db: Db;
  outbound: Outbound;
  config: WebhooksConfig;
  log?: (line: Record<string, unknown>) => void;
  /** The replica's tail of the log (or its promise, as `feed.follow()` answers it): new events are fanned out at once. */
  tail?: EventTail | Promise<EventTail>;
  /** The randomness of the backoff's jitter (tests pin it). */
  random?: () => number;
}

/** What the worker has done since it started: what a benchmark or a test reads. */
export interface WebhookStats {
  attempts: number;
  delivered: number;
  retried: number;
  disabled: number;
  /** Attempts whose claim had passed to another replica by the time they ended. */
  lost: number;
  inFlight: number;
}

export interface WebhookWorker {
  /** Looks for new events and due deliveries now, instead of at the next poll. */
  kick(): void;
  stats(): WebhookStats;
  /** Stops polling and waits for the attempts under way (each bounded by the outbound deadline). */
  stop(): Promise<void>;
}

export function startWebhooks(options: WebhookWorkerOptions): WebhookWorker {
  const { db, outbound, config } = options;
  const log = options.log ?? (() => {});
  const stats: WebhookStats = { attempts: 0, delivered: 0, retried: 0, disabled: 0, lost: 0, inFlight: 0 };
  const inFlight = new Set<Promise<void>>();
  let stopped = false;
  let running: Promise<void> | undefined;
  let wantFanOut = false;
  let wantPump = false;

  const warn = (msg: string, error: unknown) =>
    log({ level: "warn", msg, error: (error as Error)?.message ?? String(error) });

  /**
   * Runs a pass now, or right after the one under way: what is asked — a fan-out (new events), claims
   * (the timer, an attempt that ended), or both. New events alone claim only when the fan-out made
   * deliveries: a write to a registry without subscriptions costs one read here, not a claim.
   */
  function schedule(work: { fanOut?: boolean; pump?: boolean }): void {
    if (stopped) return;
    wantFanOut ||= work.fanOut ?? false;
    wantPump ||= work.pump ?? false;
    if (running) return;
    running = (async () => {
      while (!stopped && (wantFanOut || wantPump)) {
        const fan = wantFanOut;
        wantFanOut = false;
        if (fan) {
          const made = await fanOutAll().catch((error) => {
            warn("webhook fan-out failed", error);
            return 0;
          });
          wantPump ||= made > 0;
        }
        if (!wantPump) continue;
        wantPump = false;
        await pump().catch((error) => warn("webhook claims failed", error));
      }
    })().finally(() => {
      running = undefined;
    });
  }

  /** Fans out the subscriptions behind the log; answers how many deliveries it made. */
  async function fanOutAll(): Promise<number> {
    const { ids } = await behindWebhooks(db, FAN_OUT_WEBHOOKS);
    let made = 0;
    for (const id of ids) {
      if (stopped) return made;
      made += await fanOut(db, id, { now: new Date(), maxAgeMs: config.maxAgeMs, batch: FAN_OUT_BATCH });
    }
    if (ids.length === FAN_OUT_WEBHOOKS) wantFanOut = true;
    return made;
  }

  /** Claims as many due deliveries as there are free slots, and starts their attempts. */
  async function pump(): Promise<void> {
    while (!stopped) {
      const free = config.concurrency - inFlight.size;
      if (free <= 0) return; // an attempt that ends schedules the next claim
      const now = new Date();
      const claimed = await claimDue(db, { now, leaseUntil: new Date(now.getTime() + config.leaseMs), limit: free });
      for (const c of claimed) {
        const attempt: Promise<void> = send(c).finally(() => {
          inFlight.delete(attempt);
          stats.inFlight = inFlight.size;
          schedule({ pump: true });
        });
        inFlight.add(attempt);
      }
      stats.inFlight = inFlight.size;
      if (claimed.length < free) return;
    }
  }

  async function send(claimed: Claimed): Promise<void> {
    stats.attempts += 1;
    const body = messageBody(claimed);
    const started = performance.now();
    let answer: { status: number } | { error: string };
    try {
      const response = await outbound.post(
        claimed.url,
        body,
        signedHeaders(claimed.secret, claimed.deliveryId, body, new Date()),
      );
      answer = { status: response.status };
    } catch (error) {
      answer = { error: error instanceof OutboundError ? error.message : "the request failed" };
    }
    const latencyMs = Math.round(performance.now() - started);
    const outcome = attemptOutcome(answer);
    const at = new Date();
    const next = outcome.ok ? null : nextAttemptAt(claimed.attempts, at, claimed.expiresAt, config, options.random);
    const record = { ...outcome, latencyMs, at, next };
    try {
      // Giving up writes more than the delivery: on its own. The rest wait for the next batch.
      const result =
        outcome.ok || next ? await recorded({ claimed, record }) : await recordAttempt(db, claimed, record);
      if (result === "delivered") stats.delivered += 1;
      else if (result === "retry") stats.retried += 1;
      else if (result === "lost") stats.lost += 1;
      else {
        stats.disabled += 1;
        log({ level: "warn", msg: "webhook disabled", deliveryId: claimed.deliveryId });
      }
    } catch (error) {
      // Not recorded: the lease runs out and the attempt is made again, by this replica or another.
      warn("webhook attempt not recorded", error);
    }
  }

  /** Attempts that end together are recorded in one transaction. */
  const recorded = groupCommit((batch: { claimed: Claimed; record: AttemptRecord }[]) => recordAttempts(db, batch));

  const timer =
    config.pollIntervalMs > 0
      ? setInterval(() => schedule({ fanOut: true, pump: true }), config.pollIntervalMs)
      : undefined;
  timer?.unref();
  let unsubscribe: (() => void) | undefined;
  void Promise.resolve(options.tail).then(
    (tail) => {
      if (!tail || stopped) return;
      // New events are fanned out a few milliseconds later, so that a burst of writes costs one
      // look at the subscriptions rather than one each.
      let soon: NodeJS.Timeout | undefined;
      const stop = tail.onAppended(() => {
        soon ??= setTimeout(() => {
          soon = undefined;
          schedule({ fanOut: true });
        }, FAN_OUT_DELAY_MS);
      });
      unsubscribe = () => {
        clearTimeout(soon);
        stop();
      };
    },
    (error) => warn("webhooks follow the log by polling only", error),
  );
  schedule({ fanOut: true, pump: true });

  return {
    kick: () => schedule({ fanOut: true, pump: true }),
    stats: () => ({ ...stats }),
    async stop() {
      stopped = true;
      clearInterval(timer);
      unsubscribe?.();
      await running;
      await Promise.all([...inFlight]);
    },
  };
}
