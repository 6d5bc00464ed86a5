/**
 * The change feed in process (`yoga.fetch` streaming Server-Sent Events): the event log's events of
 * committed writes, each once and in order, with the patch of the provider's public snapshot and
 * its hash, only what the subscriber may see; a refused or rolled-back write is not announced; a
 * subscriber that leaves frees its stream; subscriptions are GraphQL only.
 */
import { afterAll, describe, expect, test } from "@jest/globals";
import { lastSeq } from "../../src/events/event.store.ts";
import { createFeed } from "../../src/feed/feed.pubsub.ts";
import { createApp } from "../../src/yoga.ts";
import { uniqueCode } from "../builders.ts";
import { activeReviewCode, approve, call, config, db, expectProblem, intake, reviewerToken } from "../helpers.ts";
import { until } from "../wait.ts";
import { type FeedEvent, opAt, replay } from "./patches.ts";
import { FEED_QUERY, readSse, type SseStream } from "./sse.ts";

// An app of its own, so that the count of its subscribers is this file's only.
const app = createApp(config, db);
afterAll(async () => {
  await app.dispose();
});

const open: SseStream[] = [];
afterAll(async () => {
  await Promise.all(open.map((s) => s.close()));
});

async function subscribe(variables: Record<string, unknown> = {}, token?: string): Promise<SseStream> {
  const abort = new AbortController();
  const response = await app.fetch("http://registry.test/graphql", {
    method: "POST",
    headers: {
      accept: "text/event-stream",
      "content-type": "application/json",
      ...(token ? { authorization: `Bearer ${token}` } : {}),
    },
    body: JSON.stringify({ query: FEED_QUERY, variables }),
    signal: abort.signal,
  });
  expect(response.status).toBe(200);
  expect(response.headers.get("content-type")).toMatch(/^text\/event-stream/);
  const stream = readSse(response, abort);
  open.push(stream);
  return stream;
}

const lifecycle = (code: string, body: unknown, token: string) =>
  call("POST", `/api/v1/providers/${code}/lifecycle`, { body, token, app });

