/**
 * The change feed over WebSocket (graphql-ws at /graphql), on real sockets with the `graphql-ws`
 * client: the same credentials (connectionParams), visibility, limits, revocation and replica
 * fan-out as over SSE, and a drain that closes the sockets.
 */
import { randomBytes } from "node:crypto";
import { join } from "node:path";
import { afterAll, describe, expect, test } from "@jest/globals";
import { type Client, createClient } from "graphql-ws";
import { decodeJwt } from "jose";
import WebSocket from "ws";
import { signReviewerToken } from "../../src/auth/reviewer.jwt.ts";
import { type Config, loadConfig } from "../../src/config.ts";
import { attachWebSocket, type WebSocketOptions } from "../../src/http/websocket.ts";
import { createApp } from "../../src/yoga.ts";
import { ON_POSTGRES } from "../database.ts";
import { type App, approve, call, config, db, intake, listen as listenHttp, reviewerToken } from "../helpers.ts";
import { cleanUp, REDIS_URL, startServer, stopServer, tempDir } from "../process/server.process.ts";
import { until } from "../wait.ts";
import { collectFrom, FEED_QUERY, readSse } from "./sse.ts";

/** Everything a test opened, closed after the file whatever happened (last opened, first closed). */
const toClose: (() => Promise<unknown> | unknown)[] = [];
afterAll(async () => {
  for (const close of toClose.reverse()) await close();
  await cleanUp();
}, 30_000);

function ownApp(appConfig: Config): App {
  const made = createApp(appConfig, db);
  toClose.push(() => made.dispose());
  return made;
}

/** `app` on a node:http server of its own with the WebSocket door; answers the socket URL. */
async function listen(app: App, appConfig: Config = config, options: WebSocketOptions = {}): Promise<string> {
  const listening = await listenHttp(app);
  const door = attachWebSocket(listening.server, app, appConfig, options);
  toClose.push(async () => {
    await door.close();
    await listening.close();
  });
  return `${listening.url.replace(/^http/, "ws")}/graphql`;
}

interface Closed {
  code: number;
  reason: string;
}

/** A graphql-ws client that connects at once and never retries; `closed` is the first close. */
function connect(url: string, connectionParams?: Record<string, unknown>): { client: Client; closed: Promise<Closed> } {
  const client = createClient({
    url,
    webSocketImpl: WebSocket,
    lazy: false,
    retryAttempts: 0,
    onNonLazyError: () => {},
    ...(connectionParams ? { connectionParams } : {}),
  });
  const closed = new Promise<Closed>((resolve) =>
    client.on("closed", (event) => resolve({ code: (event as Closed).code, reason: (event as Closed).reason })),
  );
  toClose.push(() => client.dispose());
  return { client, closed };
}

interface Stream {
  next(ms?: number): Promise<any>;
  drain(ms: number): Promise<any[]>;
  /** As tests/feed/sse.ts's: `count` payloads that pass `keep`, then any more within `settle` ms. */
  collect(count: number, keep: (payload: any) => boolean, settle?: number): Promise<any[]>;
  /** Completed by the server (or failed: `error`). */
  readonly ended: boolean;
  readonly error: unknown;
}

function subscribe(client: Client, variables: Record<string, unknown> = {}, query = FEED_QUERY): Stream {
  const queue: any[] = [];
  let ended = false;
  let error: unknown;
  let wake = () => {};
  const waitFor = (ms: number) =>
    new Promise<void>((resolve) => {
      const timer = setTimeout(resolve, ms);
      wake = () => {
        clearTimeout(timer);
        resolve();
      };
    });
  client.subscribe(
    { query, variables },
    {
      next: (value) => {
        queue.push(value);
        wake();
      },
      error: (e) => {
        error = e;
        ended = true;
        wake();
      },
      complete: () => {
        ended = true;
        wake();
      },
    },
  );
  return {
    async next(ms = 10_000) {
      const until = Date.now() + ms;
      while (queue.length === 0) {
        if (ended) throw new Error(`the stream ended: ${JSON.stringify(error)}`);
        if (Date.now() >= until) throw new Error(`no event within ${ms} ms`);
        await waitFor(until - Date.now());
      }
      return queue.shift();
    },
    async drain(ms) {
      await new Promise((r) => setTimeout(r, ms));
      return queue.splice(0);
    },
    collect(count, keep, settle) {
      return collectFrom(this, count, keep, settle);
    },
    get ended() {
      return ended;
    },
    get error() {
      return error;
    },
  };
}

