/**
 * The mirror, one per replica, off the request path: it claims a due source under a lease, syncs it
 * to its end (renewing the lease each page) and sets when it is due again — its interval after a
 * success, a growing delay after a failure. The lease makes each sync one replica's.
 */
import type { MirrorConfig } from "../config.ts";
import type { Db } from "../db/client.ts";
import type { FeedNote } from "../feed/feed.outbox.ts";
import type { Outbound } from "../outbound/outbound.ts";
import { followSource } from "./mirror.follow.ts";
import { retryDelaySeconds, sourcesOfEnv, validateSource } from "./mirror.rules.ts";
import {
  bootstrapSources,
  type Claim,
  type Claimed,
  claimSource,
  failRun,
  LeaseLost,
  releaseLease,
  renewLease,
} from "./mirror.store.ts";
import { type SyncDeps, syncSource } from "./mirror.sync.ts";

export interface MirrorOptions {
  db: Db;
  outbound: Outbound;
  config: MirrorConfig;
  announce: (notes: FeedNote[]) => Promise<void>;
  log?: (line: Record<string, unknown>) => void;
  onEntry?: SyncDeps["onEntry"];
}

export interface Mirror {
  /** Looks for a due source now, instead of at the next poll. */
  kick(): void;
  stop(): Promise<void>;
}

/** The sources MIRROR_SOURCES declares, validated as the API validates them; a bad one stops the start. */
export async function declareSources(db: Db, config: MirrorConfig): Promise<void> {
  const declared = sourcesOfEnv(config.sources).map((raw, i) => {
    const source = validateSource(raw);
    if (!source.ok) {
      throw new Error(`MIRROR_SOURCES[${i}]: ${source.errors.map((e) => `${e.path} ${e.message}`).join("; ")}`);
    }
    return source.value;
  });
  await bootstrapSources(db, declared);
}

/** Syncs one claimed source, recording a failure (with its retry time) rather than throwing. */
export async function runClaimed(
  options: MirrorOptions,
  source: Claimed,
  stopped: () => boolean,
): Promise<"done" | "failed" | "lost"> {
  const { db, config } = options;
  const claim: Claim = { id: source.row.id, token: source.token };
  const renew = async () => {
    if (!(await renewLease(db, claim.id, claim.token, new Date(Date.now() + config.leaseMs)))) throw new LeaseLost();
  };
  try {
    const sync = source.row.kind === "AGENT_REGISTRY" ? followSource : syncSource;
    const finished = await sync(
      { db, outbound: options.outbound, announce: options.announce, renew, stopped, onEntry: options.onEntry },
      claim,
      source.row,
    );
    // Stopped half-way (a shutdown): the position stays, and the next replica need not wait out the lease.
    if (!finished) await releaseLease(db, claim);
    return "done";
  } catch (error) {
    if (error instanceof LeaseLost) return "lost";
    const message = error instanceof Error ? error.message : String(error);
    const delay = retryDelaySeconds(source.row.failures + 1, source.row.intervalSeconds);
    options.log?.({ level: "warn", msg: "mirror sync failed", sourceId: source.row.sourceId, error: message });
    await failRun(db, claim, { message, next: new Date(Date.now() + delay * 1000) });
    return "failed";
  }
}

export function startMirror(options: MirrorOptions): Mirror {
  const { db, config } = options;
  let stopping = false;
  let running: Promise<void> | null = null;
  let timer: NodeJS.Timeout | null = null;
  /** Kicked while a poll ran: it may have looked before the ask, so another looks at once after it. */
  let kicked = false;

  const schedule = () => {
    if (stopping) return;
    timer = setTimeout(tick, config.pollMs);
    timer.unref();
  };
  const tick = () => {
    if (stopping) return;
    if (running) {
      kicked = true;
      return;
    }
    kicked = false;
    timer = null;
    running = (async () => {
      for (;;) {
        const now = new Date();
        const claimed = await claimSource(db, { now, leaseUntil: new Date(now.getTime() + config.leaseMs) });
        if (!claimed || stopping) return;
        await runClaimed(options, claimed, () => stopping);
      }
    })()
      .catch((error) => options.log?.({ level: "error", msg: "mirror poll failed", error: String(error) }))
      .finally(() => {
        running = null;
        if (kicked) tick();
        else schedule();
      });
  };
  schedule();
  return {
    kick() {
      if (timer) clearTimeout(timer);
      tick();
    },
    async stop() {
      stopping = true;
      if (timer) clearTimeout(timer);
      await running;
    },
  };
}