describe("events of committed writes", () => {
  test("a reviewer sees every event of a provider's life, each once, in order, with the state after it", async () => {
    const rv = await reviewerToken("feed-rv");
    const code = uniqueCode("feed");
    const stream = await subscribe({ providerCode: code }, rv);
    const created = await call("POST", "/api/v1/providers", {
      app,
      body: {
        providerCode: code,
        name: "Feed Agent",
        summary: "Announces itself",
        agentType: "ASSISTANT",
        contactEmail: "feed@example.com",
        endpoint: { url: "https://feed.example.com/a2a", protocol: "A2A", authScheme: "BEARER" },
      },
    });
    expect(created.status).toBe(201);
    const token = created.body.accessToken as string;
    const reviewCode = created.body.reviewCode as string;
    await call("POST", `/api/v1/reviews/${reviewCode}/assign`, { app, token: rv });
    await call("POST", `/api/v1/reviews/${reviewCode}/comments`, { app, token: rv, body: { note: "looks fine" } });
    await call("POST", `/api/v1/reviews/${reviewCode}/decision`, {
      app,
      token: rv,
      body: { decision: "APPROVE", note: "approved in tests" },
    });
    await call("PATCH", `/api/v1/providers/${code}`, { app, token, body: { summary: "Announces itself twice" } });
    await lifecycle(code, { state: "DEPRECATED", message: "moving on" }, token);

    const events: FeedEvent[] = [];
    const ids: (string | undefined)[] = [];
    for (let i = 0; i < 9; i++) {
      events.push((await stream.next()).data.feed);
      ids.push(stream.lastId);
    }
    // Provider kinds first within one write: the write's stage change, then the review event.
    expect(events.map((e) => [e.kind, e.version])).toEqual([
      ["PROVIDER_CREATED", 1],
      ["REVIEW_OPENED", 1],
      ["STAGE_CHANGED", 1],
      ["REVIEW_ASSIGNED", 1],
      ["REVIEW_COMMENTED", 1],
      ["STAGE_CHANGED", 1],
      ["REVIEW_DECIDED", 1],
      ["PROVIDER_UPDATED", 2],
      ["LIFECYCLE_CHANGED", 3],
    ]);
    expect(events.every((e) => e.providerCode === code)).toBe(true);
    // In order, each once: seq strictly increases, each message's SSE id is its seq; nothing else arrives.
    for (let i = 1; i < events.length; i++) expect(events[i]!.seq).toBeGreaterThan(events[i - 1]!.seq);
    expect(ids).toEqual(events.map((e) => String(e.seq)));
    expect(await stream.drain(200)).toEqual([]);
    // The review events name their review.
    expect(events.map((e) => e.reviewCode)).toEqual([
      null,
      reviewCode,
      reviewCode,
      reviewCode,
      reviewCode,
      reviewCode,
      reviewCode,
      null,
      null,
    ]);

    // Each write's whole patch is on its first (provider) event; its other events carry none.
    const [createdEvent, opened, inReview, assigned, commented, approved, decided, updated, deprecated] = events;
    // The creation builds the public snapshot from {}: no contactEmail, no version or updatedAt.
    expect(createdEvent!.patch.every((o) => o.op === "add")).toBe(true);
    expect(opAt(createdEvent!.patch, "/providerCode")?.value).toBe(code);
    expect(opAt(createdEvent!.patch, "/name")?.value).toBe("Feed Agent");
    expect(opAt(createdEvent!.patch, "/reviewStage")?.value).toBe("SUBMITTED");
    expect(opAt(createdEvent!.patch, "/lifecycle")?.value).toBe("ACTIVE");
    expect(opAt(createdEvent!.patch, "/visibility")?.value).toBe("PUBLIC");
    for (const hidden of ["/contactEmail", "/version", "/updatedAt"])
      expect(opAt(createdEvent!.patch, hidden)).toBeUndefined();
    expect(inReview!.patch).toEqual([{ op: "replace", path: "/reviewStage", from: null, value: "IN_REVIEW" }]);
    expect(approved!.patch).toEqual([{ op: "replace", path: "/reviewStage", from: null, value: "APPROVED" }]);
    expect(updated!.patch).toEqual([{ op: "replace", path: "/summary", from: null, value: "Announces itself twice" }]);
    expect(deprecated!.patch).toEqual(
      expect.arrayContaining([
        { op: "replace", path: "/lifecycle", from: null, value: "DEPRECATED" },
        { op: "replace", path: "/lifecycleMessage", from: null, value: "moving on" },
      ]),
    );
    expect(deprecated!.patch).toHaveLength(2);
    for (const e of [opened, assigned, commented, decided]) expect(e!.patch).toEqual([]);
    // The hash changes with the public snapshot and only with it.
    expect(opened!.stateHash).toBe(createdEvent!.stateHash);
    expect(inReview!.stateHash).not.toBe(opened!.stateHash);
    expect([assigned!.stateHash, commented!.stateHash]).toEqual([inReview!.stateHash, inReview!.stateHash]);
    expect(approved!.stateHash).not.toBe(commented!.stateHash);
    expect(decided!.stateHash).toBe(approved!.stateHash);
    expect(new Set([approved, updated, deprecated].map((e) => e!.stateHash)).size).toBe(3);
    // Replaying the patches over {} gives each event's hash, and the provider as anyone reads it.
    const state = replay(events);
    const profile = await call("GET", `/api/v1/providers/${code}`, { app });
    expect(profile.status).toBe(200);
    expect(state).toMatchObject({
      providerCode: code,
      summary: "Announces itself twice",
      visibility: "PUBLIC",
      reviewStage: "APPROVED",
      lifecycle: "DEPRECATED",
      lifecycleMessage: "moving on",
      successorCode: null,
      trustTier: profile.body.trustTier,
      publisherVerified: false,
      endpoint: profile.body.endpoint,
    });
    expect(state).not.toHaveProperty("contactEmail");
  });

  test("concurrent writes are each announced once, also those that finish while others still run", async () => {
    const rv = await reviewerToken();
    const agents = await Promise.all(Array.from({ length: 8 }, () => intake()));
    const stream = await subscribe({}, rv);
    // Uneven bodies, so that the writes overlap and finish in no set order.
    const answers = await Promise.all(
      agents.map((agent, i) =>
        call("PATCH", `/api/v1/providers/${agent.providerCode}`, {
          app,
          token: agent.accessToken,
          body: { summary: `concurrent ${i}`, description: "x".repeat(1 + i * 500) },
        }),
      ),
    );
    expect(answers.map((a) => a.status)).toEqual(agents.map(() => 200));
    const ours = new Set(agents.map((a) => a.providerCode));
    const seen = (await stream.collect(agents.length, (m) => ours.has(m.data?.feed?.providerCode)))
      .map((m) => m.data.feed as { kind: string; providerCode: string })
      .map((e) => `${e.kind} ${e.providerCode}`);
    expect(seen.sort()).toEqual(agents.map((a) => `PROVIDER_UPDATED ${a.providerCode}`).sort());
  });

  test("a refused or rolled-back write announces nothing", async () => {
    const p = await intake();
    const rv = await reviewerToken();
    const stream = await subscribe({ providerCode: p.providerCode }, rv);
    // 400 (nothing written), 409 (transition refused), 412 (the version claim rolled back).
    expectProblem(await lifecycle(p.providerCode, { state: "DEPRECATED" }, p.accessToken), 400, "BAD_USER_INPUT");
    expectProblem(await lifecycle(p.providerCode, { state: "ACTIVE" }, p.accessToken), 409, "CONFLICT");
    const stale = await call("PATCH", `/api/v1/providers/${p.providerCode}`, {
      app,
      token: p.accessToken,
      body: { summary: "never" },
      headers: { "if-match": '"9"' },
    });
    expectProblem(stale, 412, "PRECONDITION_FAILED");
    expectProblem(
      await call("POST", `/api/v1/providers/${p.providerCode}/reinstate`, { app, token: rv, body: {} }),
      409,
      "CONFLICT",
    );
    // Then one that commits: it is the first thing the stream hears.
    expect((await lifecycle(p.providerCode, { state: "RETIRED" }, p.accessToken)).status).toBe(200);
    expect((await stream.next()).data.feed).toMatchObject({
      kind: "LIFECYCLE_CHANGED",
      providerCode: p.providerCode,
      version: 2,
      patch: [{ op: "replace", path: "/lifecycle", from: null, value: "RETIRED" }],
    });
    expect(await stream.drain(200)).toEqual([]);
  });
});

