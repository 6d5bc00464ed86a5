/**
 * The outbound door against real servers on loopback: a node:http server stands in for the hosts of
 * OUTBOUND_TEST_HOSTS, and a real DNS server (dns2) answers the door's address and TXT look-ups.
 * Every refusal is proved by its reason, and names that resolve to anything but loopback are refused
 * before any connection: no test ever connects outside 127.0.0.1.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, test } from "@jest/globals";
import dns2 from "dns2";
import { loadConfig, SERVICE_VERSION } from "../../src/config.ts";
import { createOutbound, type Outbound, OutboundError, refusedRange } from "../../src/outbound/outbound.ts";
import { until, within } from "../wait.ts";

const { Packet } = dns2;

/** The test DNS: name → records. Names absent are NXDOMAIN; `fail.test` is SERVFAIL; `silent.test` never answers. */
const ZONE: Record<string, { A?: string[]; AAAA?: string[]; TXT?: string[][] }> = {
  "loop.test": { A: ["127.0.0.1"] },
  "ten.test": { A: ["10.0.0.1"] },
  "meta.test": { A: ["169.254.169.254"] },
  "v6loop.test": { AAAA: ["::1"] },
  // dns2 cannot encode the dotted form: this is ::ffff:127.0.0.1.
  "mapped.test": { AAAA: ["::ffff:7f00:1"] },
  "cgnat.test": { A: ["100.64.0.1"] },
  "multicast.test": { A: ["224.0.0.1"] },
  "metav6.test": { AAAA: ["fd00:ec2::254"] },
  "private.good.test": { A: ["10.0.0.1"] },
  "_registry.good.test": { TXT: [["agent-registry-verify=abc123"], ["v=spf1 ", "include:example.com ", "-all"]] },
  "notxt.test": { A: ["127.0.0.1"] },
};
/** Every question the DNS server was asked, as `TYPE name`. */
const asked: string[] = [];

/** What the HTTP server saw. */
const seen = {
  headers: [] as IncomingMessage["headers"][],
  /** Requests to /slow still held, in arrival order. */
  held: [] as ServerResponse[],
  started: 0,
  closed: new Map<string, Promise<{ finished: boolean }>>(),
};

let http: Server;
let dns: ReturnType<typeof dns2.createServer>;
let door: Outbound;
let env: Record<string, string>;

/** Records when the socket of this request closes, and whether the whole answer was written by then. */
function watchClose(name: string, req: IncomingMessage, res: ServerResponse) {
  let finished = false;
  res.on("finish", () => {
    finished = true;
  });
  seen.closed.set(name, new Promise((resolve) => req.socket.on("close", () => resolve({ finished }))));
}

function handle(req: IncomingMessage, res: ServerResponse) {
  seen.headers.push(req.headers);
  const path = req.url ?? "/";
  const redirect = (location: string, extra: Record<string, string> = {}) => {
    res.writeHead(302, { location, ...extra });
    res.end();
  };
  const hops = /^\/hops\/(\d+)$/.exec(path);
  if (hops) {
    const n = Number(hops[1]);
    if (n > 0) return redirect(`/hops/${n - 1}`);
    res.end("landed");
    return;
  }
  switch (path) {
    case "/file":
      res.writeHead(200, { "content-type": "text/plain; charset=utf-8" });
      res.end(`hello ${req.headers.host} ✓`);
      return;
    case "/missing":
      res.writeHead(404, { "content-type": "text/plain" });
      res.end("no such file");
      return;
    case "/echo":
      res.writeHead(200, { "content-type": "application/json" });
      res.end(JSON.stringify(req.headers));
      return;
    case "/cookie":
      return redirect("/echo", { "set-cookie": "session=secret; Path=/" });
    case "/to-sub":
      return redirect("https://a.good.test/file");
    case "/to-private":
      return redirect("https://private.good.test/file");
    case "/to-other":
      return redirect("https://other.test/file");
    case "/to-http":
      return redirect("http://plain.good.test/file");
    case "/hang":
      watchClose("hang", req, res);
      return;
    case "/big-stream": {
      watchClose("big-stream", req, res);
      res.writeHead(200, { "content-type": "application/octet-stream" });
      streamTenMegabytes(res);
      return;
    }
    case "/big-length": {
      watchClose("big-length", req, res);
      res.writeHead(200, { "content-type": "application/octet-stream", "content-length": String(10 * 1024 * 1024) });
      streamTenMegabytes(res);
      return;
    }
    case "/declares-big":
      // Declares 10 MB and sends nothing: only the Content-Length check can refuse it before the deadline.
      res.writeHead(200, { "content-length": String(10 * 1024 * 1024) });
      res.flushHeaders();
      return;
    case "/slow":
      seen.started++;
      seen.held.push(res);
      return;
    default:
      res.writeHead(500);
      res.end("unexpected path");
  }
}

