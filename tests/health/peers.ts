/**
 * Real peers on loopback for the health prober's tests: MCP servers built with the official SDK
 * (Streamable HTTP and the legacy HTTP+SSE transport, `@modelcontextprotocol/server-everything`
 * in-process), A2A agents built with `@a2a-js/sdk`, and plain HTTP hosts. Each peer has a host name
 * of its own: `testHosts` is the OUTBOUND_TEST_HOSTS value that sends those names to the peers'
 * ports, so the prober reaches them through the outbound door as it would reach the internet.
 *
 * This module opens no database (unlike tests/helpers.ts): a test file closes what `startPeers()`
 * opened with the `close()` it answers.
 */
import { randomUUID } from "node:crypto";
import { createServer, type IncomingMessage, type RequestListener, type ServerResponse } from "node:http";
import type { AddressInfo, Socket } from "node:net";
import {
  A2A_PROTOCOL_VERSION,
  AGENT_CARD_PATH,
  AgentCard,
  type AgentSkill,
  Role,
  type SecurityScheme,
} from "@a2a-js/sdk";
import { AgentEvent, type AgentExecutor, DefaultRequestHandler, InMemoryTaskStore } from "@a2a-js/sdk/server";
import { agentCardHandler, jsonRpcHandler, UserBuilder } from "@a2a-js/sdk/server/express";
import { InvalidTokenError } from "@modelcontextprotocol/sdk/server/auth/errors.js";
import { requireBearerAuth } from "@modelcontextprotocol/sdk/server/auth/middleware/bearerAuth.js";
import {
  getOAuthProtectedResourceMetadataUrl,
  mcpAuthMetadataRouter,
} from "@modelcontextprotocol/sdk/server/auth/router.js";
import { McpServer, type RegisteredTool } from "@modelcontextprotocol/sdk/server/mcp.js";
import { SSEServerTransport } from "@modelcontextprotocol/sdk/server/sse.js";
import { StreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/streamableHttp.js";
import { LATEST_PROTOCOL_VERSION } from "@modelcontextprotocol/sdk/types.js";
import dns2 from "dns2";
import express from "express";
import { z } from "zod";

/** What the 10 MB peer would send in all, were it read to the end. */
export const HUGE_BODY_BYTES = 10 * 1024 * 1024;

/** The tools of the open MCP peer (and of the SSE one), in registration order. */
export const OPEN_TOOLS = ["search", "add"] as const;

/** One peer: a node:http server on a loopback port of its own, reached by its host name. */
export interface Peer {
  /** The name the prober is given, e.g. `mcp-open.test`. */
  readonly host: string;
  /** This peer's OUTBOUND_TEST_HOSTS entry: `host=127.0.0.1:port`. */
  readonly testHost: string;
  readonly port: number;
  /** The endpoint to register, `https://<host><path>`: the outbound door sends it over plain http to this peer. */
  readonly url: string;
  /** The same endpoint on loopback, `http://127.0.0.1:<port><path>`, for talking to the peer directly. */
  readonly local: string;
  /** `https://<host><path>` for another path of this peer. */
  urlOf(path: string): string;
  /** `http://127.0.0.1:<port><path>` for another path of this peer. */
  localOf(path: string): string;
  /** HTTP requests received so far (every method and path). */
  requests(): number;
  /** Connections accepted so far. */
  connections(): number;
}

export interface ChangingPeer extends Peer {
  /**
   * Changes the tool list through the SDK's registration handles: the first call adds `limit` to
   * `lookup`'s input schema, every call registers a new tool `added_<n>`. Sessions already open
   * change too, and their clients are sent `notifications/tools/list_changed`.
   */
  changeTools(): void;
  /** The tool names a `tools/list` answers now. */
  tools(): string[];
  /** How many times `changeTools()` ran. */
  generation(): number;
  /** Standalone GET streams open now, on which list-changed notifications travel. */
  streams(): number;
}

export interface HangingPeer extends Peer {
  /** Requests held unanswered whose client has not hung up. */
  open(): number;
}

export interface HugePeer extends Peer {
  /**
   * Bytes of body handed to the socket so far, over every answer. The kernel's socket buffers take
   * a few MB on loopback before a stalled reader pushes back, so compare with HUGE_BODY_BYTES, not with a client's cap.
   */
  written(): number;
  /** Resolves once every answer under way has ended: sent whole, or cut off by the client. */
  settled(): Promise<void>;
  /** Answers sent whole (a client that read all of HUGE_BODY_BYTES). */
  completed(): number;
}

export interface A2aPeer extends Peer {
  /** `https://<host>/.well-known/agent-card.json` (for the legacy peer, `/.well-known/agent.json`). */
  readonly cardUrl: string;
  /** The card as the SDK holds it now (its ts-proto shape). */
  card(): AgentCard;
}

export type SecurityChoice = "bearer" | "apiKey" | "none";

export interface DriftingPeer extends A2aPeer {
  /**
   * Changes the card the peer serves. Without arguments it adds a skill `extra-<n>` and swaps the
   * security scheme (bearer ⇄ API key), so every call gives a card unlike the one before.
   */
  drift(change?: { addSkill?: string; removeSkill?: string; security?: SecurityChoice }): void;
}

export interface Peers {
  /** Streamable HTTP, stateless, `/mcp`: tools `search` and `add`; GET /mcp answers 405. */
  mcpOpen: Peer;
  /** `/mcp` answers 401 with `WWW-Authenticate: Bearer … resource_metadata="…"` to every request. */
  mcpAuth: Peer & { readonly resourceMetadataUrl: string };
  /** Streamable HTTP, stateful, `/mcp`: a tool list `changeTools()` changes. */
  mcpChanging: ChangingPeer;
  /** Any request is held open and never answered. */
  mcpHang: HangingPeer;
  /** POST `/mcp` answers a valid initialize result padded to 10 MB, chunked, without Content-Length. */
  mcpHuge: HugePeer;
  /** The legacy HTTP+SSE transport: GET `/sse` opens the stream, POST `/messages?sessionId=…` carries messages. */
  mcpSse: Peer;
  /** `@modelcontextprotocol/server-everything` over Streamable HTTP (stateful), `/mcp`. */
  mcpEverything: Peer;
  /** An A2A agent: its card at `/.well-known/agent-card.json`, JSON-RPC at `/a2a/jsonrpc` (an echo). */
  a2a: A2aPeer;
  /** An A2A agent whose card `drift()` changes. */
  a2aDrift: DriftingPeer;
  /** An A2A agent serving its card only at the older `/.well-known/agent.json`. */
  a2aLegacy: A2aPeer;
  /** 200 `text/html` `<html>hello</html>` on every path and method: not MCP, not A2A. */
  html: Peer;
  /** `/health` answers 200 `{"status":"ok"}`, `/broken` 503, anything else 404. */
  health: Peer;
  /** OUTBOUND_TEST_HOSTS for every peer above. */
  testHosts: string;
  /** Closes every peer, ending held requests and open streams. */
  close(): Promise<void>;
}

/** A listening server: its port, its request and connection counts, and how to close it with its sockets. */
interface Served {
  port: number;
  requests(): number;
  connections(): number;
  close(): Promise<void>;
}

/**
 * `handler` on a free loopback port. An async handler that throws answers 500 (or cuts the answer
 * off when it had begun), so a bug in a peer shows as a failed probe rather than a hang.
 */
async function serve(handler: (req: IncomingMessage, res: ServerResponse) => unknown): Promise<Served> {
  let count = 0;
  const sockets = new Set<Socket>();
  const listener: RequestListener = (req, res) => {
    count++;
    Promise.resolve()
      .then(() => handler(req, res))
      .catch(() => {
        if (!res.headersSent) res.writeHead(500).end();
        else res.destroy();
      });
  };
  const server = createServer(listener);
  let connections = 0;
  server.on("connection", (socket) => {
    connections++;
    sockets.add(socket);
    socket.once("close", () => sockets.delete(socket));
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return {
    port: (server.address() as AddressInfo).port,
    requests: () => count,
    connections: () => connections,
    close: () =>
      new Promise<void>((resolve) => {
        for (const socket of sockets) socket.destroy();
        server.close(() => resolve());
      }),
  };
}

function peerOf(served: Served, host: string, path: string): Peer {
  const urlOf = (p: string) => `https://${host}${p}`;
  const localOf = (p: string) => `http://127.0.0.1:${served.port}${p}`;
  return {
    host,
    testHost: `${host}=127.0.0.1:${served.port}`,
    port: served.port,
    url: urlOf(path),
    local: localOf(path),
    urlOf,
    localOf,
    requests: served.requests,
    connections: served.connections,
  };
}

function pathOf(req: IncomingMessage): string {
  return new URL(req.url ?? "/", "http://peer").pathname;
}

function json(res: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}): void {
  res.writeHead(status, { "content-type": "application/json", ...headers });
  res.end(JSON.stringify(body));
}

/** A JSON-RPC error as the SDK's own examples answer transport-level refusals. */
function rpcError(res: ServerResponse, status: number, message: string, headers: Record<string, string> = {}): void {
  json(res, status, { jsonrpc: "2.0", error: { code: -32000, message }, id: null }, headers);
}

// ---------------------------------------------------------------------------------------------
// MCP

/** The open peer's server: two tools with input schemas. */
function openServer(name: string): McpServer {
  const server = new McpServer({ name, version: "1.0.0" });
  server.registerTool(
    "search",
    {
      description: "Searches the catalogue",
      inputSchema: { query: z.string().describe("What to look for"), limit: z.number().int().positive().optional() },
    },
    async ({ query }) => ({ content: [{ type: "text", text: `no results for ${query}` }] }),
  );
  server.registerTool(
    "add",
    { description: "Adds two numbers", inputSchema: { a: z.number(), b: z.number() } },
    async ({ a, b }) => ({ content: [{ type: "text", text: String(a + b) }] }),
  );
  return server;
}

/**
 * Stateless Streamable HTTP as the SDK's stateless example serves it: a server and a transport per
 * POST (a stateless transport cannot be reused), and 405 for GET and DELETE, which need a session.
 */
async function statelessMcp(req: IncomingMessage, res: ServerResponse, make: () => McpServer): Promise<void> {
  if (pathOf(req) !== "/mcp") return rpcError(res, 404, "Not found");
  if (req.method !== "POST") return rpcError(res, 405, "Method not allowed.", { allow: "POST" });
  const server = make();
  const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined });
  res.on("close", () => {
    void transport.close();
    void server.close();
  });
  await server.connect(transport);
  await transport.handleRequest(req, res);
}

