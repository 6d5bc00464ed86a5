/**
 * The prober, one per replica, off the request path: it keeps the probed rows in step with the
 * profiles (following the event log for the providers that changed, and a full pass now and then),
 * claims due checks under a lease, runs each through the prober's door and records it. Every replica
 * runs it; the lease makes each check one replica's. A state change or a drift is published like a
 * write: the response cache forgets, the feed announces.
 */
import { setMaxListeners } from "node:events";
import type { HealthConfig } from "../config.ts";
import type { Db } from "../db/client.ts";
import { groupCommit } from "../db/group.commit.ts";
import { lastSeq, readEvents } from "../events/event.store.ts";
import type { Tail } from "../events/event.tail.ts";
import type { FeedNote } from "../feed/feed.outbox.ts";
import type { Outbound } from "../outbound/outbound.ts";
import { probe } from "./health.probe.ts";
import type { CheckResult } from "./health.rules.ts";
import {
  type CheckRecord,
  type Claimed,
  claimDue,
  pruneChecks,
  type Recorded,
  type RecordOptions,
  recordChecks,
  syncTargets,
} from "./health.store.ts";

/** The kinds after which a provider's probed target may have changed. */
const TARGET_KINDS = ["PROVIDER_CREATED", "PROVIDER_UPDATED", "LIFECYCLE_CHANGED"];
const TARGET_KIND_SET: ReadonlySet<string> = new Set(TARGET_KINDS);
/** How often every profile is compared with its probed row, beside following the log. */
const FULL_SYNC_MS = 10 * 60_000;
/** How often old results are pruned. */
const PRUNE_MS = 10 * 60_000;

/** Where new events are announced: the replica's tail of the log. */
type EventTail = Pick<Tail, "onAppended">;

/** What the prober needs of the metrics. */
export interface CheckMetrics {
  observeCheck(outcome: string, seconds: number): void;
}

export interface ProberOptions {
  db: Db;
  /** The prober's door (config.health.outbound), not the app's: probes never queue ahead of webhooks. */
  outbound: Outbound;
  config: HealthConfig;
  /** The registry's public base URL: the card it exports is what A2A drift compares against. */
  base: string;
  announce: (notes: FeedNote[]) => Promise<void>;
  log?: (line: Record<string, unknown>) => void;
  metrics?: CheckMetrics;
  tail?: EventTail | Promise<EventTail>;
  random?: () => number;
}

export interface ProberStats {
  checks: number;
  /** Checks whose claim had passed to another replica by the time they ended. */
  lost: number;
  inFlight: number;
}

export interface Prober {
  /** Looks for due checks (and changed profiles) now, instead of at the next poll. */
  kick(): void;
  stats(): ProberStats;
  /** Stops claiming, cuts the checks under way short (unrecorded) and waits for them to end. */
  stop(): Promise<void>;
}

/** How a finished check is recorded: on its own ("check now"), or in the worker's next batch. */
export type RecordCheck = (check: CheckRecord) => Promise<Recorded>;

/** What recording needs of the prober's options. */
function recordOptions(options: Pick<ProberOptions, "config" | "base" | "random">): RecordOptions {
  const { config } = options;
  return {
    confirmations: config.confirmations,
    intervalSeconds: config.intervalSeconds,
    maxBackoffSeconds: config.maxBackoffSeconds,
    driftReview: config.driftReview,
    base: options.base,
    ...(options.random ? { random: options.random } : {}),
  };
}

/** Runs one claimed check and records it: what the worker and "check now" share. */
export async function runCheck(
  options: Pick<ProberOptions, "db" | "outbound" | "config" | "base" | "metrics" | "random">,
  claimed: Claimed,
  stop?: AbortSignal,
  record: RecordCheck = async (check) => (await recordChecks(options.db, [check], recordOptions(options)))[0]!,
): Promise<(Recorded & { result: CheckResult }) | null> {
  const started = performance.now();
  const result = await probe(claimed.target, options.outbound, options.config.timeoutMs, stop);
  // Cut short by a shutdown: not a finding. The lease runs out and the check is made again.
  if (stop?.aborted) return null;
  options.metrics?.observeCheck(result.outcome, (performance.now() - started) / 1000);
  return { ...(await record({ claimed, result, at: new Date() })), result };
}

