/**
 * SQLite's WAL checkpoints, off the event loop (issue #7).
 *
 * In WAL mode SQLite copies the log back into the database file (a checkpoint) once the log passes
 * 1,000 pages, inside the COMMIT that crosses the mark — and better-sqlite3 runs COMMIT on the event
 * loop, which serves nothing meanwhile. At a million agents that copy lands on index pages all over
 * a multi-gigabyte file and ends with an fsync of it: in the benchmark's intake and PATCH cells
 * (~10,000 commits) COMMIT held the loop 2.18 s in all with the connection's own checkpoints and
 * 1.32 s with this worker's, and throughput rose 4-8%. Here the service's connection does no
 * checkpoints (`wal_autocheckpoint = 0`) and a worker thread with its own connection runs a PASSIVE
 * checkpoint every `intervalMs`: it never blocks the writer or the readers, syncs the log before
 * copying and the database after (as the connection's own checkpoints did), and the writer starts
 * the log over once it has all been copied. Should the worker fail, the connection checkpoints
 * itself again (`onFailure`). A last checkpoint runs when it stops.
 */
import { createRequire } from "node:module";
import { Worker } from "node:worker_threads";

/** The worker: plain CommonJS (it runs as given, whatever runs the service: tsx, jest, node). */
const WORKER = `
const { parentPort, workerData } = require("node:worker_threads");
const Database = require(workerData.driver);
const db = new Database(workerData.path, { timeout: 5000 });
db.pragma("synchronous = NORMAL");
const checkpoint = () => db.pragma("wal_checkpoint(PASSIVE)");
const timer = setInterval(checkpoint, workerData.intervalMs);
parentPort.on("message", (message) => {
  if (message !== "stop") return;
  clearInterval(timer);
  try { checkpoint(); } finally { db.close(); parentPort.postMessage("stopped"); }
});
parentPort.postMessage("ready");
`;

export interface Checkpointer {
  /** Stops the worker after a last checkpoint. */
  stop(): Promise<void>;
}

/**
 * Starts the checkpoint worker on the database at `path`; answers once it has opened its connection
 * (the caller then turns the connection's own checkpoints off), or null if it could not.
 */
export async function startCheckpointer(
  path: string,
  onFailure: (error: Error) => void,
  intervalMs = 250,
): Promise<Checkpointer | null> {
  const driver = createRequire(import.meta.url).resolve("better-sqlite3");
  const worker = new Worker(WORKER, { eval: true, workerData: { path, driver, intervalMs } });
  let stopping = false;
  const ready = await new Promise<boolean>((resolve) => {
    worker.once("message", (message) => resolve(message === "ready"));
    worker.once("error", () => resolve(false));
    worker.once("exit", () => resolve(false));
  });
  if (!ready) {
    await worker.terminate();
    return null;
  }
  const fail = (error: Error) => {
    if (!stopping) onFailure(error);
  };
  worker.on("error", fail);
  worker.on("exit", (code) => fail(new Error(`the checkpoint worker exited (${code})`)));
  // It must not keep the process alive on its own.
  worker.unref();
  return {
    async stop() {
      if (stopping) return;
      stopping = true;
      const stopped = new Promise<void>((resolve) => {
        worker.once("message", () => resolve());
        worker.once("exit", () => resolve());
      });
      worker.postMessage("stop");
      await stopped;
      await worker.terminate();
    },
  };
}
