/**
 * The body limit (API.md §6: 64 KiB on every route) over a real socket: the app served by
 * node:http on 127.0.0.1, as main.ts serves it, and raw clients that stream chunked bodies or lie in
 * Content-Length. What is proved: the refusal is a 413 in the route's error shape, it comes while
 * the client is still sending, the server stops reading at about the limit (its socket's bytesRead)
 * and closes the connection rather than draining the rest, and nothing is written.
 */
import { randomBytes } from "node:crypto";
import { createServer, request, type Server } from "node:http";
import { type AddressInfo, connect, type Socket } from "node:net";
import { afterAll, beforeAll, describe, expect, test } from "@jest/globals";
import { loadConfig } from "../../src/config.ts";
import { createApp } from "../../src/yoga.ts";
import { intakeBody, uniqueCode } from "../builders.ts";
import { type App, call, config, db } from "../helpers.ts";

const LIMIT = 64 * 1024;
/** What the server may read beyond the limit: request headers and one socket read in flight. */
const SLACK = 64 * 1024;

interface Served {
  server: Server;
  port: number;
  /** The server side of every connection, to read its bytesRead. */
  sockets: Socket[];
}

const served: Served[] = [];

async function serve(app: App): Promise<Served> {
  const server = createServer(app);
  const sockets: Socket[] = [];
  server.on("connection", (socket) => sockets.push(socket));
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const entry = { server, port: (server.address() as AddressInfo).port, sockets };
  served.push(entry);
  return entry;
}

let main: Served;
beforeAll(async () => {
  main = await serve(createApp(config, db));
});
afterAll(async () => {
  for (const { server } of served) {
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  }
});

interface Streamed {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: string;
  /** Body bytes the client had written when the answer's headers arrived. */
  sentAtAnswer: number;
  /** Body bytes the client had written in all. */
  sent: number;
  /** Whether the server closed the connection (the client saw it close before it gave up). */
  closedByServer: boolean;
}

/**
 * Streams a chunked body of `chunk`s, one every few milliseconds, until `max` bytes or until the
 * connection closes — it does not stop at the answer, as a hostile client would not.
 */
function stream(
  target: Served,
  method: string,
  path: string,
  options: { first?: string; max?: number; headers?: Record<string, string> } = {},
): Promise<Streamed> {
  const max = options.max ?? 4 * 1024 * 1024;
  return new Promise((resolve, reject) => {
    let sent = 0;
    let sentAtAnswer = -1;
    let answer: Pick<Streamed, "status" | "headers"> | undefined;
    let body = "";
    let finished = false;
    const req = request({
      host: "127.0.0.1",
      port: target.port,
      method,
      path,
      headers: { "content-type": "application/json", "transfer-encoding": "chunked", ...options.headers },
    });
    // The server has until 5 s after its answer to close; the clock starts at the answer, so a
    // slow first answer (a busy machine) is not taken for a connection left open.
    let giveUp: NodeJS.Timeout | undefined;
    function finish(closedByServer: boolean) {
      if (finished) return;
      finished = true;
      clearTimeout(giveUp);
      req.destroy();
      if (!answer) return reject(new Error(`no answer after sending ${sent} bytes`));
      resolve({ ...answer, body, sentAtAnswer, sent, closedByServer });
    }
    req.on("response", (res) => {
      sentAtAnswer = sent;
      answer = { status: res.statusCode ?? 0, headers: res.headers };
      giveUp = setTimeout(() => finish(false), 5000);
      res.setEncoding("utf8");
      res.on("data", (d: string) => {
        body += d;
      });
    });
    req.on("error", () => finish(true));
    req.on("close", () => finish(true));
    const filler = Buffer.alloc(16 * 1024, "a");
    if (options.first) {
      req.write(options.first);
      sent += Buffer.byteLength(options.first);
    }
    const pump = () => {
      if (finished || req.destroyed) return;
      if (sent >= max) {
        req.end();
        return;
      }
      req.write(filler);
      sent += filler.length;
      setTimeout(pump, 2);
    };
    pump();
  });
}

/** Bytes the server read on its most recent connection. */
function serverRead(target: Served): number {
  return target.sockets.at(-1)?.bytesRead ?? Number.NaN;
}

