/**
 * Exactly one database round trip per read request: the provider detail, the provider
 * list (plain, filtered, paged), the search and the review queue each reach the database once,
 * over REST and over GraphQL, whatever the page holds. The app here runs on a client that counts
 * every statement it sends (counting.db.ts), with the response cache off, so every request reads.
 *
 * "A read request" is the reading of the data. Credentials are read before it: an agent token costs
 * its look-up (src/auth/viewer.plugin.ts: the token by its hash with its provider's code, and at
 * most once a minute per token a refresh of its lastUsedAt); a reviewer JWT costs none. So an
 * anonymous or reviewer read is one round trip, an agent's is its credential's plus one.
 */
import { afterAll, beforeAll, describe, expect, test } from "@jest/globals";
import { credentials, resolveViewer } from "../../src/auth/viewer.plugin.ts";
import { stateHash } from "../../src/events/event.rules.ts";
import { snapshotBefore } from "../../src/events/event.store.ts";
import { createOutbound } from "../../src/outbound/outbound.ts";
import { createApp } from "../../src/yoga.ts";
import { intakeBody, uniqueCode } from "../builders.ts";
import { ON_POSTGRES } from "../database.ts";
import { readSse } from "../feed/sse.ts";
import { approve, call, config, db, gql, intake, reviewerToken } from "../helpers.ts";
import { until } from "../wait.ts";
import { type CountingDb, openCountingDb } from "./counting.db.ts";

let counting: CountingDb;
let app: ReturnType<typeof createApp>;
const word = `rtword${uniqueCode("").replace(/-/g, "")}`;
let code: string;
let token: string;
let reviewer: string;

beforeAll(async () => {
  counting = await openCountingDb(config.databaseUrl);
  app = createApp({ ...config, responseCache: false }, counting.db);
  reviewer = await reviewerToken("round-trips");
  // Three listed agents sharing a word and a label, with tokens and timelines to load.
  for (let i = 0; i < 3; i++) {
    const created = await intake({
      name: `Round Trip ${word} ${i}`,
      labels: ["roundtrip", `rt-${i}`],
      description: `Counts its queries ${word}`,
    });
    await approve(created.providerCode, "VERIFIED");
    code = created.providerCode;
    token = created.accessToken;
  }
});

afterAll(async () => {
  await counting.db.$disconnect();
});

/** The statements one request sends; fails the test on a non-200 answer. */
async function roundTrips(send: () => Promise<{ status: number; text: string; body: any }>): Promise<string[]> {
  counting.reset();
  const answer = await send();
  if (answer.status !== 200 || answer.body?.errors) throw new Error(`${answer.status} ${answer.text.slice(0, 300)}`);
  return [...counting.statements];
}

const DETAIL = `query ($code: String!) { provider(providerCode: $code) {
  providerCode name labels contactEmail endpoint { url protocol } capabilities { key } version
  tokens { tokenId prefix createdAt } reviewTimeline { at kind actor note } } }`;
const LIST = `query ($search: String, $labels: [String!], $cursor: String, $limit: Int) {
  providers(search: $search, labels: $labels, cursor: $cursor, limit: $limit) {
    items { providerCode name labels endpoint { protocol } updatedAt } nextCursor } }`;
const QUEUE = `query ($search: String) { reviewQueue(search: $search) {
  items { reviewCode providerCode providerName status priority } nextCursor } }`;

