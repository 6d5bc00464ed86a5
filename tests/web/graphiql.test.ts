/**
 * GraphiQL over HTTP, without a browser: a small page that revalidates, GraphiQL's own build served
 * as content-hashed, precompressed assets that are cached for good, and the GRAPHIQL switch (on by
 * default, off in production unless GRAPHIQL=on, which opens introspection too).
 */
import { createHash } from "node:crypto";
import { brotliDecompressSync, gunzipSync } from "node:zlib";
import { describe, expect, test } from "@jest/globals";
import { EXAMPLE_QUERY } from "../../src/web/graphiql.ts";
import { GRAPHIQL_CSP } from "../../src/web/web.plugin.ts";
import { type App, app, appWith, call, gqlCodes, PRODUCTION } from "../helpers.ts";

const INTROSPECTION = "{ __schema { queryType { name } } }";

function get(path: string, headers: Record<string, string> = {}, target: App = app) {
  return target.fetch(`http://registry.test${path}`, { headers });
}

function page(target: App = app) {
  return get("/graphql", { accept: "text/html,application/xhtml+xml,*/*;q=0.8" }, target);
}

/** The page's JSON data block: its workers' URLs and GraphiQL's options. */
function configOf(html: string): { workers: Record<string, string>; options: Record<string, unknown> } {
  const data = html.match(/<script type="application\/json" id="graphiql-config">([^<]*)<\/script>/)?.[1];
  if (!data) throw new Error(`no config in ${html}`);
  return JSON.parse(data);
}

/** Every /assets/ URL the page loads: its scripts, stylesheet and icon, and Monaco's workers. */
function assetsOf(html: string): string[] {
  const referenced = [...html.matchAll(/(?:src|href)="(\/assets\/[^"]+)"/g)].map((m) => m[1] as string);
  return [...referenced, ...Object.values(configOf(html).workers)];
}

