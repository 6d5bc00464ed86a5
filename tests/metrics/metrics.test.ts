/**
 * Prometheus metrics through the front door: requests counted by route pattern (never by what a
 * path carries), the scrape's format and its guards (METRICS=off, METRICS_TOKEN), and the gauges read
 * at scrape time against the real database: the webhook backlog, open streams, the connections.
 */
import { describe, expect, test } from "@jest/globals";
import { WebSocket } from "ws";
import { loadConfig } from "../../src/config.ts";
import { attachWebSocket } from "../../src/http/websocket.ts";
import { methodLabel, outcomeLabel, routeLabel, statusKey, statusLabel } from "../../src/metrics/metrics.rules.ts";
import { intakeBody, uniqueCode } from "../builders.ts";
import { ON_POSTGRES } from "../database.ts";
import { FEED_QUERY, readSse } from "../feed/sse.ts";
import { type App, appWith, call, closeAfterAll, expectProblem, listen, reviewerToken } from "../helpers.ts";
import { until } from "../wait.ts";

// An app of this file's own: its counts are this file's requests only.
const app = appWith({});
const TOKEN = "metrics-token-0123456789abcdef";

interface Sample {
  name: string;
  labels: Record<string, string>;
  value: number;
}

/** Prometheus' text format, parsed: every sample line (comments left out). */
function parse(text: string): Sample[] {
  const samples: Sample[] = [];
  for (const line of text.split("\n")) {
    if (line === "" || line.startsWith("#")) continue;
    const match = /^([a-zA-Z_:][\w:]*)(?:\{(.*)\})? (\S+)$/.exec(line);
    if (!match) throw new Error(`not a sample line: ${line}`);
    const labels: Record<string, string> = {};
    for (const pair of (match[2] ?? "").matchAll(/(\w+)="((?:[^"\\]|\\.)*)"/g)) {
      labels[pair[1] as string] = (pair[2] as string).replace(/\\(.)/g, (_, c: string) => (c === "n" ? "\n" : c));
    }
    samples.push({ name: match[1] as string, labels, value: Number(match[3]) });
  }
  return samples;
}

interface Scrape {
  text: string;
  samples: Sample[];
  /** The value of the sample with exactly these labels; 0 when there is none (a series not yet counted). */
  value(name: string, labels?: Record<string, string>): number;
  /** Whether a sample with exactly these labels is there. */
  has(name: string, labels?: Record<string, string>): boolean;
}

const same = (a: Record<string, string>, b: Record<string, string>) =>
  Object.keys(a).length === Object.keys(b).length && Object.entries(b).every(([k, v]) => a[k] === v);

async function scrape(target: App = app, token?: string): Promise<Scrape> {
  const answer = await call("GET", "/metrics", { app: target, ...(token ? { token } : {}) });
  if (answer.status !== 200) throw new Error(`scrape: ${answer.status} ${answer.text}`);
  const samples = parse(answer.text);
  const find = (name: string, labels: Record<string, string>) =>
    samples.find((s) => s.name === name && same(s.labels, labels));
  return {
    text: answer.text,
    samples,
    value: (name, labels = {}) => find(name, labels)?.value ?? 0,
    has: (name, labels = {}) => find(name, labels) !== undefined,
  };
}

const PROFILE = "/api/v1/providers/{providerCode}";

