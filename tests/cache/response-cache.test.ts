/**
 * The response cache (src/http/cache/): anonymous public reads are answered from memory,
 * no read after an acknowledged write returns the old data, and private fields are never served
 * from it to someone who may not see them. The oracle is the same app with the cache off, on the
 * same database: after every write, every read of the cached app must equal its answer.
 */
import { afterAll, beforeAll, describe, expect, test } from "@jest/globals";
import { createApp } from "../../src/yoga.ts";
import { uniqueCode } from "../builders.ts";
import {
  activeReviewCode,
  approve,
  call,
  config,
  db,
  gql,
  intake,
  type Listening,
  listen,
  reviewerToken,
} from "../helpers.ts";
import { type CountingDb, openCountingDb } from "../perf/counting.db.ts";

const cached = createApp({ ...config, responseCache: true }, db);
const plain = createApp({ ...config, responseCache: false }, db);
let counting: CountingDb;
let counted: ReturnType<typeof createApp>;

beforeAll(async () => {
  counting = await openCountingDb(config.databaseUrl);
  counted = createApp({ ...config, responseCache: true }, counting.db);
});

afterAll(async () => {
  await counting.db.$disconnect();
});

const DETAIL =
  "query ($c: String!) { provider(providerCode: $c) { providerCode summary labels reviewStage contactEmail tokens { tokenId } version } }";
const LIST =
  "query ($s: String, $l: [String!]) { providers(search: $s, labels: $l) { items { providerCode summary labels } nextCursor } }";

describe("hits", () => {
  test("a repeated anonymous read is answered from memory, without the database", async () => {
    const agent = await intake();
    await approve(agent.providerCode);
    const path = `/api/v1/providers/${agent.providerCode}`;
    counting.reset();
    const first = await call("GET", path, { app: counted });
    expect(first.status).toBe(200);
    expect(first.headers.get("x-cache")).toBeNull();
    expect(counting.statements).toHaveLength(1);
    counting.reset();
    const second = await call("GET", path, { app: counted });
    expect(second.headers.get("x-cache")).toBe("HIT");
    expect(counting.statements).toHaveLength(0);
    expect(second.text).toBe(first.text);
    expect(second.headers.get("etag")).toBe(first.headers.get("etag"));
    expect(second.headers.get("x-request-id")).not.toBe(first.headers.get("x-request-id"));
    // GraphQL: the same operation and variables again is a hit too.
    await gql(DETAIL, { c: agent.providerCode }, { app: counted });
    counting.reset();
    const again = await gql(DETAIL, { c: agent.providerCode }, { app: counted });
    expect(again.headers.get("x-cache")).toBe("HIT");
    expect(counting.statements).toHaveLength(0);
  });

  test("a burst of misses of one answer is executed once; the others wait for it and are hits", async () => {
    const agent = await intake({ labels: ["burst"] });
    await approve(agent.providerCode);
    const path = "/api/v1/providers/facets?labels=burst";
    counting.reset();
    const alone = await call("GET", path, { app: counted });
    expect(alone.status).toBe(200);
    const once = counting.statements.length;
    expect(once).toBeGreaterThan(0);
    // A write empties the cache; then ten requests for the answer at once.
    await call("PATCH", `/api/v1/providers/${agent.providerCode}`, {
      app: counted,
      token: agent.accessToken,
      body: { summary: "Burst, again" },
    });
    counting.reset();
    const burst = await Promise.all(Array.from({ length: 10 }, () => call("GET", path, { app: counted })));
    expect(counting.statements).toHaveLength(once);
    expect(burst.map((a) => a.headers.get("x-cache"))).toEqual([null, ...Array(9).fill("HIT")]);
    for (const answer of burst) expect(answer.text).toBe(alone.text);
    // A miss whose answer is not kept (a 404) lets the one waiting run too: neither is lost.
    const unknown = await Promise.all(
      [1, 2].map(() => call("GET", "/api/v1/providers/no-such-agent", { app: counted })),
    );
    expect(unknown.map((a) => a.status)).toEqual([404, 404]);
  });

  test("an approved agent's signed card is a hit; a write to the agent makes and signs it anew", async () => {
    const agent = await intake();
    await approve(agent.providerCode);
    const path = `/api/v1/providers/${agent.providerCode}/agent-card.json`;
    const first = await call("GET", path, { app: counted });
    expect(first.body.signatures).toHaveLength(2);
    counting.reset();
    const second = await call("GET", path, { app: counted });
    expect(second.headers.get("x-cache")).toBe("HIT");
    expect(counting.statements).toHaveLength(0);
    expect(second.text).toBe(first.text);
    const patched = await call("PATCH", `/api/v1/providers/${agent.providerCode}`, {
      app: counted,
      token: agent.accessToken,
      body: { summary: "Changed, so the card is signed anew" },
    });
    expect(patched.status).toBe(200);
    const after = await call("GET", path, { app: counted });
    expect(after.headers.get("x-cache")).toBeNull();
    expect(after.body.version).not.toBe(first.body.version);
    expect(after.body.signatures).not.toEqual(first.body.signatures);
    expect(after.text).toBe((await call("GET", path, { app: plain })).text);
  });

  test("what is not a public read by an anonymous caller is never served from the cache", async () => {
    const agent = await intake();
    const reviewer = await reviewerToken("cache-test");
    const requests: (() => Promise<{ headers: Headers; status: number }>)[] = [
      () => call("GET", `/api/v1/providers/${agent.providerCode}`, { app: counted, token: agent.accessToken }),
      () => call("GET", "/api/v1/reviews/queue", { app: counted, token: reviewer }),
      () => call("GET", "/api/v1/health", { app: counted }),
      () => call("GET", "/api/v1", { app: counted }),
      () => gql("{ health { status database } }", {}, { app: counted }),
      () => gql(DETAIL, { c: agent.providerCode }, { app: counted, token: reviewer }),
    ];
    for (const send of requests) {
      await send();
      const second = await send();
      expect(second.status).toBe(200);
      expect(second.headers.get("x-cache")).toBeNull();
    }
  });
});

