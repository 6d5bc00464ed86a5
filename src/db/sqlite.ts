/**
 * SQLite through one connection, with transactions isolated from the requests around them.
 *
 * @prisma/adapter-better-sqlite3 runs every query on one better-sqlite3 connection. It queues
 * interactive transactions one after another, but not the plain queries of other requests: while
 * a transaction is open, such a query runs on the same connection, inside it. A read then sees what
 * the transaction has not committed, and a write becomes part of it and is undone when it rolls
 * back — an acknowledged write lost (tests/db/isolation.test.ts shows both). This wrapper gives
 * every query and every transaction a turn, first come first served: a plain query waits while a
 * transaction is open, and a transaction waits for the queries before it. better-sqlite3 runs each
 * statement synchronously, so nothing is lost by waiting: one connection does one thing at a time
 * anyway. Interactive transactions here only await the database (src/db/client.ts), so a turn is short.
 *
 * Durability without blocking. With `synchronous = FULL` SQLite fsyncs the WAL inside
 * every COMMIT, and better-sqlite3 runs COMMIT on the event loop: 0.8 ms of every write in which the
 * process does nothing else. Here the connection runs `synchronous = NORMAL` (a commit is written to
 * the WAL but not synced) and every write waits, before it is answered, for an fsync of the WAL that
 * began after its commit (`walSync`). The fsync runs on libuv's thread pool while the loop serves
 * other requests, and one fsync covers every commit written before it began, so concurrent writes
 * share it. What an acknowledged write survives is what FULL gives: the WAL holding its commit is on
 * disk before the answer leaves. (NORMAL still syncs the WAL before a checkpoint copies it into the
 * database, and the database after.) The one difference: between its commit and its sync, a write
 * is visible to other requests, before its own caller has been answered.
 */
import { type FileHandle, open } from "node:fs/promises";
import type { PrismaBetterSqlite3 } from "@prisma/adapter-better-sqlite3";
import type { SqlQuery } from "@prisma/driver-adapter-utils";
import type Database from "better-sqlite3";
import type { Checkpointer } from "./checkpoint.ts";
import type { ObjectRows, Pooled } from "./client.ts";

type Factory = PrismaBetterSqlite3;
type Inner = Awaited<ReturnType<Factory["connect"]>>;

/** A transaction of this module's connections: the adapter's, and rows as objects. */
type Transaction = InnerTransaction & ObjectRows;
type InnerTransaction = Awaited<ReturnType<Inner["startTransaction"]>>;
/** A connection of this module: the adapter's, rows as objects, and transactions that read them too. */
type Adapter = Omit<Inner, "startTransaction"> &
  ObjectRows &
  Pooled & { startTransaction(isolationLevel?: Parameters<Inner["startTransaction"]>[0]): Promise<Transaction> };

/** A raw result's rows as objects by column name. */
export function rowObjects({ columnNames, rows }: { columnNames: string[]; rows: unknown[][] }) {
  return rows.map((row) => {
    const object: Record<string, unknown> = {};
    for (let i = 0; i < columnNames.length; i++) object[columnNames[i] as string] = row[i];
    return object;
  });
}

/**
 * A row with its integers as numbers: the adapter opens the connection with `safeIntegers`, so
 * SQLite's integers come as BigInt; like the adapter, a safe one becomes a number, a larger one text.
 */
function numbers(row: Record<string, unknown>): Record<string, unknown> {
  for (const key in row) {
    const value = row[key];
    if (typeof value === "bigint") row[key] = Number.isSafeInteger(Number(value)) ? Number(value) : value.toString();
  }
  return row;
}

/** A value bound as @prisma/adapter-better-sqlite3 binds it: a Date as ISO 8601 text, a boolean as 0/1. */
function sqliteArg(value: unknown): unknown {
  if (value instanceof Date) return value.toISOString().replace("Z", "+00:00");
  return typeof value === "boolean" ? Number(value) : value;
}

/**
 * The rows of one statement as objects by column name, straight from the better-sqlite3 connection
 * the adapter holds (`client`, with its statements kept by src/db/statement.cache.ts). The
 * adapter's own `queryRaw` answers arrays, keeps every query's arguments in @prisma/debug's history
 * whether debugging is on or not, and maps every value — and `queryRows` then built objects back
 * from the arrays: ~4% of the CPU of an uncached profile read (measured side by side).
 * Values come as SQLite stores them; the readers convert them (asDate, asJson) as they did what the
 * adapter answered. Without a `client` (another adapter version), through `queryRaw`.
 */