describe("requests", () => {
  test("are counted by route pattern, method and status, and timed; nothing a path carries becomes a label", async () => {
    const code = uniqueCode("metrics");
    const created = await call("POST", "/api/v1/providers", { app, body: intakeBody({ providerCode: code }) });
    expect(created.status).toBe(201);
    const token = created.body.accessToken as string;
    const missing = uniqueCode("missing");
    const before = await scrape();

    for (let i = 0; i < 3; i++) expect((await call("GET", `/api/v1/providers/${code}`, { app })).status).toBe(200);
    expect((await call("GET", `/api/v1/providers/${missing}`, { app })).status).toBe(404);
    // A token where an id goes, a path no route has, a method no standard names.
    expect((await call("GET", `/api/v1/providers/${token}`, { app })).status).toBe(404);
    expect((await call("GET", `/nowhere/${code}`, { app })).status).toBe(404);
    expect((await app.fetch(`http://registry.test/api/v1/providers/${code}`, { method: "PROPFIND" })).status).toBe(405);
    const graphql = await call("POST", "/graphql", { app, body: { query: "{ __typename }" } });
    expect(graphql.status).toBe(200);

    const after = await scrape();
    const delta = (name: string, labels: Record<string, string>) =>
      after.value(name, labels) - before.value(name, labels);
    const requests = "registry_http_requests_total";
    expect(delta(requests, { route: PROFILE, method: "GET", status: "200" })).toBe(3);
    expect(delta(requests, { route: PROFILE, method: "GET", status: "404" })).toBe(2);
    expect(delta(requests, { route: "other", method: "GET", status: "404" })).toBe(1);
    expect(delta(requests, { route: PROFILE, method: "OTHER", status: "405" })).toBe(1);
    expect(delta(requests, { route: "/graphql", method: "POST", status: "200" })).toBe(1);
    // The scrape before this one was counted, under its own route.
    expect(delta(requests, { route: "/metrics", method: "GET", status: "200" })).toBe(1);

    const durations = "registry_http_request_duration_seconds";
    const profileGets = { route: PROFILE, method: "GET" };
    expect(delta(`${durations}_count`, profileGets)).toBe(5);
    expect(delta(`${durations}_bucket`, { ...profileGets, le: "+Inf" })).toBe(5);
    expect(after.value(`${durations}_sum`, profileGets)).toBeGreaterThan(before.value(`${durations}_sum`, profileGets));
    // Buckets are cumulative: each at least the one below it.
    const buckets = after.samples.filter(
      (s) => s.name === `${durations}_bucket` && same({ ...s.labels, le: "" }, { ...profileGets, le: "" }),
    );
    expect(buckets.length).toBeGreaterThan(2);
    expect(buckets.map((b) => b.value)).toEqual([...buckets.map((b) => b.value)].sort((a, b) => a - b));

    for (const secret of [code, missing, token, "PROPFIND", "nowhere"]) expect(after.text).not.toContain(secret);
    // Every route label is a pattern or `other`.
    for (const s of after.samples.filter((s) => s.labels.route !== undefined)) {
      expect(s.labels.route).toMatch(/^(?:other|\/[\w./{}-]*)$/);
    }
  });

  test("the scrape is Prometheus text, never cached, with the process's metrics and HEAD without a body", async () => {
    const answer = await app.fetch("http://registry.test/metrics");
    expect(answer.status).toBe(200);
    expect(answer.headers.get("content-type")).toBe("text/plain; version=0.0.4; charset=utf-8");
    expect(answer.headers.get("cache-control")).toBe("no-store");
    const text = await answer.text();
    expect(text).toMatch(/^# TYPE registry_http_request_duration_seconds histogram$/m);
    expect(text).toMatch(/^# TYPE registry_http_requests_total counter$/m);
    const samples = parse(text).map((s) => s.name);
    expect(samples).toEqual(expect.arrayContaining(["process_cpu_user_seconds_total", "nodejs_heap_size_used_bytes"]));

    const head = await app.fetch("http://registry.test/metrics", { method: "HEAD" });
    expect(head.status).toBe(200);
    expect(await head.text()).toBe("");

    // With the response cache on, over a socket (its node side answers hits): each scrape is fresh.
    const cached = await listen(appWith({ RESPONSE_CACHE: "on" }));
    const scrapes = [];
    for (let i = 0; i < 2; i++) {
      const answer = await fetch(`${cached.url}/metrics`);
      expect(answer.headers.get("x-cache")).toBeNull();
      scrapes.push(
        parse(await answer.text()).find(
          (s) => s.name === "registry_http_requests_total" && s.labels.route === "/metrics",
        )?.value ?? 0,
      );
    }
    expect(scrapes).toEqual([0, 1]);
  });
});

describe("labels", () => {
  test("each is one of a known set, whatever it is given", () => {
    expect(routeLabel(PROFILE)).toBe(PROFILE);
    expect(routeLabel("/graphql")).toBe("/graphql");
    for (const raw of [null, undefined, "/api/v1/providers/route-planner", "/graphql/x", "agr_x", ""]) {
      expect(routeLabel(raw)).toBe("other");
    }
    expect(["GET", "PATCH", "get", "PROPFIND", "GET "].map(methodLabel)).toEqual([
      "GET",
      "PATCH",
      "OTHER",
      "OTHER",
      "OTHER",
    ]);
    expect([200, 404, 599, 99, 600, 200.5, Number.NaN].map((s) => statusLabel(statusKey(s)))).toEqual([
      "200",
      "404",
      "599",
      "other",
      "other",
      "other",
      "other",
    ]);
    expect(["UP", "DOWN", "up", "https://x.example"].map(outcomeLabel)).toEqual(["UP", "DOWN", "UNKNOWN", "UNKNOWN"]);
  });
});

describe("health checks", () => {
  test("are counted by outcome from zero, and an unknown outcome is UNKNOWN, never itself", async () => {
    const own = appWith({});
    const before = await scrape(own);
    for (const outcome of ["UP", "AUTH_REQUIRED", "WRONG_PROTOCOL", "DOWN", "UNKNOWN"]) {
      expect(before.has("registry_health_checks_total", { outcome })).toBe(true);
      expect(before.value("registry_health_checks_total", { outcome })).toBe(0);
    }
    own.metrics.observeCheck("UP", 0.2);
    own.metrics.observeCheck("UP", 0.03);
    own.metrics.observeCheck("DOWN", 7);
    own.metrics.observeCheck("https://evil.example/agr_x", 1);
    const after = await scrape(own);
    expect(after.value("registry_health_checks_total", { outcome: "UP" })).toBe(2);
    expect(after.value("registry_health_checks_total", { outcome: "DOWN" })).toBe(1);
    expect(after.value("registry_health_checks_total", { outcome: "UNKNOWN" })).toBe(1);
    expect(after.value("registry_health_check_duration_seconds_count", { outcome: "UP" })).toBe(2);
    expect(after.value("registry_health_check_duration_seconds_bucket", { outcome: "UP", le: "0.05" })).toBe(1);
    expect(after.value("registry_health_check_duration_seconds_sum", { outcome: "DOWN" })).toBe(7);
    expect(after.text).not.toContain("evil");
  });
});

describe("gauges", () => {
  test("are read at each scrape; one that fails is left out and the rest still answer", async () => {
    const own = appWith({});
    let agents = 3;
    own.metrics.gauge("registry_test_agents", "Agents by state (a test's)", ["state"], async () => [
      { labels: { state: "UP" }, value: agents },
      { labels: { state: "DOWN" }, value: 1 },
    ]);
    own.metrics.gauge("registry_test_broken", "A gauge whose query fails", [], async () => {
      throw new Error("the database is away");
    });
    const first = await scrape(own);
    expect(first.value("registry_test_agents", { state: "UP" })).toBe(3);
    expect(first.value("registry_test_agents", { state: "DOWN" })).toBe(1);
    expect(first.has("registry_test_broken")).toBe(false);
    expect(first.text).toMatch(/^# TYPE registry_test_broken gauge$/m);
    agents = 5;
    expect((await scrape(own)).value("registry_test_agents", { state: "UP" })).toBe(5);
  });

  test("the webhook backlog is the deliveries still pending in the database", async () => {
    const reviewer = await reviewerToken("metrics-rv");
    const backlog = async () => (await scrape()).value("registry_webhook_backlog");
    const start = await backlog();
    expect((await scrape()).has("registry_webhook_backlog")).toBe(true);
    const created = await call("POST", "/api/v1/webhooks", {
      app,
      token: reviewer,
      body: { url: "https://hooks.example.com/metrics" },
    });
    expect(created.status).toBe(201);
    const id = created.body.webhook.webhookId as string;
    // No worker runs in the tests: each ping stays pending.
    for (let i = 0; i < 2; i++) {
      expect((await call("POST", `/api/v1/webhooks/${id}/test`, { app, token: reviewer })).status).toBe(202);
    }
    expect(await backlog()).toBe(start + 2);
    expect((await call("DELETE", `/api/v1/webhooks/${id}`, { app, token: reviewer })).status).toBe(200);
    expect(await backlog()).toBe(start);
  });

  test("database connections: in use and idle, and waiting", async () => {
    const now = await scrape();
    const open =
      now.value("registry_db_pool_connections", { state: "in_use" }) +
      now.value("registry_db_pool_connections", { state: "idle" });
    expect(now.has("registry_db_pool_connections", { state: "in_use" })).toBe(true);
    expect(now.has("registry_db_pool_waiting")).toBe(true);
    if (ON_POSTGRES) expect(open).toBeGreaterThanOrEqual(1);
    // SQLite has one connection, idle between requests.
    else expect([now.value("registry_db_pool_connections", { state: "idle" }), open]).toEqual([1, 1]);
  });
});

describe("open streams", () => {
  const sse = async (target: App) => (await scrape(target)).value("registry_open_streams", { kind: "sse" });
  const subscribe = (
    fetcher: (url: string, init: RequestInit) => Promise<Response>,
    base: string,
    signal: AbortSignal,
  ) =>
    fetcher(`${base}/graphql`, {
      method: "POST",
      headers: { accept: "text/event-stream", "content-type": "application/json" },
      body: JSON.stringify({ query: FEED_QUERY }),
      signal,
    });

  test("an SSE subscription is counted while it is open, in process and over a socket", async () => {
    const own = appWith({});
    expect(await sse(own)).toBe(0);

    const abort = new AbortController();
    const response = await subscribe(async (url, init) => own.fetch(url, init), "http://registry.test", abort.signal);
    expect(response.status).toBe(200);
    const stream = readSse(response, abort);
    expect(await sse(own)).toBe(1);
    await stream.close();
    await until(async () => (await sse(own)) === 0, "the stream counted closed");

    // Over a socket: the client goes away, the server sees the socket close.
    const server = await listen(own);
    const remote = new AbortController();
    const answer = await subscribe(fetch, server.url, remote.signal);
    expect(answer.status).toBe(200);
    const reader = (answer.body as ReadableStream<Uint8Array>).getReader();
    await reader.read(); // the first comment: the stream is open
    expect(await sse(own)).toBe(1);
    remote.abort();
    await reader.cancel().catch(() => {});
    await until(async () => (await sse(own)) === 0, "the socket's stream counted closed");
  });

  test("a WebSocket connection is counted from its upgrade to its close", async () => {
    const own = appWith({});
    const server = await listen(own);
    const door = attachWebSocket(server.server, own, loadConfig({ ...process.env, NODE_ENV: "test" }));
    closeAfterAll(() => door.close());
    const sockets = async () => (await scrape(own)).value("registry_open_streams", { kind: "websocket" });
    expect(await sockets()).toBe(0);
    const socket = new WebSocket(`${server.url.replace(/^http/, "ws")}/graphql`, "graphql-transport-ws");
    await new Promise((resolve, reject) => {
      socket.once("open", resolve);
      socket.once("error", reject);
    });
    expect(await sockets()).toBe(1);
    const closed = new Promise((resolve) => socket.once("close", resolve));
    socket.close();
    await closed;
    await until(async () => (await sockets()) === 0, "the socket counted closed");
  });
});

describe("configuration", () => {
  test("METRICS=off: /metrics is a path like any unknown one, and nothing is counted", async () => {
    const off = appWith({ METRICS: "off" });
    const metrics = await call("GET", "/metrics", { app: off });
    const unknown = await call("GET", "/no-such-page", { app: off });
    expect(metrics.status).toBe(404);
    expect([metrics.status, metrics.headers.get("content-type")]).toEqual([
      unknown.status,
      unknown.headers.get("content-type"),
    ]);
    expect(off.metrics.enabled).toBe(false);
    expect(() => off.metrics.observeCheck("UP", 1)).not.toThrow();
  });

  test("METRICS_TOKEN: a 401 without it or with another, the metrics with it", async () => {
    const guarded = appWith({ METRICS_TOKEN: TOKEN });
    for (const token of [undefined, "x".repeat(TOKEN.length), `${TOKEN}x`, TOKEN.slice(0, -1)]) {
      const refused = await call("GET", "/metrics", { app: guarded, ...(token ? { token } : {}) });
      expectProblem(refused, 401, "UNAUTHENTICATED");
      expect(refused.headers.get("www-authenticate")).toBe("Bearer");
      expect(refused.text).not.toContain("registry_");
    }
    const basic = await call("GET", "/metrics", { app: guarded, headers: { authorization: `Basic ${TOKEN}` } });
    expect(basic.status).toBe(401);
    expect((await scrape(guarded, TOKEN)).has("registry_open_streams", { kind: "sse" })).toBe(true);
    const lower = await call("GET", "/metrics", { app: guarded, headers: { authorization: `bearer ${TOKEN}` } });
    expect(lower.status).toBe(200);
  });

  test("a wrong METRICS_TOKEN is a failed authentication: the address is refused past the limit", async () => {
    const limited = appWith({ METRICS_TOKEN: TOKEN, RATE_LIMITS: "on", RATE_LIMIT_AUTH_FAILURES_PER_15MIN: "2" });
    const from = (remoteAddress: string) => ({ app: limited, serverContext: { req: { socket: { remoteAddress } } } });
    const statuses = [];
    for (let i = 0; i < 3; i++)
      statuses.push((await call("GET", "/metrics", { ...from("203.0.113.9"), token: "w".repeat(20) })).status);
    expect(statuses).toEqual([401, 401, 429]);
    const refused = await call("GET", "/metrics", { ...from("203.0.113.9"), token: TOKEN });
    expectProblem(refused, 429, "RATE_LIMITED");
    expect(refused.headers.get("retry-after")).toMatch(/^\d+$/);
    expect((await call("GET", "/metrics", { ...from("203.0.113.10"), token: TOKEN })).status).toBe(200);
  });

  test("READ_ACCESS=authenticated: /metrics only behind METRICS_TOKEN", async () => {
    const env = { ...process.env, NODE_ENV: "test", READ_ACCESS: "authenticated" };
    expect(loadConfig(env).metrics.enabled).toBe(false);
    expect(() => loadConfig({ ...env, METRICS: "on" })).toThrow(/METRICS_TOKEN/);
    expect(() => loadConfig({ ...process.env, NODE_ENV: "test", METRICS_TOKEN: "short" })).toThrow(/16 characters/);

    const closed = appWith({ READ_ACCESS: "authenticated" });
    expect((await call("GET", "/metrics", { app: closed })).status).toBe(404);
    const guarded = appWith({ READ_ACCESS: "authenticated", METRICS_TOKEN: TOKEN });
    expectProblem(await call("GET", "/metrics", { app: guarded }), 401, "UNAUTHENTICATED");
    expect((await scrape(guarded, TOKEN)).has("registry_webhook_backlog")).toBe(true);
  });
});
