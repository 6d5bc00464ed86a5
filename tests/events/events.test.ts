/**
 * The event log through the front door (REST and GraphQL, on the run's database): every committed
 * change is logged with its JSON Patch and the hash of the public snapshot after it; a refused write
 * logs nothing; each caller reads what it may see; paging by seq; retention answers 410; the feed
 * resumes from Last-Event-ID.
 */
import { createHash } from "node:crypto";
import { afterAll, describe, expect, test } from "@jest/globals";
import canonicalize from "canonicalize";
import { applyPatch } from "rfc6902";
import { loadConfig } from "../../src/config.ts";
import { type Db, openDb } from "../../src/db/client.ts";
import { pruneEvents } from "../../src/events/event.store.ts";
import { createApp } from "../../src/yoga.ts";
import { copyOfTemplate } from "../database.ts";
import { FEED_QUERY, readSse } from "../feed/sse.ts";
import { app, approve, call, expectProblem, gql, gqlCodes, intake, reviewerToken } from "../helpers.ts";

type Event = {
  seq: number;
  kind: string;
  providerCode: string | null;
  version: number | null;
  reviewCode: string | null;
  patch: { op: string; path: string; value?: unknown; from?: string | null }[];
  stateHash: string | null;
  note: string | null;
};

const sha256 = (value: unknown) =>
  createHash("sha256")
    .update(canonicalize(value) as string)
    .digest("hex");

/** Every event of one provider a caller may see, through REST, oldest first. */
async function eventsOf(providerCode: string, token?: string, target = app): Promise<Event[]> {
  const answer = await call("GET", `/api/v1/events?providerCode=${providerCode}&limit=500`, {
    app: target,
    ...(token ? { token } : {}),
  });
  expect(answer.status).toBe(200);
  return answer.body.items;
}

/** Applies each event's patch in turn from `{}`; checks every event's hash on the way; answers the snapshot. */
function replay(events: Event[]): Record<string, unknown> {
  let state: Record<string, unknown> = {};
  for (const event of events) {
    // REST renders an operation's absent `from` as null: the patch library wants it absent.
    const ops = event.patch.map(({ from, ...op }) => (from ? { ...op, from } : op));
    const results = applyPatch(state, ops as never);
    expect(results.filter((r) => r !== null)).toEqual([]);
    expect(sha256(state)).toBe(event.stateHash);
    state = JSON.parse(JSON.stringify(state));
  }
  return state;
}