describe("one round trip per read", () => {
  test("provider detail, REST and GraphQL, anonymous and reviewer", async () => {
    const rest = await roundTrips(() => call("GET", `/api/v1/providers/${code}`, { app }));
    expect(rest).toHaveLength(1);
    const graphql = await roundTrips(() => gql(DETAIL, { code }, { app }));
    expect(graphql).toHaveLength(1);
    const byReviewer = await roundTrips(() => gql(DETAIL, { code }, { app, token: reviewer }));
    expect(byReviewer).toHaveLength(1);
  });

  test("the detail's answer still carries tokens and timeline for the privileged, and hides them from others", async () => {
    const mine = await call("GET", `/api/v1/providers/${code}`, { app, token });
    expect(mine.body.tokens).toHaveLength(1);
    expect(mine.body.contactEmail).toBe("ops@example.com");
    expect(mine.body.reviewTimeline.map((e: { kind: string }) => e.kind)).toEqual([
      "SUBMITTED",
      "TOKEN_ISSUED",
      "APPROVED",
    ]);
    const anonymous = await call("GET", `/api/v1/providers/${code}`, { app });
    expect(anonymous.body.tokens).toBeNull();
    expect(anonymous.body.contactEmail).toBeNull();
    expect(anonymous.body.reviewTimeline).toHaveLength(3);
  });

  test("the detail asked under aliases, twice, and through fragments: one round trip, the same rows", async () => {
    // What the relations asked for are is read off the operation (provider.relations.ts):
    // a relation field it missed would load its own rows, one statement more.
    const SHAPED = `query ($code: String!) {
      p: provider(providerCode: $code) { providerCode ...Parts timeline: reviewTimeline { kind } }
    }
    fragment Parts on Provider { ... on Provider { keys: tokens { tokenId } } reviewTimeline { at kind } }`;
    const statements = await roundTrips(() => gql(SHAPED, { code }, { app, token: reviewer }));
    expect(statements).toHaveLength(1);
    const { body } = await gql(SHAPED, { code }, { app, token: reviewer });
    expect(body.data.p.keys).toHaveLength(1);
    const kinds = body.data.p.reviewTimeline.map((e: { kind: string }) => e.kind);
    expect(kinds).toEqual(["SUBMITTED", "TOKEN_ISSUED", "APPROVED"]);
    expect(body.data.p.timeline.map((e: { kind: string }) => e.kind)).toEqual(kinds);
    // Without the relations, nothing of them is read (the statement is the plain profile's).
    const plain = await roundTrips(() =>
      gql("query ($code: String!) { provider(providerCode: $code) { name } }", { code }, { app }),
    );
    expect(plain).toHaveLength(1);
    expect(plain[0]).not.toContain("review_events");
  });

  test("an agent's read: the look-up of its token, then the one read of the data", async () => {
    await call("GET", `/api/v1/providers/${code}`, { app, token }); // lastUsedAt is fresh now
    // What reading the credential alone costs (src/auth/viewer.plugin.ts: the token with its provider).
    counting.reset();
    await resolveViewer(`Bearer ${token}`, credentials(config, counting.db, createOutbound(config.outbound)));
    const credential = [...counting.statements];
    expect(credential.length).toBeGreaterThan(0);
    const statements = await roundTrips(() => call("GET", `/api/v1/providers/${code}`, { app, token }));
    expect(statements.slice(0, credential.length)).toEqual(credential);
    expect(statements).toHaveLength(credential.length + 1);
  });

  test("list, filtered list and its next page", async () => {
    expect(await roundTrips(() => call("GET", "/api/v1/providers?limit=2", { app }))).toHaveLength(1);
    const filtered = await call("GET", "/api/v1/providers?labels=roundtrip&agentType=ASSISTANT&limit=2", { app });
    expect(filtered.body.items).toHaveLength(2);
    expect(
      await roundTrips(() => call("GET", "/api/v1/providers?labels=roundtrip&agentType=ASSISTANT&limit=2", { app })),
    ).toHaveLength(1);
    const cursor = encodeURIComponent(filtered.body.nextCursor);
    expect(
      await roundTrips(() =>
        call("GET", `/api/v1/providers?labels=roundtrip&agentType=ASSISTANT&limit=2&cursor=${cursor}`, { app }),
      ),
    ).toHaveLength(1);
    expect(await roundTrips(() => gql(LIST, { labels: ["roundtrip"], limit: 2 }, { app }))).toHaveLength(1);
  });

  test("search, its next page, and search with filters", async () => {
    const first = await call("GET", `/api/v1/providers?search=${word}&limit=2`, { app });
    expect(first.body.items.map((p: { name: string }) => p.name)).toHaveLength(2);
    expect(await roundTrips(() => call("GET", `/api/v1/providers?search=${word}&limit=2`, { app }))).toHaveLength(1);
    const cursor = encodeURIComponent(first.body.nextCursor);
    const next = await call("GET", `/api/v1/providers?search=${word}&limit=2&cursor=${cursor}`, { app });
    expect(next.body.items).toHaveLength(1);
    expect(
      await roundTrips(() => call("GET", `/api/v1/providers?search=${word}&limit=2&cursor=${cursor}`, { app })),
    ).toHaveLength(1);
    expect(
      await roundTrips(() => call("GET", `/api/v1/providers?search=${word}&labels=rt-1&trustTier=VERIFIED`, { app })),
    ).toHaveLength(1);
    expect(await roundTrips(() => gql(LIST, { search: word }, { app }))).toHaveLength(1);
  });

  test("the review queue, plain and searched", async () => {
    const pending = await intake({ name: `Queued ${word}` });
    expect(await roundTrips(() => call("GET", "/api/v1/reviews/queue", { app, token: reviewer }))).toHaveLength(1);
    const searched = await call("GET", `/api/v1/reviews/queue?search=${word}`, { app, token: reviewer });
    expect(searched.body.items.map((r: { providerCode: string }) => r.providerCode)).toEqual([pending.providerCode]);
    expect(searched.body.items[0].providerName).toBe(`Queued ${word}`);
    expect(
      await roundTrips(() => call("GET", `/api/v1/reviews/queue?search=${word}`, { app, token: reviewer })),
    ).toHaveLength(1);
    expect(await roundTrips(() => gql(QUEUE, { search: word }, { app, token: reviewer }))).toHaveLength(1);
    expect(await roundTrips(() => gql(QUEUE, {}, { app, token: reviewer }))).toHaveLength(1);
  });

  test("the counter counts: a PATCH is several round trips", async () => {
    counting.reset();
    const answer = await call("PATCH", `/api/v1/providers/${code}`, { app, token, body: { summary: "Counted" } });
    expect(answer.status).toBe(200);
    expect(counting.statements.length).toBeGreaterThan(2);
  });
});

