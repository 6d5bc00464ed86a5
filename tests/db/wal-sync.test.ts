/**
 * A write is answered only once it is durable, without holding the event loop for the fsync
 * (src/db/sqlite.ts). On SQLite the connection runs `synchronous = NORMAL` and every write
 * waits for an fsync of the WAL that began after its commit. Here the service runs on its own SQLite
 * file with a sync the test holds and releases, and requests go through the front door: the answer
 * never leaves before the sync, the sync never begins before the commit, reads are not held, and a
 * write whose sync fails is not acknowledged. Then `walSync` itself: the callers of one turn share
 * one fsync, which begins at once even while another runs; with two running, later callers share the
 * one that begins when the first ends; and none is released by an fsync that began before it asked.
 */
import { appendFileSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { open } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, jest, test } from "@jest/globals";
import { PrismaBetterSqlite3 } from "@prisma/adapter-better-sqlite3";
import Database from "better-sqlite3";
import { loadConfig } from "../../src/config.ts";
import { type Db, readingDirectly, withDialect } from "../../src/db/client.ts";
import { migrate } from "../../src/db/migrate.ts";
import { isolatedSqlite, type Sync, walSync } from "../../src/db/sqlite.ts";
import { PrismaClient } from "../../src/generated/prisma/client.ts";
import { createApp } from "../../src/yoga.ts";
import { intakeBody } from "../builders.ts";
import { call } from "../helpers.ts";
import { until } from "../wait.ts";

const dir = mkdtempSync(join(tmpdir(), "agent-registry-wal-sync-"));
const path = join(dir, "registry.db");
const url = `file:${path}`;

/** The sync the service waits for: each call is recorded, with what another connection sees committed then. */
interface Held {
  committed: string | undefined;
  release: () => void;
  fail: (error: Error) => void;
}
const held: Held[] = [];
let holding = false;
let summaryOf: (code: string) => string | undefined = () => undefined;
let watched = "";
const gate: Sync = () => {
  const committed = watched ? summaryOf(watched) : undefined;
  if (!holding) return Promise.resolve();
  return new Promise<void>((release, fail) => {
    held.push({ committed, release, fail });
  });
};

let db: Db;
let app: ReturnType<typeof createApp>;
let observer: Database.Database;

beforeAll(async () => {
  await migrate(url);
  // As src/db/client.ts opens it: isolated, with raw statements and raw transactions on its connection.
  const direct = readingDirectly(isolatedSqlite(new PrismaBetterSqlite3({ url: path }), gate));
  db = withDialect(new PrismaClient({ adapter: direct.factory }), "sqlite");
  direct.enable(db);
  await db.$executeRawUnsafe("PRAGMA synchronous = NORMAL");
  app = createApp(loadConfig({ ...process.env, NODE_ENV: "test", DATABASE_URL: url, REDIS_URL: "" }), db);
  observer = new Database(path, { readonly: true });
  const read = observer.prepare<[string], { summary: string }>(
    'SELECT "summary" FROM "providers" WHERE "providerCode" = ?',
  );
  summaryOf = (code) => read.get(code)?.summary;
});

afterAll(async () => {
  observer?.close();
  await db?.$disconnect();
  rmSync(dir, { recursive: true, force: true });
});

async function registered(): Promise<{ providerCode: string; accessToken: string }> {
  const answer = await call("POST", "/api/v1/providers", { app, body: intakeBody() });
  expect(answer.status).toBe(201);
  return answer.body;
}

/** Whether a promise has settled within a few turns of the event loop. */
async function settled(promise: Promise<unknown>): Promise<boolean> {
  let done = false;
  void promise.then(
    () => {
      done = true;
    },
    () => {
      done = true;
    },
  );
  await new Promise((resolve) => setTimeout(resolve, 50));
  return done;
}

async function firstHeld(): Promise<Held> {
  await until(() => held.length > 0, "a sync asked for");
  return held.shift() as Held;
}

/**
 * Sends a PATCH of `summary` while syncs are held, and waits for the sync of its commit: the syncs
 * of the request's earlier writes (the token's last use) are let go.
 */
async function heldPatch(agent: { providerCode: string; accessToken: string }, summary: string) {
  watched = agent.providerCode;
  holding = true;
  const patch = call("PATCH", `/api/v1/providers/${agent.providerCode}`, {
    app,
    token: agent.accessToken,
    body: { summary },
  });
  let sync = await firstHeld();
  while (sync.committed !== summary) {
    sync.release();
    sync = await firstHeld();
  }
  return { patch, sync };
}

