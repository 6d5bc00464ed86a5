import { mkdirSync } from "node:fs";
import { dirname, resolve } from "node:path";
import { PrismaBetterSqlite3 } from "@prisma/adapter-better-sqlite3";
import { PrismaClient } from "./generated/prisma/client.ts";

export type Db = InstanceType<typeof PrismaClient>;

/** The path of an SQLite `file:` URL, resolved against the working directory. */
export function sqlitePath(url: string): string {
  const path = url.replace(/^file:/, "").replace(/\?.*$/, "");
  return path === ":memory:" ? path : resolve(path);
}

/**
 * Opens the PrismaClient for the configured database. SQLite is the embedded default: its folder
 * is created on first start, and the connection runs in WAL mode with a busy timeout so readers
 * never block the writer.
 */
export function openDb(databaseUrl: string): Db {
  if (!databaseUrl.startsWith("file:")) {
    throw new Error(`Unsupported DATABASE_URL "${databaseUrl.split(":")[0]}:…" (expected file:…)`);
  }
  const path = sqlitePath(databaseUrl);
  if (path !== ":memory:") mkdirSync(dirname(path), { recursive: true });
  const adapter = new PrismaBetterSqlite3({ url: path, timeout: 5000 });
  return new PrismaClient({ adapter });
}
