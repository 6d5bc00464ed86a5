/**
 * The mirror's thread (started by `startMirrorThread`, mirror.worker.ts): the same worker as a
 * replica's, over a database connection of its own. Fetching, mapping and writing thousands of
 * entries then runs on another core, with its own heap and garbage, while the replica's event loop
 * serves requests. What the sync commits is announced to the replica, which owns the feed and the
 * response cache; on SQLite, every write first takes a turn the replica grants, as its own writes do.
 */
import { readlinkSync } from "node:fs";
import { setPriority } from "node:os";
import { parentPort, workerData } from "node:worker_threads";
import { openDb } from "../db/client.ts";
import { createOutbound } from "../outbound/outbound.ts";
import { AT_ONCE } from "./mirror.sync.ts";
import { type FromThread, startMirror, type ThreadData, type ToThread } from "./mirror.worker.ts";

if (!parentPort) throw new Error("mirror.thread.ts runs as a worker thread (startMirrorThread)");
const port = parentPort;
const data = workerData as ThreadData;
/** Nice 10: a tenth of the core's time against a busy request thread, all of it when requests are idle. */
const THREAD_NICE = 10;
const send = (message: FromThread) => port.postMessage(message);

// Background work gives way: on Linux a thread has a nice value of its own (its id is a pid to
// setpriority), so on a core shared with the replica's event loop a request preempts the sync at once.
try {
  setPriority(Number(readlinkSync("/proc/thread-self").split("/").pop()), THREAD_NICE);
} catch {
  // Not Linux: the thread runs at the process's priority.
}

/** Write turns asked of the replica, by id, until it grants them. */
const asked = new Map<number, (release: () => void) => void>();
let nextTurn = 0;
const writes =
  data.dialect === "sqlite"
    ? () =>
        new Promise<() => void>((resolve) => {
          const id = nextTurn++;
          asked.set(id, resolve);
          send({ kind: "turn", id });
        })
    : undefined;

// Open first, so that the replica's grants reach the turns the connection asks for as it opens.
const started = (async () => {
  // PostgreSQL: a connection for each entry written at once, and one for the run's own bookkeeping.
  const db = await openDb(data.databaseUrl, { poolSize: AT_ONCE.postgresql + 1, writes });
  const mirror = startMirror({
    db,
    outbound: createOutbound(data.config.outbound),
    config: data.config,
    announce: async (notes) => send({ kind: "announce", notes }),
    log: (line) => send({ kind: "log", line }),
  });
  return { db, mirror };
})();

port.on("message", (message: ToThread) => {
  if (message.kind === "granted") {
    const resolve = asked.get(message.id);
    asked.delete(message.id);
    resolve?.(() => send({ kind: "release", id: message.id }));
  } else if (message.kind === "kick") {
    void started.then(({ mirror }) => mirror.kick());
  } else if (message.kind === "stop") {
    void started
      .then(async ({ db, mirror }) => {
        await mirror.stop();
        await db.$disconnect();
      })
      .finally(() => send({ kind: "stopped" }));
  }
});