describe("GraphiQL's page", () => {
  test("is small HTML with a viewport, no inline script, its own policy, and revalidates", async () => {
    const res = await page();
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toBe("text/html; charset=utf-8");
    expect(res.headers.get("cache-control")).toBe("no-cache");
    expect(res.headers.get("content-security-policy")).toBe(GRAPHIQL_CSP);
    expect(GRAPHIQL_CSP).toContain("script-src 'self';");
    expect(GRAPHIQL_CSP).not.toMatch(/blob:|unsafe-eval/);
    const html = await res.text();
    expect(Buffer.byteLength(html)).toBeLessThan(50_000);
    expect(html).toContain('<meta name="viewport" content="width=device-width, initial-scale=1">');
    expect(html).toMatch(/<title>GraphiQL · Agent Registry<\/title>/);
    // Every script is a same-origin file or a JSON data block (not run, so no policy to satisfy).
    const scripts = [...html.matchAll(/<script\b([^>]*)>/g)].map((m) => m[1] as string);
    expect(scripts).toHaveLength(3);
    for (const attributes of scripts) expect(attributes).toMatch(/ src="\/assets\/| type="application\/json"/);
    const refs = [...html.matchAll(/(?:src|href)="([^"]*)"/g)].map((m) => m[1] as string);
    expect(refs.filter((r) => !r.startsWith("/"))).toEqual([]);

    const etag = res.headers.get("etag") as string;
    expect(etag).toMatch(/^"[\w-]+"$/);
    const again = await get("/graphql", { accept: "text/html", "if-none-match": etag });
    expect(again.status).toBe(304);
    expect(await again.text()).toBe("");
  });

  test("opens on an example query of this API, which runs", async () => {
    const { options } = configOf(await (await page()).text());
    expect(options.defaultQuery).toBe(EXAMPLE_QUERY);
    expect(EXAMPLE_QUERY).toContain('{"Authorization": "Bearer <token>"}');
    const ran = await call("POST", "/graphql", { body: { query: EXAMPLE_QUERY } });
    expect(ran.body.errors).toBeUndefined();
    expect(ran.body.data.providers.items.length).toBeGreaterThanOrEqual(0);
    expect(Object.keys(ran.body.data.providers)).toEqual(["items", "nextCursor"]);
  });

  test("a GraphQL request to the same URL is still GraphQL", async () => {
    const res = await get(`/graphql?query=${encodeURIComponent("{ api { name } }")}`, {
      accept: "application/graphql-response+json",
    });
    expect(res.status).toBe(200);
    expect(res.headers.get("content-security-policy")).toBeNull();
    expect(await res.json()).toEqual({ data: { api: { name: "Agent Registry" } } });
  });
});

describe("GraphiQL's assets", () => {
  test("are named by their content's hash, precompressed, and cached for good", async () => {
    const urls = assetsOf(await (await page()).text());
    // Script, boot script, stylesheet, icon, three workers.
    expect(urls.filter((u) => /\/graphiql-[\w-]*?[0-9a-f]{16}\.(?:js|css)$/.test(u))).toHaveLength(6);
    for (const url of urls) {
      const plain = await get(url);
      expect([url, plain.status]).toEqual([url, 200]);
      expect(plain.headers.get("cache-control")).toBe("public, max-age=31536000, immutable");
      expect(plain.headers.get("vary")).toBe("Accept-Encoding");
      expect(plain.headers.get("content-encoding")).toBeNull();
      const body = Buffer.from(await plain.arrayBuffer());
      const hash = url.match(/-([0-9a-f]{16})\.\w+$/)?.[1];
      expect([url, createHash("sha256").update(body).digest("hex").slice(0, 16)]).toEqual([url, hash]);
      if (body.byteLength < 1024) continue; // the boot script: not worth compressing

      const br = await get(url, { "accept-encoding": "gzip, deflate, br" });
      expect([url, br.headers.get("content-encoding")]).toEqual([url, "br"]);
      const brBytes = Buffer.from(await br.arrayBuffer());
      expect(brotliDecompressSync(brBytes).equals(body)).toBe(true);
      const gzip = await get(url, { "accept-encoding": "gzip" });
      expect([url, gzip.headers.get("content-encoding")]).toEqual([url, "gzip"]);
      const gzipBytes = Buffer.from(await gzip.arrayBuffer());
      expect(gunzipSync(gzipBytes).equals(body)).toBe(true);
      expect(brBytes.byteLength).toBeLessThan(body.byteLength / 2);
    }
  });

  test("are GraphiQL's own build, as @graphql-yoga/render-graphiql ships it", async () => {
    const build = await import("@graphql-yoga/render-graphiql/graphiql");
    const html = await (await page()).text();
    const script = html.match(/<script defer src="(\/assets\/graphiql-[0-9a-f]{16}\.js)">/)?.[1] as string;
    expect(await (await get(script)).text()).toBe(build.js);
    const { workers } = configOf(html);
    expect(await (await get(workers.graphql as string)).text()).toBe(build.graphqlWorker);
    expect(Object.keys(workers).sort()).toEqual(["editorWorkerService", "graphql", "json"]);
  });

  test("an unknown GraphiQL asset is a 404 that is not cached", async () => {
    const res = await get("/assets/graphiql-0000000000000000.js");
    expect(res.status).toBe(404);
    expect(res.headers.get("cache-control")).toBe("no-store");
  });
});

describe("GRAPHIQL", () => {
  test("production without it: no page, no GraphiQL asset, no introspection", async () => {
    const production = appWith(PRODUCTION);
    const off = await call("GET", "/graphql", { app: production, headers: { accept: "text/html" } });
    expect(off.status).toBe(404);
    expect(off.headers.get("content-type")).toMatch(/^application\/graphql-response\+json/);
    expect(gqlCodes(off)).toEqual(["NOT_FOUND"]);
    expect(off.text).not.toMatch(/<html|<script/i);
    // The asset URLs a GraphiQL page of another server would name are not served here either.
    const url = assetsOf(await (await page()).text()).find((u) => /graphiql-[0-9a-f]{16}\.js$/.test(u)) as string;
    expect((await get(url, {}, production)).status).toBe(404);
    const introspection = await call("POST", "/graphql", { app: production, body: { query: INTROSPECTION } });
    expect(introspection.body.data).toBeUndefined();
    expect(introspection.text).toMatch(/introspection has been disabled/);
  });

  test("production with GRAPHIQL=on: the page, and introspection for its schema explorer", async () => {
    const production = appWith({ ...PRODUCTION, GRAPHIQL: "on" });
    const on = await page(production);
    expect(on.status).toBe(200);
    expect(on.headers.get("content-security-policy")).toBe(GRAPHIQL_CSP);
    const script = assetsOf(await on.text()).find((u) => /graphiql-[0-9a-f]{16}\.js$/.test(u)) as string;
    expect((await get(script, { "accept-encoding": "br" }, production)).headers.get("content-encoding")).toBe("br");
    const introspection = await call("POST", "/graphql", { app: production, body: { query: INTROSPECTION } });
    expect(introspection.body).toEqual({ data: { __schema: { queryType: { name: "Query" } } } });
  });

  test("GRAPHIQL=off outside production: no page, introspection still on", async () => {
    const development = appWith({ GRAPHIQL: "off" });
    expect((await page(development)).status).toBe(404);
    const introspection = await call("POST", "/graphql", { app: development, body: { query: INTROSPECTION } });
    expect(introspection.body).toEqual({ data: { __schema: { queryType: { name: "Query" } } } });
  });
});
