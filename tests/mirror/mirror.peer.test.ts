/**
 * Mirroring another registry of this kind (an AGENT_REGISTRY source) through the front door: a second
 * instance of the app, on a database of its own, served on a real loopback socket; this file's app
 * follows it with the mirror worker as main.ts starts it. The peer's providers are made, approved,
 * changed, deprecated, retired and suspended through its API; after every sync each mirrored provider
 * holds the peer's public state hash for it (its events' `stateHash`). A snapshot that parted from the
 * peer's and a log pruned past the follower's seq (a 410) each send it back to the paged list.
 *
 * On PostgreSQL the peer is a SQLite file and the follower this file's PostgreSQL database, then the
 * reverse; on the SQLite pass both are SQLite.
 */
import { randomBytes } from "node:crypto";
import { mkdtempSync, rmSync } from "node:fs";
import type { IncomingMessage } from "node:http";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, test } from "@jest/globals";
import { loadConfig } from "../../src/config.ts";
import { type Db, openDb } from "../../src/db/client.ts";
import { migrate } from "../../src/db/migrate.ts";
import { type ProviderState, publicSnapshot, stateHash } from "../../src/events/event.rules.ts";
import { pruneEvents } from "../../src/events/event.store.ts";
import { createApp } from "../../src/yoga.ts";
import { intakeBody, uniqueCode } from "../builders.ts";
import { copyOfTemplate, ON_POSTGRES } from "../database.ts";
import { type App, call, closeAfterAll, listen, reviewerToken } from "../helpers.ts";
import { until } from "../wait.ts";
import { startTestMirror } from "./mirror.helpers.ts";

const admin = await reviewerToken("peer-admin", ["admin"]);
const reviewer = await reviewerToken("peer-reviewer");

interface Instance {
  db: Db;
  app: App;
}

/** An app on a fresh database of its own: of the suite's dialect, or a SQLite one. */
async function instance(on: "suite" | "sqlite", env: Record<string, string> = {}): Promise<Instance> {
  let url: string;
  if (on === "sqlite" && ON_POSTGRES) {
    const dir = mkdtempSync(join(tmpdir(), "mirror-peer-"));
    closeAfterAll(() => rmSync(dir, { recursive: true, force: true }));
    url = `file:${join(dir, "peer.db")}`;
    await migrate(url);
  } else url = await copyOfTemplate();
  const db = await openDb(url);
  const app = createApp(loadConfig({ ...process.env, NODE_ENV: "test", DATABASE_URL: url, ...env }), db);
  // Closed newest first: the app, then its database.
  closeAfterAll(() => db.$disconnect());
  closeAfterAll(() => app.dispose());
  return { db, app };
}

/** The peer on a socket, with the paths it was asked for. */
async function served(peer: Instance) {
  const asked: string[] = [];
  const server = await listen((req: IncomingMessage, res) => {
    asked.push(req.url ?? "");
    peer.app(req, res);
  });
  return { url: server.url, asked };
}

/** An intake at the peer, approved there unless `pending`. */
async function agentAt(peer: App, overrides: Record<string, unknown> = {}, pending = false) {
  const made = await call("POST", "/api/v1/providers", {
    app: peer,
    body: intakeBody({ providerCode: uniqueCode("peer"), ...overrides }),
  });
  expect(made.status).toBe(201);
  const { providerCode, reviewCode, accessToken } = made.body as Record<string, string>;
  if (!pending) await decide(peer, reviewCode as string);
  return { code: providerCode as string, reviewCode: reviewCode as string, token: accessToken as string };
}

async function decide(peer: App, reviewCode: string) {
  const answer = await call("POST", `/api/v1/reviews/${reviewCode}/decision`, {
    app: peer,
    token: reviewer,
    body: { decision: "APPROVE", note: "approved at the peer" },
  });
  expect(answer.status).toBe(200);
}

/** The peer's public state hash of a provider, of its profile as anyone reads it. */
async function peerHash(peer: App, code: string): Promise<string> {
  const answer = await call("GET", `/api/v1/providers/${code}`, { app: peer });
  expect(answer.status).toBe(200);
  return stateHash(publicSnapshot(answer.body as ProviderState));
}

