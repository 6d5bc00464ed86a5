/**
 * READ_ACCESS=authenticated: every route that runs an operation (REST, GraphQL and its
 * introspection, the MCP read API, cards and server.json, the event log, its SSE and WebSocket
 * streams, intake) answers a request without a credential 401, naming the protected resource
 * metadata; the transport routes stay public. Any credential with the reader role reads (an API key,
 * an agent token, a reviewer token), and what it may not see is still a 404. The default, public,
 * is today's registry.
 */
import { describe, expect, test } from "@jest/globals";
import { createClient } from "graphql-ws";
import WebSocket from "ws";
import { loadConfig } from "../../src/config.ts";
import { attachWebSocket } from "../../src/http/websocket.ts";
import { intakeBody } from "../builders.ts";
import {
  approve,
  appWith,
  call,
  closeAfterAll,
  db,
  expectProblem,
  gql,
  intake,
  listen,
  reviewerToken,
} from "../helpers.ts";

const PUBLIC_URL = "https://registry.example";
const METADATA = `${PUBLIC_URL}/.well-known/oauth-protected-resource`;
const env = { READ_ACCESS: "authenticated", PUBLIC_URL };
const closed = appWith(env);
const admin = await reviewerToken("admin-1", ["admin"]);

// An approved agent, made through the public app (the same database).
const agent = await intake();
await approve(agent.providerCode);
const key = (await call("POST", "/api/v1/api-keys", { token: admin, body: { name: "Reader" } })).body.secret as string;

interface Read {
  method: string;
  path: string;
  body?: unknown;
  /** What a reader is answered (a server.json exists for MCP servers only; this agent speaks A2A). */
  readerStatus?: number;
}

/** What an anonymous caller asks for, one request per surface. */
const READS: [string, Read][] = [
  ["REST list", { method: "GET", path: "/api/v1/providers" }],
  ["REST profile", { method: "GET", path: `/api/v1/providers/${agent.providerCode}` }],
  ["REST service description", { method: "GET", path: "/api/v1/" }],
  ["agent card", { method: "GET", path: `/api/v1/providers/${agent.providerCode}/agent-card.json` }],
  ["server.json", { method: "GET", path: `/api/v1/providers/${agent.providerCode}/server.json`, readerStatus: 404 }],
  ["event log", { method: "GET", path: "/api/v1/events?after=0" }],
  ["MCP read API", { method: "GET", path: "/v0.1/servers" }],
  ["GraphQL query", { method: "POST", path: "/graphql", body: { query: "{ providers { items { providerCode } } }" } }],
  [
    "GraphQL introspection",
    { method: "POST", path: "/graphql", body: { query: "{ __schema { queryType { name } } }" } },
  ],
  ["GraphQL over GET", { method: "GET", path: "/graphql?query=%7B__typename%7D" }],
];

const ask = (read: Read, token?: string) =>
  call(read.method, read.path, {
    app: closed,
    ...(read.body ? { body: read.body } : {}),
    ...(token ? { token } : {}),
  });

describe("without a credential", () => {
  test.each(READS)("%s is a 401 naming the resource metadata", async (_what, read) => {
    const answer = await ask(read);
    expect(answer.status).toBe(401);
    expect(answer.headers.get("www-authenticate")).toBe(
      `Bearer realm="agent-registry", resource_metadata="${METADATA}"`,
    );
    expect(JSON.stringify(answer.body)).not.toContain(agent.providerCode);
  });

  test("the SSE stream is a 401 and opens nothing", async () => {
    const answer = await call("GET", "/graphql?query=subscription%7Bfeed%7Bseq%7D%7D", {
      app: closed,
      headers: { accept: "text/event-stream" },
    });
    expect(answer.status).toBe(401);
  });

  test("intake is a 401 and makes nothing", async () => {
    const before = await db.provider.count();
    const answer = await call("POST", "/api/v1/providers", { app: closed, body: intakeBody() });
    expectProblem(answer, 401, "UNAUTHENTICATED");
    expect(await db.provider.count()).toBe(before);
  });

  test.each([
    ["/health", "status"],
    ["/ready", "status"],
    ["/openapi.json", "openapi"],
    ["/.well-known/jwks.json", "keys"],
  ])("%s stays public", async (path, field) => {
    const answer = await call("GET", path, { app: closed });
    expect(answer.status).toBe(200);
    expect(answer.body).toHaveProperty(field);
  });

  test("the protected resource metadata (RFC 9728) says where tokens come from and which scopes there are", async () => {
    const answer = await call("GET", "/.well-known/oauth-protected-resource", {
      app: appWith({ ...env, OIDC_ISSUER: "https://login.example.com/realms/acme" }),
    });
    expect(answer.status).toBe(200);
    expect(answer.body).toEqual({
      resource: PUBLIC_URL,
      authorization_servers: ["https://login.example.com/realms/acme"],
      scopes_supported: ["registry:read", "registry:review", "registry:admin"],
      bearer_methods_supported: ["header"],
      resource_name: "Agent Registry",
    });
  });
});