type Probe = { providerCode: string; accessToken: string };

/**
 * A subscription is live once the server has run it, which the client cannot see: change a
 * provider the subscriber may see (through `via`) until its event arrives.
 */
async function untilLive(stream: Stream, probe: Probe, via: App): Promise<void> {
  for (let i = 0; i < 50; i++) {
    await call("PATCH", `/api/v1/providers/${probe.providerCode}`, {
      app: via,
      token: probe.accessToken,
      body: { summary: `probe ${i}` },
    });
    const got = await stream.drain(100);
    if (got.some((m) => m.data?.feed?.providerCode === probe.providerCode)) return;
  }
  throw new Error("the subscription never became live");
}

/** The events of these providers a stream received within `ms`, as `KIND code`. */
async function seen(stream: Stream, codes: string[], ms = 300): Promise<string[]> {
  return (await stream.drain(ms))
    .map((m) => m.data.feed as { kind: string; providerCode: string })
    .filter((e) => codes.includes(e.providerCode))
    .map((e) => `${e.kind} ${e.providerCode}`);
}

async function listed(): Promise<Probe> {
  const p = await intake();
  await approve(p.providerCode);
  return p;
}

// An app of its own, so that its feed's subscribers are this file's only.
const app = ownApp(config);
const url = await listen(app);

const lifecycle = (code: string, state: string, token: string, via: App = app) =>
  call("POST", `/api/v1/providers/${code}/lifecycle`, { app: via, token, body: { state } });
const patch = (p: Probe, summary: string, via: App = app) =>
  call("PATCH", `/api/v1/providers/${p.providerCode}`, { app: via, token: p.accessToken, body: { summary } });

describe("who sees what", () => {
  test("anonymous: a public provider's events, not a private one's; queries run over the socket too", async () => {
    const open = await listed();
    const hidden = await intake({ visibility: "PRIVATE" });
    await approve(hidden.providerCode);
    const { client } = connect(url);
    const stream = subscribe(client);
    await untilLive(stream, open, app);
    await stream.drain(100);

    await patch(hidden, "not for everyone");
    expect((await lifecycle(hidden.providerCode, "RETIRED", hidden.accessToken)).status).toBe(200);
    expect((await lifecycle(open.providerCode, "RETIRED", open.accessToken)).status).toBe(200);
    const got = (
      await stream.collect(1, (m) => [open.providerCode, hidden.providerCode].includes(m.data?.feed?.providerCode))
    ).map((m) => m.data.feed);
    expect(got).toEqual([
      expect.objectContaining({
        kind: "LIFECYCLE_CHANGED",
        providerCode: open.providerCode,
        patch: [{ op: "replace", path: "/lifecycle", from: null, value: "RETIRED" }],
        stateHash: expect.stringMatching(/^[0-9a-f]{64}$/),
      }),
    ]);

    const answers = [];
    for await (const answer of client.iterate({ query: "{ api { graphqlUrl } }" })) answers.push(answer);
    // Links are built on the host the socket was opened to, as over HTTP.
    expect(answers).toEqual([{ data: { api: { graphqlUrl: url.replace(/^ws/, "http") } } }]);
  });

  test("an agent token in connectionParams (authorization or Authorization) sees its own private provider", async () => {
    const own = await intake({ visibility: "PRIVATE" });
    const agent = subscribe(connect(url, { authorization: `Bearer ${own.accessToken}` }).client, {
      providerCode: own.providerCode,
    });
    const capital = subscribe(connect(url, { Authorization: `Bearer ${own.accessToken}` }).client, {
      providerCode: own.providerCode,
    });
    const anonymous = subscribe(connect(url).client, { providerCode: own.providerCode });
    await untilLive(agent, own, app);
    await untilLive(capital, own, app);
    await agent.drain(100);
    await capital.drain(0);

    await call("POST", `/api/v1/reviews/${own.reviewCode}/comments`, {
      app,
      token: own.accessToken,
      body: { note: "mine" },
    });
    await patch(own, "still mine");
    const expected = [`REVIEW_COMMENTED ${own.providerCode}`, `PROVIDER_UPDATED ${own.providerCode}`];
    expect(await seen(agent, [own.providerCode])).toEqual(expected);
    expect(await seen(capital, [own.providerCode], 0)).toEqual(expected);
    // Neither the probes nor these: a pending private provider is nobody else's business.
    expect(await anonymous.drain(0)).toEqual([]);
    expect(anonymous.ended).toBe(false);
  });

  test("bad credentials close the connection with 4403 Forbidden", async () => {
    for (const params of [
      { authorization: "Bearer nope" },
      { authorization: "Basic dXNlcjpwYXNz" },
      { Authorization: 42 },
      { authorization: "Bearer a\nb" },
      { authorization: `Bearer ${await signReviewerToken({ ...config, reviewerJwtSecret: "x".repeat(40) }, "x")}` },
    ]) {
      expect(await connect(url, params).closed).toEqual({ code: 4403, reason: "Forbidden" });
    }
  });
});

