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
 * anyway. Interactive transactions here only await the database (src/db.ts), so a turn is short.
 */
import type { PrismaBetterSqlite3 } from "@prisma/adapter-better-sqlite3";

type Factory = PrismaBetterSqlite3;
type Adapter = Awaited<ReturnType<Factory["connect"]>>;
type Transaction = Awaited<ReturnType<Adapter["startTransaction"]>>;

/** A first-come-first-served lock: `turn()` waits for every earlier holder and answers the release. */
function fifoLock(): () => Promise<() => void> {
  let tail: Promise<void> = Promise.resolve();
  return () => {
    let release!: () => void;
    const released = new Promise<void>((resolve) => {
      release = resolve;
    });
    const before = tail;
    tail = before.then(() => released);
    return before.then(() => release);
  };
}

function isolated(inner: Adapter): Adapter {
  const turn = fifoLock();
  const alone = async <T>(run: () => Promise<T>): Promise<T> => {
    const release = await turn();
    try {
      return await run();
    } finally {
      release();
    }
  };
  const adapter: Adapter = {
    provider: inner.provider,
    adapterName: inner.adapterName,
    queryRaw: (query) => alone(() => inner.queryRaw(query)),
    executeRaw: (query) => alone(() => inner.executeRaw(query)),
    executeScript: (script) => alone(() => inner.executeScript(script)),
    dispose: () => inner.dispose(),
    async startTransaction(isolationLevel) {
      const release = await turn();
      let tx: Transaction;
      try {
        tx = await inner.startTransaction(isolationLevel);
      } catch (error) {
        release();
        throw error;
      }
      // The turn ends with the transaction, however it ends.
      const end = async (how: () => Promise<void>) => {
        try {
          await how();
        } finally {
          release();
        }
      };
      return {
        provider: tx.provider,
        adapterName: tx.adapterName,
        options: tx.options,
        queryRaw: (query) => tx.queryRaw(query),
        executeRaw: (query) => tx.executeRaw(query),
        commit: () => end(() => tx.commit()),
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

/** The adapter factory whose connections keep transactions isolated (see above). */
export function isolatedSqlite(factory: Factory): Factory {
  return Object.assign(Object.create(factory) as Factory, {
    connect: async () => isolated(await factory.connect()),
  });
}
