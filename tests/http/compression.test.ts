/**
 * The API's answers compressed (src/http/compression.ts), read as raw bytes over a real socket: REST,
 * GraphQL and /metrics in brotli or gzip as the request accepts, the same JSON once decompressed,
 * the response cache's hits too; a stream, a HEAD and a 304 as they were. The ETag is the
 * representation's whatever the coding, so an If-Match with the tag a compressed answer carried
 * still matches.
 */
import { request as httpRequest, type IncomingHttpHeaders } from "node:http";
import { brotliDecompressSync, gunzipSync } from "node:zlib";
import { beforeAll, describe, expect, test } from "@jest/globals";
import { type App, approve, appWith, intake, type Listening, listen } from "../helpers.ts";

let app: App;
let server: Listening;
let code: string;
let token: string;

beforeAll(async () => {
  app = appWith({ RESPONSE_CACHE: "on" });
  server = await listen((req, res) => void app(req, res));
  const agent = await intake();
  await approve(agent.providerCode);
  code = agent.providerCode;
  token = agent.accessToken;
});

interface Raw {
  status: number;
  headers: IncomingHttpHeaders;
  bytes: Buffer;
}

/** A request over the socket whose answer is read as sent: no client decompresses it. */
function raw(method: string, path: string, headers: Record<string, string> = {}, body?: string): Promise<Raw> {
  return new Promise((resolve, reject) => {
    const req = httpRequest(`${server.url}${path}`, { method, headers }, (res) => {
      const chunks: Buffer[] = [];
      res.on("data", (c: Buffer) => chunks.push(c));
      res.on("end", () => resolve({ status: res.statusCode ?? 0, headers: res.headers, bytes: Buffer.concat(chunks) }));
      res.on("error", reject);
    });
    req.on("error", reject);
    req.end(body);
  });
}

const decoded = (r: Raw) =>
  r.headers["content-encoding"] === "br"
    ? brotliDecompressSync(r.bytes).toString()
    : r.headers["content-encoding"] === "gzip"
      ? gunzipSync(r.bytes).toString()
      : r.bytes.toString();

describe("compressed answers", () => {
  test("REST and GraphQL in the coding asked for, the same JSON decompressed; the cache's hits too", async () => {
    for (const path of [`/api/v1/providers/${code}`, "/api/v1/providers?limit=5"]) {
      const plain = await raw("GET", path);
      expect(plain.status).toBe(200);
      expect(plain.headers["content-encoding"]).toBeUndefined();
      expect(plain.headers.vary).toMatch(/Accept-Encoding/i);
      for (const [asked, coding] of [
        ["gzip, deflate, br", "br"],
        ["gzip", "gzip"],
        ["br;q=0, gzip", "gzip"],
      ] as const) {
        // The first answer of a kind may be a miss and the next a hit: both are compressed alike.
        for (let i = 0; i < 2; i++) {
          const answer = await raw("GET", path, { "accept-encoding": asked });
          expect(answer.headers["content-encoding"]).toBe(coding);
          expect(answer.headers.vary).toMatch(/Accept-Encoding/i);
          expect(Number(answer.headers["content-length"])).toBe(answer.bytes.byteLength);
          expect(answer.bytes.byteLength).toBeLessThan(plain.bytes.byteLength);
          expect(JSON.parse(decoded(answer))).toEqual(JSON.parse(plain.bytes.toString()));
        }
      }
      expect((await raw("GET", path, { "accept-encoding": "br" })).headers["x-cache"]).toBe("HIT");
    }
    const query = JSON.stringify({ query: "{ providers(limit: 5) { items { providerCode summary } } }" });
    const post = { "content-type": "application/json", "accept-encoding": "br" };
    const graphql = await raw("POST", "/graphql", post, query);
    expect(graphql.headers["content-encoding"]).toBe("br");
    expect(JSON.parse(decoded(graphql)).data.providers.items.length).toBeGreaterThan(0);
    const metrics = await raw("GET", "/metrics", { "accept-encoding": "gzip" });
    expect(metrics.headers["content-encoding"]).toBe("gzip");
    expect(decoded(metrics)).toMatch(/^# HELP /m);
  });

  test("the ETag is the representation's: an If-Match with a compressed answer's tag matches, and a 304 carries no body", async () => {
    const path = `/api/v1/providers/${code}`;
    const plain = await raw("GET", path, { authorization: `Bearer ${token}` });
    const compressed = await raw("GET", path, { authorization: `Bearer ${token}`, "accept-encoding": "br" });
    expect(compressed.headers["content-encoding"]).toBe("br");
    expect(compressed.headers.etag).toBe(plain.headers.etag);
    const notModified = await raw("GET", path, {
      authorization: `Bearer ${token}`,
      "accept-encoding": "br",
      "if-none-match": String(compressed.headers.etag),
    });
    expect(notModified.status).toBe(304);
    expect(notModified.headers["content-encoding"]).toBeUndefined();
    expect(notModified.bytes.byteLength).toBe(0);
    const patched = await raw(
      "PATCH",
      path,
      {
        authorization: `Bearer ${token}`,
        "content-type": "application/json",
        "accept-encoding": "gzip",
        "if-match": String(compressed.headers.etag),
      },
      JSON.stringify({ summary: "Compressed, matched" }),
    );
    expect(patched.status).toBe(200);
    expect(JSON.parse(decoded(patched)).summary).toBe("Compressed, matched");
    const head = await raw("HEAD", path, { "accept-encoding": "br" });
    expect(head.status).toBe(200);
    expect(head.bytes.byteLength).toBe(0);
  });

  test("a stream is sent as it comes, never compressed", async () => {
    const stream = await new Promise<IncomingHttpHeaders>((resolve, reject) => {
      const req = httpRequest(
        `${server.url}/graphql?query=${encodeURIComponent("subscription { feed { seq } }")}`,
        { headers: { accept: "text/event-stream", "accept-encoding": "br, gzip" } },
        (res) => {
          resolve(res.headers);
          res.destroy();
        },
      );
      req.on("error", reject);
      req.end();
    });
    expect(stream["content-type"]).toMatch(/^text\/event-stream/);
    // Yoga names no coding ("none": proxies must not buffer it to compress either).
    expect(["none", undefined]).toContain(stream["content-encoding"]);
  });
});
