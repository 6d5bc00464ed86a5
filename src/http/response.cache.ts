/**
 * The response cache: anonymous answers of public reads, kept in this process's memory
 * until the next write.
 *
 * What is kept: the 200 answer of an operation that reads public resources only — the root fields
 * `providers`, `provider`, `providerVersions`, `providerVersion` — asked by a request WITHOUT an
 * `Authorization` header: a REST `GET /api/v1/providers…` (SOFA), or a GraphQL query (POST or GET
 * /graphql). Such an answer holds nothing private (contact, tokens and reviewer notes are null for
 * anonymous callers, API.md §2), so it can be given to any other anonymous caller; a request with
 * credentials, of any kind, never reads from or writes to the cache. The key is the method, the full
 * URL (host included), the `Accept` and `Origin` headers (the answer's type and CORS headers depend on
 * them) and, for a POST, the SHA-256 of the body (the GraphQL document and variables): computed
 * natively, it costs about half of building and hashing a key that holds the body itself, keeps
 * every key short, and names a body as surely as automatic persisted queries name a document by it.
 *
 * Why one generation for everything, not a key per provider: a write changes more than its own
 * profile — an approval or suspension changes every list and search the provider appears in, an
 * intake can turn a cached 404 into a profile — and which cached lists hold a provider is not known
 * without re-running them. A registry is read far more than written, so "every write empties the
 * cache" costs little and is simple enough to be obviously right.
 *
 * Correctness:
 * - Every mutation that executes (GraphQL or REST, successful or not) bumps the generation after it
 *   ran (its transaction has committed) and before it is answered; the bump empties the cache.
 * - A read notes the generation when it arrives and stores its answer only if no bump happened
 *   since: an answer computed from data a concurrent write was changing is never stored.
 * - Replicas (REDIS_URL): the generation is a counter in Redis. A write increments it before it is
 *   answered; a cacheable read asks for it before answering from memory (one GET shared by all the
 *   reads that arrived in the same turn of the event loop, issued after they arrived), and a replica
 *   that finds it moved empties its cache. So a read that arrives anywhere after a write was
 *   acknowledged sees the new generation: no replica answers it from before the write. (A pub/sub
 *   broadcast was tried first: Redis may send the PUBLISH reply before the subscribers' messages, and
 *   on a loaded machine the test of two replicas caught a stale read in that gap.) The price is one
 *   Redis GET per cacheable read, shared under load; without Redis there is none. While Redis cannot
 *   be reached a replica neither reads nor fills its cache — it fails open to the database, never to
 *   stale data. Entries also expire after `maxAgeMs` (60 s), a bound should something write to the
 *   database without going through a replica (a migration, a seed) or a replica write while Redis
 *   was unreachable from it alone.
 */
import { hash } from "node:crypto";
import type { IncomingMessage, ServerResponse } from "node:http";
import { getOperationAST } from "graphql";
import type { Plugin } from "graphql-yoga";
import { Redis } from "ioredis";
import { rootFields } from "../limits/limits.plugin.ts";

/** The root fields whose anonymous answers may be shared: public reads only. */
const CACHEABLE_FIELDS = new Set(["providers", "provider", "providerVersions", "providerVersion"]);
/** Headers that belong to one answer, not to the resource. */
const UNSHARED_HEADERS = new Set(["x-request-id", "connection", "date", "content-length", "keep-alive", "x-cache"]);

export interface ResponseCacheOptions {
  enabled: boolean;
  redisUrl?: string;
  /** Prefix of the shared generation's key in Redis (replicas of one database share it). */
  keyPrefix?: string;
  /** The bodies kept, in bytes at most (the oldest stored go first); 32 MiB by default. */
  maxBytes?: number;
  /** Answers larger than this are not kept (256 KiB by default). */
  maxEntryBytes?: number;
  maxAgeMs?: number;
  log?: (line: Record<string, unknown>) => void;
}

interface Entry {
  status: number;
  headers: [string, string][];
  body: Buffer;
  /** The log line's `operation` (edge.plugin.ts) of the request that filled it. */
  operation: string | undefined;
  storedAt: number;
}

/** What the plugin keeps on a request's server context. */
interface CacheState {
  key?: string;
  /** The generation when the request arrived; null: the cache is bypassed (Redis unreachable). */
  generation?: number | null;
  /** The operation executed is a cacheable read. */
  cacheable?: boolean;
  /** A mutation executed: its bump (and publication) must be done before it is answered. */
  wrote?: Promise<void>;
}
const STATE = Symbol("responseCache");
type WithState = { [STATE]?: CacheState; logFields?: { operation?: string } };

