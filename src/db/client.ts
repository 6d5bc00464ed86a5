import { mkdirSync } from "node:fs";
import { dirname, resolve } from "node:path";
import { PrismaBetterSqlite3 } from "@prisma/adapter-better-sqlite3";
import type { SqlDriverAdapter, SqlDriverAdapterFactory, SqlQuery, SqlQueryable } from "@prisma/driver-adapter-utils";
import { DEFAULT_DATABASE_POOL_SIZE } from "../config.ts";
import { Prisma, PrismaClient } from "../generated/prisma/client.ts";
import { type Checkpointer, type CheckpointOptions, startCheckpointer } from "./checkpoint.ts";
import { type GateHolder, isolatedSqlite, rawQuery, rowObjects, type WriteGate, walSync, writeGate } from "./sqlite.ts";
import { cachedStatements } from "./statement.cache.ts";

export type Dialect = "sqlite" | "postgresql";

/**
 * The database client. Both dialects' clients are generated from the one model, so they have the
 * same API; the SQLite client's type stands for both. It knows its dialect, set once when it is
 * opened; Prisma's transaction clients read it through to their client.
 */
export type Db = InstanceType<typeof PrismaClient> & { readonly dialect: Dialect };

/** Gives a client its dialect, once: what the stores read to choose their SQL. */
export function withDialect(client: object, dialect: Dialect): Db {
  return Object.defineProperty(client, "dialect", { value: dialect, enumerable: false }) as Db;
}

