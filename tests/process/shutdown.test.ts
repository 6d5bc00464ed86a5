/**
 * SIGTERM drains the real process (API.md §6): readiness turns 503, a request in flight
 * finishes with success, new connections are refused, idle keep-alive connections are closed, and the
 * process exits 0 — or, past DRAIN_TIMEOUT_MS, cuts what is left and exits 1.
 *
 * The request held in flight is an honest slow client, not a test hook: a PATCH whose JSON body is
 * uploaded in two parts. It is sent with `Expect: 100-continue`, so the server's `100 Continue` says
 * it has the request in hand (Node answers it as it hands the request to the app) before the signal
 * is sent; the app is then reading the body when SIGTERM arrives, and the rest of the body is sent
 * only after readiness and the listener have been checked.
 */
import { once } from "node:events";
import http from "node:http";
import net from "node:net";
import { join } from "node:path";
import { afterAll, describe, expect, test } from "@jest/globals";
import { openDb } from "../../src/db/client.ts";
import { intakeBody } from "../builders.ts";
import { until, within } from "../wait.ts";
import { cleanUp, request, type Server, startServer, tempDir, waitForLine } from "./server.process.ts";

afterAll(cleanUp, 30_000);

interface Reply {
  status: number;
  headers: http.IncomingHttpHeaders;
  body: string;
}

/** A PATCH whose body is sent in two parts: `started` once the server has it, `finish()` sends the rest. */
async function slowPatch(server: Server, code: string, token: string, summary: string) {
  const body = JSON.stringify({ summary });
  const req = http.request(`${server.url}/api/v1/providers/${code}`, {
    method: "PATCH",
    agent: false,
    headers: {
      "content-type": "application/json",
      "content-length": Buffer.byteLength(body),
      authorization: `Bearer ${token}`,
      expect: "100-continue",
    },
  });
  const reply = new Promise<Reply>((resolve, reject) => {
    req.on("response", (res) => {
      let text = "";
      res.setEncoding("utf8").on("data", (c: string) => {
        text += c;
      });
      res.on("end", () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body: text }));
      res.on("error", reject);
    });
    req.on("error", reject);
  });
  reply.catch(() => {}); // observed by the test; never an unhandled rejection
  req.flushHeaders();
  await once(req, "continue");
  req.write(body.slice(0, 10));
  return { reply, finish: () => req.end(body.slice(10)) };
}

/** A GET over a keep-alive agent, answering whether it reused the agent's open connection. */
function keepAliveGet(agent: http.Agent, url: string): Promise<Reply & { reused: boolean }> {
  return new Promise((resolve, reject) => {
    const req = http.get(url, { agent }, (res) => {
      let text = "";
      res.setEncoding("utf8").on("data", (c: string) => {
        text += c;
      });
      res.on("end", () =>
        resolve({ status: res.statusCode ?? 0, headers: res.headers, body: text, reused: req.reusedSocket }),
      );
    });
    req.on("error", reject);
  });
}

/** Opens a TCP connection: "connected" (then closes it) or the error code (ECONNREFUSED). */
function connect(port: number): Promise<string> {
  return new Promise((resolve) => {
    const socket = net.connect(port, "127.0.0.1");
    socket.once("connect", () => {
      socket.destroy();
      resolve("connected");
    });
    socket.once("error", (error: NodeJS.ErrnoException) => resolve(error.code ?? String(error)));
  });
}

/** Tries to connect until the listener is gone: the error code of the first refused connection. */
function listenerClosed(port: number, ms?: number): Promise<string> {
  return until(
    async () => {
      const outcome = await connect(port);
      return outcome !== "connected" && outcome;
    },
    "the listener closed",
    ms,
  );
}

/** An idle keep-alive connection: a request answered, then nothing; `closed` when the server closes it. */
async function idleConnection(port: number) {
  const socket = net.connect(port, "127.0.0.1");
  await once(socket, "connect");
  const closed = once(socket, "close").then(() => Date.now());
  let text = "";
  socket.setEncoding("utf8").on("data", (c: string) => {
    text += c;
  });
  socket.write("GET /health HTTP/1.1\r\nHost: registry\r\nConnection: keep-alive\r\n\r\n");
  await until(() => /\r\n\r\n[\s\S]*"ok"/.test(text), "an answer on the keep-alive connection");
  expect(text).toMatch(/^HTTP\/1\.1 200/);
  expect(text.toLowerCase()).not.toContain("connection: close");
  return { socket, closed };
}

async function versionsOf(databaseUrl: string, code: string): Promise<{ version: number; summary: unknown }[]> {
  const db = await openDb(databaseUrl);
  try {
    const rows = await db.providerVersion.findMany({
      where: { provider: { providerCode: code } },
      orderBy: { version: "asc" },
      select: { version: true, snapshot: true },
    });
    return rows.map((r) => ({ version: r.version, summary: (r.snapshot as { summary?: unknown }).summary }));
  } finally {
    await db.$disconnect();
  }
}

