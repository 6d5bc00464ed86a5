/**
 * The health prober's test peers (tests/health/peers.ts) behave as their names say: each is spoken to
 * directly on loopback with the official client libraries (the MCP SDK's Client and transports, the
 * A2A SDK's card resolver and client), or with fetch where no protocol is meant.
 */
import { Resolver } from "node:dns/promises";
import { Role } from "@a2a-js/sdk";
import {
  ClientFactory,
  ClientFactoryOptions,
  DefaultAgentCardResolver,
  JsonRpcTransportFactory,
} from "@a2a-js/sdk/client";
import { afterAll, beforeAll, describe, expect, test } from "@jest/globals";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { SSEClientTransport } from "@modelcontextprotocol/sdk/client/sse.js";
import { StreamableHTTPClientTransport, StreamableHTTPError } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import type { Transport } from "@modelcontextprotocol/sdk/shared/transport.js";
import { ErrorCode, LATEST_PROTOCOL_VERSION, McpError } from "@modelcontextprotocol/sdk/types.js";
import { loadConfig } from "../../src/config.ts";
import { createOutbound } from "../../src/outbound/outbound.ts";
import { until, within } from "../wait.ts";
import { HUGE_BODY_BYTES, OPEN_TOOLS, type Peers, startDns, startPeers, type TestDns } from "./peers.ts";

let peers: Peers;
let dns: TestDns | undefined;
const clients: Client[] = [];

beforeAll(async () => {
  peers = await startPeers();
});

afterAll(async () => {
  await Promise.allSettled(clients.map((c) => c.close()));
  await peers?.close();
  await dns?.close();
});

const INFO = { name: "peers-test", version: "1.0.0" };

/** A connected MCP client, closed after the file. */
async function connect(transport: Transport, client = new Client(INFO)): Promise<Client> {
  clients.push(client);
  await client.connect(transport);
  return client;
}

/** What a promise rejects with (a failure when it resolves). */
async function rejection(work: Promise<unknown>): Promise<unknown> {
  return work.then(
    (value) => {
      throw new Error(`expected a rejection, got ${JSON.stringify(value)}`);
    },
    (error: unknown) => error,
  );
}

/** An MCP initialize request, as a client POSTs it. */
const INITIALIZE = {
  method: "POST",
  headers: { "content-type": "application/json", accept: "application/json, text/event-stream" },
  body: JSON.stringify({
    jsonrpc: "2.0",
    id: 1,
    method: "initialize",
    params: { protocolVersion: LATEST_PROTOCOL_VERSION, capabilities: {}, clientInfo: INFO },
  }),
};