describe("with a credential that reads", () => {
  test.each([
    ["an API key", () => key],
    ["an agent token", () => agent.accessToken],
    ["a reviewer token", () => admin],
  ])("%s reads every surface", async (_what, token) => {
    for (const [what, read] of READS) {
      const answer = await ask(read, token());
      expect([what, answer.status]).toEqual([what, read.readerStatus ?? 200]);
    }
  });

  test("what it may not see is a 404, never a 403", async () => {
    const hidden = await intake({ visibility: "PRIVATE" });
    const answer = await call("GET", `/api/v1/providers/${hidden.providerCode}`, { app: closed, token: key });
    expectProblem(answer, 404, "NOT_FOUND");
  });

  test("an API key may submit an intake", async () => {
    const made = await call("POST", "/api/v1/providers", {
      app: closed,
      token: key,
      body: intakeBody(),
    });
    expect(made.status).toBe(201);
  });

  test("a bad credential is still a 401, with the same header", async () => {
    const answer = await call("GET", "/api/v1/providers", {
      app: closed,
      token: `${key.slice(0, -1)}${key.endsWith("x") ? "y" : "x"}`,
    });
    expectProblem(answer, 401, "UNAUTHENTICATED");
    expect(answer.headers.get("www-authenticate")).toContain(`resource_metadata="${METADATA}"`);
  });
});

test("public, the default: an anonymous read is answered as before, and a 401 names the metadata too", async () => {
  expect((await call("GET", `/api/v1/providers/${agent.providerCode}`)).status).toBe(200);
  const refused = await call("GET", "/api/v1/providers", { token: "agr_nonsense" });
  expect(refused.headers.get("www-authenticate")).toBe(
    'Bearer realm="agent-registry", resource_metadata="http://registry.test/.well-known/oauth-protected-resource"',
  );
});

describe("the WebSocket door", () => {
  async function socketUrl(): Promise<string> {
    const listening = await listen(closed);
    const door = attachWebSocket(listening.server, closed, loadConfig({ ...process.env, NODE_ENV: "test", ...env }));
    closeAfterAll(async () => {
      await door.close();
      await listening.close();
    });
    return `${listening.url.replace(/^http/, "ws")}/graphql`;
  }

  /** Connects once, never retrying: answers how the connection ended, or "connected". */
  function attempt(url: string, connectionParams?: Record<string, unknown>): Promise<string | number> {
    const client = createClient({
      url,
      webSocketImpl: WebSocket,
      lazy: false,
      retryAttempts: 0,
      onNonLazyError: () => {},
      ...(connectionParams ? { connectionParams } : {}),
    });
    closeAfterAll(() => client.dispose());
    return new Promise((resolve) => {
      client.on("connected", () => resolve("connected"));
      client.on("closed", (event) => resolve((event as { code: number }).code));
    });
  }

  test("without a credential the connection is refused (4403); with a key it is made", async () => {
    const url = await socketUrl();
    expect(await attempt(url)).toBe(4403);
    expect(await attempt(url, { authorization: `Bearer ${key}` })).toBe("connected");
  });
});

test("GraphQL answers the same 401 as REST", async () => {
  const answer = await gql("{ __typename }", {}, { app: closed });
  expect(answer.status).toBe(401);
  expect(answer.body.errors[0].extensions.code).toBe("UNAUTHENTICATED");
});