async function objectRows(
  queryable: Pick<Inner, "queryRaw">,
  query: Pick<SqlQuery, "sql" | "args">,
): Promise<Record<string, unknown>[]> {
  const client = (queryable as { client?: Pick<Database.Database, "prepare"> }).client;
  if (client) {
    const bound = client.prepare(query.sql).bind(query.args.map(sqliteArg));
    if (bound.reader) return (bound.all() as Record<string, unknown>[]).map(numbers);
    // A statement that answers no rows (an UPDATE without RETURNING).
    bound.run();
    return [];
  }
  return rowObjects(await queryable.queryRaw(rawQuery(query)));
}

/** A statement as the adapter's `queryRaw` takes it: every argument's type left to the value. */
export function rawQuery(query: Pick<SqlQuery, "sql" | "args">): SqlQuery {
  return {
    sql: query.sql,
    args: query.args,
    argTypes: query.args.map(() => ({ scalarType: "unknown", arity: "scalar" })),
  };
}

/**
 * A first-come-first-served lock: `turn()` waits for every earlier holder and answers the release
 * (which counts once, however often it is called); `pending` is how many turns are held or waiting.
 */
function fifoLock(): { turn: () => Promise<() => void>; readonly pending: number } {
  let tail: Promise<void> = Promise.resolve();
  let pending = 0;
  return {
    turn() {
      pending++;
      let release!: () => void;
      const released = new Promise<void>((resolve) => {
        let done = false;
        release = () => {
          if (done) return;
          done = true;
          pending--;
          resolve();
        };
      });
      const before = tail;
      tail = before.then(() => released);
      return before.then(() => release);
    },
    get pending() {
      return pending;
    },
  };
}

/** Makes every commit so far durable; `close` lets go of what it holds, once syncs under way end. */
export interface Sync {
  (): Promise<void>;
  close?: () => Promise<void>;
}

/**
 * The shared fsync of a database's WAL: each caller waits for an fsync that began after it asked,
 * so a commit is on disk when its wait ends; the callers of one turn of the event loop share one.
 * While an fsync runs, the next one begins at once, not when it ends: on a disk whose flush now and
 * then takes 15–40 ms (this machine's virtual disk, under the benchmark's PATCHes at 100/s) a write
 * committed mid-flush would otherwise wait for two flushes, and a few such waits made the p99 of a
 * moderate rate. Two run at most: callers arriving while two run share the one that
 * begins when the first of them ends.
 */
export function walSync(databasePath: string): Sync {
  let file: Promise<FileHandle> | undefined;
  const syncOnce = async () => {
    file ??= open(`${databasePath}-wal`, "r");
    const handle = await file.catch((error: NodeJS.ErrnoException) => {
      file = undefined;
      // No WAL yet: no commit has been written to one.
      if (error.code === "ENOENT") return undefined;
      throw error;
    });
    await handle?.datasync();
  };
  /** The fsyncs under way (two at most), the one this turn's callers share, and the wait queued behind. */
  const inFlight = new Set<Promise<void>>();
  let starting: Promise<void> | undefined;
  let next: Promise<void> | undefined;
  const start = (): Promise<void> => {
    const once: Promise<void> = syncOnce().finally(() => inFlight.delete(once));
    inFlight.add(once);
    return once;
  };
  const sync = (): Promise<void> => {
    if (starting) return starting;
    if (inFlight.size < 2) {
      starting = Promise.resolve().then(() => {
        starting = undefined;
        return start();
      });
      return starting;
    }
    // Once one ends, these callers go through the same door: any fsync they then join begins after they asked.
    next ??= Promise.race([...inFlight].map((running) => running.catch(() => undefined))).then(() => {
      next = undefined;
      return sync();
    });
    return next;
  };
  return Object.assign(sync, {
    close: async () => {
      await Promise.allSettled([...inFlight, starting, next]);
      const handle = await file?.catch(() => undefined);
      file = undefined;
      await handle?.close();
    },
  });
}

/** Whether a plain statement only reads (every raw read here is one SELECT); anything else is synced. */
const READ = /^\s*SELECT\b/i;

/**
 * A turn to write to the database file, shared by its connections in this process's threads (the
 * mirror's, src/mirror/mirror.thread.ts): every write and transaction of each takes one first. Without
 * it a write finding another connection's transaction open would wait for SQLite's lock inside the
 * busy handler, which sleeps on the event loop, and a transaction that read before another connection
 * committed could not upgrade to a write at all (SQLITE_BUSY_SNAPSHOT). Reads need none: in WAL mode
 * they never wait for a writer.
 */