describe("every committed change is logged with the change", () => {
  test("a provider's life: kinds in order, patches that rebuild its public snapshot, hashes that match", async () => {
    const rv = await reviewerToken("events-rv");
    const created = await intake({ contactEmail: "secret-owner@example.com" });
    const code = created.providerCode;
    const token = created.accessToken;
    const reviewCode = created.reviewCode;
    await call("POST", `/api/v1/reviews/${reviewCode}/assign`, { token: rv });
    await call("POST", `/api/v1/reviews/${reviewCode}/comments`, { token: rv, body: { note: "looks fine" } });
    await call("POST", `/api/v1/reviews/${reviewCode}/decision`, {
      token: rv,
      body: { decision: "APPROVE", note: "ok", trustTier: "VERIFIED" },
    });
    expect((await call("PATCH", `/api/v1/providers/${code}`, { token, body: { summary: "Now twice" } })).status).toBe(
      200,
    );
    // An empty change is still a version: logged, with an empty patch and the same hash.
    expect((await call("PATCH", `/api/v1/providers/${code}`, { token, body: { summary: "Now twice" } })).status).toBe(
      200,
    );
    await call("POST", `/api/v1/providers/${code}/lifecycle`, {
      token,
      body: { state: "DEPRECATED", message: "moving on" },
    });

    const events = await eventsOf(code, rv);
    expect(events.map((e) => [e.kind, e.version, e.reviewCode])).toEqual([
      ["PROVIDER_CREATED", 1, null],
      ["REVIEW_OPENED", 1, reviewCode],
      ["STAGE_CHANGED", 1, reviewCode],
      ["REVIEW_ASSIGNED", 1, reviewCode],
      ["REVIEW_COMMENTED", 1, reviewCode],
      ["STAGE_CHANGED", 1, reviewCode],
      ["REVIEW_DECIDED", 1, reviewCode],
      ["PROVIDER_UPDATED", 2, null],
      ["PROVIDER_UPDATED", 3, null],
      ["LIFECYCLE_CHANGED", 4, null],
    ]);
    for (let i = 1; i < events.length; i++) expect(events[i]!.seq).toBeGreaterThan(events[i - 1]!.seq);
    // The creation's patch builds the snapshot from {}; later ones change only what changed.
    expect(events[0]!.patch).toContainEqual({ op: "add", path: "/providerCode", value: code, from: null });
    expect(events[2]!.patch).toEqual([{ op: "replace", path: "/reviewStage", value: "IN_REVIEW", from: null }]);
    expect(events[5]!.patch).toEqual(
      expect.arrayContaining([
        { op: "replace", path: "/reviewStage", value: "APPROVED", from: null },
        { op: "replace", path: "/trustTier", value: "VERIFIED", from: null },
      ]),
    );
    for (const i of [1, 3, 4, 6, 8]) expect(events[i]!.patch).toEqual([]);
    expect(events[7]!.patch).toEqual([{ op: "replace", path: "/summary", value: "Now twice", from: null }]);
    expect(events[8]!.stateHash).toBe(events[7]!.stateHash);

    // Replayed, the patches give the profile as anyone may read it — never its contact address.
    const state = replay(events);
    const profile = (await call("GET", `/api/v1/providers/${code}`)).body;
    expect(state).toMatchObject({
      providerCode: code,
      name: profile.name,
      summary: "Now twice",
      labels: profile.labels,
      endpoint: profile.endpoint,
      reviewStage: "APPROVED",
      trustTier: "VERIFIED",
      lifecycle: "DEPRECATED",
      lifecycleMessage: "moving on",
      publisherVerified: false,
    });
    expect(JSON.stringify(events)).not.toContain("secret-owner@example.com");
    expect(JSON.stringify(events)).not.toContain("looks fine");
  });

  test("a refused or rolled-back write logs nothing", async () => {
    const rv = await reviewerToken("events-rv");
    const { providerCode: code, accessToken: token, reviewCode } = await intake();
    const before = await eventsOf(code, rv);
    // Bad input, a stale If-Match, a transition the workflow refuses: nothing is logged.
    expect((await call("PATCH", `/api/v1/providers/${code}`, { token, body: { name: "" } })).status).toBe(400);
    const stale = await call("PATCH", `/api/v1/providers/${code}`, {
      token,
      body: { summary: "x" },
      headers: { "if-match": '"7"' },
    });
    expect(stale.status).toBe(412);
    expect((await call("POST", `/api/v1/providers/${code}/suspend`, { token: rv, body: { note: "no" } })).status).toBe(
      409,
    );
    expect(
      (await call("POST", `/api/v1/reviews/${reviewCode}/decision`, { token: rv, body: { decision: "REJECT" } }))
        .status,
    ).toBe(400);
    expect(await eventsOf(code, rv)).toEqual(before);
  });
});

describe("who reads what", () => {
  test("anonymous: provider events of providers in the directory (arrivals and departures); an agent: its own; reviewers: all", async () => {
    const rv = await reviewerToken("events-rv");
    const listed = await intake();
    const hidden = await intake({ visibility: "PRIVATE" });
    await approve(listed.providerCode);
    await approve(hidden.providerCode);
    await call("PATCH", `/api/v1/providers/${listed.providerCode}`, {
      token: listed.accessToken,
      body: { summary: "Still listed" },
    });
    // Leaving the directory is announced to those who saw it listed.
    await call("POST", `/api/v1/providers/${listed.providerCode}/suspend`, { token: rv, body: { note: "abuse" } });

    const anonymous = await eventsOf(listed.providerCode);
    expect(anonymous.map((e) => e.kind)).toEqual(["STAGE_CHANGED", "PROVIDER_UPDATED", "STAGE_CHANGED"]);
    expect(anonymous.at(-1)!.patch).toEqual([{ op: "replace", path: "/reviewStage", value: "SUSPENDED", from: null }]);
    expect(await eventsOf(hidden.providerCode)).toEqual([]);
    // The owner of the private one sees all of its events, review events included; not another's.
    const own = await eventsOf(hidden.providerCode, hidden.accessToken);
    expect(own.map((e) => e.kind)).toEqual(["PROVIDER_CREATED", "REVIEW_OPENED", "STAGE_CHANGED", "REVIEW_DECIDED"]);
    expect(await eventsOf(hidden.providerCode, (await intake()).accessToken)).toEqual([]);
    expect((await eventsOf(listed.providerCode, rv)).length).toBe(6);
    // Through GraphQL, the same.
    const graphql = await gql(
      `query($code: String) { events(providerCode: $code, limit: 100) { items { seq kind stateHash } nextCursor } }`,
      { code: listed.providerCode },
    );
    expect(graphql.body.data.events.items.map((e: Event) => e.kind)).toEqual(anonymous.map((e) => e.kind));
    expect(graphql.body.data.events.nextCursor).toBeNull();
  });
});

