/**
 * Compressed answers: every JSON and text answer of the API (REST, GraphQL, /metrics) goes out as
 * brotli or gzip when the request accepts it, as the pages and assets do (src/web). Streams (SSE,
 * multipart) are left as they are, since compressing them would hold events back until a block
 * fills. The ETag stays the representation's: `If-Match` compares it strongly, and a client behind a
 * decompressing fetch sends back the tag it was given, whatever the encoding; `Vary: Accept-Encoding`
 * keeps shared caches' copies apart.
 *
 * The Yoga plugin runs after the response cache's (which keeps the answer as it was made); the cache's
 * node-side hits are compressed here too, once per kept entry and encoding (`encodedEntry`).
 */
import { promisify } from "node:util";
import { brotliCompress, brotliCompressSync, constants, gzip, gzipSync } from "node:zlib";
import type { Plugin } from "graphql-yoga";

export type Coding = "br" | "gzip";

/**
 * Whether an Accept-Encoding header takes a content coding: named with a weight above 0, or, when
 * not named, covered by `*` with a weight above 0.
 */
export function acceptsEncoding(header: string | null | undefined, coding: Coding): boolean {
  let wildcard = false;
  for (const part of (header ?? "").toLowerCase().split(",")) {
    const [name, ...params] = part.split(";").map((p) => p.trim());
    if (name !== coding && name !== "*") continue;
    const q = params.find((p) => p.startsWith("q="));
    const accepted = !q || Number(q.slice(2)) > 0;
    if (name === coding) return accepted;
    wildcard = accepted;
  }
  return wildcard;
}

/** The coding an answer is sent in: brotli, else gzip, else none. */
export function codingFor(header: string | null | undefined): Coding | undefined {
  if (acceptsEncoding(header, "br")) return "br";
  if (acceptsEncoding(header, "gzip")) return "gzip";
  return undefined;
}

/** Brotli at a fast quality, for text: answers are made per request, unlike the precompressed assets. */
const BROTLI = {
  params: { [constants.BROTLI_PARAM_QUALITY]: 5, [constants.BROTLI_PARAM_MODE]: constants.BROTLI_MODE_TEXT },
};
const brotliAsync = promisify(brotliCompress);
const gzipAsync = promisify(gzip);

/** A body in a coding, on libuv's threads. */
export function encode(body: Uint8Array, coding: Coding): Promise<Buffer> {
  return coding === "br" ? brotliAsync(body, BROTLI) : gzipAsync(body, { level: 6 });
}

/** Whether an answer of this type is compressed: JSON and text, not a stream. */
export function compressible(contentType: string | null | undefined): boolean {
  const type = (contentType ?? "").split(";")[0]?.trim().toLowerCase() ?? "";
  return type === "application/json" || type.endsWith("+json") || type === "text/plain" || type === "text/yaml";
}

/** Adds `Accept-Encoding` to an answer's Vary, keeping what is there. */
export function varyOnEncoding(vary: string | null): string {
  if (vary === null || vary === "") return "Accept-Encoding";
  return /(?:^|,)\s*(?:accept-encoding|\*)\s*(?:,|$)/i.test(vary) ? vary : `${vary}, Accept-Encoding`;
}

/** What a kept answer is sent as in a coding, made the first time it is asked for. */
export function encodedEntry(
  entry: { body: Buffer; encoded?: Partial<Record<Coding, Buffer>> },
  coding: Coding,
): Buffer {
  entry.encoded ??= {};
  entry.encoded[coding] ??=
    coding === "br" ? brotliCompressSync(entry.body, BROTLI) : gzipSync(entry.body, { level: 6 });
  return entry.encoded[coding];
}

/** Compresses the API's answers as the request accepts (see the file's header). */
export function useCompression(): Plugin {
  return {
    async onResponse({ request, response, setResponse }) {
      if (response.headers.has("content-encoding")) return;
      // A 304 has no type of its own: it stands for the 200 it confirms.
      if (response.status !== 304 && !compressible(response.headers.get("content-type"))) return;
      // The answers Yoga makes have headers of their own to change; a new one is made only to compress.
      // A HEAD or a 304 says what a GET would vary on, and has no body to compress.
      response.headers.set("Vary", varyOnEncoding(response.headers.get("vary")));
      if (request.method === "HEAD" || response.status === 204 || response.status === 304) return;
      const coding = codingFor(request.headers.get("accept-encoding"));
      if (!coding) return;
      const headers = new Headers(response.headers);
      const body = await encode(new Uint8Array(await response.arrayBuffer()), coding);
      headers.set("Content-Encoding", coding);
      headers.set("Content-Length", String(body.byteLength));
      setResponse(
        new Response(new Uint8Array(body), { status: response.status, statusText: response.statusText, headers }),
      );
    },
  };
}
