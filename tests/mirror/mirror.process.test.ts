/**
 * Exactly once, with a real process: the server (as `npm start` runs it) bootstraps a source from
 * MIRROR_SOURCES and syncs 600 servers from the fake registry; it is killed with SIGKILL in the middle
 * of the run, then started again on the same database. The sync resumes from the last step it
 * committed (asking for the page it was on, not the first), and every server became exactly one
 * provider: one PROVIDER_CREATED each, none updated, the source's counts adding up to the upstream's.
 * `npm run mirror -- --source <url> --once` does the same bootstrap from the command line. Over 10 s:
 * two real server starts and two CLI runs, each a process of its own.
 */
import { execFile } from "node:child_process";
import { randomBytes } from "node:crypto";
import { join } from "node:path";
import { afterAll, describe, expect, test } from "@jest/globals";
import { signReviewerToken } from "../../src/auth/reviewer.jwt.ts";
import { loadConfig } from "../../src/config.ts";
import { intakeBody } from "../builders.ts";
import { copyOfTemplate, ON_POSTGRES } from "../database.ts";
import {
  cleanUp,
  PROCESS_JWT_SECRET,
  pool,
  request,
  type Server,
  startServer,
  tempDir,
} from "../process/server.process.ts";
import { until } from "../wait.ts";
import { startFakeRegistry } from "./fake.registry.ts";

afterAll(cleanUp, 30_000);

const SERVERS = 600;
const admin = await signReviewerToken(
  loadConfig({ ...process.env, NODE_ENV: "production", REVIEWER_JWT_SECRET: PROCESS_JWT_SECRET }),
  "mirror-admin",
  { roles: ["admin"] },
);

async function allEvents(server: Server): Promise<{ kind: string; providerCode: string | null }[]> {
  const events: { kind: string; providerCode: string | null }[] = [];
  let after = 0;
  for (;;) {
    const page = await request(server, "GET", `/api/v1/events?after=${after}&limit=100`, { token: admin });
    expect(page.status).toBe(200);
    events.push(...page.body.items);
    if (!page.body.nextCursor || page.body.items.length === 0) return events;
    after = page.body.items.at(-1).seq;
  }
}

describe(`SIGKILL in the middle of a sync (${ON_POSTGRES ? "PostgreSQL" : "SQLite"})`, () => {
  test("the restarted sync resumes where it stopped; every server is one provider", async () => {
    const upstream = await startFakeRegistry({ generated: SERVERS });
    try {
      const host = `upstream-${randomBytes(3).toString("hex")}.test`;
      const databaseUrl = ON_POSTGRES ? await copyOfTemplate() : `file:${join(tempDir(), "mirror.db")}`;
      const env = {
        // Not production: the upstream is a loopback test host (OUTBOUND_TEST_HOSTS).
        NODE_ENV: "development",
        OUTBOUND_TEST_HOSTS: `${host}=${new URL(upstream.url).host}`,
        MIRROR_SOURCES: `https://${host}`,
        MIRROR_POLL_MS: "50",
        MIRROR_TIMEOUT_MS: "1000",
        MIRROR_LEASE_MS: "1500",
      };
      const first = await startServer(databaseUrl, env);
      // Killed once the third page has been served: its entries are being written.
      await until(() => upstream.requests.length >= 3, "the third page asked for", 60_000);
      first.child.kill("SIGKILL");
      await first.exited;
      const killedAfter = upstream.requests.length;

      const second = await startServer(databaseUrl, env);
      // Requests write while the mirror's thread does, on its own connection: each is answered, and
      // kept. Each intake reads before it writes, which on SQLite needs the write turns both connections take.
      const intakes = await pool(
        Array.from({ length: 40 }, (_, i) => async () => {
          const answer = await request(second, "POST", "/api/v1/providers", {
            body: intakeBody({ providerCode: `during-sync-${i}` }),
          });
          return { status: answer.status, at: Date.now() };
        }),
        4,
      );
      expect(intakes.map((i) => i.status)).toEqual(intakes.map(() => 201));
      const source = await until(
        async () => {
          const list = await request(second, "GET", "/api/v1/mirror/sources", { token: admin });
          const s = list.body.items?.[0];
          return s?.lastSuccessAt ? s : null;
        },
        "the resumed sync finished",
        60_000,
      );
      // Resumed on the page it was on (asked with that page's cursor), not from the first page.
      expect(upstream.requests[killedAfter]).toMatch(/cursor=/);
      expect(source.counts).toMatchObject({ created: SERVERS, updated: 0, retired: 0, skipped: 0 });
      expect(source.mirrored).toBe(SERVERS);
      const events = await allEvents(second);
      const intaken = new Set(intakes.map((_, i) => `during-sync-${i}`));
      const all = events.filter((e) => e.kind === "PROVIDER_CREATED").map((e) => e.providerCode ?? "");
      const created = all.filter((code) => !intaken.has(code));
      expect(created).toHaveLength(SERVERS);
      expect(new Set(created).size).toBe(SERVERS);
      expect(events.filter((e) => e.kind === "PROVIDER_UPDATED")).toEqual([]);
      // The intakes ran during the sync, and each is in the log.
      expect(intakes[0]!.at).toBeLessThan(Date.parse(source.lastSuccessAt));
      expect(new Set(all.filter((code) => intaken.has(code)))).toEqual(intaken);
    } finally {
      await upstream.close();
    }
  }, 120_000);

  test("npm run mirror -- --source <url> --once bootstraps a registry and prints its counts", async () => {
    const upstream = await startFakeRegistry({ generated: 150 });
    try {
      const host = `cli-${randomBytes(3).toString("hex")}.test`;
      const { NODE_OPTIONS: _jestOnly, ...inherited } = process.env;
      const databaseUrl = ON_POSTGRES ? await copyOfTemplate() : `file:${join(tempDir(), "cli.db")}`;
      const run = (args: string[]) =>
        new Promise<{ code: number; stdout: string; stderr: string }>((resolve) => {
          execFile(
            process.execPath,
            ["--import", "tsx", "src/mirror/mirror.cli.ts", ...args],
            {
              env: {
                ...inherited,
                NODE_ENV: "development",
                DATABASE_URL: databaseUrl,
                OUTBOUND_TEST_HOSTS: `${host}=${new URL(upstream.url).host}`,
              },
            },
            (error, stdout, stderr) => resolve({ code: error ? Number(error.code ?? 1) : 0, stdout, stderr }),
          );
        });
      expect((await run(["--source", `https://${host}`])).code).toBe(2);
      const first = await run(["--source", `https://${host}`, "--once", "--include", "io.github.gen-1*"]);
      expect(first).toMatchObject({ code: 0 });
      // gen-1, gen-10…19, gen-100…150 (a name filter on the upstream's names).
      expect(JSON.parse(first.stdout)).toMatchObject({ state: "IDLE", created: 62, updated: 0, skipped: 0 });
      expect(first.stderr).toMatch(/150 seen · 62 created/);
      const again = await run(["--source", `https://${host}`, "--once"]);
      expect(JSON.parse(again.stdout)).toMatchObject({ created: 0, seen: 0 });
    } finally {
      await upstream.close();
    }
  }, 60_000);
});
