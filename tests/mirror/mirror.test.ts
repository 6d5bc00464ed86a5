/**
 * Mirroring an MCP registry through the front door: an admin adds a source over REST, the mirror
 * worker (as main.ts starts it) syncs it from a fake of the official registry on loopback
 * (tests/mirror/fake.registry.ts: the 32 examples of its docs, generated servers, a malformed entry),
 * and what came in is read back where people see it — profiles with their origin, the review queue,
 * versions, the event log. Then the upstream changes (a new version, a deprecation, a deletion) and
 * fails mid-run; the sync resumes where it stopped, and nothing is applied twice.
 */
import { randomBytes } from "node:crypto";
import { beforeAll, describe, expect, jest, test } from "@jest/globals";
import { mintToken } from "../../src/auth/agent.token.ts";
import { loadConfig } from "../../src/config.ts";
import { declareSources } from "../../src/mirror/mirror.worker.ts";
import { type App, appWith, call, closeAfterAll, db, expectProblem, gql, reviewerToken } from "../helpers.ts";
import { until } from "../wait.ts";
import { type FakeRegistry, generatedServer, OFFICIAL, startFakeRegistry } from "./fake.registry.ts";
import { startTestMirror } from "./mirror.helpers.ts";

// The first sync writes some 180 providers through the intake's full path: on a machine busy with
// other files, past jest's default 30 s per test.
jest.setTimeout(120_000);

const admin = await reviewerToken("mirror-admin", ["admin"]);
const reviewer = await reviewerToken("mirror-reviewer");
let upstream: FakeRegistry;
let app: App;
/** The test host name of this file's upstream: a source's URL is its own. */
const host = `upstream-${randomBytes(3).toString("hex")}.test`;

beforeAll(async () => {
  upstream = await startFakeRegistry({ examples: true, generated: 150 });
  upstream.addMalformed("description-type");
  closeAfterAll(() => upstream.close());
  app = appWith({ OUTBOUND_TEST_HOSTS: `${host}=${new URL(upstream.url).host}`, MIRROR_POLL_MS: "3600000" });
  startTestMirror(app);
});

async function source(sourceId: string) {
  const answer = await call("GET", `/api/v1/mirror/sources/${sourceId}`, { app, token: admin });
  expect(answer.status).toBe(200);
  return answer.body as Record<string, any>;
}

/** Waits for the source to say a sync that began at or after `since` has ended in `state`. */
function syncedSince(sourceId: string, since: number, state = "IDLE") {
  return until(
    async () => {
      const s = await source(sourceId);
      const done = s.state === state && Date.parse(s.lastSyncAt ?? 0) >= since - 5;
      return done && (state === "FAILED" || Date.parse(s.lastSuccessAt ?? 0) >= since - 5) ? s : null;
    },
    `a sync of ${sourceId} ending ${state}`,
    60_000,
  );
}

/** Asks for a sync and waits for the source to say it has finished one begun after the ask. */
async function syncNow(sourceId: string, state = "IDLE") {
  const before = Date.now();
  const asked = await call("POST", `/api/v1/mirror/sources/${sourceId}/sync`, { app, token: admin });
  expect(asked.status).toBe(202);
  return syncedSince(sourceId, before, state);
}

const providerOf = async (code: string, token = reviewer) => {
  const answer = await call("GET", `/api/v1/providers/${code}`, { app, token });
  return answer;
};

