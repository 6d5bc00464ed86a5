/**
 * The mirror, one per replica, off the request path: it claims a due source under a lease, syncs it
 * to its end (renewing the lease each page) and sets when it is due again — its interval after a
 * success, a growing delay after a failure. The lease makes each sync one replica's. A replica runs
 * it in a thread of its own (`startMirrorThread`, mirror.thread.ts): a bootstrap of thousands of
 * entries is minutes of CPU, which on the replica's event loop would stretch every request's answer.
 */
import { Worker } from "node:worker_threads";
import type { MirrorConfig } from "../config.ts";
import { type Db, type Dialect, shareWrites } from "../db/client.ts";
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

/**
 * The door as a source's sync uses it: with the source's credential, every GET carries
 * `Authorization: Bearer <credential>` (the door sends it to the source's own host only).
 */
export function sourceOutbound(outbound: Outbound, credential: string | null): Outbound {
  if (!credential) return outbound;
  const authorization = `Bearer ${credential}`;
  return {
    ...outbound,
    get: (url, options) => outbound.get(url, { ...options, headers: { ...options?.headers, authorization } }),
  };
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
      {
        db,
        outbound: sourceOutbound(options.outbound, source.row.credential),
        announce: options.announce,
        renew,
        stopped,
        onEntry: options.onEntry,
      },
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

/** What the mirror's thread is started with: plain data, as a thread's start takes. */
export interface ThreadData {
  databaseUrl: string;
  dialect: Dialect;
  config: MirrorConfig;
}

/** Messages to the mirror's thread: a write turn granted, a kick, the stop. */
export type ToThread = { kind: "granted"; id: number } | { kind: "kick" } | { kind: "stop" };

/** Messages from it: a write turn asked for or ended, what it committed, a log line, stopped. */
export type FromThread =
  | { kind: "turn"; id: number }
  | { kind: "release"; id: number }
  | { kind: "announce"; notes: FeedNote[] }
  | { kind: "log"; line: Record<string, unknown> }
  | { kind: "stopped" };

export interface ThreadOptions {
  /** The replica's own client: on SQLite the thread's writes take turns with its writes. */
  db: Db;
  databaseUrl: string;
  config: MirrorConfig;
  announce: MirrorOptions["announce"];
  log?: MirrorOptions["log"];
}

/** How long a thread that ended unasked waits before it is started again. */
const RESTART_MS = 5000;

/** The thread's module, beside this one: `.ts` when run from the sources (tsx), `.js` when built. */
const THREAD = new URL(`./mirror.thread${import.meta.url.endsWith(".ts") ? ".ts" : ".js"}`, import.meta.url);

/** The replica's mirror in a thread of its own (mirror.thread.ts), started again should it end unasked. */
export function startMirrorThread(options: ThreadOptions): Mirror {
  const { db, log } = options;
  const gate = shareWrites(db);
  let worker: Worker | null = null;
  let stopping = false;
  let restart: NodeJS.Timeout | null = null;
  /** The write turns the thread holds, by its ids: let go should it end holding one. */
  const held = new Map<number, () => void>();
  /** Announcements in the order the thread committed them. */
  let announcing = Promise.resolve();

  const start = () => {
    const thread = new Worker(THREAD, {
      workerData: {
        databaseUrl: options.databaseUrl,
        dialect: db.dialect,
        config: options.config,
      } satisfies ThreadData,
    });
    worker = thread;
    thread.on("message", (message: FromThread) => {
      if (message.kind === "turn") {
        if (!gate) return;
        void gate().then((release) => {
          // Granted after the thread ended: nobody holds it.
          if (worker !== thread) return release();
          held.set(message.id, release);
          thread.postMessage({ kind: "granted", id: message.id } satisfies ToThread);
        });
      } else if (message.kind === "release") {
        held.get(message.id)?.();
        held.delete(message.id);
      } else if (message.kind === "announce") {
        announcing = announcing
          .then(() => options.announce(message.notes))
          .catch((error) => log?.({ level: "error", msg: "mirror announce failed", error: String(error) }));
      } else if (message.kind === "log") {
        log?.(message.line);
      }
    });
    thread.on("error", (error) => log?.({ level: "error", msg: "mirror thread failed", error: String(error) }));
    thread.on("exit", (code) => {
      if (worker === thread) worker = null;
      for (const release of held.values()) release();
      held.clear();
      if (stopping) return;
      log?.({ level: "warn", msg: "mirror thread ended; starting it again", code, inMs: RESTART_MS });
      restart = setTimeout(start, RESTART_MS);
      restart.unref();
    });
  };
  start();
  return {
    kick() {
      worker?.postMessage({ kind: "kick" } satisfies ToThread);
    },
    async stop() {
      stopping = true;
      if (restart) clearTimeout(restart);
      const thread = worker;
      if (thread) {
        // The thread ends its run where it is (its position kept), then closes its connection.
        await new Promise<void>((resolve) => {
          thread.on("message", (message: FromThread) => message.kind === "stopped" && resolve());
          thread.once("exit", () => resolve());
          thread.postMessage({ kind: "stop" } satisfies ToThread);
        });
        await thread.terminate();
      }
      await announcing;
    },
  };
}
