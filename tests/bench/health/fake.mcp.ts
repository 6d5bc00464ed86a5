/**
 * The health benchmark's fake MCP peer, run as a process of its own (its CPU is not the service's):
 * one node:http server on loopback answering Streamable HTTP, stateless, at `/mcp` for every Host,
 * so OUTBOUND_TEST_HOSTS=`*.fake.test=127.0.0.1:<port>` makes it thousands of agents.
 *
 *   node --import tsx tests/bench/health/fake.mcp.ts [raw|sdk]
 *
 * `raw` (the default): a hand-written JSON-RPC responder giving the answers the SDK's server gives
 * (initialize, notifications, tools/list), as plain JSON. `sdk`: the MCP SDK's McpServer and
 * StreamableHTTPServerTransport, a server and a transport per POST as the SDK's stateless example
 * (and tests/health/peers.ts) does; it costs several times the CPU per check, which on a shared core
 * lengthens the checks the benchmark measures. GET and DELETE answer 405, as a stateless server
 * must. GET /__stats (any Host) answers what it has seen. It prints its port on stdout.
 */
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { StreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/streamableHttp.js";
import { LATEST_PROTOCOL_VERSION, SUPPORTED_PROTOCOL_VERSIONS } from "@modelcontextprotocol/sdk/types.js";
import { z } from "zod";

const mode = process.argv[2] === "sdk" ? "sdk" : "raw";

const stats = {
  mode,
  requests: 0,
  connections: 0,
  posts: 0,
  gets: 0,
  deletes: 0,
  initialize: 0,
  toolsList: 0,
  notifications: 0,
  errors: 0,
  hosts: new Set<string>(),
};

/** Tools `search` and `add`: the seeded profiles declare the same names, so no check finds drift. */
function sdkServer(): McpServer {
  const server = new McpServer({ name: "fake-agent", version: "1.0.0" });
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

/** The tools as the SDK lists them (zod's JSON Schema), so both modes answer alike. */
const RAW_TOOLS = [
  {
    name: "search",
    description: "Searches the catalogue",
    inputSchema: {
      type: "object",
      properties: {
        query: { type: "string", description: "What to look for" },
        limit: { type: "integer", exclusiveMinimum: 0, maximum: 9007199254740991 },
      },
      required: ["query"],
      $schema: "http://json-schema.org/draft-07/schema#",
    },
    execution: { taskSupport: "forbidden" },
  },
  {
    name: "add",
    description: "Adds two numbers",
    inputSchema: {
      type: "object",
      properties: { a: { type: "number" }, b: { type: "number" } },
      required: ["a", "b"],
      $schema: "http://json-schema.org/draft-07/schema#",
    },
    execution: { taskSupport: "forbidden" },
  },
];

function json(res: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}): void {
  res.writeHead(status, { "content-type": "application/json", ...headers });
  res.end(JSON.stringify(body));
}

function readBody(req: IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () => resolve(Buffer.concat(chunks).toString("utf8")));
    req.on("error", reject);
  });
}

/** Counts the JSON-RPC methods of a POST body. */
function count(body: unknown): void {
  for (const m of Array.isArray(body) ? body : [body]) {
    const method = (m as { method?: unknown })?.method;
    if (method === "initialize") stats.initialize++;
    else if (method === "tools/list") stats.toolsList++;
    else if (typeof method === "string" && method.startsWith("notifications/")) stats.notifications++;
  }
}

/** One JSON-RPC message answered by hand: what the SDK's server answers to the prober's three messages. */
function rawAnswer(res: ServerResponse, message: { id?: unknown; method?: unknown; params?: any }): void {
  if (message.id === undefined) {
    res.writeHead(202).end();
    return;
  }
  const { id } = message;
  if (message.method === "initialize") {
    const asked = message.params?.protocolVersion;
    const protocolVersion = SUPPORTED_PROTOCOL_VERSIONS.includes(asked) ? asked : LATEST_PROTOCOL_VERSION;
    json(res, 200, {
      jsonrpc: "2.0",
      id,
      result: {
        protocolVersion,
        capabilities: { tools: { listChanged: true } },
        serverInfo: { name: "fake-agent", version: "1.0.0" },
      },
    });
  } else if (message.method === "tools/list") {
    json(res, 200, { jsonrpc: "2.0", id, result: { tools: RAW_TOOLS } });
  } else {
    json(res, 200, { jsonrpc: "2.0", id, error: { code: -32601, message: "Method not found" } });
  }
}

async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
  stats.requests++;
  const path = new URL(req.url ?? "/", "http://fake").pathname;
  if (req.method === "GET" && path === "/__stats") {
    json(res, 200, { ...stats, hosts: stats.hosts.size });
    return;
  }
  stats.hosts.add(String(req.headers.host));
  if (path !== "/mcp")
    return json(res, 404, { jsonrpc: "2.0", error: { code: -32000, message: "Not found" }, id: null });
  if (req.method !== "POST") {
    if (req.method === "GET") stats.gets++;
    if (req.method === "DELETE") stats.deletes++;
    req.resume();
    return json(
      res,
      405,
      { jsonrpc: "2.0", error: { code: -32000, message: "Method not allowed." }, id: null },
      {
        allow: "POST",
      },
    );
  }
  stats.posts++;
  const body = JSON.parse(await readBody(req)) as unknown;
  count(body);
  if (mode === "raw") return rawAnswer(res, body as Parameters<typeof rawAnswer>[1]);
  const server = sdkServer();
  const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined });
  res.on("close", () => {
    void transport.close();
    void server.close();
  });
  await server.connect(transport);
  await transport.handleRequest(req, res, body);
}

const server = createServer((req, res) => {
  handle(req, res).catch(() => {
    stats.errors++;
    if (!res.headersSent) res.writeHead(500).end();
    else res.destroy();
  });
});
server.on("connection", () => {
  stats.connections++;
});
server.keepAliveTimeout = 5000;
server.listen(0, "127.0.0.1", () => {
  process.stdout.write(`${JSON.stringify({ port: (server.address() as AddressInfo).port, mode })}\n`);
});
process.on("SIGTERM", () => server.close(() => process.exit(0)));
