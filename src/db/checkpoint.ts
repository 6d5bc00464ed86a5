/**
 * SQLite's WAL checkpoints, off the event loop, with a log that stays bounded.
 *
 * In WAL mode SQLite copies the log back into the database file (a checkpoint) inside the COMMIT
 * that takes the log past 1,000 pages, and better-sqlite3 runs COMMIT on the event loop: the copy
 * and its two fsyncs (log before, database after) stop every request. Measured under PATCHes at
 * saturation: 14 of 3,081 COMMITs took over 5 ms (up to 132 ms), 31% of all COMMIT time; with the
 * connection's own checkpoints off, the longest COMMIT was 8.5 ms.
 *
 * So the service's connection does none (`wal_autocheckpoint = 0`) and a worker thread with its own
 * connection runs a PASSIVE checkpoint every `intervalMs`: it never blocks the writer or the readers
 * and syncs as the connection's own checkpoints did. SQLite starts the log over when a write begins
 * while every frame of it has been copied. Between writes spaced out in time that happens by itself;
 * under writes that never pause it never does — the worker always copies a log that has grown
 * meanwhile, and an earlier attempt (reverted) saw the log reach 230 MB. Hence the bound: once a
 * checkpoint reports a log of `maxFrames` or more, the next write, in its turn on the connection
 * (db/sqlite.ts: nothing else runs on it meanwhile, and the event loop is free), waits for one
 * checkpoint of everything left, and then starts the log over. That wait is one copy of the frames
 * since the last checkpoint and its fsyncs, once per `maxFrames` pages (about 400 PATCHes) instead
 * of a full copy every 1,000 pages on the event loop.
 *
 * Should the worker fail, the connection checkpoints itself again (`onFailure`). A last checkpoint
 * runs when it stops.
 */
import { createRequire } from "node:module";
import { Worker } from "node:worker_threads";

/** The checkpoint thread's nice value: the mirror's thread's (mirror.thread.ts). */
const CHECKPOINT_NICE = 10;

/** The worker: plain CommonJS given as a string, so that it runs as is under tsx, jest and node. */
const WORKER = `
const { parentPort, workerData } = require("node:worker_threads");
// Background work gives way to requests (a thread's id is a pid to setpriority on Linux), as the
// mirror's thread does: a copy of a few thousand pages then waits for the request thread's turn.
try {
  const tid = Number(require("node:fs").readlinkSync("/proc/thread-self").split("/").pop());
  require("node:os").setPriority(tid, workerData.nice);
} catch {}
const Database = require(workerData.driver);
const db = new Database(workerData.path, { timeout: 5000 });
db.pragma("synchronous = NORMAL");
const checkpoint = (id) => {
  const [result] = db.pragma("wal_checkpoint(PASSIVE)");
  parentPort.postMessage({ id, log: result.log, checkpointed: result.checkpointed });
};
const timer = setInterval(() => checkpoint(0), workerData.intervalMs);
parentPort.on("message", (message) => {
  if (message.stop) {
    clearInterval(timer);
    try { checkpoint(0); } finally { db.close(); parentPort.postMessage({ stopped: true }); }
    return;
  }
  checkpoint(message.id);
});
parentPort.postMessage({ ready: true });
`;

interface Report {
  id?: number;
  log?: number;
  checkpointed?: number;
  ready?: boolean;
  stopped?: boolean;
}

export interface Checkpointer {
  /**
   * Called by a write in its turn on the connection, before it runs: when the log has outgrown the
   * bound, answers once a checkpoint has copied all of it (this write then starts it over).
   */
  beforeWrite(): Promise<void> | undefined;
  /** Stops the worker after a last checkpoint. */
  stop(): Promise<void>;
}

export interface CheckpointOptions {
  /** How often the worker checkpoints (default 250 ms). */
  intervalMs?: number;
  /** The log's length, in pages, past which the next write waits for it to be copied whole (default 10,000: 40 MB). */
  maxFrames?: number;
}

/**
 * Starts the checkpoint worker on the database at `path`; answers once it has opened its connection
 * (the caller then turns the connection's own checkpoints off), or null if it could not.
 */
export async function startCheckpointer(
  path: string,
  onFailure: (error: Error) => void,
  { intervalMs = 250, maxFrames = 10_000 }: CheckpointOptions = {},
): Promise<Checkpointer | null> {
  const driver = createRequire(import.meta.url).resolve("better-sqlite3");
  const worker = new Worker(WORKER, { eval: true, workerData: { path, driver, intervalMs, nice: CHECKPOINT_NICE } });
  const ready = await new Promise<boolean>((resolve) => {
    worker.once("message", (message: Report) => resolve(message.ready === true));
    worker.once("error", () => resolve(false));
    worker.once("exit", () => resolve(false));
  });
  if (!ready) {
    await worker.terminate();
    return null;
  }
  let failed = false;
  let stopping = false;
  /** The log has grown to `maxFrames` pages or more since it last started over. */
  let restartDue = false;
  let nextId = 1;
  const waiting = new Map<number, () => void>();
  const fail = (error: Error) => {
    if (stopping || failed) return;
    failed = true;
    for (const release of waiting.values()) release();
    waiting.clear();
    onFailure(error);
  };
  worker.on("message", (report: Report) => {
    if (report.log === undefined || report.checkpointed === undefined) return;
    const release = report.id ? waiting.get(report.id) : undefined;
    // A write waiting in its turn asked for this one: nothing was committed since it began, so if it
    // copied everything, that write starts the log over.
    restartDue = release ? report.checkpointed < report.log : report.log >= maxFrames;
    if (release) {
      waiting.delete(report.id as number);
      release();
    }
  });
  worker.on("error", fail);
  worker.on("exit", (code) => fail(new Error(`the checkpoint worker exited (${code})`)));
  // It must not keep the process alive on its own.
  worker.unref();
  return {
    beforeWrite() {
      if (!restartDue || failed || stopping) return undefined;
      const id = nextId++;
      return new Promise<void>((resolve) => {
        waiting.set(id, resolve);
        worker.postMessage({ id });
      });
    },
    async stop() {
      if (stopping) return;
      stopping = true;
      for (const release of waiting.values()) release();
      waiting.clear();
      if (!failed) {
        // Held while it finishes: unreferenced, the process could run out of work and end meanwhile.
        worker.ref();
        const stopped = new Promise<void>((resolve) => {
          worker.on("message", (report: Report) => report.stopped && resolve());
          worker.once("exit", () => resolve());
        });
        worker.postMessage({ stop: true });
        await stopped;
      }
      await worker.terminate();
    },
  };
}