/** 10 MB in 64 KB chunks, waiting for the client to drain, stopping if the socket closes. */
function streamTenMegabytes(res: ServerResponse) {
  const chunk = Buffer.alloc(64 * 1024, "x");
  let left = 160;
  const write = () => {
    while (left > 0 && !res.destroyed) {
      left--;
      if (!res.write(chunk)) return void res.once("drain", write);
    }
    if (left === 0) res.end();
  };
  write();
}

function answer(request: dns2.Packet, send: (response: dns2.Packet) => Promise<Buffer>) {
  const response = Packet.createResponseFromRequest(request);
  const question = request.questions[0];
  if (!question) return void send(response);
  const name = question.name.toLowerCase();
  const type = Packet.TYPE_NAME[question.type] ?? String(question.type);
  asked.push(`${type} ${name}`);
  if (name === "silent.test") return;
  if (name === "fail.test") {
    response.header.rcode = Packet.RCODE.SERVFAIL;
    return void send(response);
  }
  const records = ZONE[name];
  if (!records) {
    response.header.rcode = Packet.RCODE.NXDOMAIN;
    return void send(response);
  }
  const base = { name: question.name, class: Packet.CLASS.IN, ttl: 60 };
  if (type === "A")
    for (const address of records.A ?? [])
      response.answers.push({ ...base, type: Packet.TYPE.A, address } as dns2.Packet.Resource);
  if (type === "AAAA")
    for (const address of records.AAAA ?? [])
      response.answers.push({ ...base, type: Packet.TYPE.AAAA, address } as dns2.Packet.Resource);
  if (type === "TXT")
    for (const data of records.TXT ?? [])
      response.answers.push({ ...base, type: Packet.TYPE.TXT, data } as dns2.Packet.Resource);
  send(response);
}

/** A door of the test configuration with these variables set. */
function doorWith(extra: Record<string, string> = {}): Outbound {
  return createOutbound(loadConfig({ ...process.env, NODE_ENV: "test", ...env, ...extra }).outbound);
}

/**
 * A door whose deadline is 500 ms, for the tests of the deadline itself. The others keep the default
 * (5 s): on a loaded machine the file's first fetch (a cold TLS handshake and DNS) can take longer than 500 ms.
 */
function shortDeadline(): Outbound {
  return doorWith({ OUTBOUND_TIMEOUT_MS: "500" });
}

/** The OutboundError a promise rejects with (fails the test when it resolves or throws anything else). */
async function refusal(work: Promise<unknown>): Promise<OutboundError> {
  const error = await work.then(
    (value) => new Error(`expected a refusal, got ${JSON.stringify(value)}`),
    (e: unknown) => e,
  );
  if (!(error instanceof OutboundError)) throw error;
  return error;
}

/** The server-side close of a watched request, or a failure (the door left the socket open). */
function closedSoon(name: string): Promise<{ finished: boolean }> {
  return within(
    seen.closed.get(name) ?? Promise.reject(new Error(`${name} was never requested`)),
    `${name}: the socket closed`,
  );
}

beforeAll(async () => {
  http = createServer(handle);
  await new Promise<void>((resolve) => http.listen(0, "127.0.0.1", resolve));
  const httpPort = (http.address() as AddressInfo).port;
  dns = dns2.createServer({ udp: true, handle: answer });
  const listening = await dns.listen({ udp: { port: 0, address: "127.0.0.1" } });
  const dnsPort = listening.udp?.port;
  env = {
    OUTBOUND_TEST_HOSTS: ["good.test", "a.good.test", "other.test"].map((h) => `${h}=127.0.0.1:${httpPort}`).join(","),
    OUTBOUND_TEST_DNS: `127.0.0.1:${dnsPort}`,
  };
  door = doorWith();
});

afterAll(async () => {
  for (const res of seen.held) res.end();
  http.closeAllConnections();
  await new Promise((resolve) => http.close(resolve));
  await dns.close();
});

