/**
 * Exactly once for an AGENT_REGISTRY source, with a real process: the mirroring registry (as
 * `npm start` runs it) follows a peer — a second instance of the app in this process, on a database
 * of its own, on a real loopback port, whose reads need credentials (READ_ACCESS=authenticated; the
 * source carries one of its API keys). After a first sync has listed the peer's directory, the peer
 * gains many agents, and the registry is killed with SIGKILL while it follows the peer's event log
 * (once it has made some of them, seen through its own API), then started again on the same database.
 * The restarted sync resumes from the last event it committed, and every agent of the peer is one
 * provider here: one PROVIDER_CREATED each, its public state hash the peer's, the source's seq the
 * peer's last. Over 10 s: the peer's agents are made through its API, and two real server starts.
 */
import { randomBytes } from "node:crypto";
import type { IncomingMessage } from "node:http";
import { join } from "node:path";
import { afterAll, describe, expect, test } from "@jest/globals";
import { signReviewerToken } from "../../src/auth/reviewer.jwt.ts";
import { loadConfig } from "../../src/config.ts";
import { openDb } from "../../src/db/client.ts";
import { type ProviderState, publicSnapshot, stateHash } from "../../src/events/event.rules.ts";
import { createApp } from "../../src/yoga.ts";
import { intakeBody, uniqueCode } from "../builders.ts";
import { copyOfTemplate, ON_POSTGRES } from "../database.ts";
import { call, closeAfterAll, listen, reviewerToken } from "../helpers.ts";
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

afterAll(cleanUp, 30_000);

/** The peer's agents made after the first sync: the events the killed run is following. */
const LATER = 150;
/** The follower is killed once it has made this many of them. */
const KILL_AFTER = 30;

const processAdmin = await signReviewerToken(
  loadConfig({ ...process.env, NODE_ENV: "production", REVIEWER_JWT_SECRET: PROCESS_JWT_SECRET }),
  "peer-process-admin",
  { roles: ["admin"] },
);
const peerAdmin = await reviewerToken("peer-admin", ["admin"]);
const peerReviewer = await reviewerToken("peer-reviewer");

async function allEvents(server: Server): Promise<{ seq: number; kind: string; providerCode: string | null }[]> {
  const events: { seq: number; kind: string; providerCode: string | null }[] = [];
  let after = 0;
  for (;;) {
    const page = await request(server, "GET", `/api/v1/events?after=${after}&limit=100`, { token: processAdmin });
    expect(page.status).toBe(200);
    events.push(...page.body.items);
    if (!page.body.nextCursor || page.body.items.length === 0) return events;
    after = page.body.items.at(-1).seq;
  }
}