describe("no stale read after an acknowledged write", () => {
  /** Every read of the cached app equals the uncached app's, twice (the second from the cache). */
  async function expectFresh(paths: string[], queries: [string, Record<string, unknown>][], step: string) {
    for (const path of paths) {
      for (let i = 0; i < 2; i++) {
        const [got, want] = [await call("GET", path, { app: cached }), await call("GET", path, { app: plain })];
        expect({ step, path, status: got.status, body: got.body }).toEqual({
          step,
          path,
          status: want.status,
          body: want.body,
        });
      }
    }
    for (const [query, variables] of queries) {
      for (let i = 0; i < 2; i++) {
        const [got, want] = [await gql(query, variables, { app: cached }), await gql(query, variables, { app: plain })];
        expect({ step, query, body: got.body }).toEqual({ step, query, body: want.body });
      }
    }
  }

  test("through PATCHes, tokens, reviews, suspension and intake", async () => {
    const word = `cacheword${uniqueCode("").replace(/-/g, "")}`;
    const label = `lbl-${uniqueCode("").slice(1)}`;
    const a = await intake({ name: `Cached ${word} A`, labels: [label] });
    const b = await intake({ name: `Cached ${word} B`, labels: [label] });
    const cCode = uniqueCode("cached");
    await approve(a.providerCode, "VERIFIED");
    const reviewer = await reviewerToken("cache-writer");
    const paths = [
      `/api/v1/providers/${a.providerCode}`,
      `/api/v1/providers/${b.providerCode}`,
      `/api/v1/providers/${cCode}`,
      `/api/v1/providers/${a.providerCode}/versions`,
      `/api/v1/providers/${a.providerCode}/versions/2`,
      `/api/v1/providers?labels=${label}`,
      `/api/v1/providers?search=${word}`,
      "/api/v1/providers?limit=5",
    ];
    const queries: [string, Record<string, unknown>][] = [
      [DETAIL, { c: a.providerCode }],
      [DETAIL, { c: b.providerCode }],
      [LIST, { s: word }],
      [LIST, { l: [label] }],
    ];
    await expectFresh(paths, queries, "primed");
    const writes: [string, () => Promise<{ status: number }>][] = [
      [
        "PATCH a",
        () =>
          call("PATCH", `/api/v1/providers/${a.providerCode}`, {
            app: cached,
            token: a.accessToken,
            body: { summary: "Second summary" },
          }),
      ],
      [
        "PATCH a labels",
        () =>
          call("PATCH", `/api/v1/providers/${a.providerCode}`, {
            app: cached,
            token: a.accessToken,
            body: { labels: [label, "more"] },
          }),
      ],
      [
        "GraphQL PATCH a",
        () =>
          gql(
            `mutation { updateProvider(providerCode: "${a.providerCode}", summary: "Third summary") { version } }`,
            {},
            { app: cached, token: a.accessToken },
          ),
      ],
      [
        "issue token a",
        () =>
          call("POST", `/api/v1/providers/${a.providerCode}/tokens`, {
            app: cached,
            token: a.accessToken,
            body: { label: "second" },
          }),
      ],
      [
        "approve b",
        async () =>
          call("POST", `/api/v1/reviews/${await activeReviewCode(b.providerCode)}/decision`, {
            app: cached,
            token: reviewer,
            body: { decision: "APPROVE", trustTier: "TRUSTED", note: "approved in tests" },
          }),
      ],
      [
        "suspend a",
        () =>
          call("POST", `/api/v1/providers/${a.providerCode}/suspend`, {
            app: cached,
            token: reviewer,
            body: { note: "checking" },
          }),
      ],
      [
        "reinstate a",
        () =>
          call("POST", `/api/v1/providers/${a.providerCode}/reinstate`, {
            app: cached,
            token: reviewer,
            body: { note: "fine" },
          }),
      ],
      [
        "intake c",
        () =>
          call("POST", "/api/v1/providers", {
            app: cached,
            body: {
              providerCode: cCode,
              name: `Cached ${word} C`,
              summary: "New",
              agentType: "TOOL_SERVER",
              contactEmail: "c@example.com",
              labels: [label],
              endpoint: { url: "https://c.example.com", protocol: "MCP", authScheme: "NONE" },
            },
          }),
      ],
      [
        "PATCH b",
        () =>
          call("PATCH", `/api/v1/providers/${b.providerCode}`, {
            app: cached,
            token: b.accessToken,
            body: { summary: "B changed", visibility: "UNLISTED" },
          }),
      ],
    ];
    for (const [step, write] of writes) {
      const answer = await write();
      expect({ step, status: answer.status }).toEqual({ step, status: expect.any(Number) });
      expect(answer.status).toBeLessThan(300);
      await expectFresh(paths, queries, step);
    }
  });

  test("a read that saw the data before a write, answered after it, is not kept", async () => {
    const agent = await intake();
    await approve(agent.providerCode);
    const path = `/api/v1/providers/${agent.providerCode}`;
    // The read has its (old) row from the database, then the write runs and is acknowledged.
    const hold = counting.holdNext(/"tokensJson"/);
    const slowRead = call("GET", path, { app: counted });
    await hold.held;
    const patched = await call("PATCH", path, { app: counted, token: agent.accessToken, body: { summary: "After" } });
    expect(patched.status).toBe(200);
    hold.release();
    expect((await slowRead).body.summary).toBe("Plans delivery routes across a city");
    const next = await call("GET", path, { app: counted });
    expect(next.body.summary).toBe("After");
    expect((await call("GET", path, { app: counted })).body.summary).toBe("After");
  });

  test("reads racing a write never leave the old answer behind", async () => {
    const agent = await intake();
    await approve(agent.providerCode);
    const path = `/api/v1/providers/${agent.providerCode}`;
    for (let round = 0; round < 8; round++) {
      const summary = `Round ${round}`;
      const racing = Array.from({ length: 12 }, () => call("GET", path, { app: cached }));
      const patched = await call("PATCH", path, { app: cached, token: agent.accessToken, body: { summary } });
      expect(patched.status).toBe(200);
      expect((await call("GET", path, { app: cached })).body.summary).toBe(summary);
      await Promise.all(racing);
      expect((await call("GET", path, { app: cached })).body.summary).toBe(summary);
    }
  });
});