describe("fetching", () => {
  test("a good fetch answers status, headers, the body as UTF-8 and the URL", async () => {
    const res = await door.get("https://good.test/file");
    expect(res).toMatchObject({ status: 200, body: "hello good.test ✓", url: "https://good.test/file" });
    expect(res.headers.get("content-type")).toBe("text/plain; charset=utf-8");
  });

  test("a 404 is returned as a status, not thrown", async () => {
    const res = await door.get("https://good.test/missing");
    expect(res).toMatchObject({ status: 404, body: "no such file" });
  });

  test("sends its User-Agent, Accept and identity encoding, and never a cookie or credentials", async () => {
    // /cookie sets a cookie and redirects: the next hop must not send it back.
    const res = await door.get("https://good.test/cookie", { accept: "application/json" });
    const headers = JSON.parse(res.body) as Record<string, string>;
    expect(res.url).toBe("https://good.test/echo");
    expect(headers).toMatchObject({
      host: "good.test",
      "user-agent": `agent-registry/${SERVICE_VERSION}`,
      accept: "application/json",
      "accept-encoding": "identity",
    });
    expect(headers).not.toHaveProperty("cookie");
    expect(headers).not.toHaveProperty("authorization");
  });

  test("a URL with credentials is refused, so they are never sent", async () => {
    const before = seen.headers.length;
    expect((await refusal(door.get("https://user:pw@good.test/echo"))).reason).toBe("BAD_URL");
    expect(seen.headers.length).toBe(before);
  });
});

describe("refusals before connecting", () => {
  test.each([
    ["loop.test", "127.0.0.1", "loopback"],
    ["ten.test", "10.0.0.1", "private"],
    ["meta.test", "169.254.169.254", "link-local"],
    ["v6loop.test", "::1", "loopback"],
    ["mapped.test", "::ffff:127.0.0.1", "loopback"],
    ["cgnat.test", "100.64.0.1", "carrier-grade NAT"],
    ["multicast.test", "224.0.0.1", "multicast"],
    ["metav6.test", "fd00:ec2::254", "private"],
  ])("%s, resolving to %s, is refused as %s", async (name, address, word) => {
    const error = await refusal(door.get(`https://${name}/file`));
    expect(error.reason).toBe("PRIVATE_ADDRESS");
    expect(error.message).toBe(`the address of ${name} is ${word} (${address})`);
    // Resolved once, through the test DNS, both families.
    expect(asked.filter((q) => q.endsWith(` ${name}`)).sort()).toEqual([`A ${name}`, `AAAA ${name}`]);
  });

  test.each([
    ["https://127.0.0.1/", "127.0.0.1"],
    ["https://[::1]/", "::1"],
    ["https://0x7f000001/", "127.0.0.1"],
    ["https://[::ffff:a00:1]/", "::ffff:a00:1"],
  ])("the IP literal of %s is checked as an address", async (url, address) => {
    const before = asked.length;
    const error = await refusal(door.get(url));
    expect(error.reason).toBe("PRIVATE_ADDRESS");
    expect(error.message).toContain(`(${address})`);
    expect(asked.length).toBe(before);
  });

  test.each(["http://example.com/", "ftp://good.test/file", "file:///etc/passwd", "not a url"])(
    "%s is refused as a bad URL without a look-up",
    async (url) => {
      const before = asked.length;
      expect((await refusal(door.get(url))).reason).toBe("BAD_URL");
      expect(asked.length).toBe(before);
    },
  );

  test("a name with no address, or whose look-up fails, is a DNS failure", async () => {
    expect(await refusal(door.get("https://nowhere.test/"))).toMatchObject({
      reason: "DNS",
      message: "nowhere.test has no address",
    });
    expect(await refusal(door.get("https://fail.test/"))).toMatchObject({ reason: "DNS" });
  });

  test("the classification refuses every non-public range and keeps public unicast", () => {
    for (const address of [
      "0.0.0.0",
      "172.16.5.4",
      "192.168.1.1",
      "255.255.255.255",
      "240.0.0.1",
      "fe80::1",
      "fc00::1",
      "ff02::1",
      "::",
      "::127.0.0.1",
      "64:ff9b::a00:1",
      "2002:a00:1::1",
      "2001:0:a00:1::",
      "::ffff:169.254.169.254",
    ]) {
      expect([address, refusedRange(address)]).toEqual([address, expect.any(String)]);
    }
    for (const address of ["93.184.215.14", "8.8.8.8", "2606:4700:4700::1111", "::ffff:8.8.8.8"]) {
      expect([address, refusedRange(address)]).toEqual([address, undefined]);
    }
  });
});

