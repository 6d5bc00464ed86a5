/**
 * WAL checkpoints run in a worker thread, not inside a COMMIT on the event loop, and the log stays
 * bounded however the writes come (src/db/checkpoint.ts). The service runs on its own
 * SQLite file (whatever database the run tests), and requests go through the front door.
 */
import { copyFileSync, mkdtempSync, readFileSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, test } from "@jest/globals";
import Database from "better-sqlite3";
import { loadConfig } from "../../src/config.ts";
import { startCheckpointer } from "../../src/db/checkpoint.ts";
import { type Db, openDb } from "../../src/db/client.ts";
import { migrate } from "../../src/db/migrate.ts";
import { createApp } from "../../src/yoga.ts";
import { intakeBody } from "../builders.ts";
import { call } from "../helpers.ts";
import { until } from "../wait.ts";

const dir = mkdtempSync(join(tmpdir(), "agent-registry-checkpoint-"));
const opened: Db[] = [];

afterAll(async () => {
  await Promise.all(opened.map((db) => db.$disconnect()));
  rmSync(dir, { recursive: true, force: true });
});

/** The service on a fresh SQLite file of its own, with checkpoints tuned as given. */
async function service(name: string, checkpoints: { intervalMs: number; maxFrames: number }) {
  const path = join(dir, `${name}.db`);
  const url = `file:${path}`;
  await migrate(url);
  const db = await openDb(url, { checkpoints });
  opened.push(db);
  const app = createApp(loadConfig({ ...process.env, NODE_ENV: "test", DATABASE_URL: url, REDIS_URL: "" }), db);
  return { path, db, app };
}

/** The provider codes in the database file alone, as if the log did not exist (read from a copy of it). */
function codesInDatabaseFile(path: string): string[] {
  const copy = `${path}.copy-${Date.now()}`;
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
    const { path, db, app } = await service("reaches", { intervalMs: 50, maxFrames: 10_000 });
    const [setting] = await db.$queryRawUnsafe<{ wal_autocheckpoint: bigint | number }[]>("PRAGMA wal_autocheckpoint");
    expect(Number(setting?.wal_autocheckpoint)).toBe(0);

    const answer = await call("POST", "/api/v1/providers", { app, body: intakeBody() });
    expect(answer.status).toBe(201);
    const code = answer.body.providerCode as string;
    await until(() => codesInDatabaseFile(path).includes(code), "the write in the database file");
  });

  test("under writes that never pause, the log starts over once it passes its bound", async () => {
    // A bound of 400 pages (1.6 MB): each PATCH writes ~20-30 pages, so ~480 PATCHes write about
    // 12,000 pages (~48 MB) that a log never started over would hold.
    const maxFrames = 400;
    const { path, app } = await service("bounded", { intervalMs: 20, maxFrames });
    const owners = await Promise.all(
      Array.from({ length: 16 }, async () => {
        const answer = await call("POST", "/api/v1/providers", { app, body: intakeBody() });
        expect(answer.status).toBe(201);
        return { code: answer.body.providerCode as string, token: answer.body.accessToken as string };
      }),
    );
    let largest = 0;
    // Sixteen writers, each PATCHing as soon as its last PATCH is answered: a commit is always near.
    await Promise.all(
      owners.map(async (owner) => {
        for (let i = 0; i < 30; i++) {
          const answer = await call("PATCH", `/api/v1/providers/${owner.code}`, {
            app,
            token: owner.token,
            body: { summary: `Written without a pause, ${i}` },
          });
          expect(answer.status).toBe(200);
          largest = Math.max(largest, statSync(`${path}-wal`).size);
        }
      }),
    );
    const page = 4096 + 24; // a frame: the page and its header
    // The file keeps its largest size: the log never held more than a few bounds' worth.
    expect(largest).toBeLessThan(4 * maxFrames * page);
    // And every acknowledged PATCH is there.
    const last = await call("GET", `/api/v1/providers/${owners[0]?.code}`, { app, token: owners[0]?.token });
    expect(last.body.summary).toBe("Written without a pause, 29");
    expect(last.body.version).toBe(31);
  });

  test("a write that finds the log past its bound waits for it to be copied whole, then starts it over", async () => {
    const path = join(dir, "barrier.db");
    const writer = new Database(path);
    writer.pragma("journal_mode = WAL");
    writer.pragma("wal_autocheckpoint = 0");
    writer.exec("CREATE TABLE t (x TEXT)");
    const write = () => writer.prepare("INSERT INTO t VALUES (?)").run("x".repeat(3000));
    for (let i = 0; i < 100; i++) write();
    // A reader on an old snapshot: no checkpoint can copy the frames after it, so the log cannot
    // start over by itself, however often the worker checkpoints.
    const reader = new Database(path, { readonly: true });
    reader.exec("BEGIN");
    reader.prepare("SELECT count(*) FROM t").get();
    for (let i = 0; i < 100; i++) write();
    const checkpoints = await startCheckpointer(path, () => {}, { intervalMs: 10, maxFrames: 50 });
    if (!checkpoints) throw new Error("the checkpoint worker did not start");
    try {
      // Wait until the worker's checkpoints report a log past the bound. Each call that answers a
      // promise also asks for a checkpoint; while the reader holds its snapshot that one cannot copy
      // everything, so the bound stays due.
      await until(() => checkpoints.beforeWrite() !== undefined, "a checkpoint due before the next write");
      const salt = () => readFileSync(`${path}-wal`).readUInt32BE(16);
      const before = salt();
      reader.exec("COMMIT");
      // The next write, in its turn: it waits for one checkpoint of everything, then restarts the log.
      await checkpoints.beforeWrite();
      write();
      expect(salt()).not.toBe(before);
    } finally {
      await checkpoints.stop();
      reader.close();
      writer.close();
    }
  });
});
