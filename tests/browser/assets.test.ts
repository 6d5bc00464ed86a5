/**
 * The pages over HTTP, without a browser: each page's shell and its assets answer with the right
 * Content-Type, caching and security headers; assets are same-origin, content-hashed and compressed
 * (brotli or gzip) when asked; GraphiQL's page carries its own policy. And the pages' copies of the server's lists
 * and their pure helpers behave.
 */
import { brotliDecompressSync, gunzipSync } from "node:zlib";
import { describe, expect, test } from "@jest/globals";
import { createPatch } from "rfc6902";
import { acceptsEncoding } from "../../src/http/compression.ts";
import { type PatchOperation, patchChanges } from "../../src/web/client/diff.ts";
import { GRAPHIQL_CSP, PAGE_CSP, pageOf } from "../../src/web/web.plugin.ts";
import { app, call } from "../helpers.ts";

const PAGES = ["/", "/intake", "/reviews", "/webhooks", "/admin/mirror-sources", "/providers/some-agent"];

async function get(path: string, headers: Record<string, string> = {}) {
  return app.fetch(`http://registry.test${path}`, { headers });
}

/** The same-origin URLs a shell refers to (scripts, styles, icons, preloads). */
function assetUrls(html: string): string[] {
  return [...html.matchAll(/(?:src|href)="(\/assets\/[^"]+)"/g)].map((m) => m[1] as string);
}

describe("page shells", () => {
  test.each(PAGES)("%s is HTML that revalidates, with a same-origin CSP", async (path) => {
    const res = await get(path);
    // The directory and profiles are rendered per request for its viewer (an unknown agent is a 404
    // page); the other shells are the same for everyone.
    const rendered = path === "/" || path.startsWith("/providers/");
    expect(res.status).toBe(path.startsWith("/providers/") ? 404 : 200);
    expect(res.headers.get("content-type")).toBe("text/html; charset=utf-8");
    expect(res.headers.get("cache-control")).toBe(rendered ? "private, no-cache" : "no-cache");
    expect(res.headers.get("content-security-policy")).toBe(PAGE_CSP);
    expect(res.headers.get("x-content-type-options")).toBe("nosniff");
    const html = await res.text();
    expect(html).toMatch(/^<!doctype html>/);
    expect(html).toContain('<meta name="viewport"');
    // Nothing from another origin: every src/href is a path or a fragment.
    // (The canonical URL of a rendered page names its own origin.)
    const refs = [...html.matchAll(/(?:src|href)="([^"]*)"/g)].map((m) => m[1] as string);
    expect(
      refs.filter((r) => !r.startsWith("/") && !r.startsWith("#") && !r.startsWith("http://registry.test/")),
    ).toEqual([]);
    expect(assetUrls(html).some((u) => u.endsWith(".js"))).toBe(true);
    expect(assetUrls(html).some((u) => u.endsWith(".css"))).toBe(true);
  });

  test("the policy allows same-origin scripts, styles and requests only", () => {
    expect(PAGE_CSP).toContain("default-src 'self'");
    expect(PAGE_CSP).toContain("script-src 'self'");
    expect(PAGE_CSP).not.toContain("unsafe");
    expect(PAGE_CSP).toContain("frame-ancestors 'none'");
  });

  test("an unchanged shell answers 304 to its ETag; HEAD has headers and no body", async () => {
    const first = await get("/intake");
    const etag = first.headers.get("etag");
    expect(etag).toMatch(/^"[\w-]+"$/);
    const again = await get("/intake", { "if-none-match": etag as string });
    expect(again.status).toBe(304);
    expect(await again.text()).toBe("");
    const head = await app.fetch("http://registry.test/reviews", { method: "HEAD" });
    expect(head.status).toBe(200);
    expect(head.headers.get("content-type")).toBe("text/html; charset=utf-8");
    expect(await head.text()).toBe("");
  });

  test("a page refuses other methods with 405 and Allow", async () => {
    const answer = await call("POST", "/intake", { body: {} });
    expect(answer.status).toBe(405);
    expect(answer.headers.get("allow")).toBe("GET, HEAD");
  });

  test("only the pages' paths are pages", () => {
    expect(pageOf("/")).toBe("directory");
    expect(pageOf("/providers/route-planner")).toBe("profile");
    expect(pageOf("/webhooks")).toBe("webhooks");
    expect(pageOf("/admin/mirror-sources")).toBe("mirror");
    expect(pageOf("/providers/a/b")).toBeNull();
    expect(pageOf("/providers/")).toBeNull();
    expect(pageOf("/api/v1")).toBeNull();
  });
});

