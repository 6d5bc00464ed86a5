/**
 * HTTP caching of reads (API.md §4, "HTTP conventions"), in one place: the edge (edge.plugin.ts)
 * hands every GET and HEAD answer to `answerRead`, and the response cache's node side answers its
 * hits with the same functions (cache/node.front.ts).
 *
 * - HEAD runs the GET route (the REST guard matches it as GET, the response cache looks up GET's
 *   entry) and is answered with GET's status and headers, Content-Length included, without the body.
 * - A successful read of an API resource gets a strong ETag made from its bytes. The profile
 *   resolver's `"<version>"` is not a validator of what a GET answers: a suspension, a review
 *   decision or a trust tier changes the profile without a new version, and the owner is shown more
 *   than an anonymous caller. So the version leads the tag instead (`"3-<hash>"`), which lets
 *   `If-Match` take the tag a GET gave as it takes `"3"` (if-match.ts); write answers keep `"3"`.
 * - `If-None-Match` naming that tag is a 304 with the answer's headers but no representation ones.
 * - Anonymous reads may be kept briefly by shared caches (`public, max-age`); a request with
 *   `Authorization` (or a person's session cookie) is `private, no-cache`: no shared cache stores it, and the caller's own cache
 *   asks again each time (a 304 is cheap). `Vary: Authorization` keeps the two apart. Errors and
 *   streams are `no-store`; an answer that set its own Cache-Control (health: `no-store`) keeps it.
 */
import { hash } from "node:crypto";
import { hasSessionCookie } from "../signin/signin.rules.ts";

/** Whether a path names an API resource: what is validated and given a caching policy here. */
export function isApiResource(path: string): boolean {
  return (
    path.startsWith("/api/v1") ||
    path.startsWith("/v0.1/") ||
    path.startsWith("/openapi.") ||
    path.startsWith("/.well-known/")
  );
}

/** A strong entity tag of a representation's bytes (SHA-256, 96 bits of it, base64url). */
export function etagOf(bytes: Uint8Array): string {
  return `"${hash("sha256", bytes, "base64url").slice(0, 16)}"`;
}

/** One member of an `If-None-Match` list: optional white space, a tag (weak or not), then a comma or the end. */
const MEMBER = /[ \t]*(?:W\/)?("[\x21\x23-\x7e\x80-\xff]*")[ \t]*(?:,|$)/y;

/**
 * Whether `If-None-Match` names the current representation's `etag` (RFC 9110 §13.1.2): `*`, or a
 * list of tags compared weakly (`W/"x"` names `"x"`). A header that is not a well-formed list names
 * nothing, so the full answer is sent.
 */
export function noneMatchNames(header: string | null | undefined, etag: string): boolean {
  if (header === null || header === undefined) return false;
  if (header.trim() === "*") return true;
  const opaque = etag.startsWith("W/") ? etag.slice(2) : etag;
  MEMBER.lastIndex = 0;
  while (MEMBER.lastIndex < header.length) {
    const tag = MEMBER.exec(header);
    if (!tag) return false;
    if (tag[1] === opaque) return true;
  }
  return false;
}

/** Metadata of the body itself, left off a 304 (RFC 9110 §15.4.5); the rest of the headers are kept. Lower case. */
export const REPRESENTATION_HEADERS: ReadonlySet<string> = new Set([
  "content-type",
  "content-length",
  "content-encoding",
  "content-language",
]);

/** The Cache-Control of a successful read, by whether the request carried credentials. */
export function readCacheControl(authorized: boolean, maxAge: number): string {
  return authorized ? "private, no-cache" : `public, max-age=${maxAge}`;
}

/** Adds `Authorization` to an answer's Vary, keeping what is there (CORS adds Origin). */
function varyOnAuthorization(headers: Headers): void {
  const vary = headers.get("vary");
  if (vary === null) headers.set("Vary", "Authorization");
  else if (!/(?:^|,)\s*(?:authorization|\*)\s*(?:,|$)/i.test(vary)) headers.set("Vary", `${vary}, Authorization`);
}

export interface ReadOptions {
  /** The request's path (without its query). */
  path: string;
  /** The answer's ETag, if any, is a resolver's (a version, for If-Match), not its bytes'. */
  resolverTag: boolean;
  /** `max-age` of anonymous reads, in seconds (Config.httpCacheMaxAge). */
  maxAge: number;
  Response: typeof Response;
}

/**
 * The answer to a GET or HEAD request: `response` (whose headers may be changed) with its ETag and
 * caching headers, a 304 when `If-None-Match` names it, and without a body for HEAD. A promise only
 * when its bytes must be read for an ETag.
 */
export function answerRead(request: Request, response: Response, options: ReadOptions): Response | Promise<Response> {
  const Res = options.Response;
  const head = request.method === "HEAD";
  if (!isApiResource(options.path)) return head ? withoutBody(response, Res) : response;
  const { headers } = response;
  varyOnAuthorization(headers);
  // An error is not kept; nor is a stream (server-sent events), which has no end to tag either.
  if (response.status < 200 || response.status >= 300 || headers.get("content-type")?.startsWith("text/event-stream")) {
    if (!headers.has("cache-control")) headers.set("Cache-Control", "no-store");
    return head ? withoutBody(response, Res) : response;
  }
  if (!headers.has("cache-control")) {
    // A person's session cookie (src/signin/) is a credential as Authorization is: never a public answer.
    const credentials = request.headers.has("authorization") || hasSessionCookie(request.headers.get("cookie"));
    headers.set("Cache-Control", readCacheControl(credentials, options.maxAge));
  }
  // A cache hit carries the tag made when it was stored; anything else is tagged from its bytes.
  if (!options.resolverTag && headers.has("etag")) return conditional(request, response, Res);
  return tagged(request, response, Res);
}

/**
 * Tags a successful answer from its bytes (counting them too), led by the version a resolver tagged
 * it with, then answers it conditionally.
 */
async function tagged(request: Request, response: Response, Res: typeof Response): Promise<Response> {
  const bytes = new Uint8Array(await response.clone().arrayBuffer());
  const version = /^"([0-9]+)"$/.exec(response.headers.get("etag") ?? "")?.[1];
  const tag = etagOf(bytes);
  response.headers.set("ETag", version === undefined ? tag : `"${version}-${tag.slice(1)}`);
  response.headers.set("Content-Length", String(bytes.byteLength));
  return conditional(request, response, Res);
}

/** A tagged successful answer: a 304 if the request names its tag; else as is (bodiless for HEAD). */
function conditional(request: Request, response: Response, Res: typeof Response): Response {
  const etag = response.headers.get("etag") as string;
  if (noneMatchNames(request.headers.get("if-none-match"), etag)) {
    const headers = new Headers();
    response.headers.forEach((value, name) => {
      if (!REPRESENTATION_HEADERS.has(name.toLowerCase())) headers.append(name, value);
    });
    return new Res(null, { status: 304, headers });
  }
  return request.method === "HEAD" ? withoutBody(response, Res) : response;
}

/** A HEAD answer: the GET answer's status and headers (its Content-Length, when it has one), no body. */
function withoutBody(response: Response, Res: typeof Response): Response {
  return new Res(null, { status: response.status, headers: response.headers });
}
