/**
 * A source's credential, through the front door: a peer registry (a second instance of the app on a
 * real loopback socket) runs with READ_ACCESS=authenticated, so every read of it needs one. Without a
 * credential the sync fails with the peer's 401 named in lastErrors; with one of the peer's API keys
 * it syncs, and every mirrored provider holds the peer's state hash. The credential is write-only: no
 * REST or GraphQL answer of the source carries it (the raw bodies are searched), nor a log line of the
 * mirror, nor lastErrors; a bad one is a 400 naming it that changes nothing; null clears it. An MCP
 * registry that asks for a bearer token gets it the same way, and MIRROR_SOURCES may declare one.
 */
import { randomBytes } from "node:crypto";
import type { IncomingMessage } from "node:http";
import { describe, expect, test } from "@jest/globals";
import { loadConfig } from "../../src/config.ts";
import { type Db, openDb } from "../../src/db/client.ts";
import { type ProviderState, publicSnapshot, stateHash } from "../../src/events/event.rules.ts";
import { declareSources } from "../../src/mirror/mirror.worker.ts";
import { createApp } from "../../src/yoga.ts";
import { intakeBody, uniqueCode } from "../builders.ts";
import { copyOfTemplate, ON_POSTGRES } from "../database.ts";
import { type Answer, type App, call, closeAfterAll, expectProblem, gql, listen, reviewerToken } from "../helpers.ts";
import { until } from "../wait.ts";
import { startFakeRegistry } from "./fake.registry.ts";
import { startTestMirror } from "./mirror.helpers.ts";

const admin = await reviewerToken("credential-admin", ["admin"]);
const reviewer = await reviewerToken("credential-reviewer");

async function instance(env: Record<string, string> = {}): Promise<{ db: Db; app: App }> {
  const url = await copyOfTemplate();
  const db = await openDb(url);
  const app = createApp(loadConfig({ ...process.env, NODE_ENV: "test", DATABASE_URL: url, ...env }), db);
  closeAfterAll(() => db.$disconnect());
  closeAfterAll(() => app.dispose());
  return { db, app };
}

/** Every field a source has, for GraphQL reads that must not carry the credential. */
const SOURCE_FIELDS = `sourceId url kind policy trustTier intervalSeconds contactEmail fromEnv hasCredential
  createdAt updatedAt state lastSyncAt lastSuccessAt nextSyncAt highWaterMark mirrored
  filter { include exclude registryTypes only } counts { seen created updated retired skipped }
  lastErrors { at message } skippedEntries { at name version reason }`;