/**
 * A raw exchange: writes `head` (and then `body`, if any), answers what came back until the server
 * closed, or 3 s after the first bytes of its answer if it does not.
 */
function raw(target: Served, head: string, body?: Buffer): Promise<{ text: string; closedByServer: boolean }> {
  return new Promise((resolve) => {
    const socket = connect(target.port, "127.0.0.1");
    let text = "";
    let timer: NodeJS.Timeout | undefined;
    const done = (closedByServer: boolean) => {
      clearTimeout(timer);
      socket.destroy();
      resolve({ text, closedByServer });
    };
    socket.setEncoding("latin1");
    socket.on("data", (d: string) => {
      text += d;
      timer ??= setTimeout(() => done(false), 3000);
    });
    socket.on("error", () => {});
    socket.on("close", () => done(true));
    socket.write(head);
    if (body) socket.write(body);
  });
}

/** `n` capabilities, to make an intake body large but valid. */
function capabilities(n: number) {
  return Array.from({ length: n }, (_, i) => ({
    key: `cap-${i}`,
    name: `Capability ${i}`,
    description: "c".repeat(900),
    tags: ["t"],
    inputModes: ["text/plain"],
    outputModes: ["text/plain"],
  }));
}

/** A JSON intake that starts validly and is then padded past the limit inside its description. */
function oversizedIntakeStart(providerCode: string): string {
  const { description: _d, ...rest } = intakeBody({ providerCode });
  return `${JSON.stringify(rest).slice(0, -1)},"description":"`;
}

describe("a chunked body over the limit (no Content-Length)", () => {
  test("REST: 413 problem+json while the client is still sending; reading stops; the connection closes; nothing written", async () => {
    const providerCode = uniqueCode("chunked");
    const answer = await stream(main, "POST", "/api/v1/providers", { first: oversizedIntakeStart(providerCode) });
    expect(answer.status).toBe(413);
    expect(answer.headers["content-type"]).toBe("application/problem+json");
    expect(JSON.parse(answer.body)).toMatchObject({
      status: 413,
      code: "PAYLOAD_TOO_LARGE",
      title: "Payload too large",
    });
    // Answered as soon as the limit was passed, long before the client's 4 MiB were out.
    expect(answer.sentAtAnswer).toBeGreaterThan(LIMIT);
    expect(answer.sentAtAnswer).toBeLessThan(LIMIT + 4 * SLACK);
    expect(answer.headers.connection).toBe("close");
    expect(answer.closedByServer).toBe(true);
    expect(answer.sent).toBeLessThan(4 * 1024 * 1024);
    // The server read about the limit, not what the client kept sending.
    expect(serverRead(main)).toBeLessThan(LIMIT + 2 * SLACK);
    expect(await db.provider.count({ where: { providerCode } })).toBe(0);
  });

  test("GraphQL: 413 in the GraphQL error shape, same limits on reading", async () => {
    const providerCode = uniqueCode("chunkedgql");
    const start = `{"query":"mutation { createProvider(providerCode: \\"${providerCode}\\", name: \\"x\\", summary: \\"`;
    const answer = await stream(main, "POST", "/graphql", { first: start });
    expect(answer.status).toBe(413);
    expect(answer.headers["content-type"]).toMatch(/^application\/graphql-response\+json/);
    const body = JSON.parse(answer.body);
    expect(body.errors).toHaveLength(1);
    expect(body.errors[0].extensions.code).toBe("PAYLOAD_TOO_LARGE");
    expect(answer.headers.connection).toBe("close");
    expect(answer.closedByServer).toBe(true);
    expect(serverRead(main)).toBeLessThan(LIMIT + 2 * SLACK);
    expect(await db.provider.count({ where: { providerCode } })).toBe(0);
  });

  test("a route that takes no body (GET) is answered and closed, not drained, while the body streams", async () => {
    const answer = await stream(main, "GET", "/api/v1/health");
    expect(answer.status).toBe(200);
    expect(answer.headers.connection).toBe("close");
    expect(answer.closedByServer).toBe(true);
    expect(answer.sent).toBeLessThan(4 * 1024 * 1024);
    expect(serverRead(main)).toBeLessThan(LIMIT + 2 * SLACK);
  });

  test("a chunked body under the limit is read whole and works", async () => {
    const providerCode = uniqueCode("chunkedok");
    const json = JSON.stringify(
      intakeBody({ providerCode, description: "d".repeat(9_000), capabilities: capabilities(40) }),
    );
    const answer = await new Promise<{ status: number; body: string }>((resolve, reject) => {
      const req = request({
        host: "127.0.0.1",
        port: main.port,
        method: "POST",
        path: "/api/v1/providers",
        headers: { "content-type": "application/json", "transfer-encoding": "chunked" },
      });
      req.on("response", (res) => {
        let body = "";
        res.on("data", (d) => {
          body += d;
        });
        res.on("end", () => resolve({ status: res.statusCode ?? 0, body }));
      });
      req.on("error", reject);
      for (let i = 0; i < json.length; i += 10_000) req.write(json.slice(i, i + 10_000));
      req.end();
    });
    expect(json.length).toBeGreaterThan(40_000);
    expect([answer.status, answer.body.slice(0, 300)]).toEqual([201, expect.stringContaining(providerCode)]);
  });
});