/** The stateHash of a provider's newest event at the peer. */
async function lastEventHash(peer: App, code: string): Promise<string | undefined> {
  const answer = await call("GET", `/api/v1/events?providerCode=${code}&last=1`, { app: peer, token: reviewer });
  return (answer.body as { items: { stateHash: string }[] }).items[0]?.stateHash;
}

const scenarios: [string, "suite" | "sqlite", "suite" | "sqlite"][] = ON_POSTGRES
  ? [
      ["PostgreSQL follows SQLite", "suite", "sqlite"],
      ["SQLite follows PostgreSQL", "sqlite", "suite"],
    ]
  : [["SQLite follows SQLite", "suite", "suite"]];

describe.each(scenarios)("%s", (_name, followerOn, peerOn) => {
  test("the follower holds the peer's directory, follows its log, and lists again on a parting or a 410", async () => {
    const peer = await instance(peerOn);
    const { url, asked } = await served(peer);
    const host = `peer-${randomBytes(3).toString("hex")}.test`;
    const follower = await instance(followerOn, {
      OUTBOUND_TEST_HOSTS: `${host}=${new URL(url).host}`,
      MIRROR_POLL_MS: "3600000",
    });
    startTestMirror(follower.app, { db: follower.db });
    const app = follower.app;

    const source = async (id: string) =>
      (await call("GET", `/api/v1/mirror/sources/${id}`, { app, token: admin })).body as Record<string, any>;
    /** The source once a sync begun at or after `since` has ended. */
    const synced = (id: string, since: number) =>
      until(
        async () => {
          const s = await source(id);
          if (s.state === "FAILED") throw new Error(`the sync failed: ${JSON.stringify(s.lastErrors)}`);
          return s.state === "IDLE" &&
            Date.parse(s.lastSyncAt ?? 0) >= since &&
            Date.parse(s.lastSuccessAt ?? 0) >= since
            ? s
            : null;
        },
        "a sync",
        60_000,
      );
    const syncNow = async (id: string) => {
      const before = Date.now();
      expect((await call("POST", `/api/v1/mirror/sources/${id}/sync`, { app, token: admin })).status).toBe(202);
      return synced(id, before);
    };
    const mirrored = async (code: string) => {
      const answer = await call("GET", `/api/v1/providers/${code}`, { app, token: reviewer });
      return answer.status === 200 ? (answer.body as Record<string, any>) : null;
    };
    /** Every code's mirrored provider holds the peer's hash for it. */
    const inStep = async (codes: string[]) => {
      for (const code of codes) {
        const here = await mirrored(code);
        expect({ code, hash: here?.origin?.upstreamStateHash }).toEqual({ code, hash: await peerHash(peer.app, code) });
      }
    };

    // The peer: two in its directory (one with tools and a deprecation), one still in review.
    const first = await agentAt(peer.app, {
      tools: [{ name: "plan_route", kind: "MCP", description: "Plans a route", scopes: ["READ_ONLY"] }],
      labels: ["maps"],
    });
    const second = await agentAt(peer.app);
    await call("POST", `/api/v1/providers/${second.code}/lifecycle`, {
      app: peer.app,
      token: second.token,
      body: { state: "DEPRECATED", message: "use the first one" },
    });
    const pending = await agentAt(peer.app, {}, true);

    const made = await call("POST", "/api/v1/mirror/sources", {
      app,
      token: admin,
      body: { url: `https://${host}`, kind: "AGENT_REGISTRY", policy: "TRUSTED", trustTier: "VERIFIED" },
    });
    expect(made.status).toBe(201);
    const id = (made.body as { sourceId: string }).sourceId;

    // First sync, begun by the source's creation: the directory, listed.
    const firstSync = await synced(id, Date.parse((made.body as { createdAt: string }).createdAt));
    expect(firstSync.counts).toMatchObject({ created: 2, skipped: 0 });
    expect(asked.some((p) => p.startsWith("/api/v1/providers?"))).toBe(true);
    expect(await mirrored(first.code)).toMatchObject({
      reviewStage: "APPROVED",
      trustTier: "VERIFIED",
      lifecycle: "ACTIVE",
      tools: [expect.objectContaining({ name: "plan_route" })],
      origin: {
        kind: "AGENT_REGISTRY",
        upstreamName: first.code,
        upstreamStatus: "active",
        sourceUrl: `https://${host}`,
      },
    });
    expect(await mirrored(second.code)).toMatchObject({
      lifecycle: "DEPRECATED",
      lifecycleMessage: "use the first one",
    });
    expect(await mirrored(pending.code)).toBeNull();
    await inStep([first.code, second.code]);
    // The profile's hash is the one its events carry.
    expect(await peerHash(peer.app, first.code)).toBe(await lastEventHash(peer.app, first.code));

    // The peer changes; the next sync follows its log, and lists nothing.
    asked.length = 0;
    const patched = await call("PATCH", `/api/v1/providers/${first.code}`, {
      app: peer.app,
      token: first.token,
      body: { summary: "Plans routes, now with traffic" },
    });
    expect(patched.status).toBe(200);
    await decide(peer.app, pending.reviewCode);
    await call("POST", `/api/v1/providers/${second.code}/lifecycle`, {
      app: peer.app,
      token: second.token,
      body: { state: "RETIRED", message: "gone for good" },
    });
    const suspended = await agentAt(peer.app);
    await syncNow(id);
    expect(
      (
        await call("POST", `/api/v1/providers/${suspended.code}/suspend`, {
          app: peer.app,
          token: reviewer,
          body: { note: "abuse reported" },
        })
      ).status,
    ).toBe(200);
    const followed = await syncNow(id);
    expect(asked.filter((p) => p.startsWith("/api/v1/providers?"))).toEqual([]);
    expect(asked.some((p) => p.startsWith("/api/v1/events?"))).toBe(true);
    expect(followed.counts).toMatchObject({ retired: 1, skipped: 0 });
    // A summary change from the owner is an update its UPDATE review would gate at the peer: none here (a TRUSTED source).
    expect(await mirrored(first.code)).toMatchObject({ summary: "Plans routes, now with traffic" });
    expect(await mirrored(pending.code)).toMatchObject({ reviewStage: "APPROVED", lifecycle: "ACTIVE" });
    expect(await mirrored(second.code)).toMatchObject({ lifecycle: "RETIRED", lifecycleMessage: "gone for good" });
    expect(await mirrored(suspended.code)).toMatchObject({
      lifecycle: "RETIRED",
      lifecycleMessage: `no longer in the directory of https://${host}`,
      origin: { upstreamStatus: "withdrawn" },
    });
    await inStep([first.code, second.code, pending.code]);

    // A snapshot that parted from the peer's: the next event does not lead to its hash, so the directory is listed again.
    const entry = await follower.db.mirrorEntry.findFirstOrThrow({ where: { upstreamName: first.code } });
    await follower.db.mirrorEntry.update({
      where: { providerId: entry.providerId },
      data: { snapshot: { ...(entry.snapshot as object), name: "Parted" }, upstreamMark: null },
    });
    await call("PATCH", `/api/v1/providers/${first.code}`, {
      app: peer.app,
      token: first.token,
      body: { description: "Now with **traffic**." },
    });
    asked.length = 0;
    await syncNow(id);
    expect(asked.some((p) => p.startsWith("/api/v1/providers?"))).toBe(true);
    expect(await mirrored(first.code)).toMatchObject({ description: "Now with **traffic**." });
    await inStep([first.code, second.code, pending.code]);

    // The peer's log pruned past the follower's seq: a 410, then the list again.
    await call("PATCH", `/api/v1/providers/${pending.code}`, {
      app: peer.app,
      token: pending.token,
      body: { summary: "Changed while its events were pruned" },
    });
    await call("PATCH", `/api/v1/providers/${first.code}`, {
      app: peer.app,
      token: first.token,
      body: { summary: "Once more" },
    });
    expect(await pruneEvents(peer.db, new Date(Date.now() + 60_000))).toBeGreaterThan(0);
    asked.length = 0;
    const afterGone = await syncNow(id);
    expect(asked.some((p) => p.startsWith("/api/v1/providers?"))).toBe(true);
    expect(afterGone.lastErrors ?? []).toEqual(firstSync.lastErrors ?? []);
    expect(await mirrored(pending.code)).toMatchObject({ summary: "Changed while its events were pruned" });
    expect(await mirrored(first.code)).toMatchObject({ summary: "Once more" });
    await inStep([first.code, second.code, pending.code]);
  });
});