describe(`a mirror source's credential (${ON_POSTGRES ? "PostgreSQL" : "SQLite"})`, () => {
  test("a peer that needs credentials: a 401 without, synced with an API key, which no read or log shows", async () => {
    const peer = await instance({ READ_ACCESS: "authenticated" });
    const authorizations: (string | null)[] = [];
    const served = await listen((req: IncomingMessage, res) => {
      authorizations.push(req.headers.authorization ?? null);
      peer.app(req, res);
    });
    const host = `private-peer-${randomBytes(3).toString("hex")}.test`;
    const follower = await instance({
      OUTBOUND_TEST_HOSTS: `${host}=${new URL(served.url).host}`,
      MIRROR_POLL_MS: "3600000",
    });
    const logLines: string[] = [];
    const mirror = startTestMirror(follower.app, {
      db: follower.db,
      log: (line) => logLines.push(JSON.stringify(line)),
    });
    const app = follower.app;

    // The peer: two agents in its directory; its reads need the reader role, which an API key has.
    const codes: string[] = [];
    for (let i = 0; i < 2; i++) {
      const made = await call("POST", "/api/v1/providers", {
        app: peer.app,
        token: reviewer,
        body: intakeBody({ providerCode: uniqueCode("private") }),
      });
      expect(made.status).toBe(201);
      const { providerCode, reviewCode } = made.body as Record<string, string>;
      const decided = await call("POST", `/api/v1/reviews/${reviewCode}/decision`, {
        app: peer.app,
        token: reviewer,
        body: { decision: "APPROVE", note: "approved at the peer" },
      });
      expect(decided.status).toBe(200);
      codes.push(providerCode as string);
    }
    expect((await call("GET", `/api/v1/providers/${codes[0]}`, { app: peer.app })).status).toBe(401);
    const keyMade = await call("POST", "/api/v1/api-keys", { app: peer.app, token: admin, body: { name: "mirror" } });
    expect(keyMade.status).toBe(201);
    const key = (keyMade.body as { secret: string }).secret;
    expect((await call("GET", `/api/v1/providers/${codes[0]}`, { app: peer.app, token: key })).status).toBe(200);

    const path = (id: string) => `/api/v1/mirror/sources/${id}`;
    const source = async (id: string) => {
      const answer = await call("GET", path(id), { app, token: admin });
      expect(answer.status).toBe(200);
      return answer.body as Record<string, any>;
    };
    /** The source once a sync begun at or after `since` has ended in `state`. */
    const ended = (id: string, since: number, state: "IDLE" | "FAILED") =>
      until(
        async () => {
          const s = await source(id);
          const done = s.state === state && Date.parse(s.lastSyncAt ?? 0) >= since;
          return done && (state === "FAILED" || Date.parse(s.lastSuccessAt ?? 0) >= since) ? s : null;
        },
        `a sync ending ${state}`,
        60_000,
      );

    // No credential: the peer refuses, and the error names its 401.
    const made = await call("POST", "/api/v1/mirror/sources", {
      app,
      token: admin,
      body: { url: `https://${host}`, kind: "AGENT_REGISTRY", policy: "TRUSTED", trustTier: "VERIFIED" },
    });
    expect(made.status).toBe(201);
    const id = (made.body as { sourceId: string }).sourceId;
    expect(made.body).toMatchObject({ hasCredential: false });
    const refused = await ended(id, Date.parse((made.body as { createdAt: string }).createdAt), "FAILED");
    expect(refused.lastErrors[0].message).toMatch(/answered 401 \(401 Unauthorized: the upstream needs a credential/);
    expect(refused.mirrored).toBe(0);
    expect(authorizations.length).toBeGreaterThan(0);
    expect(authorizations.every((a) => a === null)).toBe(true);

    // Bad credentials: a 400 naming the field, over REST and GraphQL, on create and update, and nothing changes.
    const sourcesBefore = await follower.db.mirrorSource.count();
    const rowBefore = await follower.db.mirrorSource.findUniqueOrThrow({ where: { sourceId: id } });
    const bad: unknown[] = [
      "",
      "two\r\nlines",
      `${key}\nX-Injected: yes`,
      "with space",
      "é-not-ascii",
      "x".repeat(4097),
      42,
    ];
    for (const credential of bad) {
      const created = await call("POST", "/api/v1/mirror/sources", {
        app,
        token: admin,
        body: { url: `https://other-${host}`, kind: "AGENT_REGISTRY", credential },
      });
      expectProblem(created, 400, "BAD_USER_INPUT");
      expect((created.body as { errors: { path: string }[] }).errors.map((e) => e.path)).toEqual(["/credential"]);
      const changed = await call("PATCH", path(id), { app, token: admin, body: { credential } });
      expectProblem(changed, 400, "BAD_USER_INPUT");
      expect((changed.body as { errors: { path: string }[] }).errors.map((e) => e.path)).toEqual(["/credential"]);
      // A refused value is not quoted back.
      if (typeof credential === "string" && credential.length > 3) {
        expect(created.text).not.toContain(credential);
        expect(changed.text).not.toContain(credential);
      }
    }
    const viaGraphql = await gql(
      "mutation($id: String!, $c: String) { updateMirrorSource(sourceId: $id, credential: $c) { sourceId } }",
      { id, c: "bad\ncredential" },
      { app, token: admin },
    );
    expect(viaGraphql.body.errors?.[0]?.extensions?.code).toBe("BAD_USER_INPUT");
    expect(await follower.db.mirrorSource.count()).toBe(sourcesBefore);
    expect(await follower.db.mirrorSource.findUniqueOrThrow({ where: { sourceId: id } })).toEqual(rowBefore);

    // A wrong key: the peer's 401 again, and the wrong key is in no error or log line either.
    const wrong = `agr_wrong_${randomBytes(12).toString("hex")}`;
    // A change of the source makes it due at once: the sync it starts is the one waited for.
    const beforeWrong = Date.now();
    const setWrong = await call("PATCH", path(id), { app, token: admin, body: { credential: wrong } });
    expect(setWrong.status).toBe(200);
    expect(setWrong.body).toMatchObject({ hasCredential: true });
    const wrongSync = await ended(id, beforeWrong, "FAILED");
    expect(wrongSync.lastErrors[0].message).toMatch(/answered 401/);
    expect(authorizations.at(-1)).toBe(`Bearer ${wrong}`);

    // The API key: synced, each provider holding the peer's hash.
    const beforeKey = Date.now();
    const replaced = await gql(
      `mutation($id: String!, $c: String) { updateMirrorSource(sourceId: $id, credential: $c) { ${SOURCE_FIELDS} } }`,
      { id, c: key },
      { app, token: admin },
    );
    expect(replaced.body.data.updateMirrorSource).toMatchObject({ hasCredential: true });
    const synced = await ended(id, beforeKey, "IDLE");
    expect(synced).toMatchObject({ hasCredential: true, mirrored: 2, counts: { created: 2, skipped: 0 } });
    expect(authorizations.at(-1)).toBe(`Bearer ${key}`);
    for (const code of codes) {
      const here = await call("GET", `/api/v1/providers/${code}`, { app, token: reviewer });
      const there = await call("GET", `/api/v1/providers/${code}`, { app: peer.app, token: key });
      expect(here.body.origin?.upstreamStateHash).toBe(stateHash(publicSnapshot(there.body as ProviderState)));
    }
    // The patch that leaves out the credential keeps it.
    const kept = await call("PATCH", path(id), { app, token: admin, body: { intervalSeconds: 600 } });
    expect(kept.body).toMatchObject({ hasCredential: true, intervalSeconds: 600 });
    expect(await follower.db.mirrorSource.findUniqueOrThrow({ where: { sourceId: id } })).toMatchObject({
      credential: key,
    });

    // Write-only: no answer that shows the source carries either credential.
    const reads: Answer[] = [
      made as Answer,
      setWrong,
      kept,
      await call("GET", path(id), { app, token: admin }),
      await call("GET", "/api/v1/mirror/sources", { app, token: admin }),
      await call("POST", `${path(id)}/sync`, { app, token: admin }),
      await gql(
        `query($id: String!) { mirrorSource(sourceId: $id) { ${SOURCE_FIELDS} } }`,
        { id },
        { app, token: admin },
      ),
      await gql(`{ mirrorSources(limit: 100) { items { ${SOURCE_FIELDS} } } }`, {}, { app, token: admin }),
      replaced,
    ];
    for (const answer of reads) {
      expect(answer.status).toBeLessThan(300);
      expect(answer.text).toContain(id);
      expect(answer.text).not.toContain(key);
      expect(answer.text).not.toContain(wrong);
    }
    const asked = await gql(
      `query($id: String!) { mirrorSource(sourceId: $id) { credential } }`,
      { id },
      { app, token: admin },
    );
    expect(asked.body.errors?.[0]?.message).toMatch(/Cannot query field "credential"/);
    expect(logLines.length).toBeGreaterThan(0);
    expect(logLines.some((l) => l.includes("mirror sync failed"))).toBe(true);
    for (const line of logLines) {
      expect(line).not.toContain(key);
      expect(line).not.toContain(wrong);
    }
    // Nothing runs from here on (a sync the stop cut short keeps its position, and its SYNCING state).
    await mirror.stop();

    // Null clears it.
    const cleared = await call("PATCH", path(id), { app, token: admin, body: { credential: null } });
    expect(cleared.status).toBe(200);
    expect(cleared.body).toMatchObject({ hasCredential: false });
    expect(await follower.db.mirrorSource.findUniqueOrThrow({ where: { sourceId: id } })).toMatchObject({
      credential: null,
    });
  }, 120_000);

  test("an MCP registry's bearer token goes with every request; MIRROR_SOURCES may declare it", async () => {
    const token = `mcp_${randomBytes(16).toString("hex")}`;
    const upstream = await startFakeRegistry({ generated: 3, bearer: token });
    closeAfterAll(() => upstream.close());
    const host = `private-mcp-${randomBytes(3).toString("hex")}.test`;
    const follower = await instance({
      OUTBOUND_TEST_HOSTS: `${host}=${new URL(upstream.url).host}`,
      MIRROR_POLL_MS: "3600000",
    });
    const url = `https://${host}`;
    const declared = (credential?: string) =>
      loadConfig({
        ...process.env,
        NODE_ENV: "test",
        MIRROR_SOURCES: JSON.stringify([{ url, ...(credential === undefined ? {} : { credential }) }]),
      }).mirror;
    await expect(declareSources(follower.db, declared("bad token"))).rejects.toThrow(/MIRROR_SOURCES\[0\]: credential/);
    expect(await follower.db.mirrorSource.count({ where: { url } })).toBe(0);
    await declareSources(follower.db, declared(token));
    const row = await follower.db.mirrorSource.findUniqueOrThrow({ where: { url } });
    expect(row).toMatchObject({ fromEnv: true, credential: token });

    const mirror = startTestMirror(follower.app, { db: follower.db });
    mirror.kick();
    const synced = await until(
      async () => {
        const answer = await call("GET", `/api/v1/mirror/sources/${row.sourceId}`, { app: follower.app, token: admin });
        if (answer.body.state === "FAILED") throw new Error(JSON.stringify(answer.body.lastErrors));
        return answer.body.lastSuccessAt ? answer : null;
      },
      "the MCP source synced",
      60_000,
    );
    expect(synced.body).toMatchObject({ hasCredential: true, fromEnv: true, mirrored: 3 });
    expect(synced.text).not.toContain(token);
    expect(upstream.authorizations.length).toBeGreaterThan(0);
    expect(upstream.authorizations.every((a) => a === `Bearer ${token}`)).toBe(true);
    await mirror.stop();

    // Declared again without one: the variable says everything of its sources, so it has none.
    await declareSources(follower.db, declared());
    expect(await follower.db.mirrorSource.findUniqueOrThrow({ where: { url } })).toMatchObject({ credential: null });
  }, 60_000);
  test("a redirect to another host of the upstream's domain is followed without the credential", async () => {
    const token = `mcp_${randomBytes(16).toString("hex")}`;
    const domain = `split-${randomBytes(3).toString("hex")}.test`;
    const seen: { host: string; authorization: string | null }[] = [];
    const upstream = await listen((req, res) => {
      const host = String(req.headers.host);
      seen.push({ host, authorization: req.headers.authorization ?? null });
      if (host === `www.${domain}`) {
        res.writeHead(302, { location: `https://api.${domain}${req.url}` }).end();
      } else res.writeHead(200, { "content-type": "application/json" }).end('{"servers":[],"metadata":{"count":0}}');
    });
    const port = new URL(upstream.url).host;
    const follower = await instance({
      OUTBOUND_TEST_HOSTS: `www.${domain}=${port},api.${domain}=${port}`,
      MIRROR_POLL_MS: "3600000",
    });
    const mirror = startTestMirror(follower.app, { db: follower.db });
    const made = await call("POST", "/api/v1/mirror/sources", {
      app: follower.app,
      token: admin,
      body: { url: `https://www.${domain}`, credential: token },
    });
    expect(made.status).toBe(201);
    await until(
      async () =>
        (await call("GET", `/api/v1/mirror/sources/${made.body.sourceId}`, { app: follower.app, token: admin })).body
          .lastSuccessAt,
      "the redirected source synced",
      60_000,
    );
    expect(seen.slice(0, 2)).toEqual([
      { host: `www.${domain}`, authorization: `Bearer ${token}` },
      { host: `api.${domain}`, authorization: null },
    ]);
    await mirror.stop();
  }, 60_000);
});