/** The dialect a DATABASE_URL names: `file:` is SQLite, `postgres(ql)://` is PostgreSQL. */
export function dialectOf(databaseUrl: string): Dialect {
  if (databaseUrl.startsWith("file:")) return "sqlite";
  if (/^postgres(?:ql)?:\/\//.test(databaseUrl)) return "postgresql";
  throw new Error(`Unsupported DATABASE_URL "${databaseUrl.split(":")[0]}:…" (expected file:… or postgresql://…)`);
}

/** The path of an SQLite `file:` URL, resolved against the working directory. */
export function sqlitePath(url: string): string {
  const path = url.replace(/^file:/, "").replace(/\?.*$/, "");
  return path === ":memory:" ? path : resolve(path);
}

/** `"column" = value, …` for the columns given (`undefined` ones left out); names come from code, never input. */
export function assignments(columns: Record<string, unknown>): Prisma.Sql[] {
  return Object.entries(columns)
    .filter(([, value]) => value !== undefined)
    .map(([column, value]) => Prisma.sql`${Prisma.raw(`"${column}"`)} = ${value}`);
}

/** A value for a Json column: its JSON text (SQLite keeps it as text; PostgreSQL casts it to jsonb). */
export function jsonArg(db: Queryable, value: unknown, nullable = true): Prisma.Sql {
  // A NOT NULL column holds JSON's null instead.
  if (value === undefined || (value === null && nullable)) return Prisma.sql`NULL`;
  const text = JSON.stringify(value);
  return dialectIn(db) === "postgresql" ? Prisma.sql`CAST(${text} AS jsonb)` : Prisma.sql`${text}`;
}

/**
 * Interactive transactions here only await the database, so they are short; under load the wait for
 * a pooled connection (Prisma's default 2 s) is what runs out first. A busy moment must queue, not
 * answer 500.
 */
const TRANSACTIONS = { maxWait: 10_000, timeout: 15_000 };

/** What `queryRows` reads through on this service's own connections: rows as objects by column name. */
export interface ObjectRows {
  queryObjects(query: Pick<SqlQuery, "sql" | "args">, options?: ReadOptions): Promise<Record<string, unknown>[]>;
}

/** Transactions of raw statements on this service's own connections (PostgreSQL: db/postgres.ts). */
export interface RawTransactions {
  /** Runs `work` between BEGIN and COMMIT on one connection; ROLLBACK if it throws. */
  transaction<T>(work: (rows: ObjectRows) => Promise<T>): Promise<T>;
}

/** How busy a database's connections are now: what the metrics report (src/metrics/). */
export interface PoolUsage {
  /** Connections running a statement or holding a transaction. */
  inUse: number;
  /** Connections open and free. */
  idle: number;
  /** Callers waiting for a connection. */
  waiting: number;
}

/** What this service's own connection layers tell of their connections (db/sqlite.ts, db/postgres.ts). */
export interface Pooled {
  usage(): PoolUsage;
}

/** How a raw read is run. */
export interface ReadOptions {
  /**
   * Its best plan depends on its values (a full-text match): PostgreSQL plans it for each
   * execution's values rather than keeping one plan (db/postgres.ts). SQLite plans as it always does.
   */
  planEach?: boolean;
}

/** What a raw statement needs of a driver adapter connection, which may also start transactions. */
type RawQueryable = Pick<SqlQueryable, "queryRaw"> &
  Partial<Pick<SqlDriverAdapter, "startTransaction">> &
  Partial<ObjectRows> &
  Partial<RawTransactions> &
  Partial<Pooled>;

/** The connections that `queryRows` may read through directly, by the client that opened them. */
const directReads = new WeakMap<object, () => Partial<RawQueryable> | undefined>();

/**
 * An adapter factory whose connection `queryRows` on `client` reads through directly, and the
 * factory to give the client. The connection is the one the client itself opened: the same turns
 * (db/sqlite.ts), the same prepared statements, the same counting in tests.
 */
export function readingDirectly<F extends SqlDriverAdapterFactory>(
  factory: F,
): {
  factory: F;
  enable: (client: object) => void;
} {
  let connection: RawQueryable | undefined;
  const capturing = Object.assign(Object.create(factory) as F, {
    connect: async () => {
      const connected = await factory.connect();
      connection = connected;
      return connected;
    },
  });
  return { factory: capturing, enable: (client) => directReads.set(client, () => connection) };
}

/**
 * Gives a PostgreSQL client its raw reads (`queryRows` outside transactions read through `reads`:
 * db/postgres.ts) and makes its `$disconnect` end the pools (`close`): Prisma lets go of a pool it
 * was given but does not end it, nor one it never used.
 */
export function withPools(
  client: object,
  reads: ObjectRows & Partial<RawTransactions> & Partial<Pooled>,
  close: () => Promise<void>,
): void {
  directReads.set(client, () => reads);
  const disconnect = (client as Db).$disconnect.bind(client);
  Object.defineProperty(client, "$disconnect", {
    value: async () => {
      await disconnect();
      await close();
    },
  });
}

/** The transactions of `rawTransaction` open on this service's own connections, by their handle. */
const directTransactions = new WeakMap<object, RawQueryable | ObjectRows>();

/** A transaction of `rawTransaction`: only `queryRows` runs in it (no Prisma model calls). */
export type RawTx = { readonly rawTransaction: true; readonly dialect: Dialect };

/** Whatever `queryRows` runs on: the client, an interactive transaction, a raw transaction. */
export type Queryable = Db | Prisma.TransactionClient | RawTx;

/** The dialect of whatever a statement runs on (the client's, read through its transactions). */
export function dialectIn(db: Queryable): Dialect {
  return (db as { dialect: Dialect }).dialect;
}

/**
 * How busy the database's connections are: PostgreSQL's two pools together; SQLite's one connection,
 * in use while a turn is held (db/sqlite.ts). Undefined for a client opened otherwise (a test's).
 */
export function poolUsage(db: Db): PoolUsage | undefined {
  return directReads.get(db)?.()?.usage?.();
}

/** One statement that needs nothing: whether the database answers. */
export async function ping(db: Db): Promise<void> {
  await db.$queryRaw`SELECT 1`;
}

const NO_ARGS = { args: [], argTypes: [] };

/**
 * A transaction whose statements are all raw (`queryRows`), without Prisma's interactive-transaction
 * machinery (~200 us of CPU for an empty one on SQLite, a tenth of a PATCH). On SQLite it is started
 * on the client's own connection, which takes its turn (db/sqlite.ts) and answers once the commit is
 * synced; on PostgreSQL it runs on a connection of the service's pool (db/postgres.ts). A client
 * without either (a test's) uses `db.$transaction`.
 */
export async function rawTransaction<T>(db: Db, work: (tx: RawTx) => Promise<T>): Promise<T> {
  const connection = directReads.get(db)?.();
  if (connection?.transaction) {
    return connection.transaction(async (rows) => {
      const tx: RawTx = { rawTransaction: true, dialect: db.dialect };
      directTransactions.set(tx, rows);
      try {
        return await work(tx);
      } finally {
        directTransactions.delete(tx);
      }
    });
  }
  if (!connection?.startTransaction) return db.$transaction((tx) => work(tx as unknown as RawTx));
  const open = await connection.startTransaction();
  const tx: RawTx = { rawTransaction: true, dialect: db.dialect };
  directTransactions.set(tx, open);
  let committed = false;
  try {
    const result = await work(tx);
    await open.executeRaw({ sql: "COMMIT", ...NO_ARGS });
    committed = true;
    // Ends the turn, then waits for the commit to be synced.
    await open.commit();
    return result;
  } catch (error) {
    // Not committed: undone, and the turn ended whatever ROLLBACK answers. The caller gets the cause.
    if (!committed) {
      await open
        .executeRaw({ sql: "ROLLBACK", ...NO_ARGS })
        .catch(() => undefined)
        .finally(() => open.rollback());
    }
    throw error;
  } finally {
    directTransactions.delete(tx);
  }
}

/**
 * Rows of one raw statement, each an object by column name. On SQLite straight from the client's
 * own connection (db/sqlite.ts, `queryObjects`): Prisma's client spends ~0.2 ms per wide row turning
 * a raw result into typed objects that the readers (provider.store.ts) convert again anyway — a fifth
 * of an uncached profile read; in a transaction of `rawTransaction`, straight through the
 * open transaction. On PostgreSQL outside a transaction straight from the pool, with named
 * statements (db/postgres.ts). Otherwise (Prisma's interactive transactions) through `$queryRaw`.
 * Values come as the driver gives them: readers convert with asDate/asJson.
 */
export async function queryRows(
  db: Queryable,
  sql: Prisma.Sql,
  options?: ReadOptions,
): Promise<Record<string, unknown>[]> {
  const connection = directReads.get(db)?.() ?? directTransactions.get(db);
  if (!connection) return (db as Db).$queryRaw<Record<string, unknown>[]>(sql);
  // `text` numbers the parameters ($1, $2 …) as PostgreSQL wants them; `sql` marks them `?`.
  const query = { sql: dialectIn(db) === "postgresql" ? sql.text : sql.sql, args: sql.values };
  // Objects straight from better-sqlite3 or pg on this service's connections; a connection without
  // them (a test's counting adapter) answers arrays.
  return connection.queryObjects
    ? connection.queryObjects(query, options)
    : rowObjects(await (connection as RawQueryable).queryRaw(rawQuery(query)));
}

/** SQLite clients' write gates (db/sqlite.ts): empty until `shareWrites` is asked for one. */
const gates = new WeakMap<object, GateHolder>();

/**
 * The write turns of an SQLite client, for a connection another thread of this process opens to the
 * same file (`openDb`'s `writes`): from now on the client's own writes take them too. PostgreSQL's
 * connections need none (undefined).
 */
export function shareWrites(db: Db): WriteGate | undefined {
  const holder = gates.get(db);
  if (!holder) return undefined;
  holder.current ??= writeGate();
  return holder.current;
}

export interface OpenOptions {
  /** Tunes SQLite's WAL checkpoints (db/checkpoint.ts; tests). */
  checkpoints?: CheckpointOptions;
  /** PostgreSQL: connections per pool (DATABASE_POOL_SIZE). */
  poolSize?: number;
  /**
   * SQLite, in a thread beside the one that opened the file first: the write turns its `shareWrites`
   * granted. That one's checkpoint worker serves both, so this connection starts none of its own.
   */
  writes?: WriteGate;
}

/**
 * Opens the PrismaClient for the configured database. SQLite is the embedded default: its folder is
 * created on first start, with a busy timeout so a writer waits rather than fails. PostgreSQL goes
 * through @prisma/adapter-pg over two pools of `poolSize` connections each, with named statements
 * (db/postgres.ts).
 */
export async function openDb(databaseUrl: string, options: OpenOptions = {}): Promise<Db> {
  if (dialectOf(databaseUrl) === "postgresql") {
    // One after the other: both load pg, and jest's ESM loader fails on one module linked twice at once.
    const { openPostgres } = await import("./postgres.ts");
    const { PrismaClient: PgClient } = await import("../generated/prisma-pg/client.ts");
    const postgres = openPostgres(databaseUrl, options.poolSize ?? DEFAULT_DATABASE_POOL_SIZE);
    const client = new PgClient({ adapter: postgres.adapter, transactionOptions: TRANSACTIONS });
    withPools(client, postgres.reads, postgres.close);
    return withDialect(client, "postgresql");
  }
  const path = sqlitePath(databaseUrl);
  if (path !== ":memory:") mkdirSync(dirname(path), { recursive: true });
  // `timeout` is SQLite's busy timeout: a writer waits up to 5 s for the lock rather than failing.
  // Isolated: no other request's statement runs inside an open transaction (db/sqlite.ts).
  // A write is answered once an fsync of the WAL has made it durable (db/sqlite.ts). Statements
  // prepared once and reused (src/db/statement.cache.ts). Raw reads go straight to the
  // connection (queryRows).
  const durable = path === ":memory:" ? undefined : walSync(path);
  let checkpoints: Checkpointer | null = null;
  const gate: GateHolder = { current: options.writes };
  const direct = readingDirectly(
    isolatedSqlite(
      cachedStatements(new PrismaBetterSqlite3({ url: path, timeout: 5000 })),
      durable,
      {
        beforeWrite: () => checkpoints?.beforeWrite(),
        stop: async () => {
          await checkpoints?.stop();
        },
      },
      gate,
    ),
  );
  const client = withDialect(new PrismaClient({ adapter: direct.factory, transactionOptions: TRANSACTIONS }), "sqlite");
  direct.enable(client);
  gates.set(client, gate);
  if (path !== ":memory:") {
    // WAL: readers never block the writer, and a commit is one append to the log. The migration
    // runner sets it too (it is stored in the file); set here so that no database is ever opened
    // in rollback-journal mode.
    await client.$queryRawUnsafe("PRAGMA journal_mode = WAL");
  }
  // In WAL mode NORMAL survives a crash of the process but may lose the last commits on power loss
  // or an OS crash — and an acknowledged intake carries a token shown once. FULL would fsync the WAL
  // inside every COMMIT, on the event loop; instead the isolated connection answers every write
  // only after its own shared fsync of the WAL (db/sqlite.ts), which keeps FULL's promise for
  // every acknowledged write. Without a file (`:memory:`) there is nothing to sync.
  await client.$executeRawUnsafe(`PRAGMA synchronous = ${durable ? "NORMAL" : "FULL"}`);
  // A 64 MiB page cache (SQLite's default is 2 MiB): a search reads up to a ranking block of rows
  // (src/providers/provider.search.store.ts), and with the default those pages were read again from the
  // OS on every request once the registry outgrew the cache.
  await client.$executeRawUnsafe("PRAGMA cache_size = -65536");
  // A statement that may fail halfway inside a transaction (an UPDATE whose trigger rewrites the
  // search index) keeps a statement journal to undo itself; in a file, that was a temporary file
  // created and deleted by every other PATCH, on the event loop. In memory it is a few pages.
  await client.$executeRawUnsafe("PRAGMA temp_store = MEMORY");
  if (path !== ":memory:" && !options.writes) {
    // Checkpoints in a worker thread, not inside a COMMIT on the event loop (db/checkpoint.ts);
    // should the worker fail, the connection takes them back (SQLite's default, 1,000 pages).
    checkpoints = await startCheckpointer(
      path,
      (error) => {
        process.emitWarning(`WAL checkpoints are back on the service's connection: ${error.message}`);
        void client.$executeRawUnsafe("PRAGMA wal_autocheckpoint = 1000").catch(() => undefined);
      },
      options.checkpoints,
    );
    if (checkpoints) await client.$executeRawUnsafe("PRAGMA wal_autocheckpoint = 0");
  }
  return client;
}