describe("who sees what", () => {
  test("anonymous: provider events of listed providers (arrivals and departures too); an agent: its own too; reviewers: everything", async () => {
    const rv = await reviewerToken();
    const label = uniqueCode("vis");
    const listed = await intake({ labels: [label] });
    await approve(listed.providerCode);
    const hidden = await intake({ labels: [label], visibility: "PRIVATE" });
    await approve(hidden.providerCode);
    const pending = await intake({ labels: [label] });
    // Two that leave the directory (made private; suspended) and one that joins it (made public).
    const leaving = await intake({ labels: [label] });
    await approve(leaving.providerCode);
    const suspended = await intake({ labels: [label] });
    await approve(suspended.providerCode);
    const joining = await intake({ labels: [label], visibility: "PRIVATE" });
    await approve(joining.providerCode);

    const anonymous = await subscribe();
    const agent = await subscribe({}, pending.accessToken);
    const reviewer = await subscribe({}, rv);

    const ours = new Set([listed, hidden, pending, leaving, suspended, joining].map((p) => p.providerCode));
    /** The `count` events of these agents the stream is to see, and any more that follow them. */
    const mine = async (stream: SseStream, count: number) =>
      (await stream.collect(count, (m) => ours.has(m.data?.feed?.providerCode))).map((m) => m.data.feed as FeedEvent);
    const named = (events: FeedEvent[]) => events.map((e) => `${e.kind} ${e.providerCode}`);
    const patch = (p: { providerCode: string; accessToken: string }, body: Record<string, unknown>) =>
      call("PATCH", `/api/v1/providers/${p.providerCode}`, { app, token: p.accessToken, body });

    expect((await patch(listed, { summary: "a" })).status).toBe(200);
    expect((await patch(hidden, { summary: "b" })).status).toBe(200);
    expect((await patch(pending, { summary: "c" })).status).toBe(200);
    await call("POST", `/api/v1/reviews/${await activeReviewCode(pending.providerCode)}/comments`, {
      app,
      token: rv,
      body: { note: "secret reviewer note" },
    });
    await lifecycle(hidden.providerCode, { state: "RETIRED" }, hidden.accessToken);
    await lifecycle(listed.providerCode, { state: "RETIRED", message: "bye" }, listed.accessToken);
    // Leaving: announced to anonymous (the write that leaves), then nothing more of it.
    expect((await patch(leaving, { visibility: "PRIVATE" })).status).toBe(200);
    expect((await patch(leaving, { summary: "gone quiet" })).status).toBe(200);
    const suspension = await call("POST", `/api/v1/providers/${suspended.providerCode}/suspend`, {
      app,
      token: rv,
      body: { note: "abuse" },
    });
    expect(suspension.status).toBe(200);
    // Joining: announced from the write that makes it public on.
    expect((await patch(joining, { visibility: "PUBLIC" })).status).toBe(200);

    const seenByAnonymous = await mine(anonymous, 5);
    expect(named(seenByAnonymous)).toEqual([
      `PROVIDER_UPDATED ${listed.providerCode}`,
      `LIFECYCLE_CHANGED ${listed.providerCode}`,
      `PROVIDER_UPDATED ${leaving.providerCode}`,
      `STAGE_CHANGED ${suspended.providerCode}`,
      `PROVIDER_UPDATED ${joining.providerCode}`,
    ]);
    // What the public learns is the state after each change: out of the directory, and back in.
    const of = (code: string) => seenByAnonymous.find((e) => e.providerCode === code)?.patch;
    expect(of(leaving.providerCode)).toEqual([{ op: "replace", path: "/visibility", from: null, value: "PRIVATE" }]);
    expect(of(suspended.providerCode)).toEqual([
      { op: "replace", path: "/reviewStage", from: null, value: "SUSPENDED" },
    ]);
    expect(of(joining.providerCode)).toEqual([{ op: "replace", path: "/visibility", from: null, value: "PUBLIC" }]);

    expect(named(await mine(agent, 7))).toEqual([
      `PROVIDER_UPDATED ${listed.providerCode}`,
      `PROVIDER_UPDATED ${pending.providerCode}`,
      `REVIEW_COMMENTED ${pending.providerCode}`,
      `LIFECYCLE_CHANGED ${listed.providerCode}`,
      `PROVIDER_UPDATED ${leaving.providerCode}`,
      `STAGE_CHANGED ${suspended.providerCode}`,
      `PROVIDER_UPDATED ${joining.providerCode}`,
    ]);
    expect(named(await mine(reviewer, 10))).toEqual([
      `PROVIDER_UPDATED ${listed.providerCode}`,
      `PROVIDER_UPDATED ${hidden.providerCode}`,
      `PROVIDER_UPDATED ${pending.providerCode}`,
      `REVIEW_COMMENTED ${pending.providerCode}`,
      `LIFECYCLE_CHANGED ${hidden.providerCode}`,
      `LIFECYCLE_CHANGED ${listed.providerCode}`,
      `PROVIDER_UPDATED ${leaving.providerCode}`,
      `PROVIDER_UPDATED ${leaving.providerCode}`,
      `STAGE_CHANGED ${suspended.providerCode}`,
      `PROVIDER_UPDATED ${joining.providerCode}`,
    ]);
  });

  test("an anonymous subscriber asking for review events or a private provider gets nothing; a bad token is a 401", async () => {
    const hidden = await intake({ visibility: "PRIVATE" });
    const stream = await subscribe({ kinds: ["REVIEW_OPENED", "REVIEW_COMMENTED"] });
    const byCode = await subscribe({ providerCode: hidden.providerCode });
    const fresh = await intake();
    await call("POST", `/api/v1/reviews/${fresh.reviewCode}/comments`, {
      app,
      token: fresh.accessToken,
      body: { note: "owner's note" },
    });
    await call("PATCH", `/api/v1/providers/${hidden.providerCode}`, {
      app,
      token: hidden.accessToken,
      body: { summary: "x" },
    });
    expect(await stream.drain(300)).toEqual([]);
    expect(await byCode.drain(0)).toEqual([]);

    const refused = await app.fetch("http://registry.test/graphql", {
      method: "POST",
      headers: { accept: "text/event-stream", "content-type": "application/json", authorization: "Bearer nope" },
      body: JSON.stringify({ query: FEED_QUERY }),
    });
    expect(refused.status).toBe(401);
    await refused.text();
  });

  test.each([
    ["every event", () => ({})],
    ["kinds that are not the suspension's", () => ({ kinds: ["LIFECYCLE_CHANGED"] })],
    ["another provider's events", () => ({ providerCode: uniqueCode("someone-else") })],
  ])(
    "an agent's stream (%s) ends when its provider is suspended (its tokens are revoked)",
    async (_what, variables) => {
      const p = await intake();
      await approve(p.providerCode);
      const stream = await subscribe(variables(), p.accessToken);
      const suspended = await call("POST", `/api/v1/providers/${p.providerCode}/suspend`, {
        app,
        token: await reviewerToken(),
        body: { note: "abuse" },
      });
      expect(suspended.status).toBe(200);
      await until(() => stream.ended, "the suspended agent's stream ended");
    },
  );
});