/**
 * Stateful Streamable HTTP: a server and a transport per session, found again by `Mcp-Session-Id`.
 * Counts the standalone GET streams whose answer has begun (the transport registers a stream
 * before it answers), so a test can wait for the stream notifications travel on.
 */
function statefulMcp(make: () => { server: McpServer; cleanup?: (sessionId: string) => void }) {
  const sessions = new Map<string, StreamableHTTPServerTransport>();
  const made = new Set<{ server: McpServer; transport: StreamableHTTPServerTransport }>();
  const gets = new Set<ServerResponse>();

  async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    if (pathOf(req) !== "/mcp") return rpcError(res, 404, "Not found");
    const sessionId = req.headers["mcp-session-id"];
    if (typeof sessionId === "string") {
      const transport = sessions.get(sessionId);
      if (!transport) return rpcError(res, 404, "Session not found");
      if (req.method === "GET") {
        gets.add(res);
        res.once("close", () => gets.delete(res));
      }
      return transport.handleRequest(req, res);
    }
    if (req.method !== "POST") return rpcError(res, 400, "Bad Request: No valid session ID provided");
    const { server, cleanup } = make();
    const transport: StreamableHTTPServerTransport = new StreamableHTTPServerTransport({
      sessionIdGenerator: () => randomUUID(),
      onsessioninitialized: (id) => {
        sessions.set(id, transport);
      },
    });
    const entry = { server, transport };
    made.add(entry);
    server.server.onclose = () => {
      const id = transport.sessionId;
      made.delete(entry);
      if (id) {
        sessions.delete(id);
        cleanup?.(id);
      }
    };
    await server.connect(transport);
    await transport.handleRequest(req, res);
  }

  return {
    handle,
    servers: () => [...made].map((m) => m.server),
    streams: () => [...gets].filter((res) => res.headersSent && res.statusCode === 200).length,
    close: async () => {
      await Promise.allSettled([...made].map((m) => m.transport.close()));
    },
  };
}