describe("revocation", () => {
  test("revoking the token ends its subscriptions; the socket opens nothing more with it", async () => {
    const p = await intake();
    const second = await call("POST", `/api/v1/providers/${p.providerCode}/tokens`, {
      app,
      token: p.accessToken,
      body: { label: "second" },
    });
    expect(second.status).toBe(201);
    const { client } = connect(url, { authorization: `Bearer ${p.accessToken}` });
    const stream = subscribe(client, { providerCode: p.providerCode });
    await untilLive(stream, p, app);

    const profile = await call("GET", `/api/v1/providers/${p.providerCode}`, { app, token: p.accessToken });
    const intakeToken = (profile.body.tokens as { tokenId: string; label: string }[]).find((t) => t.label === "intake");
    const revoked = await call("DELETE", `/api/v1/providers/${p.providerCode}/tokens/${intakeToken?.tokenId}`, {
      app,
      token: second.body.accessToken,
    });
    expect(revoked.status).toBe(200);
    await until(() => stream.ended, "the revoked token's stream ended");
    expect(stream.error).toBeUndefined();

    const again = subscribe(client, { providerCode: p.providerCode });
    await until(() => again.ended, "the refused subscription ended");
    expect(again.error).toEqual([expect.objectContaining({ extensions: { code: "UNAUTHENTICATED" } })]);
  });

  test("a reviewer's socket closes when its JWT expires", async () => {
    const token = await signReviewerToken(config, "ws-rv", { expiresIn: "2s" });
    const { client, closed } = connect(url, { authorization: `Bearer ${token}` });
    const stream = subscribe(client);
    expect(await closed).toEqual({ code: 4403, reason: "Credentials expired" });
    // Closed for the expiry itself, not before it.
    expect(Date.now() / 1000).toBeGreaterThanOrEqual((decodeJwt(token).exp as number) - 1);
    await until(() => stream.ended, "the expired reviewer's stream ended");
  });
});

