/**
 * Prepared statements kept for reuse on SQLite. @prisma/adapter-better-sqlite3 prepares
 * every statement again for every query (`db.prepare(sql).bind(args)`): SQLite parses and plans the
 * SQL each time, a twelfth of the CPU of a profile read. Prisma's SQL for one operation is the same
 * text every time, so the connection handed to the adapter keeps the last `max` statements by their
 * text and binds each use's arguments at run time instead of once (`bind` would fix them on the
 * statement for good). better-sqlite3 runs a statement to the end synchronously, so one statement
 * object is never in use twice at once.
 */
import type { PrismaBetterSqlite3 } from "@prisma/adapter-better-sqlite3";
import type Database from "better-sqlite3";

type Factory = PrismaBetterSqlite3;
type Statement = Database.Statement<unknown[]>;

/**
 * A statement's columns, described once: better-sqlite3 builds the description again on every
 * `columns()` call (33 us for a profile's 26 columns, a third of the read), and the adapter asks
 * before every run. A statement's columns change only with the schema, and migrations run before the
 * service starts.
 */
const columnsOf = new WeakMap<Statement, Database.ColumnDefinition[]>();
function columns(statement: Statement): Database.ColumnDefinition[] {
  let described = columnsOf.get(statement);
  if (!described) {
    described = statement.columns();
    columnsOf.set(statement, described);
  }
  return described;
}

/**
 * What the adapter does with `prepare(sql).bind(args)`: read its columns, run it, or read its rows
 * raw. A class, not an object literal of closures: one shape for every use, nothing defined on it per
 * call (see docs/architecture.md, "Hot objects are plain").
 */
class Bound {
  constructor(
    protected readonly statement: Statement,
    private readonly args: unknown[],
  ) {}
  get reader(): boolean {
    return this.statement.reader;
  }
  columns(): Database.ColumnDefinition[] {
    return columns(this.statement);
  }
  run(): Database.RunResult {
    return this.statement.run(...this.args);
  }
  raw(): RawBound {
    return new RawBound(this.statement, this.args);
  }
  all(): unknown[] {
    return this.statement.raw(false).all(...this.args);
  }
  get(): unknown {
    return this.statement.raw(false).get(...this.args);
  }
}

/** `raw()` of a use: its rows as arrays. */
class RawBound {
  constructor(
    private readonly statement: Statement,
    private readonly args: unknown[],
  ) {}
  all(): unknown[] {
    return this.statement.raw(true).all(...this.args);
  }
}

/** A cached statement as `prepare` hands it out: usable without arguments, or bound to some. */
class Prepared extends Bound {
  constructor(statement: Statement) {
    super(statement, []);
  }
  bind(args: unknown[]): Bound {
    return new Bound(this.statement, args);
  }
}

function cachedConnection(db: Database.Database, max: number): Database.Database {
  const statements = new Map<string, Prepared>();
  const prepare = (sql: string) => {
    let prepared = statements.get(sql);
    if (prepared) {
      // Most recently used last: the first key is the one to drop.
      statements.delete(sql);
    } else {
      prepared = new Prepared(db.prepare(sql) as Statement);
      if (statements.size >= max) {
        const oldest = statements.keys().next().value;
        if (oldest !== undefined) statements.delete(oldest);
      }
    }
    statements.set(sql, prepared);
    return prepared;
  };
  return new Proxy(db, {
    get(target, key) {
      if (key === "prepare") return prepare;
      const value = Reflect.get(target, key, target);
      return typeof value === "function" ? value.bind(target) : value;
    },
  });
}

/** The adapter factory whose connections reuse prepared statements (the last `max` by their SQL). */
export function cachedStatements(factory: Factory, max = 256): Factory {
  return Object.assign(Object.create(factory) as Factory, {
    connect: async () => {
      const adapter = await factory.connect();
      const queryable = adapter as unknown as { client?: Database.Database };
      // The adapter keeps its better-sqlite3 connection as `client`; should a later version not,
      // it simply prepares as before.
      if (queryable.client && typeof queryable.client.prepare === "function") {
        queryable.client = cachedConnection(queryable.client, max);
      }
      return adapter;
    },
  });
}
