/**
 * The response cache's node side: `app(req, res)` as node:http calls it (src/main.ts) answers a hit
 * before the request is handed to Yoga, with the same rules as the plugin (cache.plugin.ts), the
 * same request id and the same log line as any answer, and the edge's HTTP caching (conditional.ts:
 * a HEAD is answered from GET's entry without the body, a matching If-None-Match with a 304). A hit
 * then costs a map look-up, not a fetch Request, plugins and a Response. A GraphQL POST is looked up
 * by its body, read here when it is small and declares its length; on a miss Yoga gets that body as
 * the request's.
 *
 * Its functions are made once; a request's state is one object, and its hand-over to Yoga (`miss`).
 */
import type { IncomingMessage, ServerResponse } from "node:http";
import { hasSessionCookie } from "../../signin/signin.rules.ts";
import { codingFor, compressible, encodedEntry, varyOnEncoding } from "../compression.ts";
import { isApiResource, noneMatchNames, REPRESENTATION_HEADERS } from "../conditional.ts";
import type { ResponseCache } from "./cache.plugin.ts";
import type { Entry } from "./store.ts";
import { cacheablePath, keyOf } from "./store.ts";

/** What a node-side answer needs from the HTTP edge (edge.plugin.ts): the request id and the log line. */
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

/** A node:http request on its way through the front: what answering it needs. */
interface NodeRequest {
  cache: ResponseCache;
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
 * The app as node:http calls it (`app(req, res)`), answering cache hits before the request is handed
 * to Yoga. Everything else (`app.fetch`, `app.dispose`, …) is the app itself.
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
      serveNode(cache, req, res, edge, () => Reflect.apply(target, thisArg, args));
    },
  });
}

/** Answers a request from the cache when it can; calls `miss` when it cannot, at once or once the body has come. */
function serveNode(cache: ResponseCache, req: IncomingMessage, res: ServerResponse, edge: NodeEdge, miss: () => void) {
  if (req.headers.authorization !== undefined || hasSessionCookie(req.headers.cookie)) return miss();
  const target = req.url ?? "/";
  const q = target.indexOf("?");
  const path = q === -1 ? target : target.slice(0, q);
  if (!cacheablePath(path)) return miss();
  const n: NodeRequest = { cache, req, res, edge, path, started: performance.now(), miss };
  const chunked = req.headers["transfer-encoding"] !== undefined;
  const length = Number(req.headers["content-length"] ?? "0");
  if (req.method === "POST") {
    // A GraphQL query: its key holds the body's digest, the body read here (small ones only, with
    // a declared length); on a miss Yoga gets it as the request's body.
    if (path !== "/graphql" || chunked || !(length > 0 && length <= MAX_NODE_BODY)) return miss();
    // A small body comes in the packet of its headers: node:http has buffered it once the parser
    // returns, before the next tick, so a hit is answered in the same turn, as a GET is.
    process.nextTick(readPost, n, length);
    return;
  }
  if ((req.method !== "GET" && req.method !== "HEAD") || chunked || length > 0) return miss();
  answerFrom(n, nodeKey(req, "GET"));
}

/** Answers with the entry, if there is one; else the request goes on to Yoga. */
function answer(n: NodeRequest, entry: Entry | undefined) {
  const { req, res, edge } = n;
  if (!entry || res.headersSent) return n.miss();
  const incoming = req.headers["x-request-id"];
  const requestId = edge.requestId(typeof incoming === "string" ? incoming : null);
  // As the edge answers a read (conditional.ts): a 304 for the tag of an API read the request
  // names, its body left off for HEAD.
  const inm = req.method === "POST" ? undefined : req.headers["if-none-match"];
  const tag = inm !== undefined && isApiResource(n.path) ? storedTag(entry) : undefined;
  const status = tag !== undefined && noneMatchNames(inm, tag) ? 304 : entry.status;
  const headers: Record<string, string> = {};
  for (const [name, value] of entry.headers) {
    if (status !== 304 || !REPRESENTATION_HEADERS.has(name.toLowerCase())) headers[name] = value;
  }
  headers["X-Request-Id"] = requestId;
  headers["X-Cache"] = "HIT";
  let body = entry.body;
  if (compressible(contentTypeOf(entry))) {
    // Stored names are lower-case (a Headers' own), so this replaces the answer's Vary.
    headers.vary = varyOnEncoding(headers.vary ?? null);
    // A HEAD is answered with the headers of an uncompressed GET, as Yoga answers one.
    const coding = status === 304 || req.method === "HEAD" ? undefined : codingFor(req.headers["accept-encoding"]);
    if (coding) {
      body = encodedEntry(entry, coding);
      headers["content-encoding"] = coding;
    }
  }
  if (status !== 304) headers["Content-Length"] = String(body.byteLength);
  res.writeHead(status, headers);
  res.end(status === 304 || req.method === "HEAD" ? undefined : body);
  edge.logLine({
    requestId,
    method: req.method ?? "GET",
    path: n.path,
    operation: entry.operation,
    status,
    ms: performance.now() - n.started,
  });
}

/** The Content-Type an entry was stored with. */
function contentTypeOf(entry: Entry): string | undefined {
  return entry.headers.find(([name]) => name.toLowerCase() === "content-type")?.[1];
}

/** The ETag an entry was stored with. */
function storedTag(entry: Entry): string | undefined {
  return entry.headers.find(([name]) => name.toLowerCase() === "etag")?.[1];
}

function answerFrom(n: NodeRequest, key: string): void {
  const since = n.cache.current();
  if (since instanceof Promise) since.then((g) => answer(n, n.cache.lookup(key, g)));
  else answer(n, n.cache.lookup(key, since));
}

/** The key of a request: a HEAD is looked up as its GET. */
function nodeKey(req: IncomingMessage, method: "GET" | "POST", body?: Buffer): string {
  return keyOf(
    method,
    req.headers.host ?? "",
    req.url ?? "/",
    req.headers.accept ?? "",
    (req.headers.origin as string | undefined) ?? "",
    body,
  );
}

/** Takes a POST's body in one piece when it has come with its headers, else reads it as it comes. */
function readPost(n: NodeRequest, length: number): void {
  if (n.req.readableLength >= length) answerPost(n, length, n.req.read() as Buffer);
  else readBody(n.req, length, (body) => answerPost(n, length, body));
}

/** Looks a POST up by its body, which Yoga takes on a miss (whatwg-node takes a `req.body` already read). */
function answerPost(n: NodeRequest, length: number, body: Buffer) {
  (n.req as IncomingMessage & { body?: Buffer }).body = body;
  if (body.byteLength !== length) return n.miss();
  answerFrom(n, nodeKey(n.req, "POST", body));
}

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