export function startProber(options: ProberOptions): Prober {
  const { db, config } = options;
  const log = options.log ?? (() => {});
  const stats: ProberStats = { checks: 0, lost: 0, inFlight: 0 };
  const inFlight = new Set<Promise<void>>();
  const claimBatch = Math.max(1, Math.floor(config.concurrency / 4));
  let stopped = false;
  const stopping = new AbortController();
  // Every check under way listens to it: up to HEALTH_CONCURRENCY listeners is no leak.
  setMaxListeners(0, stopping.signal);
  let running: Promise<void> | undefined;
  let wantSync = true;
  let wantPump = true;
  let seq: number | undefined;
  let lastFull = 0;
  let lastPrune = 0;

  const warn = (msg: string, error: unknown) =>
    log({ level: "warn", msg, error: (error as Error)?.message ?? String(error) });

  /** Brings the probed rows in step: every profile now and then, else those the log says changed. */
  async function sync(): Promise<void> {
    const now = new Date();
    if (seq === undefined || now.getTime() - lastFull > FULL_SYNC_MS) {
      const through = await lastSeq(db);
      await syncTargets(db, { now, intervalSeconds: config.intervalSeconds, ...random() });
      seq = through;
      lastFull = now.getTime();
    } else {
      const through = await lastSeq(db);
      const events = await readEvents(db, { after: seq, limit: 500, audience: { kind: "admin" }, kinds: TARGET_KINDS });
      const ids = [...new Set(events.flatMap((e) => (e.providerId === null ? [] : [e.providerId])))];
      if (ids.length > 0) await syncTargets(db, { now, intervalSeconds: config.intervalSeconds, providerIds: ids });
      // A short read saw every event up to the log's end as it was: the next one starts there.
      if (events.length === 500) {
        seq = (events.at(-1) as { seq: number }).seq;
        wantSync = true;
      } else seq = Math.max(through, events.at(-1)?.seq ?? 0);
      if (ids.length > 0) wantPump = true;
    }
    if (now.getTime() - lastPrune > PRUNE_MS) {
      lastPrune = now.getTime();
      await pruneChecks(db, { now, resultHours: config.resultHours });
    }
  }

  const random = () => (options.random ? { random: options.random } : {});

  function schedule(work: { sync?: boolean; pump?: boolean }): void {
    if (stopped) return;
    wantSync ||= work.sync ?? false;
    wantPump ||= work.pump ?? false;
    if (running) return;
    running = (async () => {
      while (!stopped && (wantSync || wantPump)) {
        if (wantSync) {
          wantSync = false;
          await sync().catch((error) => warn("health sync failed", error));
        }
        if (wantPump) {
          wantPump = false;
          await pump().catch((error) => warn("health claims failed", error));
        }
      }
    })().finally(() => {
      running = undefined;
    });
  }

  /** Claims as many due checks as there are free slots, and starts them. */
  async function pump(): Promise<void> {
    while (!stopped) {
      const free = config.concurrency - inFlight.size;
      if (free <= 0) return; // a check that ends schedules the next claim
      const now = new Date();
      const claimed = await claimDue(db, {
        now,
        leaseUntil: new Date(now.getTime() + config.leaseMs),
        limit: free,
        perHost: config.perHost,
      });
      for (const c of claimed) {
        const check: Promise<void> = run(c).finally(() => {
          inFlight.delete(check);
          stats.inFlight = inFlight.size;
          // Claims come in batches (each costs a scan of what is due), or at the next poll.
          if (config.concurrency - inFlight.size >= claimBatch || inFlight.size === 0) schedule({ pump: true });
        });
        inFlight.add(check);
      }
      stats.inFlight = inFlight.size;
      if (claimed.length < free) return;
    }
  }

  /** Checks that end together are recorded in one transaction, and their events announced at once. */
  const recording = recordOptions(options);
  const record: RecordCheck = groupCommit(async (batch: CheckRecord[]) => {
    const results = await recordChecks(db, batch, recording);
    const events = results.flatMap((r) => r.events);
    if (events.length > 0) {
      await options
        .announce([{ kind: "APPENDED", events }])
        .catch((error) => warn("health events not announced", error));
    }
    return results;
  });

  async function run(claimed: Claimed): Promise<void> {
    stats.checks += 1;
    try {
      const recorded = await runCheck(options, claimed, stopping.signal, record);
      if (!recorded) return;
      if (recorded.lost) stats.lost += 1;
    } catch (error) {
      // Not recorded: the lease runs out and the check is made again, by this replica or another.
      warn("health check not recorded", error);
    }
  }

  const timer = setInterval(() => schedule({ pump: true }), config.pollMs);
  timer.unref();
  let unsubscribe: (() => void) | undefined;
  void Promise.resolve(options.tail).then(
    (tail) => {
      if (!tail || stopped) return;
      // Only a change of a profile can change what is probed: the prober's own events do not.
      unsubscribe = tail.onAppended((events) => {
        if (events.some((e) => TARGET_KIND_SET.has(e.kind))) schedule({ sync: true });
      });
    },
    (error) => warn("the prober follows profile changes by its full passes only", error),
  );
  // The full pass comes round on the poll too.
  const fullTimer = setInterval(() => schedule({ sync: true }), FULL_SYNC_MS);
  fullTimer.unref();
  schedule({ sync: true, pump: true });

  return {
    kick: () => schedule({ sync: true, pump: true }),

    stats: () => ({ ...stats }),
    async stop() {
      stopped = true;
      stopping.abort();
      clearInterval(timer);
      clearInterval(fullTimer);
      unsubscribe?.();
      await running;
      await Promise.all([...inFlight]);
    },
  };
}