describe("assets", () => {
  test("scripts, the stylesheet and the icon have their types and are cached for ever", async () => {
    const html = await (await get("/intake")).text();
    const urls = assetUrls(html);
    const types = new Map<string, string>();
    for (const url of urls) {
      const res = await get(url);
      expect(res.status).toBe(200);
      expect(res.headers.get("cache-control")).toBe("public, max-age=31536000, immutable");
      expect(res.headers.get("x-content-type-options")).toBe("nosniff");
      types.set(url.slice(url.lastIndexOf(".")), res.headers.get("content-type") as string);
      expect((await res.arrayBuffer()).byteLength).toBeGreaterThan(0);
    }
    expect(types.get(".js")).toBe("text/javascript; charset=utf-8");
    expect(types.get(".css")).toBe("text/css; charset=utf-8");
    expect(types.get(".svg")).toBe("image/svg+xml");
  });

  test("a script is gzipped for a client that takes gzip, and the same bytes unzipped", async () => {
    const html = await (await get("/intake")).text();
    const script = assetUrls(html).find((u) => u.includes("/intake-")) as string;
    const plain = Buffer.from(await (await get(script)).arrayBuffer());
    const zipped = await get(script, { "accept-encoding": "gzip, deflate" });
    expect(zipped.headers.get("content-encoding")).toBe("gzip");
    expect(zipped.headers.get("vary")).toBe("Accept-Encoding");
    const bytes = Buffer.from(await zipped.arrayBuffer());
    expect(bytes.byteLength).toBeLessThan(plain.byteLength);
    expect(gunzipSync(bytes).equals(plain)).toBe(true);
    expect((await get(script, { "accept-encoding": "gzip;q=0" })).headers.get("content-encoding")).toBeNull();
  });

  test("an unknown asset is a 404 that is not cached", async () => {
    const res = await get("/assets/intake-NOTAHASH.js");
    expect(res.status).toBe(404);
    expect(res.headers.get("cache-control")).toBe("no-store");
  });

  test("the pages load small: the validation library is left to a chunk loaded later", async () => {
    for (const page of PAGES) {
      const html = await (await get(page)).text();
      let total = 0;
      for (const url of assetUrls(html).filter((u) => u.endsWith(".js"))) {
        total += (await (await get(url)).arrayBuffer()).byteLength;
      }
      expect(total).toBeLessThan(60_000);
    }
  });

  test("acceptsEncoding reads Accept-Encoding", () => {
    expect(acceptsEncoding("gzip", "gzip")).toBe(true);
    expect(acceptsEncoding("br, gzip;q=0.5", "gzip")).toBe(true);
    expect(acceptsEncoding("br, gzip;q=0.5", "br")).toBe(true);
    expect(acceptsEncoding("*", "br")).toBe(true);
    expect(acceptsEncoding("gzip;q=0", "gzip")).toBe(false);
    expect(acceptsEncoding("br;q=0, *", "br")).toBe(false);
    expect(acceptsEncoding("*, br;q=0", "br")).toBe(false);
    expect(acceptsEncoding("*;q=0, gzip", "gzip")).toBe(true);
    expect(acceptsEncoding("br", "gzip")).toBe(false);
    expect(acceptsEncoding(null, "gzip")).toBe(false);
  });

  test("a script is compressed with brotli for a client that takes it", async () => {
    const html = await (await get("/intake")).text();
    const script = assetUrls(html).find((u) => u.includes("/intake-")) as string;
    const plain = Buffer.from(await (await get(script)).arrayBuffer());
    const br = await get(script, { "accept-encoding": "gzip, deflate, br" });
    expect(br.headers.get("content-encoding")).toBe("br");
    expect(brotliDecompressSync(Buffer.from(await br.arrayBuffer())).equals(plain)).toBe(true);
  });
});

describe("GraphiQL", () => {
  test("its page is served with its own policy, still same-origin only", async () => {
    const res = await get("/graphql", { accept: "text/html" });
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toMatch(/^text\/html/);
    expect(res.headers.get("content-security-policy")).toBe(GRAPHIQL_CSP);
    expect(GRAPHIQL_CSP).toContain("default-src 'self'");
    expect(GRAPHIQL_CSP).toContain("connect-src 'self'");
    const html = await res.text();
    // No script or stylesheet from a CDN.
    expect(html).not.toMatch(/<(?:script|link)[^>]+(?:src|href)="https?:/);
  });

  test("a GraphQL answer keeps its own headers", async () => {
    const res = await app.fetch("http://registry.test/graphql", {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ query: "{ api { name } }" }),
    });
    expect(res.status).toBe(200);
    expect(res.headers.get("content-security-policy")).toBeNull();
  });
});

describe("version diff", () => {
  /** The rows the profile page shows for the server's JSON Patch between two snapshots. */
  const diffValues = (before: unknown, after: unknown) =>
    patchChanges(before, createPatch(before, after) as PatchOperation[]);

  test("names each changed path of the server's JSON Patch with its values", () => {
    const before = {
      summary: "Plans routes",
      labels: ["maps"],
      policy: null,
      tools: [{ name: "a", scopes: ["READ_ONLY"] }],
    };
    const after = {
      summary: "Plans routes fast",
      labels: ["maps", "fast"],
      policy: { humanOversight: "ALWAYS" },
      tools: [
        { name: "a", scopes: ["READ_ONLY", "WRITE"] },
        { name: "b", scopes: [] },
      ],
    };
    expect(diffValues(before, after)).toEqual([
      { path: "summary", kind: "changed", before: "Plans routes", after: "Plans routes fast" },
      { path: "labels", kind: "changed", before: ["maps"], after: ["maps", "fast"] },
      { path: "policy", kind: "added", before: null, after: { humanOversight: "ALWAYS" } },
      { path: "tools.0.scopes", kind: "changed", before: ["READ_ONLY"], after: ["READ_ONLY", "WRITE"] },
      { path: "tools.1", kind: "added", before: null, after: { name: "b", scopes: [] } },
    ]);
    expect(diffValues(after, before).find((c) => c.path === "tools.1")?.kind).toBe("removed");
    expect(diffValues(before, structuredClone(before))).toEqual([]);
  });
});