/** The changing peer: one McpServer per session, each kept in step with the peer's generation. */
async function startChanging(): Promise<{ peer: ChangingPeer; close(): Promise<void> }> {
  let generation = 0;
  const handles = new Map<McpServer, { lookup: RegisteredTool }>();
  const lookupShape = (withLimit: boolean) => ({
    query: z.string(),
    ...(withLimit ? { limit: z.number().int().positive() } : {}),
  });
  const addTool = (server: McpServer, n: number) =>
    server.registerTool(
      `added_${n}`,
      { description: `A tool added by change ${n}`, inputSchema: { input: z.string() } },
      async ({ input }) => ({ content: [{ type: "text", text: input }] }),
    );

  const sessions = statefulMcp(() => {
    const server = new McpServer({ name: "peer-changing", version: "1.0.0" });
    const lookup = server.registerTool(
      "lookup",
      { description: "Looks a word up", inputSchema: lookupShape(generation >= 1) },
      async ({ query }) => ({ content: [{ type: "text", text: query }] }),
    );
    server.registerTool("count", { description: "Counts the entries" }, async () => ({
      content: [{ type: "text", text: "0" }],
    }));
    for (let n = 1; n <= generation; n++) addTool(server, n);
    handles.set(server, { lookup });
    return { server, cleanup: () => handles.delete(server) };
  });
  const served = await serve(sessions.handle);

  const changeTools = () => {
    generation++;
    // Registering and updating through the handles is what makes the SDK send list_changed.
    for (const server of sessions.servers()) {
      if (generation === 1) handles.get(server)?.lookup.update({ paramsSchema: lookupShape(true) });
      addTool(server, generation);
    }
  };
  const tools = () => ["lookup", "count", ...Array.from({ length: generation }, (_, i) => `added_${i + 1}`)];
  return {
    peer: {
      ...peerOf(served, "mcp-changing.test", "/mcp"),
      changeTools,
      tools,
      generation: () => generation,
      streams: sessions.streams,
    },
    close: async () => {
      await sessions.close();
      await served.close();
    },
  };
}

