/**
 * Applies the Prisma-format migrations under prisma/migrations/<dialect>/, recording each in
 * `_prisma_migrations` exactly as Prisma does, so that `prisma migrate deploy` (where its engine can
 * be downloaded) accepts the same database. Prisma's CLI cannot do it here: its schema engine is a
 * download these machines cannot make (ARCHITECTURE.md, "Known traps").
 *
 * Each migration and its record are one transaction. On PostgreSQL an advisory lock makes replicas
 * that start together apply each migration once.
 */
import { createHash, randomUUID } from "node:crypto";
import { mkdirSync, readdirSync, readFileSync } from "node:fs";
import { dirname } from "node:path";
import { PrismaBetterSqlite3 } from "@prisma/adapter-better-sqlite3";
import pg from "pg";
import { type Dialect, dialectOf, sqlitePath } from "./client.ts";

// The table as Prisma's schema engine creates it, per dialect.
const BOOKKEEPING: Record<Dialect, string> = {
  sqlite: `CREATE TABLE IF NOT EXISTS "_prisma_migrations" (
    "id"                    TEXT PRIMARY KEY NOT NULL,
    "checksum"              TEXT NOT NULL,
    "finished_at"           DATETIME,
    "migration_name"        TEXT NOT NULL,
    "logs"                  TEXT,
    "rolled_back_at"        DATETIME,
    "started_at"            DATETIME NOT NULL DEFAULT current_timestamp,
    "applied_steps_count"   INTEGER UNSIGNED NOT NULL DEFAULT 0
);`,
  postgresql: `CREATE TABLE IF NOT EXISTS "_prisma_migrations" (
    "id"                    VARCHAR(36) PRIMARY KEY NOT NULL,
    "checksum"              VARCHAR(64) NOT NULL,
    "finished_at"           TIMESTAMPTZ,
    "migration_name"        VARCHAR(255) NOT NULL,
    "logs"                  TEXT,
    "rolled_back_at"        TIMESTAMPTZ,
    "started_at"            TIMESTAMPTZ NOT NULL DEFAULT now(),
    "applied_steps_count"   INTEGER NOT NULL DEFAULT 0
);`,
};

const APPLIED = `SELECT "migration_name", "checksum" FROM "_prisma_migrations" WHERE "rolled_back_at" IS NULL AND "finished_at" IS NOT NULL`;
/** Any fixed number: the key of the advisory lock migrations hold on PostgreSQL. */
const LOCK_KEY = 7_265_637;

export interface Migration {
  name: string;
  sql: string;
  checksum: string;
}

/** The migrations of a dialect, in order. */
export function migrations(dialect: Dialect): Migration[] {
  const folder = new URL(`../../prisma/migrations/${dialect}/`, import.meta.url);
  return readdirSync(folder, { withFileTypes: true })
    .filter((entry) => entry.isDirectory() && /^\d{14}_[a-z0-9_]+$/.test(entry.name))
    .map((entry) => entry.name)
    .sort()
    .map((name) => {
      const sql = readFileSync(new URL(`${name}/migration.sql`, folder), "utf8");
      return { name, sql, checksum: createHash("sha256").update(sql).digest("hex") };
    });
}

/** What a dialect's runner needs: run a script, read the applied names, and record one. */
interface Runner {
  script(sql: string): Promise<void>;
  applied(): Promise<Map<string, string>>;
  record(m: Migration, startedAt: Date): string;
  close(): Promise<void>;
}

async function sqliteRunner(url: string): Promise<Runner> {
  const path = sqlitePath(url);
  if (path !== ":memory:") mkdirSync(dirname(path), { recursive: true });
  const adapter = await new PrismaBetterSqlite3({ url: path }).connect();
  await adapter.executeScript(`PRAGMA journal_mode = WAL;\n${BOOKKEEPING.sqlite}`);
  return {
    script: (sql) => adapter.executeScript(sql),
    applied: async () =>
      new Map(
        (await adapter.queryRaw({ sql: APPLIED, args: [], argTypes: [] })).rows.map((r) => [
          String(r[0]),
          String(r[1]),
        ]),
      ),
    record: (m, startedAt) =>
      `INSERT INTO "_prisma_migrations" ("id", "checksum", "finished_at", "migration_name", "logs", "rolled_back_at", "started_at", "applied_steps_count") VALUES ('${randomUUID()}', '${m.checksum}', ${Date.now()}, '${m.name}', NULL, NULL, ${startedAt.getTime()}, 1);`,
    close: () => adapter.dispose(),
  };
}

async function postgresRunner(url: string): Promise<Runner> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  await client.query("SELECT pg_advisory_lock($1)", [LOCK_KEY]);
  await client.query(BOOKKEEPING.postgresql);
  return {
    script: async (sql) => {
      await client.query(sql);
    },
    applied: async () =>
      new Map((await client.query(APPLIED)).rows.map((r) => [String(r.migration_name), String(r.checksum)])),
    record: (m, startedAt) =>
      `INSERT INTO "_prisma_migrations" ("id", "checksum", "finished_at", "migration_name", "logs", "rolled_back_at", "started_at", "applied_steps_count") VALUES ('${randomUUID()}', '${m.checksum}', now(), '${m.name}', NULL, NULL, '${startedAt.toISOString()}', 1);`,
    close: async () => {
      await client.query("SELECT pg_advisory_unlock($1)", [LOCK_KEY]).catch(() => {});
      await client.end();
    },
  };
}

/** Applies every migration not yet recorded; answers the names it applied. */
export async function migrate(databaseUrl: string): Promise<string[]> {
  const dialect = dialectOf(databaseUrl);
  const runner = dialect === "postgresql" ? await postgresRunner(databaseUrl) : await sqliteRunner(databaseUrl);
  try {
    const applied = await runner.applied();
    const ran: string[] = [];
    for (const m of migrations(dialect)) {
      const checksum = applied.get(m.name);
      if (checksum !== undefined) {
        if (checksum !== m.checksum) throw new Error(`Migration ${m.name} was changed after it was applied`);
        continue;
      }
      const startedAt = new Date();
      try {
        await runner.script(`BEGIN;\n${m.sql}\n${runner.record(m, startedAt)}\nCOMMIT;`);
      } catch (error) {
        await runner.script("ROLLBACK;").catch(() => {});
        throw new Error(`Migration ${m.name} failed and was rolled back: ${(error as Error).message}`);
      }
      ran.push(m.name);
    }
    return ran;
  } finally {
    await runner.close();
  }
}