describe("MCP peers", () => {
  test("the open server lists its two tools with their input schemas, and answers GET with 405", async () => {
    const client = await connect(new StreamableHTTPClientTransport(new URL(peers.mcpOpen.local)));
    expect(client.getServerVersion()?.name).toBe("peer-open");
    const { tools } = await client.listTools();
    expect(tools.map((t) => t.name)).toEqual([...OPEN_TOOLS]);
    expect(tools[0]?.inputSchema).toMatchObject({ type: "object", properties: { query: { type: "string" } } });
    expect(tools[0]?.inputSchema.required).toEqual(["query"]);
    expect(Object.keys(tools[1]?.inputSchema.properties ?? {})).toEqual(["a", "b"]);
    expect((await fetch(peers.mcpOpen.local)).status).toBe(405);
  });

  test("the OAuth-protected server refuses the connection with a 401 naming its resource metadata", async () => {
    const error = await rejection(
      new Client(INFO).connect(new StreamableHTTPClientTransport(new URL(peers.mcpAuth.local))),
    );
    expect(error).toBeInstanceOf(StreamableHTTPError);
    expect((error as StreamableHTTPError).code).toBe(401);

    const raw = await fetch(peers.mcpAuth.local, INITIALIZE);
    expect(raw.status).toBe(401);
    expect(raw.headers.get("www-authenticate")).toMatch(/^Bearer error="invalid_token"/);
    expect(raw.headers.get("www-authenticate")).toContain(`resource_metadata="${peers.mcpAuth.resourceMetadataUrl}"`);
    // A token does not help either: every request is refused.
    const withToken = await fetch(peers.mcpAuth.local, {
      ...INITIALIZE,
      headers: { ...INITIALIZE.headers, authorization: "Bearer abc" },
    });
    expect(withToken.status).toBe(401);

    const path = new URL(peers.mcpAuth.resourceMetadataUrl).pathname;
    const metadata = await fetch(peers.mcpAuth.localOf(path));
    expect(metadata.status).toBe(200);
    expect(await metadata.json()).toMatchObject({ resource: peers.mcpAuth.url });
  });

  test("the changing server's tool list differs after changeTools(), and an open session is told", async () => {
    const { mcpChanging } = peers;
    let notified: string[] | undefined;
    const client = await connect(
      new StreamableHTTPClientTransport(new URL(mcpChanging.local)),
      new Client(INFO, {
        listChanged: {
          tools: {
            debounceMs: 0,
            onChanged: (_error, tools) => {
              notified = tools?.map((t) => t.name);
            },
          },
        },
      }),
    );
    const before = await client.listTools();
    expect(before.tools.map((t) => t.name)).toEqual(["lookup", "count"]);
    expect(Object.keys(before.tools[0]?.inputSchema.properties ?? {})).toEqual(["query"]);

    // The notification travels on the session's GET stream: change only once it is open.
    await until(() => mcpChanging.streams() > 0, "the session's GET stream is open");
    mcpChanging.changeTools();
    expect(await until(() => notified, "tools/list_changed arrived")).toEqual(["lookup", "count", "added_1"]);
    const after = await client.listTools();
    expect(after.tools.map((t) => t.name)).toEqual(mcpChanging.tools());
    expect(Object.keys(after.tools[0]?.inputSchema.properties ?? {})).toEqual(["query", "limit"]);

    mcpChanging.changeTools();
    const fresh = await connect(new StreamableHTTPClientTransport(new URL(mcpChanging.local)));
    expect((await fresh.listTools()).tools.map((t) => t.name)).toEqual(["lookup", "count", "added_1", "added_2"]);
    expect(mcpChanging.generation()).toBe(2);
  });

  test("the hanging server holds a request unanswered until the client gives up", async () => {
    const { mcpHang } = peers;
    const answer = fetch(mcpHang.local, { ...INITIALIZE, signal: AbortSignal.timeout(300) });
    await until(() => mcpHang.open() === 1, "the request is held");
    expect(((await rejection(answer)) as Error).name).toBe("TimeoutError");
    await until(() => mcpHang.open() === 0, "the held request ended with the client");

    // The MCP client's own request timeout gives up the same way.
    const error = await rejection(
      new Client(INFO).connect(new StreamableHTTPClientTransport(new URL(mcpHang.local)), { timeout: 300 }),
    );
    expect(error).toBeInstanceOf(McpError);
    expect((error as McpError).code).toBe(ErrorCode.RequestTimeout);
  });

  test("the huge server starts a 10 MB answer without Content-Length, and stops when the client hangs up", async () => {
    const { mcpHuge } = peers;
    const before = mcpHuge.written();
    const controller = new AbortController();
    const res = await fetch(mcpHuge.local, { ...INITIALIZE, signal: controller.signal });
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toBe("application/json");
    expect(res.headers.get("content-length")).toBeNull();
    const reader = res.body!.getReader();
    const decoder = new TextDecoder();
    let text = "";
    while (text.length < 256 * 1024) {
      const { value, done } = await reader.read();
      if (done) break;
      text += decoder.decode(value, { stream: true });
    }
    expect(text).toMatch(/^\{"jsonrpc":"2\.0","id":1,"result":\{"protocolVersion":"[^"]+",.*"padding":"x{1000}/);
    controller.abort();
    await within(mcpHuge.settled(), "the answer ended");
    const written = mcpHuge.written() - before;
    expect(written).toBeGreaterThanOrEqual(text.length);
    expect(written).toBeLessThan(HUGE_BODY_BYTES);
    expect(mcpHuge.completed()).toBe(0);
  });

  test("read to its end, the huge answer is a valid initialize result of exactly 10 MB", async () => {
    const res = await fetch(peers.mcpHuge.local, INITIALIZE);
    const text = await res.text();
    expect(Buffer.byteLength(text)).toBe(HUGE_BODY_BYTES);
    expect(JSON.parse(text)).toMatchObject({ jsonrpc: "2.0", id: 1, result: { serverInfo: { name: "peer-huge" } } });
    await until(() => peers.mcpHuge.completed() === 1, "the answer was sent whole");
  });

  test("the SSE server lists its tools over the legacy transport, and refuses Streamable HTTP", async () => {
    const client = await connect(new SSEClientTransport(new URL(peers.mcpSse.local)));
    expect(client.getServerVersion()?.name).toBe("peer-sse");
    expect((await client.listTools()).tools.map((t) => t.name)).toEqual([...OPEN_TOOLS]);

    const error = await rejection(
      new Client(INFO).connect(new StreamableHTTPClientTransport(new URL(peers.mcpSse.local))),
    );
    expect(error).toBeInstanceOf(StreamableHTTPError);
    expect((error as StreamableHTTPError).code).toBe(405);
  });

  test("server-everything lists its tools over Streamable HTTP", async () => {
    const client = await connect(new StreamableHTTPClientTransport(new URL(peers.mcpEverything.local)));
    expect(client.getServerVersion()?.name).toBe("mcp-servers/everything");
    const names = (await client.listTools()).tools.map((t) => t.name);
    expect(names).toEqual(expect.arrayContaining(["echo", "get-sum", "get-tiny-image"]));
  });
});

describe("A2A peers", () => {
  const resolver = new DefaultAgentCardResolver();

  test("the agent's card resolves through the SDK with its skills, and its JSON-RPC endpoint echoes", async () => {
    const { a2a } = peers;
    const card = await resolver.resolve(a2a.localOf("/"));
    expect(card.name).toBe("Echo agent");
    expect(card.skills.map((s) => s.id)).toEqual(["echo", "reverse"]);
    expect(card.supportedInterfaces).toEqual([
      expect.objectContaining({ url: a2a.url, protocolBinding: "JSONRPC", protocolVersion: "1.0" }),
    ]);

    // The card names the endpoint by host name: the client's requests are sent to the loopback port.
    const toLoopback: typeof fetch = (input, init) => {
      if (typeof input !== "string" && !(input instanceof URL)) throw new Error("a Request was not expected");
      return fetch(String(input).replace(`https://${a2a.host}`, `http://127.0.0.1:${a2a.port}`), init);
    };
    const factory = new ClientFactory(
      ClientFactoryOptions.createFrom(ClientFactoryOptions.default, {
        transports: [new JsonRpcTransportFactory({ fetchImpl: toLoopback })],
      }),
    );
    const client = await factory.createFromAgentCard(card);
    const answer = await client.sendMessage({
      tenant: "",
      message: {
        messageId: "m-1",
        contextId: "",
        taskId: "",
        role: Role.ROLE_USER,
        parts: [{ content: { $case: "text", value: "hello" }, metadata: undefined, filename: "", mediaType: "" }],
        metadata: undefined,
        extensions: [],
        referenceTaskIds: [],
      },
      configuration: undefined,
      metadata: undefined,
    });
    expect("parts" in answer && answer.parts[0]?.content).toEqual({ $case: "text", value: "echo: hello" });
  });

  test("the legacy agent serves its card only at /.well-known/agent.json", async () => {
    const { a2aLegacy } = peers;
    expect(a2aLegacy.cardUrl).toBe(`https://${a2aLegacy.host}/.well-known/agent.json`);
    const missing = (await rejection(resolver.resolve(a2aLegacy.localOf("/")))) as Error;
    expect(missing.message).toMatch(/agent-card\.json: 404$/);
    const card = await resolver.resolve(a2aLegacy.localOf("/"), "/.well-known/agent.json");
    expect(card.skills.map((s) => s.id)).toEqual(["echo"]);
  });

  test("the drifting agent's card differs after drift(), in skills and security schemes", async () => {
    const { a2aDrift } = peers;
    const origin = a2aDrift.localOf("/");
    const before = await resolver.resolve(origin);
    expect(before.skills.map((s) => s.id)).toEqual(["echo", "shout"]);
    expect(before.securitySchemes.bearer?.scheme).toEqual({
      $case: "httpAuthSecurityScheme",
      value: { description: "A bearer token", scheme: "Bearer", bearerFormat: "JWT" },
    });
    expect(before.securityRequirements).toEqual([{ schemes: { bearer: { list: [] } } }]);

    a2aDrift.drift();
    const after = await resolver.resolve(origin);
    expect(after.skills.map((s) => s.id)).toEqual(["echo", "shout", "extra-1"]);
    expect(Object.keys(after.securitySchemes)).toEqual(["apiKey"]);
    expect(after.securitySchemes.apiKey?.scheme?.$case).toBe("apiKeySecurityScheme");

    a2aDrift.drift({ removeSkill: "shout", security: "none" });
    const last = await resolver.resolve(origin);
    expect(last.skills.map((s) => s.id)).toEqual(["echo", "extra-1"]);
    // AgentCard.toJSON leaves an empty map out, and the resolver hands on a card without
    // proto-shaped security as it came: the field is missing, whatever the AgentCard type says.
    expect(last.securitySchemes).toBeUndefined();
    expect(a2aDrift.card().skills.map((s) => s.id)).toEqual(["echo", "extra-1"]);
  });
});

describe("plain HTTP peers", () => {
  test("the HTML host answers 200 text/html on every path and method", async () => {
    for (const [path, init] of [
      ["/mcp", INITIALIZE],
      ["/.well-known/agent-card.json", {}],
      ["/anything", { method: "DELETE" }],
    ] as const) {
      const res = await fetch(peers.html.localOf(path), init);
      expect([res.status, res.headers.get("content-type"), await res.text()]).toEqual([
        200,
        "text/html; charset=utf-8",
        "<html>hello</html>",
      ]);
    }
  });

  test("the health host answers /health 200 JSON, /broken 503 and anything else 404", async () => {
    const health = await fetch(peers.health.local);
    expect([health.status, await health.json()]).toEqual([200, { status: "ok" }]);
    expect((await fetch(peers.health.localOf("/broken"))).status).toBe(503);
    expect((await fetch(peers.health.localOf("/elsewhere"))).status).toBe(404);
  });
});

describe("reaching the peers by name", () => {
  test("testHosts maps every peer's host name, and the outbound door reaches them by it", async () => {
    const entries = peers.testHosts.split(",");
    expect(entries).toHaveLength(12);
    expect(new Set(entries.map((e) => e.split("=")[0])).size).toBe(12);
    expect(entries).toContain(`health.test=127.0.0.1:${peers.health.port}`);

    const door = createOutbound(
      loadConfig({ ...process.env, NODE_ENV: "test", OUTBOUND_TEST_HOSTS: peers.testHosts }).outbound,
    );
    const before = peers.health.requests();
    expect(await door.get(peers.health.url)).toMatchObject({ status: 200, body: '{"status":"ok"}' });
    expect(peers.health.requests()).toBe(before + 1);
    const card = await door.get(peers.a2a.cardUrl);
    expect(JSON.parse(card.body)).toMatchObject({ name: "Echo agent" });
  });

  test("startDns answers its names with their addresses, and others with NXDOMAIN", async () => {
    dns = await startDns({ "private.test": ["10.0.0.1"], "v6.test": ["fd00::1"] });
    const resolver = new Resolver({ timeout: 1000, tries: 1 });
    resolver.setServers([dns.address]);
    expect(await resolver.resolve4("private.test")).toEqual(["10.0.0.1"]);
    expect(await resolver.resolve6("v6.test")).toEqual(["fd00::1"]);
    expect(((await rejection(resolver.resolve4("nowhere.test"))) as NodeJS.ErrnoException).code).toBe("ENOTFOUND");
    expect(dns.asked).toEqual(["A private.test", "AAAA v6.test", "A nowhere.test"]);
  });
});

// Last: it closes the peers the tests above share.
describe("close", () => {
  test("close() ends a held request, and the peers stop listening", async () => {
    const before = peers.mcpHang.open();
    const held = fetch(peers.mcpHang.local, INITIALIZE);
    await until(() => peers.mcpHang.open() === before + 1, "the request is held");
    await peers.close();
    // fetch's TypeError is of Node's realm, not of the test's: compared by name.
    const failed = { name: "TypeError", message: "fetch failed" };
    expect(await within(rejection(held), "the held request ended", 2000)).toMatchObject(failed);
    expect(await rejection(fetch(peers.health.local))).toMatchObject(failed);
  });
});