/**
 * `@modelcontextprotocol/server-everything`'s own server factory, served the way its Streamable
 * HTTP entry point serves it, but in this process and on node:http. The package ships no types
 * and no `exports`, so its factory is imported by file with the shape it documents.
 */
async function startEverything(): Promise<{ peer: Peer; close(): Promise<void> }> {
  const file = "@modelcontextprotocol/server-everything/dist/server/index.js";
  const { createServer: createEverything } = (await import(file)) as {
    createServer: () => { server: McpServer; cleanup: (sessionId?: string) => void };
  };
  const sessions = statefulMcp(() => createEverything());
  const served = await serve(sessions.handle);
  return {
    peer: peerOf(served, "mcp-everything.test", "/mcp"),
    close: async () => {
      await sessions.close();
      await served.close();
    },
  };
}

/** The legacy HTTP+SSE transport: a server per GET /sse stream, its messages POSTed by session id. */
async function startSse(): Promise<{ peer: Peer; close(): Promise<void> }> {
  const transports = new Map<string, SSEServerTransport>();
  const served = await serve(async (req, res) => {
    const path = pathOf(req);
    if (path === "/sse") {
      if (req.method !== "GET") return rpcError(res, 405, "Method not allowed.", { allow: "GET" });
      const transport = new SSEServerTransport("/messages", res);
      transports.set(transport.sessionId, transport);
      res.once("close", () => transports.delete(transport.sessionId));
      // connect() starts the transport, which answers the GET and sends the `endpoint` event.
      await openServer("peer-sse").connect(transport);
      return;
    }
    if (path === "/messages" && req.method === "POST") {
      const sessionId = new URL(req.url ?? "/", "http://peer").searchParams.get("sessionId") ?? "";
      const transport = transports.get(sessionId);
      if (!transport) return rpcError(res, 404, "Session not found");
      return transport.handlePostMessage(req, res);
    }
    return rpcError(res, 404, "Not found");
  });
  return {
    peer: peerOf(served, "mcp-sse.test", "/sse"),
    close: async () => {
      await Promise.allSettled([...transports.values()].map((t) => t.close()));
      await served.close();
    },
  };
}