describe("redirects", () => {
  test("up to 3 are followed, within the domain, and the final URL is answered", async () => {
    expect(await door.get("https://good.test/hops/3")).toMatchObject({
      status: 200,
      body: "landed",
      url: "https://good.test/hops/0",
    });
    expect(await door.get("https://good.test/to-sub")).toMatchObject({ status: 200, url: "https://a.good.test/file" });
  });

  test("a fourth is refused", async () => {
    expect(await refusal(door.get("https://good.test/hops/4"))).toMatchObject({ reason: "REDIRECT" });
  });

  test("another domain is refused", async () => {
    expect(await refusal(door.get("https://good.test/to-other"))).toMatchObject({
      reason: "REDIRECT",
      message: "good.test redirected to another domain (other.test)",
    });
  });

  test("plain http: is refused", async () => {
    expect((await refusal(door.get("https://good.test/to-http"))).reason).toBe("REDIRECT");
  });

  test("a redirect's host goes through the same look-up and address check", async () => {
    const error = await refusal(door.get("https://good.test/to-private"));
    expect(error).toMatchObject({
      reason: "PRIVATE_ADDRESS",
      message: "the address of private.good.test is private (10.0.0.1)",
    });
  });
});

describe("limits", () => {
  test("a server that never answers is cut at the deadline, not before, its socket closed", async () => {
    // A timer's due time counts from the event loop's clock, which lags the wall clock by however long
    // the loop has been busy: the door's timer, set later, may fall due a little before one of the
    // same length set first. One of four fifths of the deadline, set first, must have fired.
    let mostOfTheDeadlinePassed = false;
    const timer = setTimeout(() => {
      mostOfTheDeadlinePassed = true;
    }, 400);
    const door500 = shortDeadline();
    expect((await refusal(door500.get("https://good.test/hang"))).reason).toBe("TIMEOUT");
    clearTimeout(timer);
    expect(mostOfTheDeadlinePassed).toBe(true);
    await expect(closedSoon("hang")).resolves.toEqual({ finished: false });
  });

  test.each([
    ["big-stream", "streamed"],
    ["big-length", "with its Content-Length"],
  ])("a 10 MB answer (%s, %s) is refused as too large and its socket closed", async (path) => {
    const error = await refusal(door.get(`https://good.test/${path}`));
    expect(error).toMatchObject({ reason: "TOO_LARGE", message: "the answer of good.test is larger than 65536 bytes" });
    // The server's socket closes before it could write the whole answer.
    await expect(closedSoon(path)).resolves.toEqual({ finished: false });
  });

  test("a Content-Length over the cap is refused at once, before the body", async () => {
    // The server sends no body at all: only the header can have been refused, and before the deadline (not TIMEOUT).
    expect((await refusal(door.get("https://good.test/declares-big"))).reason).toBe("TOO_LARGE");
  });

  test("with a concurrency of 2, a third request waits until one finishes", async () => {
    const two = doorWith({ OUTBOUND_CONCURRENCY: "2", OUTBOUND_TIMEOUT_MS: "5000" });
    seen.started = 0;
    const requests = [1, 2, 3].map(() => two.get("https://good.test/slow"));
    await until(() => seen.started === 2, "two requests started");
    await new Promise((r) => setTimeout(r, 200));
    expect(seen.started).toBe(2);
    seen.held.shift()?.end("one");
    await until(() => seen.started === 3, "the third request started");
    for (const res of seen.held.splice(0)) res.end("more");
    expect((await Promise.all(requests)).map((r) => r.status)).toEqual([200, 200, 200]);
  });
});

describe("TXT records", () => {
  test("each record's strings are joined", async () => {
    expect((await door.resolveTxt("_registry.good.test")).sort()).toEqual([
      "agent-registry-verify=abc123",
      "v=spf1 include:example.com -all",
    ]);
  });

  test("none is [], whether the name does not exist or has no TXT record", async () => {
    expect(await door.resolveTxt("_registry.nowhere.test")).toEqual([]);
    expect(await door.resolveTxt("notxt.test")).toEqual([]);
  });

  test("a failing or silent server is a DNS failure, within the deadline", async () => {
    expect((await refusal(door.resolveTxt("fail.test"))).reason).toBe("DNS");
    // The silent server never answers: the refusal is the deadline's.
    expect((await refusal(shortDeadline().resolveTxt("silent.test"))).reason).toBe("DNS");
    expect((await refusal(door.resolveTxt("not a name"))).reason).toBe("DNS");
  });
});

test("the test-only settings are refused in production", () => {
  const production = { NODE_ENV: "production", REVIEWER_JWT_SECRET: "s".repeat(40), LOG_LEVEL: "silent" };
  expect(() => loadConfig({ ...production, OUTBOUND_TEST_HOSTS: "good.test=127.0.0.1:8080" })).toThrow(
    /OUTBOUND_TEST_HOSTS and OUTBOUND_TEST_DNS are for tests only/,
  );
  expect(() => loadConfig({ ...production, OUTBOUND_TEST_DNS: "127.0.0.1:5353" })).toThrow(/for tests only/);
  expect(loadConfig(production).outbound.testHosts.size).toBe(0);
});