describe("a lying Content-Length", () => {
  test("one over the limit is refused before a byte of the body is sent (413, closed)", async () => {
    const head =
      "POST /api/v1/providers HTTP/1.1\r\nHost: registry.test\r\nContent-Type: application/json\r\n" +
      `Content-Length: ${10 * 1024 * 1024}\r\n\r\n`;
    const { text, closedByServer } = await raw(main, head);
    expect(text).toMatch(/^HTTP\/1\.1 413 /);
    expect(text).toMatch(/\r\nconnection: close\r\n/i);
    expect(text).toContain('"code":"PAYLOAD_TOO_LARGE"');
    expect(closedByServer).toBe(true);
  });

  test("one under what is sent: only the declared bytes are the body; the rest is never taken as a body and nothing is written", async () => {
    const providerCode = uniqueCode("lying");
    const json = Buffer.from(JSON.stringify(intakeBody({ providerCode, description: "d".repeat(9000) })));
    const padding = Buffer.alloc(200 * 1024, "a");
    const head =
      "POST /api/v1/providers HTTP/1.1\r\nHost: registry.test\r\nContent-Type: application/json\r\n" +
      "Content-Length: 20\r\n\r\n";
    const { text, closedByServer } = await raw(main, head, Buffer.concat([json, padding]));
    // The first 20 bytes are not a JSON document: 400 malformed JSON; what follows is not a request.
    expect(text).toMatch(/^HTTP\/1\.1 400 /);
    expect(text).not.toMatch(/ 201 /);
    expect(closedByServer).toBe(true);
    expect(await db.provider.count({ where: { providerCode } })).toBe(0);
  });

  test("with Transfer-Encoding as well, the request is refused (no smuggling) and nothing is written", async () => {
    const providerCode = uniqueCode("smuggle");
    const json = JSON.stringify(intakeBody({ providerCode }));
    const head =
      "POST /api/v1/providers HTTP/1.1\r\nHost: registry.test\r\nContent-Type: application/json\r\n" +
      `Content-Length: ${json.length}\r\nTransfer-Encoding: chunked\r\n\r\n`;
    const chunked = `${json.length.toString(16)}\r\n${json}\r\n0\r\n\r\n`;
    const { text, closedByServer } = await raw(main, head, Buffer.from(chunked));
    expect(text).toMatch(/^HTTP\/1\.1 400 /);
    expect(closedByServer).toBe(true);
    expect(await db.provider.count({ where: { providerCode } })).toBe(0);
  });
});