/**
 * An OAuth-protected MCP server without a token: the SDK's own bearer middleware answers every
 * request to /mcp with 401 and the resource metadata's address, which the SDK's router serves.
 */
async function startAuth(): Promise<{ peer: Peer & { resourceMetadataUrl: string }; close(): Promise<void> }> {
  const host = "mcp-auth.test";
  const resource = new URL(`https://${host}/mcp`);
  const resourceMetadataUrl = getOAuthProtectedResourceMetadataUrl(resource);
  const app = express();
  app.use(
    mcpAuthMetadataRouter({
      oauthMetadata: {
        issuer: `https://auth.${host}`,
        authorization_endpoint: `https://auth.${host}/authorize`,
        token_endpoint: `https://auth.${host}/token`,
        response_types_supported: ["code"],
      },
      resourceServerUrl: resource,
    }),
  );
  const verifier = {
    verifyAccessToken: async (): Promise<never> => {
      throw new InvalidTokenError("Unknown token");
    },
  };
  app.all("/mcp", requireBearerAuth({ verifier, resourceMetadataUrl }), (_req, res) => {
    res.status(500).end();
  });
  const served = await serve(app);
  return { peer: { ...peerOf(served, host, "/mcp"), resourceMetadataUrl }, close: served.close };
}

/** Every request is held: the answer never begins, the socket stays open until the client or close() ends it. */
async function startHang(): Promise<{ peer: HangingPeer; close(): Promise<void> }> {
  const held = new Set<ServerResponse>();
  const served = await serve((req, res) => {
    held.add(res);
    res.once("close", () => held.delete(res));
    // Read the body, so the client sees its request sent and waits for an answer.
    req.resume();
  });
  return { peer: { ...peerOf(served, "mcp-hang.test", "/mcp"), open: () => held.size }, close: served.close };
}

/**
 * POST answers a valid initialize result whose padding makes the body 10 MB, streamed in 64 KB
 * chunks that wait for the client to drain them, with no Content-Length: only a reader that counts
 * what it reads can stop it. `written` counts what the socket accepted.
 */