describe("mirror sources, managed by admins", () => {
  test("only admins manage sources; a bad source is a 400 and changes nothing", async () => {
    expect((await call("GET", "/api/v1/mirror/sources", { app })).status).toBe(401);
    expectProblem(await call("GET", "/api/v1/mirror/sources", { app, token: reviewer }), 403, "FORBIDDEN");
    const before = await db.mirrorSource.count();
    const bad = [
      [{ url: "http://plain.test" }, "url"],
      [{ url: "https://x.test", policy: "TRUSTED" }, "trustTier"],
      [{ url: "https://x.test", trustTier: "OFFICIAL" }, "trustTier"],
      [{ url: "https://x.test", intervalSeconds: 5 }, "intervalSeconds"],
      [{ url: "https://x.test", filter: { include: ["bad pattern!"] } }, "filter.include.0"],
    ] as const;
    for (const [body, path] of bad) {
      const answer = await call("POST", "/api/v1/mirror/sources", { app, token: admin, body });
      expectProblem(answer, 400, "BAD_USER_INPUT");
      expect(JSON.stringify(answer.body)).toContain(path.split(".")[0]);
    }
    expect(await db.mirrorSource.count()).toBe(before);
  });

  test("a source MIRROR_SOURCES declares is changed there: a 409 here, and it stays as declared", async () => {
    const url = `https://declared-${host}`;
    await declareSources(db, loadConfig({ ...process.env, NODE_ENV: "test", MIRROR_SOURCES: url }).mirror);
    const declared = await db.mirrorSource.findUniqueOrThrow({ where: { url } });
    const path = `/api/v1/mirror/sources/${declared.sourceId}`;
    const changed = await call("PATCH", path, { app, token: admin, body: { intervalSeconds: 600 } });
    expectProblem(changed, 409, "CONFLICT");
    expect(changed.body.detail).toContain("MIRROR_SOURCES");
    expectProblem(await call("DELETE", path, { app, token: admin }), 409, "CONFLICT");
    expect(await db.mirrorSource.findUniqueOrThrow({ where: { url } })).toMatchObject({ intervalSeconds: 3600 });
    expect((await call("POST", `${path}/sync`, { app, token: admin })).status).toBe(202);
    await db.mirrorSource.delete({ where: { url } });
  });

  test("create, read, list, change and remove a source, over REST and GraphQL alike", async () => {
    const made = await call("POST", "/api/v1/mirror/sources", {
      app,
      token: admin,
      body: { url: "https://crud.test/", filter: { include: ["io.github.*"] }, intervalSeconds: 600 },
    });
    expect(made.status).toBe(201);
    const created = made.body as Record<string, any>;
    expect(created).toMatchObject({
      url: "https://crud.test",
      kind: "MCP_REGISTRY",
      policy: "REVIEW",
      trustTier: null,
      intervalSeconds: 600,
      contactEmail: "mirror@crud.test",
      filter: { include: ["io.github.*"], exclude: [], registryTypes: [], only: "ANY" },
      state: "IDLE",
      counts: { seen: 0, created: 0, updated: 0, retired: 0, skipped: 0 },
      mirrored: 0,
    });
    expect(created.sourceId).toMatch(/^ms_/);
    expectProblem(
      await call("POST", "/api/v1/mirror/sources", { app, token: admin, body: { url: "https://crud.test" } }),
      400,
      "BAD_USER_INPUT",
    );
    const changed = await call("PATCH", `/api/v1/mirror/sources/${created.sourceId}`, {
      app,
      token: admin,
      body: { policy: "TRUSTED", trustTier: "VERIFIED" },
    });
    expect(changed.status).toBe(200);
    expect(changed.body).toMatchObject({ policy: "TRUSTED", trustTier: "VERIFIED", intervalSeconds: 600 });
    const listed = await gql(
      "{ mirrorSources(limit: 100) { items { sourceId url policy } } }",
      {},
      { app, token: admin },
    );
    expect(listed.body.data.mirrorSources.items).toContainEqual({
      sourceId: created.sourceId,
      url: "https://crud.test",
      policy: "TRUSTED",
    });
    expect((await call("DELETE", `/api/v1/mirror/sources/${created.sourceId}`, { app, token: admin })).status).toBe(
      200,
    );
    expectProblem(
      await call("GET", `/api/v1/mirror/sources/${created.sourceId}`, { app, token: admin }),
      404,
      "NOT_FOUND",
    );
  });
});