describe("private fields", () => {
  test("an anonymous answer is never given to the owner or a reviewer, nor theirs to anyone", async () => {
    const agent = await intake();
    const reviewer = await reviewerToken("cache-private");
    const path = `/api/v1/providers/${agent.providerCode}`;
    // Anonymous first: cached, with private fields null.
    for (let i = 0; i < 2; i++) {
      const anonymous = await call("GET", path, { app: cached });
      expect(anonymous.body.contactEmail).toBeNull();
      expect(anonymous.body.tokens).toBeNull();
    }
    const owner = await call("GET", path, { app: cached, token: agent.accessToken });
    expect(owner.body.contactEmail).toBe("ops@example.com");
    expect(owner.body.tokens).toHaveLength(1);
    const byReviewer = await gql(DETAIL, { c: agent.providerCode }, { app: cached, token: reviewer });
    expect(byReviewer.body.data.provider.tokens).toHaveLength(1);
    // The privileged answers were not kept: the next anonymous reads still show nothing private.
    const other = await intake();
    await call("GET", `/api/v1/providers/${other.providerCode}`, { app: cached, token: other.accessToken });
    await gql(DETAIL, { c: other.providerCode }, { app: cached, token: reviewer });
    const after = await call("GET", `/api/v1/providers/${other.providerCode}`, { app: cached });
    expect(after.body.contactEmail).toBeNull();
    expect(after.body.tokens).toBeNull();
    expect(after.text).not.toContain("ops@example.com");
    const afterGql = await gql(DETAIL, { c: other.providerCode }, { app: cached });
    expect(afterGql.body.data.provider).toEqual(expect.objectContaining({ contactEmail: null, tokens: null }));
  });
});

