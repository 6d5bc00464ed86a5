/**
 * PostgreSQL's connections: two `pg` pools of at most DATABASE_POOL_SIZE connections each, with
 * named prepared statements.
 *
 * Unnamed statements (what @prisma/adapter-pg sends by default) are parsed and planned by
 * PostgreSQL on every execution: planning a profile or a list read took longer than running it. A
 * named statement is parsed once per connection. The SQL of one operation is the same text every
 * time, so a statement's name is derived from its text; the first `MAX_NAMED` distinct texts get
 * one (each connection keeps what it prepared until it closes), later ones run unnamed, so an
 * unusual workload cannot grow the server's memory without bound.
 *
 * Whether a plan is kept is decided per pool, not left to PostgreSQL's guess (after five executions
 * it keeps a generic plan when its estimate looks no worse — for a common search word that estimate
 * was 20 times too low):
 * - `reads`: raw reads outside a transaction (`queryRows` on the client), planned once per
 *   connection (`plan_cache_mode = force_generic_plan`): their best plan does not depend on the
 *   values (a key, a page of the directory), so planning each time was pure cost.
 * - `pool`: Prisma's adapter (its queries and every transaction), the raw transactions, and the
 *   reads whose best plan does depend on the values (a full-text match: a common word is best walked
 *   newest first, a rare one looked up in the index), planned for each execution's values as
 *   unnamed statements were (`force_custom_plan`): only the parse is saved.
 *
 * Rows of raw reads come straight from the pool: Prisma's client turned each raw result into typed
 * values and back, a client-side cost that was most of a read's. Their values are what Prisma's
 * `$queryRaw` answers on PostgreSQL (Date for timestamps, BigInt for int8, parsed JSON), so the
 * readers see the same either way. A transaction whose statements are all raw (a PATCH, a review
 * move: `rawTransaction`) runs on one connection of `pool` the same way, BEGIN to COMMIT: through
 * Prisma's interactive transaction each statement cost more of the service's CPU than the database's
 * (docs/performance.md).
 */
import { PrismaPg } from "@prisma/adapter-pg";
import pg from "pg";
import type { ObjectRows, Pooled, RawTransactions } from "./client.ts";

/** How many distinct statement texts get a name (per pool). */
const MAX_NAMED = 1000;

/** A name for each statement text, the same every time; none once `max` texts have one. */
export function statementNames(max = MAX_NAMED): (sql: string) => string | undefined {
  const names = new Map<string, string>();
  return (sql) => {
    let name = names.get(sql);
    if (name === undefined && names.size < max) {
      name = `s${names.size}`;
      names.set(sql, name);
    }
    return name;
  };
}

// `timestamp(3)` holds UTC without a zone; pg would read it in the process's local time zone.
const utcTimestamp = (text: string) => new Date(`${text.replace(" ", "T")}Z`);
const PARSERS: Record<number, (text: string) => unknown> = {
  [pg.types.builtins.TIMESTAMP]: utcTimestamp,
  [pg.types.builtins.INT8]: BigInt,
};
const types = {
  getTypeParser: ((oid: number, format?: string) =>
    (format !== "binary" && PARSERS[oid]) ||
    pg.types.getTypeParser(oid, format as "text")) as pg.CustomTypesConfig["getTypeParser"],
};

/** A value as pg should send it: a Date as its UTC instant (pg would write local time), a BigInt as text. */
function pgArg(value: unknown): unknown {
  if (value instanceof Date) return value.toISOString();
  if (typeof value === "bigint") return value.toString();
  return value;
}

export interface Postgres {
  /** Prisma's adapter, on `pool`, naming its statements. */
  adapter: PrismaPg;
  /** Ends both pools (the client's `$disconnect`); a read after it fails rather than connect again. */
  close: () => Promise<void>;
  /**
   * Rows of one statement outside a transaction: from `reads`, or from `pool` when its plan depends
   * on the values; and raw transactions on a connection of `pool`.
   */
  reads: ObjectRows & RawTransactions & Pooled;
}

/** A pool whose connections choose plans one way (see above), set when each connects. */
function poolOf(databaseUrl: string, max: number, plans: "force_generic_plan" | "force_custom_plan"): pg.Pool {
  const url = new URL(databaseUrl);
  // Options the URL gives are kept: pg lets the URL's override the config's.
  const options = [url.searchParams.get("options"), `-c plan_cache_mode=${plans}`].filter(Boolean).join(" ");
  url.searchParams.set("options", options);
  const pool = new pg.Pool({ connectionString: url.toString(), max });
  // An idle connection the server closed (a restart, a failover) is dropped by the pool, and the
  // next query opens another: nothing to do, but unheard the event would end the process.
  pool.on("error", () => undefined);
  return pool;
}

/** The pools of a PostgreSQL database: at most `poolSize` connections each. */
export function openPostgres(databaseUrl: string, poolSize: number): Postgres {
  const pool = poolOf(databaseUrl, poolSize, "force_custom_plan");
  const reads = poolOf(databaseUrl, poolSize, "force_generic_plan");
  const nameOf = statementNames();
  const run = async (from: pg.Pool | pg.PoolClient, sql: string, args: unknown[]) =>
    (await from.query({ name: nameOf(sql), text: sql, values: args.map(pgArg), types })).rows;
  return {
    adapter: new PrismaPg(pool, {
      // No name (past the bound) runs the statement unnamed, as pg takes `name: undefined`.
      statementNameGenerator: (query) => nameOf(query.sql) as string,
    }),
    close: async () => {
      await Promise.all([pool, reads].map((p) => (p.ended ? undefined : p.end())));
    },
    reads: {
      queryObjects: ({ sql, args }, options) => run(options?.planEach ? pool : reads, sql, args),
      usage: () => {
        const usage = { inUse: 0, idle: 0, waiting: 0 };
        for (const p of [pool, reads]) {
          usage.inUse += p.totalCount - p.idleCount;
          usage.idle += p.idleCount;
          usage.waiting += p.waitingCount;
        }
        return usage;
      },
      transaction: async (work) => {
        const connection = await pool.connect();
        let broken: Error | undefined;
        try {
          await connection.query("BEGIN");
          const result = await work({ queryObjects: ({ sql, args }) => run(connection, sql, args) });
          await connection.query("COMMIT");
          return result;
        } catch (error) {
          // A connection that cannot even roll back is closed rather than handed to the next caller.
          await connection.query("ROLLBACK").catch((failed: Error) => {
            broken = failed;
          });
          throw error;
        } finally {
          connection.release(broken);
        }
      },
    },
  };
}
