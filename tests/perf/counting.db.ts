/**
 * A database client for tests that counts round trips: the run's database (SQLite or PostgreSQL)
 * opened through the same driver adapter as src/db/client.ts, wrapped so that every statement sent to the
 * database — a query, an execute, a script, a BEGIN/COMMIT/ROLLBACK — is counted and its SQL kept.
 * Built here, by the test, never on a production path.
 */
import { PrismaBetterSqlite3 } from "@prisma/adapter-better-sqlite3";
import type { SqlDriverAdapter, SqlDriverAdapterFactory, SqlQuery, Transaction } from "@prisma/driver-adapter-utils";
import {
  type Db,
  dialectOf,
  type ObjectRows,
  readingDirectly,
  sqlitePath,
  withDialect,
  withPools,
} from "../../src/db/client.ts";
import { PrismaClient } from "../../src/generated/prisma/client.ts";

export interface CountingDb {
  db: Db;
  /** The SQL of every round trip since the last reset, in order. */
  statements: string[];
  reset(): void;
  /**
   * Holds the answer of the next statement whose SQL matches, once the database has answered it,
   * until `release()` is called: a read that has seen the data as it was, still on its way.
   */
  holdNext(match: RegExp): { held: Promise<void>; release: () => void };
}

interface Hold {
  match: RegExp;
  reached: () => void;
  released: Promise<void>;
}

/** Waits, once the database has answered `sql`, while a hold matching it is in place. */
async function held(holds: Hold[], sql: string): Promise<void> {
  const hold = holds.findIndex((h) => h.match.test(sql));
  if (hold === -1) return;
  const [h] = holds.splice(hold, 1) as [Hold];
  h.reached();
  await h.released;
}

function countTransaction(tx: Transaction, statements: string[]): Transaction {
  return new Proxy(tx, {
    get(target, key, receiver) {
      const value = Reflect.get(target, key, receiver);
      if (typeof value !== "function") return value;
      if (key === "queryRaw" || key === "executeRaw") {
        return (query: SqlQuery) => {
          statements.push(query.sql);
          return value.call(target, query);
        };
      }
      if (key === "commit" || key === "rollback") {
        return () => {
          statements.push(String(key).toUpperCase());
          return value.call(target);
        };
      }
      return value.bind(target);
    },
  });
}

function countAdapter(adapter: SqlDriverAdapter, statements: string[], holds: Hold[]): SqlDriverAdapter {
  return new Proxy(adapter, {
    get(target, key, receiver) {
      const value = Reflect.get(target, key, receiver);
      if (typeof value !== "function") return value;
      if (key === "queryRaw" || key === "executeRaw" || key === "executeScript") {
        return async (query: SqlQuery | string) => {
          const sql = typeof query === "string" ? query : query.sql;
          statements.push(sql);
          const result = await value.call(target, query);
          await held(holds, sql);
          return result;
        };
      }
      if (key === "startTransaction") {
        return async (...args: unknown[]) => {
          statements.push("BEGIN");
          return countTransaction(await value.apply(target, args), statements);
        };
      }
      return value.bind(target);
    },
  });
}

function countFactory(factory: SqlDriverAdapterFactory, statements: string[], holds: Hold[]): SqlDriverAdapterFactory {
  return new Proxy(factory, {
    get(target, key, receiver) {
      const value = Reflect.get(target, key, receiver);
      if (key === "connect") return async () => countAdapter(await value.call(target), statements, holds);
      return typeof value === "function" ? value.bind(target) : value;
    },
  });
}

/** Opens the database of `databaseUrl` (already migrated) with every round trip counted. */
export async function openCountingDb(databaseUrl: string): Promise<CountingDb> {
  const statements: string[] = [];
  const holds: Hold[] = [];
  let db: Db;
  if (dialectOf(databaseUrl) === "postgresql") {
    // The service's pools and adapter (src/db/postgres.ts), with the raw reads counted as they leave.
    const { openPostgres } = await import("../../src/db/postgres.ts");
    const { PrismaClient: PgClient } = await import("../../src/generated/prisma-pg/client.ts");
    const postgres = openPostgres(databaseUrl, 10);
    const adapter = countFactory(postgres.adapter, statements, holds);
    db = withDialect(new PgClient({ adapter: adapter as never }), "postgresql");
    /** The statements of `rows`, counted as they leave. */
    const counted = (rows: ObjectRows): ObjectRows => ({
      queryObjects: async (query, options) => {
        statements.push(query.sql);
        const answer = await rows.queryObjects(query, options);
        await held(holds, query.sql);
        return answer;
      },
    });
    withPools(
      db,
      {
        ...counted(postgres.reads),
        transaction: async (work) => {
          statements.push("BEGIN");
          try {
            const result = await postgres.reads.transaction((rows) => work(counted(rows)));
            statements.push("COMMIT");
            return result;
          } catch (error) {
            statements.push("ROLLBACK");
            throw error;
          }
        },
      },
      postgres.close,
    );
  } else {
    // Raw reads go straight to the (counted) connection, as in src/db/client.ts.
    const direct = readingDirectly(
      countFactory(new PrismaBetterSqlite3({ url: sqlitePath(databaseUrl), timeout: 5000 }), statements, holds),
    );
    db = withDialect(new PrismaClient({ adapter: direct.factory as never }), "sqlite");
    direct.enable(db);
  }
  await db.$connect();
  return {
    db,
    statements,
    reset: () => {
      statements.length = 0;
    },
    holdNext(match) {
      let reached!: () => void;
      let release!: () => void;
      const held = new Promise<void>((resolve) => {
        reached = resolve;
      });
      const released = new Promise<void>((resolve) => {
        release = resolve;
      });
      holds.push({ match, reached, released });
      return { held, release };
    },
  };
}