describe("a write's statements", () => {
  test("with nobody subscribed to the feed (no Redis), a PATCH reads nothing after its commit; its event is written last, inside it", async () => {
    // An app of its own, without Redis, whose feed has no subscriber.
    const alone = createApp({ ...config, responseCache: false, redisUrl: undefined }, counting.db);
    try {
      const statements = await roundTrips(() =>
        call("PATCH", `/api/v1/providers/${code}`, { app: alone, token, body: { summary: "Nobody is listening" } }),
      );
      expect(statements.at(-1)).toBe("COMMIT");
      // The event log is written in the write's transaction, as its last statement (src/events).
      const commit = statements.indexOf("COMMIT");
      expect(statements[commit - 1]).toMatch(/^INSERT INTO "events"/);
      expect(statements.slice(commit).every((s) => s === "COMMIT")).toBe(true);
      // Nothing else reads the log for the feed, before the commit or after it.
      expect(statements.filter((s) => /FROM "events"/.test(s))).toEqual([]);
    } finally {
      await alone.dispose();
    }
  });

  test("an intake writes each of its rows once and reads nothing back: the row's state it inserted is its events' snapshot", async () => {
    const alone = createApp({ ...config, responseCache: false, redisUrl: undefined }, counting.db);
    try {
      const body = {
        ...intakeBody({ labels: ["counted", "once"] }),
        serverName: `io.github.counted/${uniqueCode("srv")}`,
        packages: [{ registryType: "NPM", identifier: "@counted/srv", version: "1.0.0", transport: { type: "STDIO" } }],
      };
      counting.reset();
      const answer = await call("POST", "/api/v1/providers", { app: alone, body });
      const statements = [...counting.statements];
      expect(answer.status).toBe(201);
      const written = statements.slice(statements.indexOf("BEGIN") + 1, statements.indexOf("COMMIT"));
      const tables = written.map(
        (s) => /^(?:INSERT INTO|UPDATE|SELECT .* FROM) [`"]?(?:[a-z]+[`"]\.[`"])?([a-z_]+)/.exec(s)?.[1] ?? s,
      );
      // Each table once, and no read of the provider it has just inserted (the event's snapshot included).
      expect(tables.filter((t) => t === "providers")).toHaveLength(1);
      expect(written.filter((s) => /^SELECT/.test(s) && /[`"]providers[`"]/.test(s))).toEqual([]);
      expect(written.filter((s) => /^UPDATE "mcp_server_versions"/.test(s))).toEqual([]);
      expect(new Set(tables)).toEqual(
        new Set([
          "providers",
          "provider_labels",
          "provider_packages",
          "provider_versions",
          "access_tokens",
          "reviews",
          "review_events",
          "mcp_server_versions",
          ...(ON_POSTGRES ? ["pg_advisory_xact_lock"] : []),
          "events",
        ]),
      );
      // What the event says the provider is, is what reading its row says.
      const code = answer.body.providerCode as string;
      const events = await call("GET", `/api/v1/events?providerCode=${code}`, { app: alone, token: reviewer });
      const created = events.body.items[0];
      expect(created.kind).toBe("PROVIDER_CREATED");
      const row = await db.provider.findUniqueOrThrow({ where: { providerCode: code }, select: { id: true } });
      expect(created.stateHash).toBe(stateHash(await snapshotBefore(db, row.id)));
    } finally {
      await alone.dispose();
    }
  });

  test("with twenty subscribers, a write costs at most one read of the log after its commit, not one per subscriber", async () => {
    // A poll far off, so that the only read of the log is the one the write wakes.
    const watched = createApp(
      { ...config, responseCache: false, redisUrl: undefined, events: { ...config.events, pollMs: 600_000 } },
      counting.db,
    );
    const aborts: AbortController[] = [];
    try {
      const bodies = await Promise.all(
        Array.from({ length: 20 }, async () => {
          const abort = new AbortController();
          aborts.push(abort);
          const response = await watched.fetch("http://registry.test/graphql", {
            method: "POST",
            headers: {
              accept: "text/event-stream",
              "content-type": "application/json",
              authorization: `Bearer ${reviewer}`,
            },
            body: JSON.stringify({ query: "subscription { feed { seq kind providerCode } }" }),
            signal: abort.signal,
          });
          expect(response.status).toBe(200);
          return readSse(response, abort);
        }),
      );
      await until(() => watched.feed.subscribers === 20, "twenty subscribers");
      counting.reset();
      const answer = await call("PATCH", `/api/v1/providers/${code}`, {
        app: watched,
        token,
        body: { summary: "Watched" },
      });
      expect([answer.status, answer.status === 200 ? "" : answer.text]).toEqual([200, ""]);
      // Every subscriber has the event …
      for (const body of bodies)
        expect((await body.next()).data.feed).toMatchObject({ kind: "PROVIDER_UPDATED", providerCode: code });
      const statements = [...counting.statements];
      const afterCommit = statements.slice(statements.lastIndexOf("COMMIT") + 1);
      // … from what the write itself returned (no read, when its events follow the tail's head) or
      // from one read of the log for all of them (when another writer's came between).
      expect(afterCommit.filter((s) => /FROM "events"/.test(s)).length).toBeLessThanOrEqual(1);
      await Promise.all(bodies.map((b) => b.close()));
    } finally {
      for (const abort of aborts) abort.abort();
      await watched.dispose();
    }
  });
});
