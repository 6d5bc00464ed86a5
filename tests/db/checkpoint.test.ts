/**
 * WAL checkpoints run in a worker thread, not inside a COMMIT on the event loop (src/db.checkpoint.ts,
 * issue #7): the service's connection has its own checkpoints off, and what an acknowledged write put
 * in the log still reaches the database file, within moments, without anything else happening.
 */
import { copyFileSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, test } from "@jest/globals";
import Database from "better-sqlite3";
import { loadConfig } from "../../src/config.ts";
import { migrate } from "../../src/db.migrate.ts";
import { type Db, openDb } from "../../src/db.ts";
import { createApp } from "../../src/yoga.ts";
import { call, intakeBody } from "../helpers.ts";

const dir = mkdtempSync(join(tmpdir(), "agent-registry-checkpoint-"));
const path = join(dir, "registry.db");
let db: Db | undefined;

afterAll(async () => {
  await db?.$disconnect();
  rmSync(dir, { recursive: true, force: true });
});

/** The provider codes in the database file alone, as if the log did not exist (read from a copy of it). */
function codesInDatabaseFile(): string[] {
  const copy = join(dir, `copy-${Date.now()}.db`);
  copyFileSync(path, copy);
  try {
    const file = new Database(copy, { readonly: true });
    try {
      return file
        .prepare<[], { providerCode: string }>('SELECT "providerCode" FROM "providers"')
        .all()
        .map((r) => r.providerCode);
    } finally {
      file.close();
    }
  } catch {
    return []; // caught mid-copy: try again
  } finally {
    rmSync(copy, { force: true });
  }
}

describe("WAL checkpoints (SQLite)", () => {
  test("the service's connection does none; a write reaches the database file anyway", async () => {
    const url = `file:${path}`;
    await migrate(url);
    db = await openDb(url);
    const [setting] = await db.$queryRawUnsafe<{ wal_autocheckpoint: bigint | number }[]>("PRAGMA wal_autocheckpoint");
    expect(Number(setting?.wal_autocheckpoint)).toBe(0);

    const app = createApp(loadConfig({ ...process.env, NODE_ENV: "test", DATABASE_URL: url, REDIS_URL: "" }), db);
    const answer = await call("POST", "/api/v1/providers", { app, body: intakeBody() });
    expect(answer.status).toBe(201);
    const code = answer.body.providerCode as string;

    let found = false;
    for (let i = 0; i < 100 && !found; i++) {
      found = codesInDatabaseFile().includes(code);
      if (!found) await new Promise((resolve) => setTimeout(resolve, 50));
    }
    expect(found).toBe(true);
  });
});