describe("a body framed by its Content-Length (under the limit)", () => {
  // The edge leaves such a body to the one reader that needs it (Yoga or the REST guard); these
  // prove each request still gets exactly its own bytes on a keep-alive connection.
  const http = (method: string, path: string, headers: Record<string, string>, body = "") =>
    `${method} ${path} HTTP/1.1\r\nHost: registry.test\r\n${Object.entries(headers)
      .map(([name, value]) => `${name}: ${value}\r\n`)
      .join("")}Content-Length: ${Buffer.byteLength(body)}\r\n\r\n${body}`;
  const health = "GET /api/v1/health HTTP/1.1\r\nHost: registry.test\r\nConnection: close\r\n\r\n";
  const statuses = (text: string) => [...text.matchAll(/HTTP\/1\.1 (\d{3}) /g)].map((m) => Number(m[1]));

  test("a GraphQL POST and then another request on the same connection: both answered", async () => {
    const providerCode = uniqueCode("framed");
    const query = `mutation ($c: String, $n: String!, $s: String!, $t: AgentType!, $e: String!, $p: EndpointInput!) {
      createProvider(providerCode: $c, name: $n, summary: $s, agentType: $t, contactEmail: $e, endpoint: $p) { providerCode } }`;
    const i = intakeBody({ providerCode });
    const variables = { c: providerCode, n: i.name, s: i.summary, t: i.agentType, e: i.contactEmail, p: i.endpoint };
    const body = JSON.stringify({ query, variables });
    const { text } = await raw(main, http("POST", "/graphql", { "Content-Type": "application/json" }, body) + health);
    expect(statuses(text)).toEqual([200, 200]);
    expect(text).toContain(`"providerCode":"${providerCode}"`);
    expect(await db.provider.count({ where: { providerCode } })).toBe(1);
  });

  test("a body that is not JSON: 415 in the route's shape, nothing written, and the next request is read as one", async () => {
    const providerCode = uniqueCode("framedtext");
    const body = JSON.stringify(intakeBody({ providerCode }));
    const rest = await raw(main, http("POST", "/api/v1/providers", { "Content-Type": "text/plain" }, body) + health);
    expect(statuses(rest.text)).toEqual([415, 200]);
    expect(rest.text).toContain('"code":"UNSUPPORTED_MEDIA_TYPE"');
    const gql = await raw(
      main,
      http("POST", "/graphql", { "Content-Type": "text/plain" }, '{"query":"{ __typename }"}') + health,
    );
    expect(statuses(gql.text)).toEqual([415, 200]);
    expect(gql.text).toMatch(
      /"errors":\[\{"message":"Send the body as application\/json".*"code":"UNSUPPORTED_MEDIA_TYPE"/,
    );
    expect(await db.provider.count({ where: { providerCode } })).toBe(0);
  });
});

describe("MAX_BODY_BYTES", () => {
  test("sets the limit: over it 413 on REST and GraphQL; the default is 64 KiB", async () => {
    expect(config.maxBodyBytes).toBe(LIMIT);
    expect(loadConfig({ NODE_ENV: "test", MAX_BODY_BYTES: "2048" }).maxBodyBytes).toBe(2048);
    expect(() => loadConfig({ NODE_ENV: "test", MAX_BODY_BYTES: "0" })).toThrow(/MAX_BODY_BYTES/);
    const small = await serve(createApp(loadConfig({ ...process.env, NODE_ENV: "test", MAX_BODY_BYTES: "2048" }), db));
    const providerCode = uniqueCode("small");
    const answer = await stream(small, "POST", "/api/v1/providers", { first: oversizedIntakeStart(providerCode) });
    expect(answer.status).toBe(413);
    expect(JSON.parse(answer.body).detail).toContain("2048");
    expect(answer.sentAtAnswer).toBeLessThan(2048 + 4 * SLACK);
    expect(serverRead(small)).toBeLessThan(2048 + 2 * SLACK);
    expect(await db.provider.count({ where: { providerCode } })).toBe(0);

    // Under it the same app works; the same body is fine for the default app.
    const body = intakeBody({ providerCode: uniqueCode("fits"), description: "x".repeat(4000) });
    const app = createApp(loadConfig({ ...process.env, NODE_ENV: "test", MAX_BODY_BYTES: "2048" }), db);
    const refused = await call("POST", "/graphql", {
      app,
      body: { query: "mutation { __typename }", variables: { pad: randomBytes(1500).toString("hex") } },
    });
    expect(refused.status).toBe(413);
    expect(refused.body.errors[0].extensions.code).toBe("PAYLOAD_TOO_LARGE");
    expect((await call("POST", "/api/v1/providers", { body })).status).toBe(201);
    await app.dispose();
  });
});
