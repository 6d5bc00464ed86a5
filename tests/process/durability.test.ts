/**
 * Nothing acknowledged is lost: the real process takes concurrent intakes and PATCHes and
 * is killed with SIGKILL in the middle of them; restarted on the same database, every intake that was
 * answered 201 exists, every PATCH that was answered 200 is in its provider's versions with the
 * summary it wrote, and every version list runs 1..n without gap or duplicate — also for the writes
 * that were in flight at the kill (each is all there or not there at all).
 *
 * It runs on the suite's dialect: a fresh SQLite file (WAL; each write answered once synced,
 * src/db/sqlite.ts), or a copy of the PostgreSQL template when the suite runs there. SIGKILL leaves the
 * machine's page cache in place, so this proves atomic, acknowledged-after-commit writes; surviving
 * power loss is the sync's job (README, "Durability"; tests/db/wal-sync.test.ts).
 */
import { randomBytes } from "node:crypto";
import { join } from "node:path";
import { afterAll, describe, expect, test } from "@jest/globals";
import Database from "better-sqlite3";
import { dialectOf, sqlitePath } from "../../src/db/client.ts";
import { intakeBody } from "../builders.ts";
import { copyOfTemplate, ON_POSTGRES } from "../database.ts";
import { cleanUp, pool, request, type Server, startServer, tempDir } from "./server.process.ts";

afterAll(cleanUp, 30_000);

const dialects: [string, () => Promise<string>][] = [
  ON_POSTGRES ? ["PostgreSQL", copyOfTemplate] : ["SQLite", async () => `file:${join(tempDir(), "durability.db")}`],
];

interface Made {
  code: string;
  token: string;
  /** Acknowledged PATCHes: the version each was answered with, and its summary. */
  acknowledged: { version: number; summary: string }[];
}

/** Follows a provider's version list to its end (newest first), as the owner. */
async function allVersions(server: Server, code: string, token: string): Promise<number[]> {
  const versions: number[] = [];
  let cursor: string | null = null;
  do {
    const page = await request(
      server,
      "GET",
      `/api/v1/providers/${code}/versions?limit=100${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ""}`,
      { token },
    );
    expect(page.status).toBe(200);
    versions.push(...page.body.items.map((v: { version: number }) => v.version));
    cursor = page.body.nextCursor;
  } while (cursor);
  return versions;
}

describe.each(dialects)("SIGKILL mid-stream on %s", (_name, databaseUrlOf) => {
  test("every acknowledged write survives the kill; every version list is 1..n", async () => {
    const databaseUrl = await databaseUrlOf();
    const run = randomBytes(3).toString("hex");
    const server = await startServer(databaseUrl);

    const made: Made[] = [];
    /** Intakes sent but not answered 201 (in flight at the kill): they may or may not exist. */
    const unanswered: string[] = [];
    let acknowledged = 0;
    let killed = false;
    let serial = 0;

    const intakeOne = async () => {
      const code = `durable-${run}-${serial++}`;
      try {
        const answer = await request(server, "POST", "/api/v1/providers", { body: intakeBody({ providerCode: code }) });
        if (answer.status !== 201) throw new Error(`intake answered ${answer.status}: ${answer.text}`);
        made.push({ code, token: answer.body.accessToken, acknowledged: [] });
        acknowledged++;
      } catch (error) {
        if (!killed) throw error;
        unanswered.push(code);
      }
    };
    const patchOne = async () => {
      const p = made[Math.floor(Math.random() * made.length)] as Made;
      const summary = `write ${serial++} of ${p.code}`;
      try {
        const answer = await request(server, "PATCH", `/api/v1/providers/${p.code}`, {
          body: { summary, labels: [`l${serial % 7}`] },
          token: p.token,
        });
        if (answer.status !== 200) throw new Error(`PATCH answered ${answer.status}: ${answer.text}`);
        // The ETag is the version this PATCH wrote; the body is the profile read after the commit,
        // which on PostgreSQL may already include a concurrent later PATCH.
        p.acknowledged.push({ version: Number(answer.headers.get("etag")?.replaceAll('"', "")), summary });
        acknowledged++;
      } catch (error) {
        if (!killed) throw error;
      }
    };

    // A first batch, so there is something to PATCH; then a stream of mixed writes from 16 clients
    // until SIGKILL lands in the middle of it.
    await Promise.all(Array.from({ length: 8 }, intakeOne));
    const KILL_AFTER = 200;
    const clients = Array.from({ length: 16 }, async () => {
      while (!killed) await (Math.random() < 0.2 ? intakeOne() : patchOne());
    });
    while (acknowledged < KILL_AFTER) await new Promise((r) => setTimeout(r, 5));
    killed = true;
    server.child.kill("SIGKILL");
    await Promise.all(clients);
    expect(await server.exited).toEqual({ code: null, signal: "SIGKILL" });

    if (dialectOf(databaseUrl) === "sqlite") {
      // The file is sound, and in WAL mode, before anything opens it again.
      const file = new Database(sqlitePath(databaseUrl), { readonly: true });
      try {
        expect(file.pragma("journal_mode", { simple: true })).toBe("wal");
        expect(file.pragma("integrity_check", { simple: true })).toBe("ok");
      } finally {
        file.close();
      }
    }

    const again = await startServer(databaseUrl);
    let checked = 0;
    await pool(
      made.map((p) => async () => {
        const profile = await request(again, "GET", `/api/v1/providers/${p.code}`, { token: p.token });
        expect(profile.status).toBe(200);
        const versions = await allVersions(again, p.code, p.token);
        const n = versions.length;
        expect(versions).toEqual(Array.from({ length: n }, (_, i) => n - i));
        expect(profile.body.version).toBe(n);
        expect(n).toBeGreaterThanOrEqual(1 + p.acknowledged.length);
        for (const { version, summary } of p.acknowledged) {
          const one = await request(again, "GET", `/api/v1/providers/${p.code}/versions/${version}`, {
            token: p.token,
          });
          expect(one.status).toBe(200);
          expect(one.body.snapshot.summary).toBe(summary);
          checked++;
        }
      }),
      8,
    );
    // An intake cut by the kill is all there (version 1, its review) or not there at all.
    for (const code of unanswered) {
      const profile = await request(again, "GET", `/api/v1/providers/${code}`);
      expect([200, 404]).toContain(profile.status);
      if (profile.status === 200) expect(profile.body.version).toBe(1);
    }
    expect(made.length + checked).toBeGreaterThanOrEqual(KILL_AFTER);
    console.info(
      `durability (${dialectOf(databaseUrl)}): ${made.length} intakes and ${checked} PATCHes acknowledged before SIGKILL, all found; ${unanswered.length} intakes cut`,
    );
    again.child.kill("SIGTERM");
    expect((await again.exited).code).toBe(0);
    // Two server starts, 200 writes and their read-back: 23 s on PostgreSQL beside the suite, past
    // 60 s on a machine busy far beyond its two cores. A cap for a hang, not a measure.
  }, 120_000);
});