export interface ResponseCache {
  readonly enabled: boolean;
  /** The Yoga plugin: lookups and stores on the fetch path, and the bump of every mutation. */
  plugin: Plugin;
  /**
   * Answers a node:http request from the cache when it can (the same rules as the plugin, without
   * building a fetch Request); calls `miss` when it cannot, at once or once the body has come.
   */
  serveNode(req: IncomingMessage, res: ServerResponse, edge: NodeEdge, miss: () => void): void;
  /** Empties this process's cache and tells the other replicas to empty theirs. */
  invalidate(): Promise<void>;
  /** How many answers are kept (tests). */
  readonly size: number;
  close(): Promise<void>;
}

/** What a node-level answer needs from the HTTP edge (edge.plugin.ts): the request id and the log line. */
export interface NodeEdge {
  requestId(incoming: string | null): string;
  logLine(fields: {
    requestId: string;
    method: string;
    path: string;
    operation?: string;
    status: number;
    ms: number;
  }): void;
}

/** A node:http request on its way through serveNode: what answering it needs. */
interface NodeRequest {
  req: IncomingMessage;
  res: ServerResponse;
  edge: NodeEdge;
  /** Without the query: the log line's. */
  path: string;
  started: number;
  /** Hands the request on to Yoga. */
  miss: () => void;
}

/** The largest GraphQL POST body read before Yoga to look it up (larger ones take the Yoga path). */
const MAX_NODE_BODY = 16 * 1024;

/**
 * Calls `then` with a request's body as soon as its declared `length` has arrived, or with what
 * came before the body ended or failed short: for a body that did not come with its headers.
 */
function readBody(req: IncomingMessage, length: number, then: (body: Buffer) => void): void {
  const chunks: Buffer[] = [];
  let received = 0;
  let called = false;
  const done = () => {
    if (called) return;
    called = true;
    then(chunks.length === 1 ? (chunks[0] as Buffer) : Buffer.concat(chunks));
  };
  req.on("data", (chunk: Buffer) => {
    chunks.push(chunk);
    received += chunk.byteLength;
    if (received >= length) done();
  });
  req.once("end", done);
  req.once("error", done);
}

/** Whether a path (without the query) may hold a cacheable answer. */
function cacheablePath(path: string): boolean {
  return path === "/graphql" || path === "/api/v1/providers" || path.startsWith("/api/v1/providers/");
}

function keyOf(method: string, host: string, path: string, accept: string, origin: string, body?: Buffer): string {
  const key = `${method} ${host}${path}\n${accept}\n${origin}`;
  return body === undefined ? key : `${key}\n${hash("sha256", body, "base64")}`;
}