async function startHuge(): Promise<{ peer: HugePeer; close(): Promise<void> }> {
  let written = 0;
  let completed = 0;
  const underway = new Set<Promise<void>>();
  const served = await serve(async (req, res) => {
    if (pathOf(req) !== "/mcp") return rpcError(res, 404, "Not found");
    if (req.method !== "POST") return rpcError(res, 405, "Method not allowed.", { allow: "POST" });
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    let id: unknown = null;
    try {
      id = (JSON.parse(Buffer.concat(chunks).toString("utf8")) as { id?: unknown }).id ?? null;
    } catch {}
    const result = {
      protocolVersion: LATEST_PROTOCOL_VERSION,
      capabilities: { tools: {} },
      serverInfo: { name: "peer-huge", version: "1.0.0" },
    };
    const head = Buffer.from(`${JSON.stringify({ jsonrpc: "2.0", id, result }).slice(0, -2)},"padding":"`);
    const tail = Buffer.from(`"}}`);
    const chunk = Buffer.alloc(64 * 1024, "x");
    res.writeHead(200, { "content-type": "application/json" });
    const done = new Promise<void>((resolve) => {
      let left = HUGE_BODY_BYTES - head.length - tail.length;
      const counted = (size: number) => (error?: Error | null) => {
        if (!error) written += size;
      };
      const pump = () => {
        while (left > 0 && !res.destroyed) {
          const piece = left >= chunk.length ? chunk : chunk.subarray(0, left);
          left -= piece.length;
          if (!res.write(piece, counted(piece.length))) return void res.once("drain", pump);
        }
        if (left === 0 && !res.destroyed) {
          res.end(tail, () => {
            written += tail.length;
            completed++;
          });
        }
      };
      res.once("close", () => resolve());
      res.write(head, counted(head.length));
      pump();
    });
    underway.add(done);
    void done.then(() => underway.delete(done));
  });
  return {
    peer: {
      ...peerOf(served, "mcp-huge.test", "/mcp"),
      written: () => written,
      completed: () => completed,
      settled: async () => {
        await Promise.all(underway);
      },
    },
    close: served.close,
  };
}

// ---------------------------------------------------------------------------------------------
// A2A

function skill(id: string, name: string, description: string, tags: string[]): AgentSkill {
  return { id, name, description, tags, examples: [], inputModes: [], outputModes: [], securityRequirements: [] };
}

const SECURITY: Record<Exclude<SecurityChoice, "none">, SecurityScheme> = {
  bearer: {
    scheme: {
      $case: "httpAuthSecurityScheme",
      value: { description: "A bearer token", scheme: "Bearer", bearerFormat: "JWT" },
    },
  },
  apiKey: {
    scheme: {
      $case: "apiKeySecurityScheme",
      value: { description: "An API key", location: "header", name: "X-API-Key" },
    },
  },
};

/** Sets a card's one security scheme (and the requirement naming it), or removes both. */
function secure(card: AgentCard, choice: SecurityChoice): void {
  card.securitySchemes = choice === "none" ? {} : { [choice]: SECURITY[choice] };
  card.securityRequirements = choice === "none" ? [] : [{ schemes: { [choice]: { list: [] } } }];
}

function agentCard(host: string, name: string, skills: AgentSkill[], security: SecurityChoice): AgentCard {
  const card: AgentCard = {
    name,
    description: `${name}, a test agent that echoes what it is sent`,
    supportedInterfaces: [
      {
        url: `https://${host}/a2a/jsonrpc`,
        protocolBinding: "JSONRPC",
        tenant: "",
        protocolVersion: A2A_PROTOCOL_VERSION,
      },
    ],
    provider: { organization: "Agent Registry tests", url: "https://example.com/tests" },
    version: "1.0.0",
    capabilities: { streaming: false, pushNotifications: false, extensions: [], extendedAgentCard: false },
    securitySchemes: {},
    securityRequirements: [],
    defaultInputModes: ["text/plain"],
    defaultOutputModes: ["text/plain"],
    skills,
    signatures: [],
  };
  secure(card, security);
  return card;
}

/** Answers each message with a message echoing its text. */
const echo: AgentExecutor = {
  execute: async (context, bus) => {
    const text = context.userMessage.parts
      .map((part) => (part.content?.$case === "text" ? part.content.value : ""))
      .join("");
    bus.publish(
      AgentEvent.message({
        messageId: randomUUID(),
        contextId: context.contextId,
        taskId: "",
        role: Role.ROLE_AGENT,
        parts: [
          { content: { $case: "text", value: `echo: ${text}` }, metadata: undefined, filename: "", mediaType: "" },
        ],
        metadata: undefined,
        extensions: [],
        referenceTaskIds: [],
      }),
    );
    bus.finished();
  },
  cancelTask: async () => {},
};