describe("behind node:http (as src/main.ts serves it)", () => {
  let server: Listening;
  let base: string;
  beforeAll(async () => {
    server = await listen((req, res) => void cached(req, res));
    base = server.url;
  });
  afterAll(() => server.close());

  test("hits are answered before Yoga, with their own request id; a write empties the cache", async () => {
    const agent = await intake();
    await approve(agent.providerCode);
    const url = `${base}/api/v1/providers/${agent.providerCode}`;
    const first = await fetch(url);
    const firstBody = await first.json();
    const second = await fetch(url, { headers: { "x-request-id": "my-request-1" } });
    expect(second.headers.get("x-cache")).toBe("HIT");
    expect(second.headers.get("x-request-id")).toBe("my-request-1");
    expect(await second.json()).toEqual(firstBody);
    const credential = await fetch(url, { headers: { "x-request-id": `agr_${"a".repeat(38)}` } });
    expect(credential.headers.get("x-request-id")).not.toContain("agr_");
    await credential.arrayBuffer();
    const patched = await fetch(url, {
      method: "PATCH",
      headers: { authorization: `Bearer ${agent.accessToken}`, "content-type": "application/json" },
      body: JSON.stringify({ summary: "Changed behind node:http" }),
    });
    expect(patched.status).toBe(200);
    await patched.arrayBuffer();
    const after = await fetch(url);
    expect(after.headers.get("x-cache")).toBeNull();
    expect((await after.json()).summary).toBe("Changed behind node:http");
    const owner = await fetch(url, { headers: { authorization: `Bearer ${agent.accessToken}` } });
    expect(owner.headers.get("x-cache")).toBeNull();
    expect((await owner.json()).contactEmail).toBe("ops@example.com");
  });

  test("GraphQL POSTs: a query is a hit before Yoga; what is read there still reaches Yoga on a miss", async () => {
    const post = (body: unknown) =>
      fetch(`${base}/graphql`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify(body),
      });
    const code = uniqueCode("node-gql");
    const intakeQuery = {
      query: `mutation ($c: String, $e: EndpointInput!) { createProvider(providerCode: $c, name: "Node GraphQL", summary: "Through node:http", agentType: ASSISTANT, contactEmail: "n@example.com", endpoint: $e) { providerCode } }`,
      variables: { c: code, e: { url: "https://n.example.com", protocol: "A2A", authScheme: "NONE" } },
    };
    const read = { query: DETAIL, variables: { c: code } };
    const before = await post(read);
    expect((await before.json()).errors?.[0]?.extensions?.code).toBe("NOT_FOUND");
    const made = await post(intakeQuery);
    expect((await made.json()).data.createProvider.providerCode).toBe(code);
    const first = await post(read);
    expect(first.headers.get("x-cache")).toBeNull();
    const firstBody = await first.json();
    expect(firstBody.data.provider).toEqual(expect.objectContaining({ providerCode: code, contactEmail: null }));
    const second = await post(read);
    expect(second.headers.get("x-cache")).toBe("HIT");
    expect(await second.json()).toEqual(firstBody);
  });
});