describe("syncing an MCP registry", () => {
  let sourceId: string;
  const codeOf = (name: string) =>
    db.mirrorEntry.findFirstOrThrow({ where: { upstreamName: name }, include: { provider: true } });

  /** When the source was made: making it starts its first sync. */
  let madeAt: number;

  beforeAll(async () => {
    madeAt = Date.now();
    const made = await call("POST", "/api/v1/mirror/sources", { app, token: admin, body: { url: `https://${host}` } });
    expect(made.status).toBe(201);
    sourceId = made.body.sourceId;
  });

  test("the first sync makes a provider of every valid latest server, and lists what it skipped", async () => {
    const synced = await syncedSince(sourceId, madeAt);
    const latest = upstream
      .latest()
      .filter((e) => e._meta["io.modelcontextprotocol.registry/official"].status !== "deleted");
    const entries = await db.mirrorEntry.findMany({ where: { sourceId } });
    // Every latest server but the malformed one (and any example the import cannot take, reported).
    const skippedNames = (synced.skippedEntries as { name: string; reason: string }[]).map((s) => s.name);
    expect(skippedNames.length).toBeGreaterThanOrEqual(1);
    expect(synced.skippedEntries.some((s: { reason: string }) => /not a valid server\.json/.test(s.reason))).toBe(true);
    expect(entries.length + synced.counts.skipped).toBe(latest.length);
    expect(synced.counts).toMatchObject({ created: entries.length, updated: 0, retired: 0 });
    expect(synced.counts.seen).toBe(
      upstream
        .entries()
        .filter((e) => e._meta["io.modelcontextprotocol.registry/official"].status !== "deleted" || true).length,
    );
    expect(synced.mirrored).toBe(entries.length);
    // The same progress in /metrics, labelled by the source's id (never its URL).
    const scraped = (await call("GET", "/metrics", { app })).text;
    const sample = (name: string, labels: string) =>
      Number(new RegExp(`^${name}\\{source="${sourceId}"${labels}\\} (\\S+)$`, "m").exec(scraped)?.[1]);
    expect(sample("registry_mirror_source_entries", ',outcome="created"')).toBe(synced.counts.created);
    expect(sample("registry_mirror_source_entries", ',outcome="skipped"')).toBe(synced.counts.skipped);
    expect(sample("registry_mirror_source_state", ',state="IDLE"')).toBe(1);
    expect(sample("registry_mirror_source_state", ',state="SYNCING"')).toBe(0);
    expect(sample("registry_mirror_source_providers", "")).toBe(entries.length);
    expect(sample("registry_mirror_source_last_success_timestamp_seconds", "")).toBe(
      Date.parse(synced.lastSuccessAt) / 1000,
    );
    expect(scraped).not.toContain(host);
    expect(synced.highWaterMark).toBe(
      upstream
        .entries()
        .map((e) => e._meta["io.modelcontextprotocol.registry/official"].updatedAt)
        .sort()
        .at(-1),
    );

    // A REVIEW source: each new provider waits in the queue, with its origin on the profile.
    const { provider } = await codeOf("io.github.gen-7/server-7");
    expect(provider.providerCode).toBe("io-github-gen-7-server-7");
    expect(provider.reviewStage).toBe("SUBMITTED");
    const profile = await providerOf(provider.providerCode);
    expect(profile.body.origin).toMatchObject({
      sourceId,
      sourceUrl: `https://${host}`,
      kind: "MCP_REGISTRY",
      upstreamName: "io.github.gen-7/server-7",
      upstreamVersion: generatedServer(7).version,
      upstreamStatus: "active",
    });
    expect(profile.body).toMatchObject({ serverName: "io.github.gen-7/server-7", version: 1, tokens: [] });
    expect(profile.body.origin.unmapped).toEqual([]);
    // What the import could not take is reported on the entry: a second remote, the server.json's own _meta.
    const hybrid = (await codeOf("io.modelcontextprotocol.anonymous/hybrid-mcp")).provider;
    expect((await providerOf(hybrid.providerCode)).body.origin.unmapped).toEqual(["/remotes/1", "/_meta"]);
    // Anonymous callers do not see what reviewers have not approved.
    expect((await providerOf(provider.providerCode, "")).status).toBe(200);
    expect((await call("GET", `/api/v1/providers?search=server-7&limit=100`, { app })).body.items).toEqual([]);
    const queue = await call("GET", `/api/v1/reviews/queue?providerCode=${provider.providerCode}`, {
      app,
      token: reviewer,
    });
    expect(queue.body.items).toHaveLength(1);
  });

  test("a sync with nothing new changes nothing", async () => {
    const versions = await db.providerVersion.count({ where: { provider: { mirror: { sourceId } } } });
    const events = await db.event.count();
    const synced = await syncNow(sourceId);
    expect(synced.counts).toMatchObject({ seen: 0, created: 0, updated: 0, retired: 0, skipped: 0 });
    expect(await db.providerVersion.count({ where: { provider: { mirror: { sourceId } } } })).toBe(versions);
    expect(await db.event.count()).toBe(events);
  });

  test("a sync asked for while one is under way runs after it, not lost to it", async () => {
    upstream.slowNext(300);
    await call("POST", `/api/v1/mirror/sources/${sourceId}/sync`, { app, token: admin });
    await until(async () => (await source(sourceId)).state === "SYNCING", "the first sync under way");
    const asked = Date.now();
    const again = await call("POST", `/api/v1/mirror/sources/${sourceId}/sync`, { app, token: admin });
    expect(again.status).toBe(202);
    const synced = await syncedSince(sourceId, asked);
    expect(Date.parse(synced.lastSyncAt)).toBeGreaterThanOrEqual(asked - 5);
  });

  test("the owner's token cannot change a mirrored provider: 409 naming the source", async () => {
    const { provider } = await codeOf("io.github.gen-9/server-9");
    const token = mintToken();
    await db.accessToken.create({
      data: { providerId: provider.id, tokenId: token.tokenId, hash: token.hash, prefix: token.prefix, label: "test" },
    });
    const answer = await call("PATCH", `/api/v1/providers/${provider.providerCode}`, {
      app,
      token: token.secret,
      body: { summary: "changed by its owner" },
    });
    expectProblem(answer, 409, "CONFLICT");
    expect(answer.body.detail).toContain(`https://${host}`);
    const lifecycle = await call("POST", `/api/v1/providers/${provider.providerCode}/lifecycle`, {
      app,
      token: token.secret,
      body: { state: "RETIRED" },
    });
    expectProblem(lifecycle, 409, "CONFLICT");
    expect((await providerOf(provider.providerCode)).body).toMatchObject({ version: 1, lifecycle: "ACTIVE" });

    // Reviewers still curate it: its labels are theirs (its source never writes them), its owner's token may not.
    const labels = (token: string, body: unknown) =>
      call("POST", `/api/v1/providers/${provider.providerCode}/labels`, { app, token, body });
    expectProblem(await labels(token.secret, { labels: ["weather"] }), 403, "FORBIDDEN");
    expectProblem(await labels(reviewer, { labels: ["Not a label!"] }), 400, "BAD_USER_INPUT");
    expect((await providerOf(provider.providerCode)).body).toMatchObject({ version: 1, labels: [] });
    const labelled = await labels(reviewer, { labels: ["weather", "approved-for-sales"] });
    expect(labelled.status).toBe(200);
    expect(labelled.body).toMatchObject({ version: 2, labels: ["weather", "approved-for-sales"] });
  });

  test("upstream changes follow: a new version, a deprecation, a deletion; a 500 mid-run resumes where it stopped", async () => {
    const approvedCode = (await codeOf("io.github.gen-3/server-3")).provider.providerCode;
    // Approved before the change: a new version of its packages opens an UPDATE review, as an owner's PATCH would.
    const review = await db.review.findFirstOrThrow({ where: { provider: { providerCode: approvedCode } } });
    const decided = await call("POST", `/api/v1/reviews/${review.reviewCode}/decision`, {
      app,
      token: reviewer,
      body: { decision: "APPROVE", note: "fine", trustTier: "VERIFIED" },
    });
    expect(decided.status).toBe(200);

    const curatedCode = (await codeOf("io.github.gen-5/server-5")).provider.providerCode;
    const curated = await call("POST", `/api/v1/providers/${curatedCode}/labels`, {
      app,
      token: reviewer,
      body: { labels: ["curated"] },
    });
    expect(curated.status).toBe(200);

    upstream.publish(generatedServer(3, "2.0.0"));
    upstream.setStatus("io.github.gen-5/server-5", "all", "deprecated", "use gen-6 instead");
    upstream.setStatus("io.github.gen-8/server-8", "all", "deleted");
    for (let i = 0; i < 250; i++) upstream.publish(generatedServer(1000 + i));
    upstream.failAtRequest(2);
    const failed = await syncNow(sourceId, "FAILED");
    expect(failed.lastErrors[0].message).toMatch(/answered 500/);
    const partial = failed.counts.seen;
    expect(partial).toBe(100);

    const before = upstream.requests.length;
    const synced = await syncNow(sourceId);
    // Resumed at the page that failed, with its cursor, not from the first page again.
    expect(upstream.requests[before]).toMatch(/cursor=/);
    expect(synced.counts).toMatchObject({ created: 250, updated: 2, retired: 1, skipped: 0 });
    expect(synced.counts.seen).toBe(253);

    const updated = await providerOf(approvedCode);
    expect(updated.body).toMatchObject({
      version: 2,
      releaseVersion: "2.0.0",
      reviewStage: "APPROVED",
      trustTier: "VERIFIED",
    });
    expect(updated.body.origin.upstreamVersion).toBe("2.0.0");
    const open = await call("GET", `/api/v1/reviews/queue?providerCode=${approvedCode}`, { app, token: reviewer });
    expect(open.body.items.map((r: { kind: string }) => r.kind)).toEqual(["UPDATE"]);

    const deprecated = await providerOf((await codeOf("io.github.gen-5/server-5")).provider.providerCode);
    expect(deprecated.body).toMatchObject({
      lifecycle: "DEPRECATED",
      lifecycleMessage: "use gen-6 instead",
      labels: ["curated"],
    });
    const deleted = await providerOf((await codeOf("io.github.gen-8/server-8")).provider.providerCode);
    expect(deleted.body).toMatchObject({ lifecycle: "RETIRED" });
    expect(deleted.body.origin.upstreamStatus).toBe("deleted");

    // Exactly once: one PROVIDER_CREATED a provider, whatever the failure and the resumption.
    const created = await db.event.groupBy({
      by: ["providerCode"],
      where: { kind: "PROVIDER_CREATED", providerCode: { startsWith: "io-github-gen-1" } },
      _count: true,
    });
    expect(created.every((c) => c._count === 1)).toBe(true);
    expect(await db.mirrorEntry.count({ where: { sourceId } })).toBe(synced.mirrored);
  });

  test("a TRUSTED source's providers are approved at its tier and listed for everyone", async () => {
    const other = await startFakeRegistry();
    closeAfterAll(() => other.close());
    const annotation = { "com.example.subregistry/annotations": { curated: true, stars: 42 } };
    for (let i = 1; i <= 12; i++)
      other.publish({ ...generatedServer(i), name: `io.github.trusted-${i % 4}/tool-${i}` }, { meta: annotation });
    // The first source holds this server name already: one provider per server, so it is skipped.
    other.publish(generatedServer(12));
    const trustedHost = `trusted-${host}`;
    const trustedApp = appWith({ OUTBOUND_TEST_HOSTS: `${trustedHost}=${new URL(other.url).host}` });
    const made = await call("POST", "/api/v1/mirror/sources", {
      app: trustedApp,
      token: admin,
      body: {
        url: `https://${trustedHost}`,
        policy: "TRUSTED",
        trustTier: "TRUSTED",
        filter: { include: ["io.github.trusted-*", "io.github.gen-*"], exclude: ["*trusted-3/*"] },
      },
    });
    expect(made.status).toBe(201);
    startTestMirror(trustedApp).kick();
    const done = await until(
      async () => {
        const s = (await call("GET", `/api/v1/mirror/sources/${made.body.sourceId}`, { app: trustedApp, token: admin }))
          .body;
        return s.lastSuccessAt ? s : null;
      },
      "the trusted source synced",
      60_000,
    );
    // 12 servers, of which trusted-3's three are excluded; gen-12 is skipped, its name held by the first source.
    expect(done.counts).toMatchObject({ seen: 13, created: 9, skipped: 1 });
    expect(done.skippedEntries[0]).toMatchObject({ name: "io.github.gen-12/server-12" });
    const entries = await db.mirrorEntry.findMany({
      where: { sourceId: made.body.sourceId },
      include: { provider: true },
    });
    expect(entries.map((e) => e.provider.providerCode).sort()).toEqual(
      [1, 2, 4, 5, 6, 8, 9, 10, 12].map((i) => `io-github-trusted-${i % 4}-tool-${i}`).sort(),
    );
    const listed = await call("GET", "/api/v1/providers?search=tool-5&limit=100", { app });
    expect(listed.body.items.map((p: { providerCode: string }) => p.providerCode)).toContain(
      "io-github-trusted-1-tool-5",
    );
    const shown = await providerOf("io-github-trusted-1-tool-5", "");
    expect(shown.body).toMatchObject({ reviewStage: "APPROVED", trustTier: "TRUSTED" });
    // For the next subregistry down: the upstream's annotations kept, its official block under this registry's key.
    const upstream = other.latest().find((e) => e.server.name === "io.github.trusted-1/tool-5");
    const served = await call(
      "GET",
      `/v0.1/servers/${encodeURIComponent("io.github.trusted-1/tool-5")}/versions/latest`,
      {
        app,
      },
    );
    expect(served.status).toBe(200);
    const meta = served.body._meta as Record<string, any>;
    expect(meta["com.example.subregistry/annotations"]).toEqual({ curated: true, stars: 42 });
    const own = Object.keys(meta).find((k) => k.endsWith("/registry")) as string;
    expect(meta[own]).toMatchObject({
      trustTier: "TRUSTED",
      reviewStage: "APPROVED",
      upstream: upstream?._meta[OFFICIAL],
    });
    expect(meta[OFFICIAL]).toMatchObject({ status: "active", isLatest: true });
    expect(meta[OFFICIAL].publishedAt).not.toBe(upstream?._meta[OFFICIAL].publishedAt);
  });

  test("each source's mirrored count is kept by the database, however entries come and go", async () => {
    const counted = async () => {
      const sources = await db.mirrorSource.findMany({ include: { _count: { select: { entries: true } } } });
      return sources.map((s) => ({ sourceId: s.sourceId, kept: s.mirrored, counted: s._count.entries }));
    };
    const trusted = await db.mirrorSource.findUniqueOrThrow({ where: { url: `https://trusted-${host}` } });
    expect(trusted.mirrored).toBe(9);
    // An entry removed by hand (no path of the service removes one) is counted out too.
    const entry = await db.mirrorEntry.findFirstOrThrow({ where: { sourceRowId: trusted.id } });
    await db.mirrorEntry.delete({ where: { providerId: entry.providerId } });
    expect((await source(trusted.sourceId)).mirrored).toBe(8);
    // A source removed keeps its providers, which no longer count for any source.
    expect((await call("DELETE", `/api/v1/mirror/sources/${trusted.sourceId}`, { app, token: admin })).status).toBe(
      200,
    );
    expect(await db.mirrorEntry.count({ where: { sourceId: trusted.sourceId, sourceRowId: null } })).toBe(8);
    for (const s of await counted()) expect(s.kept).toBe(s.counted);
  });
});