describe("reading the log", () => {
  test("pages by seq with nextCursor; filters by kinds; `last`; bad arguments are 400s", async () => {
    const rv = await reviewerToken("events-rv");
    const { providerCode: code, accessToken: token } = await intake();
    for (let i = 0; i < 4; i++) await call("PATCH", `/api/v1/providers/${code}`, { token, body: { summary: `s${i}` } });
    const all = await eventsOf(code, rv);
    expect(all).toHaveLength(6);
    const first = await call("GET", `/api/v1/events?providerCode=${code}&limit=4`, { token: rv });
    expect(first.body.items.map((e: Event) => e.seq)).toEqual(all.slice(0, 4).map((e) => e.seq));
    expect(first.body.nextCursor).toBe(all[3]!.seq);
    const second = await call("GET", `/api/v1/events?providerCode=${code}&limit=4&after=${first.body.nextCursor}`, {
      token: rv,
    });
    expect(second.body.items.map((e: Event) => e.seq)).toEqual(all.slice(4).map((e) => e.seq));
    expect(second.body.nextCursor).toBeNull();

    const kinds = await call("GET", `/api/v1/events?providerCode=${code}&kinds=PROVIDER_CREATED,REVIEW_OPENED`, {
      token: rv,
    });
    expect(kinds.body.items.map((e: Event) => e.kind)).toEqual(["PROVIDER_CREATED", "REVIEW_OPENED"]);
    const last = await call("GET", `/api/v1/events?providerCode=${code}&last=2`, { token: rv });
    expect(last.body.items.map((e: Event) => e.seq)).toEqual(all.slice(4).map((e) => e.seq));

    expectProblem(await call("GET", "/api/v1/events?after=-1"), 400, "BAD_USER_INPUT");
    expectProblem(await call("GET", "/api/v1/events?after=abc"), 400, "BAD_USER_INPUT");
    expectProblem(await call("GET", "/api/v1/events?limit=0"), 400, "BAD_USER_INPUT");
    expectProblem(await call("GET", "/api/v1/events?limit=501"), 400, "BAD_USER_INPUT");
    expectProblem(await call("GET", "/api/v1/events?kinds=NOPE"), 400, "BAD_USER_INPUT");
    expectProblem(await call("GET", "/api/v1/events?after=1&last=2"), 400, "BAD_USER_INPUT");
  });
});

