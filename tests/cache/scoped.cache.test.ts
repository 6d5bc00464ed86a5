/**
 * What a change made outside a request forgets (src/http/cache/scope.ts): a mirror's sync that brings
 * in servers for review, which are in no list, forgets only the answers naming them by code, so the
 * directory's and other providers' answers stay cached through it; once a mirrored provider is
 * listed, its next upstream change empties the whole cache as any listed change does. The oracle is
 * the same app with the cache off, on the same database: every read of the cached app must equal it.
 */
import { randomBytes } from "node:crypto";
import { beforeAll, describe, expect, jest, test } from "@jest/globals";
import {
  type Answer,
  activeReviewCode,
  approve,
  appWith,
  call,
  closeAfterAll,
  db,
  gql,
  intake,
  reviewerToken,
} from "../helpers.ts";
import { generatedServer, startFakeRegistry } from "../mirror/fake.registry.ts";
import { startTestMirror } from "../mirror/mirror.helpers.ts";
import { until } from "../wait.ts";

// Two syncs of a few servers through the intake's full path, on a machine busy with other files.
jest.setTimeout(60_000);

const host = `scoped-${randomBytes(3).toString("hex")}.test`;
const admin = await reviewerToken("cache-admin", ["admin"]);
const upstream = await startFakeRegistry({ generated: 6 });
closeAfterAll(() => upstream.close());
const cached = appWith({ RESPONSE_CACHE: "on", OUTBOUND_TEST_HOSTS: `${host}=${new URL(upstream.url).host}` });
const plain = appWith({ RESPONSE_CACHE: "off" });
const PROVIDER = "query ($c: String!) { provider(providerCode: $c) { providerCode name version reviewStage } }";

let sourceId: string;

beforeAll(() => {
  startTestMirror(cached);
});

/** An anonymous read of the cached app, checked against the uncached one; answers whether it was a hit. */
async function read(path: string): Promise<"HIT" | "MISS"> {
  const [got, truth] = [await call("GET", path, { app: cached }), await call("GET", path, { app: plain })];
  expect(got.status).toBe(truth.status);
  expect(got.body).toEqual(truth.body);
  return got.headers.get("x-cache") === "HIT" ? "HIT" : "MISS";
}

async function readProvider(code: string): Promise<{ hit: "HIT" | "MISS"; answer: Answer }> {
  const [got, truth] = [
    await gql(PROVIDER, { c: code }, { app: cached }),
    await gql(PROVIDER, { c: code }, { app: plain }),
  ];
  expect(got.body).toEqual(truth.body);
  return { hit: got.headers.get("x-cache") === "HIT" ? "HIT" : "MISS", answer: got };
}

/** Asks for a sync (the first is asked by making the source) and waits for one begun after the ask to end. */
async function sync(ask: () => Promise<Answer>): Promise<void> {
  const before = Date.now();
  const asked = await ask();
  expect([201, 202]).toContain(asked.status);
  sourceId ??= (asked.body as { sourceId: string }).sourceId;
  await until(async () => {
    const s = (await call("GET", `/api/v1/mirror/sources/${sourceId}`, { app: cached, token: admin })).body as {
      state: string;
      lastSuccessAt: string | null;
    };
    return s.state === "IDLE" && Date.parse(s.lastSuccessAt ?? "0") >= before - 5;
  }, "the sync to end");
}

const mirroredCode = async (name: string) =>
  (await db.mirrorEntry.findFirstOrThrow({ where: { upstreamName: name }, include: { provider: true } })).provider
    .providerCode;

describe("a sync forgets what it changed, and keeps the rest", () => {
  const name = "io.github.gen-1/server-1";
  let listed: string;
  let code: string;

  test("servers brought in for review forget only the answers naming them", async () => {
    listed = (await intake()).providerCode;
    await approve(listed);
    const answers = [`/api/v1/providers/${listed}`, "/api/v1/providers?limit=5", "/v0.1/servers?limit=5"];
    for (const path of answers) expect(await read(path)).toBe("MISS");
    for (const path of answers) expect(await read(path)).toBe("HIT");
    await sync(() =>
      call("POST", "/api/v1/mirror/sources", { app: cached, token: admin, body: { url: `https://${host}` } }),
    );
    code = await mirroredCode(name);
    // The directory and the listed provider did not change: still answered from memory.
    for (const path of answers) expect(await read(path)).toBe("HIT");
    // A provider in review is read by its code, over REST and GraphQL, and kept.
    const profile = await readProvider(code);
    expect(profile.answer.body).toMatchObject({ data: { provider: { providerCode: code, reviewStage: "SUBMITTED" } } });
    expect((await readProvider(code)).hit).toBe("HIT");
    expect(await read(`/api/v1/providers/${code}`)).toBe("MISS");
    expect(await read(`/api/v1/providers/${code}`)).toBe("HIT");
  });

  test("an upstream change of a server in review forgets its answers only", async () => {
    upstream.publish(generatedServer(1, "2.0.0"));
    await sync(() => call("POST", `/api/v1/mirror/sources/${sourceId}/sync`, { app: cached, token: admin }));
    expect(await read(`/api/v1/providers/${code}`)).toBe("MISS");
    expect((await readProvider(code)).hit).toBe("MISS");
    expect(await read(`/api/v1/providers/${listed}`)).toBe("HIT");
    expect(await read("/api/v1/providers?limit=5")).toBe("HIT");
  });

  test("once listed, its upstream change empties the whole cache", async () => {
    // Through the cached app, as a reviewer would: the approval empties its cache.
    const decided = await call("POST", `/api/v1/reviews/${await activeReviewCode(code)}/decision`, {
      app: cached,
      token: await reviewerToken("cache-reviewer"),
      body: { decision: "APPROVE", note: "mirrored, reviewed" },
    });
    expect(decided.status).toBe(200);
    const answers = [`/api/v1/providers/${listed}`, "/api/v1/providers?limit=5", "/v0.1/servers?limit=5"];
    for (const path of answers) await read(path);
    for (const path of answers) expect(await read(path)).toBe("HIT");
    upstream.publish(generatedServer(1, "3.0.0"));
    await sync(() => call("POST", `/api/v1/mirror/sources/${sourceId}/sync`, { app: cached, token: admin }));
    // Every answer is read again (and equals the uncached app's: the new version is in the lists).
    for (const path of answers) expect(await read(path)).toBe("MISS");
  });
});