/**
 * An agent served with the SDK's express pieces. The card goes out as `AgentCard.toJSON` gives it
 * (the A2A v1.0 JSON, security schemes keyed by their kind): handed the SDK's in-memory card,
 * `agentCardHandler` would send its ts-proto `{"scheme":{"$case":…}}` form, from which the SDK's
 * own resolver reads empty security schemes.
 */
async function startA2a(
  host: string,
  card: AgentCard,
  cardPath: string,
): Promise<{ peer: A2aPeer; close(): Promise<void> }> {
  const requestHandler = new DefaultRequestHandler(card, new InMemoryTaskStore(), echo);
  const app = express();
  app.use(
    cardPath,
    agentCardHandler({
      agentCardProvider: async () => AgentCard.toJSON(await requestHandler.getAgentCard()) as AgentCard,
      cache: { maxAge: 0 },
    }),
  );
  app.use("/a2a/jsonrpc", jsonRpcHandler({ requestHandler, userBuilder: UserBuilder.noAuthentication }));
  const served = await serve(app);
  const base = peerOf(served, host, "/a2a/jsonrpc");
  return { peer: { ...base, cardUrl: base.urlOf(cardPath), card: () => card }, close: served.close };
}

async function startDrifting(): Promise<{ peer: DriftingPeer; close(): Promise<void> }> {
  const host = "a2a-drift.test";
  const card = agentCard(
    host,
    "Drifting agent",
    [skill("echo", "Echo", "Echoes the message", ["echo"]), skill("shout", "Shout", "Echoes it louder", ["echo"])],
    "bearer",
  );
  const { peer, close } = await startA2a(host, card, `/${AGENT_CARD_PATH}`);
  let drifts = 0;
  let security: SecurityChoice = "bearer";
  // The request handler holds this very card object, so changing it in place changes what is served.
  const drift: DriftingPeer["drift"] = (change) => {
    drifts++;
    const { addSkill, removeSkill } = change ?? { addSkill: `extra-${drifts}` };
    if (addSkill) card.skills.push(skill(addSkill, addSkill, `A skill added by drift ${drifts}`, ["drift"]));
    if (removeSkill) card.skills = card.skills.filter((s) => s.id !== removeSkill);
    security = change ? (change.security ?? security) : security === "bearer" ? "apiKey" : "bearer";
    secure(card, security);
  };
  return { peer: { ...peer, drift }, close };
}

// ---------------------------------------------------------------------------------------------
// Plain HTTP

async function startHtml(): Promise<{ peer: Peer; close(): Promise<void> }> {
  const served = await serve((req, res) => {
    req.resume();
    res.writeHead(200, { "content-type": "text/html; charset=utf-8" });
    res.end("<html>hello</html>");
  });
  return { peer: peerOf(served, "html.test", "/mcp"), close: served.close };
}

async function startHealth(): Promise<{ peer: Peer; close(): Promise<void> }> {
  const served = await serve((req, res) => {
    req.resume();
    const path = pathOf(req);
    if (path === "/health") return json(res, 200, { status: "ok" });
    if (path === "/broken") return json(res, 503, { status: "down" });
    json(res, 404, { error: "not found" });
  });
  return { peer: peerOf(served, "health.test", "/health"), close: served.close };
}

// ---------------------------------------------------------------------------------------------

