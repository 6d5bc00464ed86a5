/**
 * The outbound door as a WHATWG fetch (`Outbound.fetcher`), what the protocol libraries are given:
 * against a real server on loopback (OUTBOUND_TEST_HOSTS) and a real DNS server. Bodies stream but
 * are capped and cut at the deadline, a slot is held until the body is done, a GET follows redirects
 * within its domain and nothing else does, the caller's signal cancels, and every refusal is told.
 */
import { createServer, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, expect, test } from "@jest/globals";
import { loadConfig } from "../../src/config.ts";
import { createOutbound, type OutboundError } from "../../src/outbound/outbound.ts";
import { startDns, type TestDns } from "../health/peers.ts";

const held: ServerResponse[] = [];
let seen: { method: string; path: string; body: string; headers: Record<string, unknown> }[] = [];
const server = createServer((req, res) => {
  const chunks: Buffer[] = [];
  req.on("data", (c: Buffer) => chunks.push(c));
  req.on("end", () => {
    const path = req.url ?? "/";
    seen.push({ method: req.method ?? "", path, body: Buffer.concat(chunks).toString(), headers: req.headers });
    if (path === "/echo") return res.writeHead(200, { "content-type": "text/plain" }).end(`${req.method} ok`);
    // As an MCP server takes a notification: 202, no body, chunked.
    if (path === "/accepted") return res.writeHead(202).end();
    if (path === "/redirect") return res.writeHead(302, { location: "https://b.door.test/echo" }).end();
    if (path === "/away") return res.writeHead(302, { location: "https://private.test/echo" }).end();
    if (path === "/big") {
      // Chunked, no length: the cap must hold while reading.
      res.writeHead(200, { "content-type": "text/plain" });
      const chunk = Buffer.alloc(64 * 1024, "x");
      let sent = 0;
      const pump = () => {
        while (sent < 40 && res.write(chunk)) sent++;
        if (sent < 40) res.once("drain", pump);
        else res.end();
      };
      pump();
      return;
    }
    // A stream that never ends.
    res.writeHead(200, { "content-type": "text/event-stream" });
    res.write(": open\n\n");
    held.push(res);
  });
});
let connections = 0;
server.on("connection", () => connections++);
let dns: TestDns;
let env: Record<string, string>;

beforeAll(async () => {
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const port = (server.address() as AddressInfo).port;
  dns = await startDns({ "private.test": ["10.0.0.7"] });
  env = {
    NODE_ENV: "test",
    OUTBOUND_TEST_HOSTS: `*.door.test=127.0.0.1:${port}`,
    OUTBOUND_TEST_DNS: dns.address,
    OUTBOUND_TIMEOUT_MS: "1000",
    OUTBOUND_MAX_BODY_BYTES: String(256 * 1024),
    OUTBOUND_CONCURRENCY: "1",
  };
});

afterAll(async () => {
  for (const res of held) res.destroy();
  server.closeAllConnections();
  await new Promise((resolve) => server.close(resolve));
  await dns.close();
});

function door() {
  const failures: OutboundError[] = [];
  const fetch = createOutbound(loadConfig(env).outbound).fetcher((e) => failures.push(e));
  return { fetch, failures };
}

test("any method with its headers and body; the answer streams; a wildcard test host answers for every name under it", async () => {
  seen = [];
  const { fetch } = door();
  const answer = await fetch("https://a.door.test/echo", {
    method: "POST",
    headers: { "content-type": "application/json", "x-probe": "1" },
    body: '{"jsonrpc":"2.0"}',
  });
  expect(answer.status).toBe(200);
  expect(await answer.text()).toBe("POST ok");
  expect(seen[0]).toMatchObject({ method: "POST", path: "/echo", body: '{"jsonrpc":"2.0"}' });
  expect(seen[0]?.headers).toMatchObject({ "x-probe": "1", host: "a.door.test" });
});

test("a body over the cap errors while it is read, and the refusal is told", async () => {
  const { fetch, failures } = door();
  const answer = await fetch("https://a.door.test/big");
  await expect(answer.text()).rejects.toMatchObject({ reason: "TOO_LARGE" });
  expect(failures.map((f) => f.reason)).toEqual(["TOO_LARGE"]);
});

test("a stream that goes on is cut at the deadline, and its slot is given back", async () => {
  const { fetch, failures } = door();
  const answer = await fetch("https://a.door.test/stream");
  const started = Date.now();
  await expect(answer.text()).rejects.toMatchObject({ reason: "TIMEOUT" });
  expect(Date.now() - started).toBeLessThan(3000);
  expect(failures.map((f) => f.reason)).toEqual(["TIMEOUT"]);
  // One slot (OUTBOUND_CONCURRENCY=1): the next request gets it.
  expect((await fetch("https://a.door.test/echo")).status).toBe(200);
});

test("a slot is held until the body is read or cancelled", async () => {
  const { fetch } = door();
  const open = await fetch("https://a.door.test/stream");
  let second = false;
  const next = fetch("https://a.door.test/echo").then((r) => {
    second = true;
    return r;
  });
  await new Promise((resolve) => setImmediate(resolve));
  expect(second).toBe(false);
  await open.body?.cancel();
  expect((await next).status).toBe(200);
});

test("a GET follows a redirect within its domain, not to another; a POST follows none; a private address is refused", async () => {
  const { fetch, failures } = door();
  expect(await (await fetch("https://a.door.test/redirect")).text()).toBe("GET ok");
  await expect(fetch("https://a.door.test/away")).rejects.toMatchObject({ reason: "REDIRECT" });
  const post = await fetch("https://a.door.test/redirect", { method: "POST", body: "x" });
  expect(post.status).toBe(302);
  await post.body?.cancel();
  await expect(fetch("https://private.test/echo")).rejects.toMatchObject({ reason: "PRIVATE_ADDRESS" });
  expect(failures.map((f) => f.reason)).toEqual(["REDIRECT", "PRIVATE_ADDRESS"]);
});

test("the caller's signal cancels a request and a body; a signal aborted already sends nothing", async () => {
  seen = [];
  const { fetch, failures } = door();
  const controller = new AbortController();
  const answer = await fetch("https://a.door.test/stream", { signal: controller.signal });
  const reading = answer.text();
  controller.abort();
  await expect(reading).rejects.toMatchObject({ reason: "CANCELLED" });
  await expect(fetch("https://a.door.test/echo", { signal: AbortSignal.abort() })).rejects.toMatchObject({
    reason: "CANCELLED",
  });
  expect(seen.map((s) => s.path)).toEqual(["/stream"]);
  expect(failures.map((f) => f.reason)).toEqual(["CANCELLED", "CANCELLED"]);
});

test("a kept-alive door (the prober's) keeps a connection per name, given back by a cancelled answer already in whole", async () => {
  const fetch = createOutbound({ ...loadConfig(env).outbound, keepAlive: true }).fetcher();
  const before = connections;
  const accepted = await fetch("https://a.door.test/accepted", { method: "POST", body: "{}" });
  expect(accepted.status).toBe(202);
  // What the MCP client does with a 202 before its next request.
  await accepted.body?.cancel();
  expect(await (await fetch("https://a.door.test/echo")).text()).toBe("GET ok");
  expect(connections - before).toBe(1);
  // Another name on the same loopback port stands for another host: never the same connection.
  expect(await (await fetch("https://b.door.test/echo")).text()).toBe("GET ok");
  expect(connections - before).toBe(2);
});