describe("writes are answered once durable (SQLite)", () => {
  test("a PATCH is answered only after a sync that began after its commit; reads are not held meanwhile", async () => {
    const agent = await registered();
    try {
      // The PATCH's sync began after its commit (another connection sees the write), and the
      // answer waits for it.
      const { patch, sync } = await heldPatch(agent, "Synced before answered");
      expect(await settled(patch)).toBe(false);
      // A read is not held by a write's sync.
      const read = await call("GET", `/api/v1/providers/${agent.providerCode}`, { app });
      expect(read.status).toBe(200);
      sync.release();
      // Any later sync (the token's last use, say) is released too.
      while (!(await settled(patch))) held.shift()?.release();
      const answer = await patch;
      expect(answer.status).toBe(200);
      expect(answer.body).toMatchObject({ summary: "Synced before answered", version: 2 });
    } finally {
      holding = false;
      for (const h of held.splice(0)) h.release();
    }
  });

  test("an intake whose sync fails is not acknowledged", async () => {
    holding = true;
    watched = "";
    try {
      const intake = call("POST", "/api/v1/providers", { app, body: intakeBody() });
      const sync = await firstHeld();
      expect(await settled(intake)).toBe(false);
      sync.fail(Object.assign(new Error("EIO: i/o error, fdatasync"), { code: "EIO" }));
      const answer = await intake;
      expect(answer.status).toBe(500);
      expect(answer.body.accessToken).toBeUndefined();
    } finally {
      holding = false;
      for (const h of held.splice(0)) h.release();
    }
  });

  test("a PATCH whose sync fails is not acknowledged, and the next write goes on", async () => {
    const agent = await registered();
    try {
      const { patch, sync } = await heldPatch(agent, "Never acknowledged");
      sync.fail(Object.assign(new Error("EIO: i/o error, fdatasync"), { code: "EIO" }));
      expect((await patch).status).toBe(500);
    } finally {
      holding = false;
      for (const h of held.splice(0)) h.release();
    }
    // The connection is not left in the failed write's transaction: the next one commits and answers.
    const next = await call("PATCH", `/api/v1/providers/${agent.providerCode}`, {
      app,
      token: agent.accessToken,
      body: { summary: "Written after" },
    });
    expect(next.status).toBe(200);
    expect(summaryOf(agent.providerCode)).toBe("Written after");
  });
});

describe("walSync", () => {
  /**
   * walSync on a fresh WAL whose fsyncs the test holds and lets go, recording in order when each
   * began and ended: the order is asserted, never a duration, so a loaded machine cannot change it.
   */
  async function heldSync(name: string) {
    const file = join(dir, name);
    writeFileSync(`${file}-wal`, "x");
    const handle = await open(`${file}-wal`, "r");
    const prototype = Object.getPrototypeOf(handle) as { datasync: () => Promise<void> };
    await handle.close();
    const original = prototype.datasync;
    const events: string[] = [];
    const releases: (() => void)[] = [];
    const spy = jest.spyOn(prototype, "datasync").mockImplementation(async function (this: unknown) {
      const n = releases.length;
      events.push(`began ${n}`);
      await new Promise<void>((resolve) => releases.push(resolve));
      await original.call(this);
      events.push(`ended ${n}`);
    });
    const sync = walSync(file);
    const write = () => appendFileSync(`${file}-wal`, "y");
    // Opening the WAL runs on libuv's thread pool, which a loaded machine can hold up for many turns of
    // the loop: these wait on the recorded events, with the suite's cap, rather than count turns.
    /** Waits until `n` fsyncs have begun (more would break the order the tests assert). */
    const begun = async (n: number) => {
      await until(() => releases.length >= n, `fsync ${n} begun`);
      expect(releases.length).toBe(n);
    };
    /** Lets fsync `n` end, and waits until it has. */
    const release = async (n: number) => {
      releases[n]?.();
      await until(() => events.includes(`ended ${n}`), `fsync ${n} ended`);
    };
    /** A few turns of the event loop, in which nothing held may move on. */
    const turns = async () => {
      for (let i = 0; i < 20; i++) await new Promise((resolve) => setImmediate(resolve));
    };
    const done = async () => {
      for (const release of releases) release();
      spy.mockRestore();
      await sync.close?.();
    };
    return { sync, spy, events, write, begun, release, turns, done };
  }

  test("callers of one turn share one fsync, which begins after they asked and without waiting for the one running", async () => {
    const { sync, spy, events, write, begun, release, turns, done } = await heldSync("shared.db");
    try {
      const first = sync();
      await begun(1);
      write();
      events.push("asked");
      const waiting = Array.from({ length: 10 }, () => sync());
      // The second begins while the first is still held: it does not wait for it.
      await begun(2);
      await turns();
      expect(events).toEqual(["began 0", "asked", "began 1"]);
      await release(0);
      await release(1);
      await Promise.all([first, ...waiting]);
      // One fsync for the first caller, one for the ten that came while it ran.
      expect(spy).toHaveBeenCalledTimes(2);
    } finally {
      await done();
    }
  });

  test("with two fsyncs running, later callers share a third that begins once one of them ends", async () => {
    const { sync, spy, events, write, begun, release, turns, done } = await heldSync("queued.db");
    try {
      const first = sync();
      await begun(1);
      const second = sync();
      await begun(2);
      write();
      events.push("asked");
      const late = [sync(), sync()];
      await turns();
      late.push(sync());
      // Both running fsyncs are held: no third begins, however long the callers wait.
      await turns();
      expect(spy).toHaveBeenCalledTimes(2);
      await release(0);
      await begun(3);
      expect(events).toEqual(["began 0", "began 1", "asked", "ended 0", "began 2"]);
      await release(1);
      await release(2);
      await Promise.all([first, second, ...late]);
      expect(spy).toHaveBeenCalledTimes(3);
    } finally {
      await done();
    }
  });

  test("with no WAL written yet there is nothing to sync", async () => {
    const sync = walSync(join(dir, "never-written.db"));
    await expect(sync()).resolves.toBeUndefined();
    await sync.close?.();
  });
});