export function createResponseCache(options: ResponseCacheOptions): ResponseCache {
  const maxBytes = options.maxBytes ?? 32 * 1024 * 1024;
  /** The bytes of the bodies kept (keys and headers are small beside them). */
  let bytes = 0;
  const maxEntryBytes = options.maxEntryBytes ?? 256 * 1024;
  const maxAgeMs = options.maxAgeMs ?? 60_000;
  const log = options.log ?? (() => {});
  const generationKey = `${options.keyPrefix ?? "agent-registry:cache"}:generation`;
  const entries = new Map<string, Entry>();
  let generation = 0;

  const emptyAll = () => {
    entries.clear();
    bytes = 0;
  };
  const bump = () => {
    generation += 1;
    emptyAll();
  };

  // ── Replicas ──────────────────────────────────────────────────────────────────────────────
  // With Redis the generation lives there: a write increments it before it is answered, and a
  // cacheable read asks for it (one GET, shared by the reads that arrived in the same turn of the
  // event loop) before it answers from memory — so a read that arrives after a write was answered,
  // on any replica, sees the new generation. Without Redis the local counter is the generation.
  let client: Redis | undefined;
  let lastWarning = 0;
  const warn = (msg: string, error: unknown) => {
    const now = Date.now();
    if (now - lastWarning < 30_000) return;
    lastWarning = now;
    log({ time: new Date().toISOString(), level: "warn", msg, error: (error as Error)?.message ?? String(error) });
  };
  if (options.enabled && options.redisUrl) {
    client = new Redis(options.redisUrl, {
      connectTimeout: 1000,
      // A command while disconnected fails at once: the read goes to the database instead.
      enableOfflineQueue: false,
      maxRetriesPerRequest: 1,
      retryStrategy: (times: number) => Math.min(times * 250, 5000),
      disconnectTimeout: 200,
    });
    client.on("error", (error) => warn("redis unavailable: the response cache is bypassed until it returns", error));
  }

  /** The shared generation (null when Redis cannot be asked): one GET for every read of this turn. */
  let asking: Promise<number | null> | undefined;
  const sharedGeneration = (redis: Redis): Promise<number | null> => {
    asking ??= new Promise((resolve) =>
      setImmediate(() => {
        asking = undefined;
        redis.get(generationKey).then(
          (value) => resolve(Number(value ?? 0)),
          (error: unknown) => {
            warn("redis unavailable: the response cache is bypassed until it returns", error);
            resolve(null);
          },
        );
      }),
    );
    return asking;
  };

  /** The current generation, after adopting the shared one (emptying the cache when it moved). */
  const current = (): number | null | Promise<number | null> => {
    if (!client) return generation;
    return sharedGeneration(client).then((shared) => {
      if (shared === null) return null;
      if (shared !== generation) {
        generation = shared;
        emptyAll();
      }
      return generation;
    });
  };

  const invalidate = async (): Promise<void> => {
    bump();
    if (!client) return;
    try {
      generation = await client.incr(generationKey);
      emptyAll();
    } catch (error) {
      // Every replica that cannot reach Redis bypasses its cache; one that still can would not know
      // of this write: entries expire after maxAgeMs whatever happens.
      warn("redis: cannot announce a write to the other replicas", error);
    }
  };

  async function close(): Promise<void> {
    if (!client) return;
    if (client.status === "ready") await client.quit().catch(() => client?.disconnect());
    else client.disconnect();
  }

  /** The entry for a key, if the request's generation is known and the entry is fresh. */
  const lookup = (key: string, since: number | null | undefined): Entry | undefined => {
    if (since === null || since === undefined || since !== generation) return undefined;
    const entry = entries.get(key);
    if (entry && Date.now() - entry.storedAt > maxAgeMs) {
      entries.delete(key);
      bytes -= entry.body.byteLength;
      return undefined;
    }
    return entry;
  };

  const store = (key: string, since: number | null | undefined, entry: Entry) => {
    if (since === null || since === undefined || since !== generation || entry.body.byteLength > maxEntryBytes) return;
    const previous = entries.get(key);
    if (previous) {
      entries.delete(key);
      bytes -= previous.body.byteLength;
    }
    while (bytes + entry.body.byteLength > maxBytes && entries.size > 0) {
      const [oldest, dropped] = entries.entries().next().value as [string, Entry];
      entries.delete(oldest);
      bytes -= dropped.body.byteLength;
    }
    entries.set(key, entry);
    bytes += entry.body.byteLength;
  };

  // ── The node path (serveNode) ─────────────────────────────────────────────────────────────
  // Its functions are made once and a request's state is one object: a hit makes no closure (the
  // service runs through tsx, whose keepNames wraps every closure made in a call with a
  // defineProperty of its name).

  /** Answers with the entry, if there is one; else the request goes on to Yoga. */
  const answer = (n: NodeRequest, entry: Entry | undefined) => {
    const { req, res, edge } = n;
    if (!entry || res.headersSent) return n.miss();
    const incoming = req.headers["x-request-id"];
    const requestId = edge.requestId(typeof incoming === "string" ? incoming : null);
    const headers: Record<string, string> = {};
    for (const [name, value] of entry.headers) headers[name] = value;
    headers["X-Request-Id"] = requestId;
    headers["X-Cache"] = "HIT";
    headers["Content-Length"] = String(entry.body.byteLength);
    res.writeHead(entry.status, headers);
    res.end(entry.body);
    edge.logLine({
      requestId,
      method: req.method ?? "GET",
      path: n.path,
      operation: entry.operation,
      status: entry.status,
      ms: performance.now() - n.started,
    });
  };

  const answerFrom = (n: NodeRequest, key: string) => {
    const since = current();
    if (since instanceof Promise) since.then((g) => answer(n, lookup(key, g)));
    else answer(n, lookup(key, since));
  };

  const nodeKey = (req: IncomingMessage, body?: Buffer) =>
    keyOf(
      req.method ?? "GET",
      req.headers.host ?? "",
      req.url ?? "/",
      req.headers.accept ?? "",
      (req.headers.origin as string | undefined) ?? "",
      body,
    );

  /** Looks a POST up by its body, which Yoga takes on a miss (whatwg-node takes a `req.body` already read). */
  const answerPost = (n: NodeRequest, length: number, body: Buffer) => {
    (n.req as IncomingMessage & { body?: Buffer }).body = body;
    if (body.byteLength !== length) return n.miss();
    answerFrom(n, nodeKey(n.req, body));
  };

  /** Takes a POST's body in one piece when it has come with its headers, else reads it as it comes. */
  const readPost = (n: NodeRequest, length: number) => {
    if (n.req.readableLength >= length) answerPost(n, length, n.req.read() as Buffer);
    else readBody(n.req, length, (body) => answerPost(n, length, body));
  };

  const plugin: Plugin = {
    async onDispose() {
      await close();
    },
    async onRequest({ request, url, serverContext, endResponse }) {
      // Every request gets its state (the context shares it): a mutation's bump is awaited on it.
      const state: CacheState = {};
      (serverContext as WithState)[STATE] = state;
      if (!options.enabled || request.headers.has("authorization") || !cacheablePath(url.pathname)) return;
      let body: Buffer | undefined;
      if (request.method === "POST") {
        if (url.pathname !== "/graphql") return;
        // The HTTP edge has read and capped the body already (edge.plugin.ts). Keyed by its bytes'
        // digest, as the node path keys it.
        body = Buffer.from(await request.clone().arrayBuffer());
      } else if (request.method !== "GET") return;
      state.key = keyOf(
        request.method,
        url.host,
        url.pathname + url.search,
        request.headers.get("accept") ?? "",
        request.headers.get("origin") ?? "",
        body,
      );
      state.generation = await current();
      const entry = lookup(state.key, state.generation);
      if (!entry) return;
      state.key = undefined; // answered from the cache: nothing to store
      const fields = (serverContext as WithState).logFields;
      if (fields) fields.operation = entry.operation;
      const headers = new Headers(entry.headers);
      headers.set("X-Cache", "HIT");
      endResponse(new Response(new Uint8Array(entry.body), { status: entry.status, headers }));
    },
    onExecute({ args }) {
      if (!options.enabled) return undefined;
      const context = args.contextValue as WithState;
      const operation = getOperationAST(args.document, args.operationName);
      if (operation?.operation === "mutation") {
        // Bumped once the mutation has run (its transaction committed), before it is answered.
        return {
          onExecuteDone() {
            const wrote = invalidate();
            const state = context[STATE];
            if (state) state.wrote = wrote;
          },
        };
      }
      const state = context[STATE];
      if (state?.key && operation?.operation === "query") {
        state.cacheable = rootFields(args.document, operation).every((f) => CACHEABLE_FIELDS.has(f));
      }
      return undefined;
    },
    async onResponse({ response, serverContext }) {
      const state = (serverContext as WithState)[STATE];
      if (!state) return;
      if (state.wrote) {
        await state.wrote;
        return;
      }
      if (!state.key) return;
      if (!state.cacheable || response.status !== 200 || response.headers.has("set-cookie")) {
        return;
      }
      const body = Buffer.from(await response.clone().arrayBuffer());
      // A GraphQL answer with errors (partial data) is not kept.
      if (body.includes('"errors":')) return;
      const headers: [string, string][] = [];
      response.headers.forEach((value, name) => {
        if (!UNSHARED_HEADERS.has(name.toLowerCase())) headers.push([name, value]);
      });
      store(state.key, state.generation ?? -1, {
        status: response.status,
        headers,
        body,
        operation: (serverContext as WithState).logFields?.operation,
        storedAt: Date.now(),
      });
    },
  };

  return {
    enabled: options.enabled,
    plugin,
    get size() {
      return entries.size;
    },
    invalidate,
    serveNode(req, res, edge, miss) {
      if (!options.enabled || req.headers.authorization !== undefined) return miss();
      const target = req.url ?? "/";
      const q = target.indexOf("?");
      const path = q === -1 ? target : target.slice(0, q);
      if (!cacheablePath(path)) return miss();
      const n: NodeRequest = { req, res, edge, path, started: performance.now(), miss };
      const chunked = req.headers["transfer-encoding"] !== undefined;
      const length = Number(req.headers["content-length"] ?? "0");
      if (req.method === "POST") {
        // A GraphQL query: its key holds the body's digest, the body read here (small ones only,
        // with a declared length); on a miss Yoga gets it as the request's body.
        if (path !== "/graphql" || chunked || !(length > 0 && length <= MAX_NODE_BODY)) return miss();
        // A small body comes in the packet of its headers: node:http has buffered it once the
        // parser returns, before the next tick, so a hit is answered in the same turn, as a GET is.
        process.nextTick(readPost, n, length);
        return;
      }
      if (req.method !== "GET" || chunked || length > 0) return miss();
      answerFrom(n, nodeKey(req));
    },
    close,
  };
}

/**
 * The app as node:http calls it (`app(req, res)`, src/main.ts), answering cache hits before the
 * request is handed to Yoga: a hit then costs a map look-up, not a fetch Request, plugins and a
 * Response. Everything else (`app.fetch`, `app.dispose`, …) is the app itself.
 */
export function withNodeCache<T extends (req: IncomingMessage, res: ServerResponse) => unknown>(
  app: T,
  cache: ResponseCache,
  edge: NodeEdge,
): T {
  if (!cache.enabled) return app;
  return new Proxy(app, {
    apply(target, thisArg, args: [IncomingMessage, ServerResponse]) {
      const [req, res] = args;
      cache.serveNode(req, res, edge, () => Reflect.apply(target, thisArg, args));
    },
  });
}