export type WriteGate = () => Promise<() => void>;

/** A connection's write gate, set once another thread's connection shares the file (`shareWrites`). */
export interface GateHolder {
  current?: WriteGate;
}

/** The first-come-first-served gate a primary connection grants write turns from. */
export function writeGate(): WriteGate {
  return fifoLock().turn;
}

function isolated(
  inner: Inner,
  sync: Sync | undefined,
  checkpoints: Checkpointer | undefined,
  gate: GateHolder,
): Adapter {
  const lock = fifoLock();
  const turn = lock.turn;
  const alone = async <T>(run: () => Promise<T>, write: boolean): Promise<T> => {
    // The gate before the connection's turn: reads queued behind a write do not wait for another thread's.
    const open = write ? await gate.current?.() : undefined;
    const release = await turn();
    try {
      if (write) await checkpoints?.beforeWrite();
      return await run();
    } finally {
      release();
      open?.();
    }
  };
  /** Waits, after a write, for its commit to be on disk. */
  const durable = async <T>(result: T): Promise<T> => {
    await sync?.();
    return result;
  };
  const adapter: Adapter = {
    provider: inner.provider,
    adapterName: inner.adapterName,
    queryRaw: async (query) => {
      const read = READ.test(query.sql);
      const result = await alone(() => inner.queryRaw(query), !read);
      return read ? result : durable(result);
    },
    queryObjects: async (query) => {
      const read = READ.test(query.sql);
      const rows = await alone(() => objectRows(inner, query), !read);
      return read ? rows : durable(rows);
    },
    executeRaw: (query) => alone(() => inner.executeRaw(query), true).then(durable),
    executeScript: (script) => alone(() => inner.executeScript(script), true).then(durable),
    // The one connection is in use while a turn is held; the turns queued behind it wait.
    usage: () => ({
      inUse: lock.pending > 0 ? 1 : 0,
      idle: lock.pending > 0 ? 0 : 1,
      waiting: Math.max(0, lock.pending - 1),
    }),
    dispose: async () => {
      await checkpoints?.stop();
      await inner.dispose();
      await sync?.close?.();
    },
    async startTransaction(isolationLevel) {
      const open = await gate.current?.();
      const release = await turn();
      let tx: InnerTransaction;
      try {
        await checkpoints?.beforeWrite();
        tx = await inner.startTransaction(isolationLevel);
      } catch (error) {
        release();
        open?.();
        throw error;
      }
      // The turn ends with the transaction, however it ends.
      const end = async (how: () => Promise<void>) => {
        try {
          await how();
        } finally {
          release();
          open?.();
        }
      };
      return {
        provider: tx.provider,
        adapterName: tx.adapterName,
        options: tx.options,
        queryRaw: (query) => tx.queryRaw(query),
        queryObjects: (query) => objectRows(tx, query),
        executeRaw: (query) => tx.executeRaw(query),
        // The turn ends at the commit; the answer waits for the sync, while the next turn runs.
        commit: () => end(() => tx.commit()).then(durable),
        rollback: () => end(() => tx.rollback()),
        createSavepoint: tx.createSavepoint && ((name) => tx.createSavepoint!(name)),
        rollbackToSavepoint: tx.rollbackToSavepoint && ((name) => tx.rollbackToSavepoint!(name)),
        releaseSavepoint: tx.releaseSavepoint && ((name) => tx.releaseSavepoint!(name)),
      };
    },
  };
  if (inner.getConnectionInfo) adapter.getConnectionInfo = () => inner.getConnectionInfo!();
  return adapter;
}

/**
 * The adapter factory whose connections keep transactions isolated and, given `sync`, answer a write
 * only once `sync` has made it durable (see above; the connection must then run `synchronous = NORMAL`).
 * Given `checkpoints` (db/checkpoint.ts), every write asks them first, in its turn, and they stop
 * before the connection closes. Every write takes a turn of `gate`'s, once it holds one.
 */
export function isolatedSqlite(
  factory: Factory,
  sync?: Sync,
  checkpoints?: Checkpointer,
  gate: GateHolder = {},
): Factory {
  return Object.assign(Object.create(factory) as Factory, {
    connect: async () => isolated(await factory.connect(), sync, checkpoints, gate),
  });
}