describe("revocation ends an agent's stream", () => {
  test("revoking the token a stream was opened with ends that stream, not one opened with another token", async () => {
    const p = await intake();
    const second = await call("POST", `/api/v1/providers/${p.providerCode}/tokens`, {
      app,
      token: p.accessToken,
      body: { label: "second" },
    });
    expect(second.status).toBe(201);
    const first = await subscribe({ providerCode: p.providerCode }, p.accessToken);
    const other = await subscribe({ providerCode: p.providerCode }, second.body.accessToken);
    const profile = await call("GET", `/api/v1/providers/${p.providerCode}`, { app, token: p.accessToken });
    const intakeToken = (profile.body.tokens as { tokenId: string; label: string }[]).find((t) => t.label === "intake");
    const revoked = await call("DELETE", `/api/v1/providers/${p.providerCode}/tokens/${intakeToken?.tokenId}`, {
      app,
      token: second.body.accessToken,
    });
    expect(revoked.status).toBe(200);
    await until(() => first.ended, "the revoked token's stream ended");
    // The other stream goes on, and is not told about the revocation itself.
    expect(other.ended).toBe(false);
    await call("PATCH", `/api/v1/providers/${p.providerCode}`, {
      app,
      token: second.body.accessToken,
      body: { summary: "still streaming" },
    });
    expect((await other.next()).data.feed.kind).toBe("PROVIDER_UPDATED");
    expect(await other.drain(100)).toEqual([]);

    // A rotation (revokeCurrent) ends the stream of the token it rotates.
    const rotated = await call("POST", `/api/v1/providers/${p.providerCode}/tokens`, {
      app,
      token: second.body.accessToken,
      body: { revokeCurrent: true },
    });
    expect(rotated.status).toBe(201);
    await until(() => other.ended, "the rotated token's stream ended");
  });
});