describe("the feed resumes from Last-Event-ID", () => {
  test("each message's id is its seq; a reconnection with Last-Event-ID gets what it missed, in order, once", async () => {
    const rv = await reviewerToken("events-rv");
    const { providerCode: code, accessToken: token } = await intake();
    const open = async (headers: Record<string, string> = {}) => {
      const abort = new AbortController();
      const response = await app.fetch("http://registry.test/graphql", {
        method: "POST",
        headers: {
          accept: "text/event-stream",
          "content-type": "application/json",
          authorization: `Bearer ${rv}`,
          ...headers,
        },
        body: JSON.stringify({ query: FEED_QUERY, variables: { providerCode: code } }),
        signal: abort.signal,
      });
      return readSse(response, abort);
    };
    const first = await open();
    await call("PATCH", `/api/v1/providers/${code}`, { token, body: { summary: "one" } });
    const one = (await first.next()).data.feed;
    expect(first.lastId).toBe(String(one.seq));
    await first.close();
    // Missed while disconnected:
    await call("PATCH", `/api/v1/providers/${code}`, { token, body: { summary: "two" } });
    await call("PATCH", `/api/v1/providers/${code}`, { token, body: { summary: "three" } });
    const again = await open({ "last-event-id": first.lastId as string });
    const missed = [(await again.next()).data.feed, (await again.next()).data.feed];
    expect(missed.map((e) => e.patch[0].value)).toEqual(["two", "three"]);
    expect(missed[0].seq).toBeGreaterThan(one.seq);
    // Then live, and nothing twice.
    await call("PATCH", `/api/v1/providers/${code}`, { token, body: { summary: "four" } });
    expect((await again.next()).data.feed.patch[0].value).toBe("four");
    expect(await again.drain(200)).toEqual([]);
    await again.close();

    const bad = await app.fetch("http://registry.test/graphql", {
      method: "POST",
      headers: { accept: "text/event-stream", "content-type": "application/json", "last-event-id": "x1" },
      body: JSON.stringify({ query: FEED_QUERY }),
    });
    const refused = readSse(bad);
    expect((await refused.next()).errors[0].extensions.code).toBe("BAD_USER_INPUT");
  });
});

describe("retention", () => {
  let own: { db: Db; app: ReturnType<typeof createApp> } | undefined;
  afterAll(async () => {
    await own?.app.dispose();
    await own?.db.$disconnect();
  });

  test("asking from before the oldest kept event is a 410 naming it; from there on is answered", async () => {
    // A database of its own: pruning deletes the log's oldest events, whoever wrote them.
    const url = await copyOfTemplate();
    const ownDb = await openDb(url);
    const ownApp = createApp(loadConfig({ ...process.env, NODE_ENV: "test", DATABASE_URL: url }), ownDb);
    own = { db: ownDb, app: ownApp };
    const rv = await reviewerToken("events-rv");
    const made = await call("POST", "/api/v1/providers", {
      app: ownApp,
      body: {
        name: "Old Agent",
        summary: "Was here first",
        agentType: "TOOL_SERVER",
        contactEmail: "old@example.com",
        endpoint: { url: "https://old.example.com/mcp", protocol: "MCP", authScheme: "NONE" },
      },
    });
    expect(made.status).toBe(201);
    const patch = (summary: string) =>
      call("PATCH", `/api/v1/providers/${made.body.providerCode}`, {
        app: ownApp,
        token: made.body.accessToken,
        body: { summary },
      });
    await patch("Still here");
    // Everything so far is older than the cut; the newest event is kept whatever its age.
    expect(await pruneEvents(ownDb, new Date(Date.now() + 1000))).toBe(2);
    const left = await call("GET", "/api/v1/events", { app: ownApp, token: rv });
    expect(left.body.items.map((e: Event) => e.seq)).toEqual([3]);
    // The next seq is the next number, never one handed out before.
    await patch("Here again");

    const gone = await call("GET", "/api/v1/events?after=0", { app: ownApp, token: rv });
    expectProblem(gone, 410, "GONE");
    expect(gone.body.detail).toContain("oldest available is seq 3");
    const graphql = await gql(`{ events(after: 1) { items { seq } } }`, {}, { app: ownApp, token: rv });
    expect(gqlCodes(graphql)).toEqual(["GONE"]);
    expect(graphql.body.errors[0].extensions.oldestSeq).toBe(3);
    // From the cut on, and by default (the oldest kept), the log answers.
    const kept = await call("GET", "/api/v1/events?after=2", { app: ownApp, token: rv });
    expect(kept.body.items.map((e: Event) => [e.seq, e.kind])).toEqual([
      [3, "PROVIDER_UPDATED"],
      [4, "PROVIDER_UPDATED"],
    ]);
    expect((await call("GET", "/api/v1/events", { app: ownApp, token: rv })).body.items).toHaveLength(2);
    // The feed refuses to resume from before it too.
    const stream = readSse(
      await ownApp.fetch("http://registry.test/graphql", {
        method: "POST",
        headers: { accept: "text/event-stream", "content-type": "application/json", "last-event-id": "1" },
        body: JSON.stringify({ query: FEED_QUERY }),
      }),
    );
    expect((await stream.next()).errors[0].extensions.code).toBe("GONE");
  });
});