describe(`SIGKILL while following a peer's event log (${ON_POSTGRES ? "PostgreSQL" : "SQLite"})`, () => {
  test("the restarted sync resumes from the last event it applied; every agent of the peer is one provider", async () => {
    // The peer, in this process: its own database, a real socket, reads for credentials only.
    const peerUrl = await copyOfTemplate();
    const peerDb = await openDb(peerUrl);
    const peer = createApp(
      loadConfig({ ...process.env, NODE_ENV: "test", DATABASE_URL: peerUrl, READ_ACCESS: "authenticated" }),
      peerDb,
    );
    closeAfterAll(() => peerDb.$disconnect());
    closeAfterAll(() => peer.dispose());
    const asked: string[] = [];
    const served = await listen((req: IncomingMessage, res) => {
      asked.push(req.url ?? "");
      peer(req, res);
    });
    const agent = async () => {
      const made = await call("POST", "/api/v1/providers", {
        app: peer,
        token: peerReviewer,
        body: intakeBody({ providerCode: uniqueCode("peer-proc") }),
      });
      expect(made.status).toBe(201);
      const { providerCode, reviewCode } = made.body as Record<string, string>;
      const decided = await call("POST", `/api/v1/reviews/${reviewCode}/decision`, {
        app: peer,
        token: peerReviewer,
        body: { decision: "APPROVE", note: "approved at the peer" },
      });
      expect(decided.status).toBe(200);
      return providerCode as string;
    };
    const keyMade = await call("POST", "/api/v1/api-keys", { app: peer, token: peerAdmin, body: { name: "mirror" } });
    expect(keyMade.status).toBe(201);
    const key = (keyMade.body as { secret: string }).secret;
    const codes = [await agent(), await agent()];

    const host = `peer-${randomBytes(3).toString("hex")}.test`;
    const databaseUrl = ON_POSTGRES ? await copyOfTemplate() : `file:${join(tempDir(), "follower.db")}`;
    const env = {
      // Not production: the peer is a loopback test host (OUTBOUND_TEST_HOSTS).
      NODE_ENV: "development",
      OUTBOUND_TEST_HOSTS: `${host}=${new URL(served.url).host}`,
      MIRROR_POLL_MS: "50",
      MIRROR_TIMEOUT_MS: "1000",
      MIRROR_LEASE_MS: "1500",
    };
    const first = await startServer(databaseUrl, env);
    const made = await request(first, "POST", "/api/v1/mirror/sources", {
      token: processAdmin,
      body: {
        url: `https://${host}`,
        kind: "AGENT_REGISTRY",
        policy: "TRUSTED",
        trustTier: "VERIFIED",
        credential: key,
      },
    });
    expect(made.status).toBe(201);
    expect(made.body).toMatchObject({ hasCredential: true });
    const id = made.body.sourceId as string;
    const sourceOf = async (server: Server) => {
      const answer = await request(server, "GET", `/api/v1/mirror/sources/${id}`, { token: processAdmin });
      expect(answer.status).toBe(200);
      return answer.body;
    };
    // The first sync lists the peer's directory (two agents) and ends at the log's head.
    const listed = await until(
      async () => {
        const s = await sourceOf(first);
        if (s.state === "FAILED") throw new Error(`the first sync failed: ${JSON.stringify(s.lastErrors)}`);
        return s.lastSuccessAt ? s : null;
      },
      "the first sync",
      60_000,
    );
    expect(listed).toMatchObject({ mirrored: 2, counts: { created: 2 } });
    const listedMark = Number(listed.highWaterMark);
    expect(listedMark).toBeGreaterThan(0);

    // The peer gains agents: the next sync follows its event log to make them.
    codes.push(
      ...(await pool(
        Array.from({ length: LATER }, () => agent),
        4,
      )),
    );
    asked.length = 0;
    expect((await request(first, "POST", `/api/v1/mirror/sources/${id}/sync`, { token: processAdmin })).status).toBe(
      202,
    );
    await until(
      async () => {
        const s = await sourceOf(first);
        if (s.state === "FAILED") throw new Error(`the sync failed: ${JSON.stringify(s.lastErrors)}`);
        return s.state === "SYNCING" && s.counts.created >= KILL_AFTER;
      },
      `${KILL_AFTER} of the peer's new agents made`,
      60_000,
    );
    first.child.kill("SIGKILL");
    await first.exited;

    // Killed mid-run, following the log (not listing it): the run's place is some event past the first sync's.
    const followerDb = await openDb(databaseUrl);
    const killed = await followerDb.mirrorSource.findUniqueOrThrow({ where: { sourceId: id } });
    const madeBeforeKill = await followerDb.mirrorEntry.count({ where: { sourceRowId: killed.id } });
    await followerDb.$disconnect();
    expect(killed).toMatchObject({ state: "SYNCING", runSince: "follow", mark: String(listedMark) });
    expect(Number(killed.runHigh)).toBeGreaterThan(listedMark);
    expect(madeBeforeKill).toBeGreaterThanOrEqual(2 + KILL_AFTER);
    expect(madeBeforeKill).toBeLessThan(codes.length);
    expect(asked.some((p) => p.startsWith("/api/v1/providers?"))).toBe(false);
    const killedAfter = asked.length;

    const second = await startServer(databaseUrl, env);
    const source = await until(
      async () => {
        const s = await sourceOf(second);
        if (s.state === "FAILED") throw new Error(`the resumed sync failed: ${JSON.stringify(s.lastErrors)}`);
        return s.state === "IDLE" && Date.parse(s.lastSuccessAt) > Date.parse(listed.lastSuccessAt) ? s : null;
      },
      "the resumed sync finished",
      120_000,
    );
    // Resumed from the last event it committed, with the credential, not from the first sync's seq.
    const resumed = asked.slice(killedAfter).find((p) => p.startsWith("/api/v1/events?"));
    expect(resumed).toContain(`after=${killed.runHigh}`);
    expect(asked.slice(killedAfter).some((p) => p.startsWith("/api/v1/providers?"))).toBe(false);

    // Every agent of the peer is one provider here: made once, none twice.
    expect(source.mirrored).toBe(codes.length);
    expect(source.counts).toMatchObject({ created: LATER, retired: 0, skipped: 0 });
    const events = await allEvents(second);
    const created = events.filter((e) => e.kind === "PROVIDER_CREATED").map((e) => e.providerCode);
    expect(created).toHaveLength(codes.length);
    expect(new Set(created)).toEqual(new Set(codes));
    // Its seq is the peer's last, as a reader of the peer sees its log.
    const head = await call("GET", "/api/v1/events?last=1", { app: peer, token: key });
    expect(head.status).toBe(200);
    expect(source.highWaterMark).toBe(String((head.body as { items: { seq: number }[] }).items[0]?.seq));
    for (const code of codes) {
      const here = await request(second, "GET", `/api/v1/providers/${code}`);
      const there = await call("GET", `/api/v1/providers/${code}`, { app: peer, token: key });
      expect({ code, hash: here.body.origin?.upstreamStateHash }).toEqual({
        code,
        hash: stateHash(publicSnapshot(there.body as ProviderState)),
      });
    }
    // The credential was never written to a log line of either process.
    expect(first.lines.length + second.lines.length).toBeGreaterThan(0);
    expect([...first.lines, ...second.lines, ...first.stderr, ...second.stderr].join("\n")).not.toContain(key);
  }, 300_000);
});