describe("transport", () => {
  test("GET /graphql with Accept: text/event-stream works too; kinds: [] is refused", async () => {
    const p = await intake();
    const abort = new AbortController();
    const url = `http://registry.test/graphql?query=${encodeURIComponent(FEED_QUERY)}&variables=${encodeURIComponent(
      JSON.stringify({ providerCode: p.providerCode }),
    )}`;
    const response = await app.fetch(url, {
      headers: { accept: "text/event-stream", authorization: `Bearer ${p.accessToken}` },
      signal: abort.signal,
    });
    expect(response.status).toBe(200);
    const stream = readSse(response, abort);
    open.push(stream);
    await lifecycle(p.providerCode, { state: "RETIRED" }, p.accessToken);
    expect((await stream.next()).data.feed.kind).toBe("LIFECYCLE_CHANGED");

    const empty = await app.fetch("http://registry.test/graphql", {
      method: "POST",
      headers: { accept: "text/event-stream", "content-type": "application/json" },
      body: JSON.stringify({ query: FEED_QUERY, variables: { kinds: [] } }),
    });
    // A request error, answered in the stream as GraphQL over HTTP answers it as JSON: 200.
    expect(empty.status).toBe(200);
    expect(await empty.text()).toMatch(/"code":"BAD_USER_INPUT"/);

    // A subscription is only served as SSE: asked for as JSON, it is Not Acceptable (and runs nothing).
    const json = await app.fetch("http://registry.test/graphql", {
      method: "POST",
      headers: { accept: "application/json", "content-type": "application/json" },
      body: JSON.stringify({ query: FEED_QUERY }),
    });
    expect(json.status).toBe(406);
    await json.text();
  });

  test("subscriptions are GraphQL only: no REST route, nothing in the OpenAPI document", async () => {
    // (The log is paged over REST at /api/v1/events and pushed by our /api/v1/webhooks; SOFA's own
    // subscription webhooks, at /webhook, are not mounted.)
    for (const path of ["/api/v1/feed", "/api/v1/subscriptions", "/api/v1/webhook", "/api/v1/webhook/x"]) {
      expectProblem(await call("GET", path, { app }), 404, "NOT_FOUND");
      expectProblem(await call("POST", path, { app, body: {} }), 404, "NOT_FOUND");
    }
    const doc = await call("GET", "/openapi.json", { app });
    const paths = Object.keys(doc.body.paths);
    expect(paths.filter((p) => /feed|subscri|\/webhook(\/|$)/i.test(p))).toEqual([]);
    expect(paths).toContain("/api/v1/events");
  });

  test("a subscriber that leaves frees its stream; draining ends every stream", async () => {
    const feed = createFeed({ db });
    const events = (await feed.stream({ after: await lastSeq(db), audience: { kind: "reviewer" } }))[
      Symbol.asyncIterator
    ]();
    const first = events.next();
    await until(() => feed.subscribers === 1, "one subscriber");
    await events.return?.();
    expect(await first).toEqual({ done: true, value: undefined });
    await until(() => feed.subscribers === 0, "no subscriber");

    // Many that come and go leave nothing behind.
    const many = await Promise.all(
      Array.from({ length: 20 }, async () =>
        (await feed.stream({ after: await lastSeq(db), audience: { kind: "anonymous" } }))[Symbol.asyncIterator](),
      ),
    );
    const pendings = many.map((s) => s.next());
    await until(() => feed.subscribers === 20, "twenty subscribers");
    await Promise.all(many.map((s) => s.return?.()));
    expect(await Promise.all(pendings)).toEqual(many.map(() => ({ done: true, value: undefined })));
    await until(() => feed.subscribers === 0, "no subscriber");

    const draining = { draining: false };
    const drained = createFeed({ db, state: draining });
    const stream = (await drained.stream({ after: await lastSeq(db), audience: { kind: "reviewer" } }))[
      Symbol.asyncIterator
    ]();
    const pending = stream.next();
    await until(() => drained.subscribers === 1, "one subscriber");
    draining.draining = true;
    expect(await pending).toEqual({ done: true, value: undefined });
    // (Through real processes, tests/feed/feed.replicas.test.ts checks both against Redis.)
    await until(() => drained.subscribers === 0, "no subscriber");
    await feed.close();
    await drained.close();
  });
});