describe("SIGTERM on the real process", () => {
  test("readiness 503, the slow request in flight succeeds, new connections refused, idle ones closed, exit 0", async () => {
    const DELAY = 1500;
    const TIMEOUT = 8000;
    const databaseUrl = `file:${join(tempDir(), "shutdown.db")}`;
    const server = await startServer(databaseUrl, { DRAIN_DELAY_MS: String(DELAY), DRAIN_TIMEOUT_MS: String(TIMEOUT) });
    const made = await request(server, "POST", "/api/v1/providers", { body: intakeBody() });
    expect(made.status).toBe(201);
    const { providerCode: code, accessToken: token } = made.body;

    // A keep-alive client (a load balancer's probe connection), an idle keep-alive connection, and
    // the slow upload, all before the signal.
    const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
    try {
      const before = await keepAliveGet(agent, `${server.url}/ready`);
      expect(before.status).toBe(200);
      const idle = await idleConnection(server.port);
      const slow = await slowPatch(server, code, token, "finished while draining");

      const signalled = Date.now();
      server.child.kill("SIGTERM");
      await waitForLine(server, /"msg":"draining".*"inFlight":1\b/);

      // Readiness on the open keep-alive connection: 503, and the connection is not kept.
      const probe = await keepAliveGet(agent, `${server.url}/ready`);
      expect(probe).toMatchObject({ status: 503, reused: true });
      expect(JSON.parse(probe.body)).toEqual({ status: "unavailable" });
      expect(probe.headers.connection).toBe("close");
      // Within DRAIN_DELAY_MS a new connection is still accepted, and told 503 too.
      const fresh = await request(server, "GET", "/ready");
      expect(fresh.status).toBe(503);

      // Then the listener closes: new connections are refused while the upload is still going.
      expect(await listenerClosed(server.port, DELAY + 10_000)).toBe("ECONNREFUSED");
      expect(Date.now() - signalled).toBeGreaterThanOrEqual(DELAY - 100);
      // The idle keep-alive connection was closed by the server once the listener closed.
      expect(await within(idle.closed, "the idle connection closed")).toBeGreaterThan(0);
      expect(server.child.exitCode).toBeNull();

      // The request in flight finishes, with success, and its write is kept.
      slow.finish();
      const done = await slow.reply;
      expect(done.status).toBe(200);
      expect(JSON.parse(done.body)).toMatchObject({
        providerCode: code,
        version: 2,
        summary: "finished while draining",
      });
      expect(done.headers.connection).toBe("close");

      // Then the process exits 0, before the drain's deadline cut anything (nothing else holds the drain).
      const how = await server.exited;
      expect(how).toEqual({ code: 0, signal: null });
      expect(server.lines.some((l) => /drain deadline passed/.test(l))).toBe(false);
      expect(server.lines.some((l) => /"msg":"stopped","code":0/.test(l))).toBe(true);
      expect(server.stderr.join("")).toBe("");
      expect(await versionsOf(databaseUrl, code)).toEqual([
        { version: 1, summary: made.body.provider.summary },
        { version: 2, summary: "finished while draining" },
      ]);
    } finally {
      agent.destroy();
    }
  }, 30_000);

  test("past DRAIN_TIMEOUT_MS the unfinished request is cut, nothing of it is written, and the exit is 1", async () => {
    const TIMEOUT = 1500;
    const databaseUrl = `file:${join(tempDir(), "deadline.db")}`;
    const server = await startServer(databaseUrl, { DRAIN_TIMEOUT_MS: String(TIMEOUT) });
    const made = await request(server, "POST", "/api/v1/providers", { body: intakeBody() });
    expect(made.status).toBe(201);
    const { providerCode: code, accessToken: token } = made.body;
    const idle = await idleConnection(server.port);
    const slow = await slowPatch(server, code, token, "never finished");

    const signalled = Date.now();
    server.child.kill("SIGTERM");
    await waitForLine(server, /"msg":"draining"/);
    // No delay configured: the listener closes at once and idle connections with it.
    expect(await listenerClosed(server.port)).toBe("ECONNREFUSED");

    // The client never sends the rest: at the deadline the connection is cut and the process exits 1;
    // the idle connection had been closed before that, with the listener.
    const cutAt = await slow.reply.then(
      () => 0,
      (error: Error) => {
        expect(error.message).toMatch(/socket hang up|ECONNRESET/);
        return Date.now();
      },
    );
    expect(cutAt).toBeGreaterThan(0);
    expect(await idle.closed).toBeLessThanOrEqual(cutAt);
    const how = await server.exited;
    expect(how).toEqual({ code: 1, signal: null });
    // Not before the deadline (a timer never fires early).
    expect(Date.now() - signalled).toBeGreaterThanOrEqual(TIMEOUT - 100);
    expect(server.lines.some((l) => /"msg":"drain deadline passed; cutting what is left","inFlight":1/.test(l))).toBe(
      true,
    );
    expect((await versionsOf(databaseUrl, code)).map((v) => v.version)).toEqual([1]);
  }, 30_000);
});