describe("limits", () => {
  const strictConfig = loadConfig({
    ...process.env,
    NODE_ENV: "test",
    REDIS_URL: "",
    GRAPHQL_MAX_DEPTH: "2",
    GRAPHQL_MAX_ALIASES: "3",
    RATE_LIMITS: "on",
    RATE_LIMIT_AUTH_FAILURES_PER_15MIN: "2",
    RATE_LIMIT_KEY_PREFIX: `ws-test-${randomBytes(4).toString("hex")}`,
  });
  const strict = ownApp(strictConfig);
  const strictUrl = listen(strict, strictConfig, { maxOperations: 2, initTimeoutMs: 200 });

  test("a document over the depth or alias limit is refused with the errors SSE gives it", async () => {
    const overSse = async (query: string) => {
      const response = await strict.fetch("http://registry.test/graphql", {
        method: "POST",
        headers: { accept: "text/event-stream", "content-type": "application/json" },
        body: JSON.stringify({ query }),
      });
      const stream = readSse(response);
      const { errors } = await stream.next();
      await stream.close();
      return errors;
    };
    const { client } = connect(await strictUrl);
    for (const [query, words] of [
      ["subscription { feed { patch { op } } }", /depth limit of 2 exceeded/i],
      ["subscription { feed { a: seq b: seq c: seq d: seq } }", /aliases limit of 3 exceeded/i],
    ] as const) {
      const stream = subscribe(client, {}, query);
      await until(() => stream.ended, "the refused subscription ended");
      expect(stream.error).toEqual([expect.objectContaining({ message: expect.stringMatching(words) })]);
      expect(stream.error).toEqual(await overSse(query));
    }
  });

  test("more operations at once than a connection may run are refused with RATE_LIMITED", async () => {
    const { client } = connect(await strictUrl);
    const streams = [0, 1, 2].map(() => subscribe(client, {}, "subscription { feed { seq } }"));
    await until(() => streams[2]?.ended === true, "the third operation ended");
    expect(streams.map((s) => s.ended)).toEqual([false, false, true]);
    expect(streams[2]?.error).toEqual([expect.objectContaining({ extensions: { code: "RATE_LIMITED" } })]);
  });

  test("an address over its limit of failed authentications is refused with 4429, even with good credentials", async () => {
    const target = await strictUrl;
    for (let i = 0; i < 2; i++)
      expect((await connect(target, { authorization: "Bearer nope" }).closed).code).toBe(4403);
    const good = connect(target, { authorization: `Bearer ${await reviewerToken()}` });
    expect(await good.closed).toEqual({
      code: 4429,
      reason: "Too many failed authentications from this address; try again later",
    });
  });

  test("a message over the body limit closes with 1009; a client that never initialises with 4408", async () => {
    const raw = (target: string) => {
      const socket = new WebSocket(target, "graphql-transport-ws");
      toClose.push(() => socket.terminate());
      const closed = new Promise<number>((resolve) => socket.on("close", (code) => resolve(code)));
      return { socket, closed };
    };
    const big = raw(url);
    await new Promise((resolve) => big.socket.once("open", resolve));
    big.socket.send(JSON.stringify({ type: "connection_init" }));
    await new Promise((resolve) => big.socket.once("message", resolve));
    big.socket.send(
      JSON.stringify({
        type: "subscribe",
        id: "1",
        payload: { query: FEED_QUERY, variables: { providerCode: "x".repeat(config.maxBodyBytes) } },
      }),
    );
    expect(await big.closed).toBe(1009);

    // A socket that never says connection_init is closed by the server, with the code for that.
    const silent = raw(await strictUrl);
    expect(await silent.closed).toBe(4408);
  });
});

// The scale-out setup, tested when the suite runs on PostgreSQL (tests/database.ts).
if (ON_POSTGRES) {
  describe("replicas", () => {
    test("an event written through replica A or B reaches the WebSockets of A and of B (Redis)", async () => {
      const channel = `agent-registry-ws-test:${randomBytes(5).toString("hex")}`;
      const shared = { ...config, redisUrl: REDIS_URL, feedChannel: channel };
      const [a, b] = [ownApp(shared), ownApp(shared)];
      const onA = subscribe(connect(await listen(a, shared)).client);
      const onB = subscribe(connect(await listen(b, shared)).client);
      const probe = await listed();
      await untilLive(onA, probe, a);
      await untilLive(onB, probe, a);
      await onA.drain(100);
      await onB.drain(0);

      const p = await listed();
      expect((await patch(p, "from A", a)).status).toBe(200);
      expect((await lifecycle(p.providerCode, "RETIRED", p.accessToken, b)).status).toBe(200);
      // Its approval (made through a third app, which shares only the database) brought it into the
      // directory: that arrival is in the log, so in both streams, before A's and B's own writes.
      const expected = [
        `STAGE_CHANGED ${p.providerCode}`,
        `PROVIDER_UPDATED ${p.providerCode}`,
        `LIFECYCLE_CHANGED ${p.providerCode}`,
      ];
      expect(await seen(onA, [p.providerCode], 400)).toEqual(expected);
      expect(await seen(onB, [p.providerCode], 0)).toEqual(expected);
    }, 30_000);
  });
}

describe("draining", () => {
  test("SIGTERM closes the process's WebSockets with 1001 Going Away, and the drain ends with exit 0", async () => {
    const server = await startServer(`file:${join(tempDir(), "registry.db")}`);
    const { client, closed } = connect(`${server.url.replace(/^http/, "ws")}/graphql`);
    const stream = subscribe(client);
    await new Promise((resolve) => client.on("connected", resolve));
    const how = await stopServer(server, 10_000);
    expect(how.code).toBe(0);
    expect(await closed).toEqual({ code: 1001, reason: "Going away" });
    expect(stream.ended).toBe(true);
  }, 60_000);
});
