/**
 * Applies the Prisma-format migrations under prisma/migrations/<dialect>/ through the driver adapter,
 * recording each in `_prisma_migrations` exactly as Prisma does, so that `prisma migrate deploy`
 * (where its engine can be downloaded) accepts the same database. Prisma's CLI cannot do it here:
 * its schema engine is a download these machines cannot make (ARCHITECTURE.md, "Known traps").
 */
import { createHash, randomUUID } from "node:crypto";
import { mkdirSync, readdirSync, readFileSync } from "node:fs";
import { dirname } from "node:path";
import { PrismaBetterSqlite3 } from "@prisma/adapter-better-sqlite3";
import { sqlitePath } from "./db.ts";

const MIGRATIONS = new URL("../prisma/migrations/sqlite/", import.meta.url);

// The table as Prisma's schema engine creates it on SQLite.
const BOOKKEEPING = `CREATE TABLE IF NOT EXISTS "_prisma_migrations" (
    "id"                    TEXT PRIMARY KEY NOT NULL,
    "checksum"              TEXT NOT NULL,
    "finished_at"           DATETIME,
    "migration_name"        TEXT NOT NULL,
    "logs"                  TEXT,
    "rolled_back_at"        DATETIME,
    "started_at"            DATETIME NOT NULL DEFAULT current_timestamp,
    "applied_steps_count"   INTEGER UNSIGNED NOT NULL DEFAULT 0
);`;

interface Migration {
  name: string;
  sql: string;
  checksum: string;
}

function migrations(): Migration[] {
  return readdirSync(MIGRATIONS, { withFileTypes: true })
    .filter((entry) => entry.isDirectory() && /^\d{14}_[a-z0-9_]+$/.test(entry.name))
    .map((entry) => entry.name)
    .sort()
    .map((name) => {
      const sql = readFileSync(new URL(`${name}/migration.sql`, MIGRATIONS), "utf8");
      return { name, sql, checksum: createHash("sha256").update(sql).digest("hex") };
    });
}

/** Applies every migration not yet recorded; answers the names it applied. */
export async function migrate(databaseUrl: string): Promise<string[]> {
  const path = sqlitePath(databaseUrl);
  if (path !== ":memory:") mkdirSync(dirname(path), { recursive: true });
  const adapter = await new PrismaBetterSqlite3({ url: path }).connect();
  try {
    await adapter.executeScript(`PRAGMA journal_mode = WAL;\n${BOOKKEEPING}`);
    const done = await adapter.queryRaw({
      sql: `SELECT "migration_name", "checksum" FROM "_prisma_migrations" WHERE "rolled_back_at" IS NULL AND "finished_at" IS NOT NULL`,
      args: [],
      argTypes: [],
    });
    const applied = new Map(done.rows.map((row) => [String(row[0]), String(row[1])]));
    const ran: string[] = [];
    for (const m of migrations()) {
      const checksum = applied.get(m.name);
      if (checksum !== undefined) {
        if (checksum !== m.checksum) throw new Error(`Migration ${m.name} was changed after it was applied`);
        continue;
      }
      const startedAt = Date.now();
      // One transaction: the schema change and its record land together or not at all.
      await adapter.executeScript(
        `BEGIN;\n${m.sql}\nINSERT INTO "_prisma_migrations" ("id", "checksum", "finished_at", "migration_name", "logs", "rolled_back_at", "started_at", "applied_steps_count") VALUES ('${randomUUID()}', '${m.checksum}', ${Date.now()}, '${m.name}', NULL, NULL, ${startedAt}, 1);\nCOMMIT;`,
      );
      ran.push(m.name);
    }
    return ran;
  } finally {
    await adapter.dispose();
  }
}