/** Starts every peer on loopback; `close()` ends them all (a peer that failed to start closes the rest). */
export async function startPeers(): Promise<Peers> {
  const starting = {
    mcpOpen: serve((req, res) => statelessMcp(req, res, () => openServer("peer-open"))).then((served) => ({
      peer: peerOf(served, "mcp-open.test", "/mcp"),
      close: served.close,
    })),
    mcpAuth: startAuth(),
    mcpChanging: startChanging(),
    mcpHang: startHang(),
    mcpHuge: startHuge(),
    mcpSse: startSse(),
    mcpEverything: startEverything(),
    a2a: startA2a(
      "a2a.test",
      agentCard(
        "a2a.test",
        "Echo agent",
        [skill("echo", "Echo", "Echoes the message", ["echo"]), skill("reverse", "Reverse", "Reverses it", ["text"])],
        "none",
      ),
      `/${AGENT_CARD_PATH}`,
    ),
    a2aDrift: startDrifting(),
    a2aLegacy: startA2a(
      "a2a-legacy.test",
      agentCard("a2a-legacy.test", "Legacy agent", [skill("echo", "Echo", "Echoes the message", ["echo"])], "none"),
      "/.well-known/agent.json",
    ),
    html: startHtml(),
    health: startHealth(),
  };
  const names = Object.keys(starting) as (keyof typeof starting)[];
  const settled = await Promise.allSettled(names.map((name) => starting[name]));
  const closers = settled.flatMap((s) => (s.status === "fulfilled" ? [s.value.close] : []));
  const close = async () => {
    await Promise.allSettled(closers.map((c) => c()));
  };
  const failed = settled.find((s) => s.status === "rejected");
  if (failed) {
    await close();
    throw failed.reason;
  }
  const started = Object.fromEntries(
    names.map((name, i) => [name, (settled[i] as PromiseFulfilledResult<{ peer: Peer }>).value.peer]),
  ) as Omit<Peers, "testHosts" | "close">;
  let closed: Promise<void> | undefined;
  return {
    ...started,
    testHosts: Object.values(started)
      .map((p: Peer) => p.testHost)
      .join(","),
    close: () => {
      closed ??= close();
      return closed;
    },
  };
}

// ---------------------------------------------------------------------------------------------
// DNS

export interface TestDns {
  /** OUTBOUND_TEST_DNS: `127.0.0.1:<port>`. */
  readonly address: string;
  /** Every question asked so far, as `TYPE name` (e.g. `A private.test`). */
  readonly asked: string[];
  close(): Promise<void>;
}

/**
 * A DNS server on loopback (UDP) answering `zone`: name → addresses, IPv4 ones as A records and IPv6
 * ones as AAAA. A name not in the zone is NXDOMAIN; a name asked for the other family gets no answer.
 */
export async function startDns(zone: Record<string, string[]>): Promise<TestDns> {
  const { Packet } = dns2;
  const asked: string[] = [];
  const records = new Map(Object.entries(zone).map(([name, addresses]) => [name.toLowerCase(), addresses]));
  const server = dns2.createServer({
    udp: true,
    handle: (request, send) => {
      const response = Packet.createResponseFromRequest(request);
      const question = request.questions[0];
      if (!question) return void send(response);
      const name = question.name.toLowerCase();
      const type = Packet.TYPE_NAME[question.type] ?? String(question.type);
      asked.push(`${type} ${name}`);
      const addresses = records.get(name);
      if (!addresses) {
        response.header.rcode = Packet.RCODE.NXDOMAIN;
        return void send(response);
      }
      const base = { name: question.name, class: Packet.CLASS.IN, ttl: 60 };
      for (const address of addresses) {
        const v6 = address.includes(":");
        if ((type === "A" && !v6) || (type === "AAAA" && v6)) {
          response.answers.push({
            ...base,
            type: v6 ? Packet.TYPE.AAAA : Packet.TYPE.A,
            address,
          } as dns2.Packet.Resource);
        }
      }
      void send(response);
    },
  });
  const listening = await server.listen({ udp: { port: 0, address: "127.0.0.1" } });
  return {
    address: `127.0.0.1:${listening.udp?.port}`,
    asked,
    close: async () => {
      await server.close();
    },
  };
}
