/**
 * The web pages of API.md §4 (`/`, `/intake`, `/providers/{providerCode}`, `/reviews`, `/webhooks`,
 * `/admin/api-keys`, `/admin/mirror-sources`), GraphiQL's
 * page at /graphql for a browser (graphiql.ts), and their assets under `/assets/`. Pages are HTML
 * shells plus ES modules bundled in memory by esbuild (web.bundle.ts); they call `/api/v1` with
 * fetch like any other client.
 */
import { createHash } from "node:crypto";
import type { Plugin } from "graphql-yoga";
import { acceptsEncoding, type Coding, codingFor, encode } from "../http/compression.ts";
import type { Provider, ProviderPage } from "./client/types.ts";
import { type Graphiql, isGraphiqlAsset, graphiql as loadGraphiql } from "./graphiql.ts";
import { type DirectoryFacets, directoryFacetsQuery, directoryQuery, renderDirectory } from "./render/directory.ts";
import { renderDocument } from "./render/document.ts";
import { profileDescription, renderProfile, renderProfileNotFound } from "./render/profile.ts";
import { type Asset, assetOf, type Bundle, type PageName, webBundle } from "./web.bundle.ts";
import { PAGE_INFO, renderShell } from "./web.shell.ts";

/** The pages load same-origin scripts and styles only, and talk to their own origin only. */
export const PAGE_CSP = [
  "default-src 'self'",
  "script-src 'self'",
  "style-src 'self'",
  "img-src 'self'",
  "connect-src 'self'",
  "font-src 'self'",
  "object-src 'none'",
  "base-uri 'none'",
  "form-action 'self'",
  "frame-ancestors 'none'",
].join("; ");

/**
 * GraphiQL's page: same-origin scripts and workers only, like the pages. Its editor (Monaco) adds
 * <style> elements as it runs, hence inline styles; its stylesheet embeds fonts and icons as data:
 * URLs. Not eval, not blob: (the browser test fails on any violation).
 */
export const GRAPHIQL_CSP = [
  "default-src 'self'",
  "script-src 'self'",
  "worker-src 'self'",
  "style-src 'self' 'unsafe-inline'",
  "img-src 'self' data:",
  "font-src 'self' data:",
  "connect-src 'self'",
  "object-src 'none'",
  "base-uri 'none'",
  "form-action 'self'",
  "frame-ancestors 'none'",
].join("; ");

const COMMON_HEADERS = {
  "X-Content-Type-Options": "nosniff",
  "Referrer-Policy": "same-origin",
};

export interface WebPagesOptions {
  /** The JSON line logger (a failed bundle is logged). */
  log?: (line: Record<string, unknown>) => void;
  /** Whether GraphiQL is served at /graphql to a browser (and linked from the footer). */
  graphiql?: boolean;
  /** The identity provider people sign in with, when they can: the pages show "Sign in". */
  signInIssuer?: string | undefined;
  /**
   * The app itself, for the reads the directory and the profile are rendered from: they go through
   * its whole front door (edge, response cache, REST), as any client's would.
   */
  app?: AppFetch;
}

/** The page a path shows, if any. */
export function pageOf(pathname: string): PageName | null {
  switch (pathname) {
    case "/":
      return "directory";
    case "/intake":
      return "intake";
    case "/reviews":
      return "reviews";
    case "/webhooks":
      return "webhooks";
    case "/admin/api-keys":
      return "apikeys";
    case "/admin/mirror-sources":
      return "mirror";
  }
  return /^\/providers\/[^/]+$/.test(pathname) ? "profile" : null;
}

/** The smallest form of an asset the request takes: brotli, then gzip, then none. */
function encodedBody(asset: Asset, request: Request): { body: Uint8Array; encoding?: "br" | "gzip" } {
  const header = request.headers.get("accept-encoding");
  if (asset.br && acceptsEncoding(header, "br")) return { body: asset.br, encoding: "br" };
  if (asset.gzip && acceptsEncoding(header, "gzip")) return { body: asset.gzip, encoding: "gzip" };
  return { body: asset.body };
}

/** Whether a request is a browser asking /graphql for GraphiQL (Yoga's own test, HEAD too). */
function asksForGraphiql(request: Request, url: URL): boolean {
  return (
    url.pathname === "/graphql" &&
    (request.method === "GET" || request.method === "HEAD") &&
    (request.headers.get("accept") ?? "").includes("text/html")
  );
}

interface Shell {
  /** The page's HTML with its brotli and gzip forms, made once, like an asset's. */
  html: Asset;
  /** The ETag of the uncompressed HTML; each encoding's form has its own (`etagOf`). */
  etag: string;
}

/** A strong ETag names one representation: the encoded forms of a shell each carry their own. */
const etagOf = (shell: Shell, encoding?: "br" | "gzip") =>
  encoding ? `${shell.etag.slice(0, -1)}-${encoding}"` : shell.etag;

function respond(request: Request, body: Uint8Array | string | null, init: ResponseInit): Response {
  // A Uint8Array is a valid body; TypeScript's DOM types only want one backed by an ArrayBuffer.
  return new Response(request.method === "HEAD" ? null : (body as BodyInit | null), init);
}

const NO_STORE_HEADERS = {
  ...COMMON_HEADERS,
  "Content-Type": "text/plain; charset=utf-8",
  "Cache-Control": "no-store",
};

/** The request headers an internal read carries over: who is asking, and from where. */
const FORWARDED = ["authorization", "cookie", "x-forwarded-for", "x-real-ip", "forwarded", "x-request-id"];

export type AppFetch = (request: Request) => Promise<Response> | Response;

/**
 * Runs one REST read of the app itself, as the page's own request: the same operation, viewer,
 * visibility rules, limits and response cache a client of /api/v1 meets. Answers the status and
 * the parsed body.
 */
async function readApi<T>(
  app: AppFetch,
  request: Request,
  url: URL,
  path: string,
): Promise<{ status: number; body: T | null }> {
  const headers = new Headers({ accept: "application/json" });
  for (const name of FORWARDED) {
    const value = request.headers.get(name);
    if (value) headers.set(name, value);
  }
  const response = await app(new Request(new URL(path, url), { method: "GET", headers }));
  const text = await response.text();
  let body: T | null = null;
  try {
    body = response.ok && text ? (JSON.parse(text) as T) : null;
  } catch {
    body = null;
  }
  return { status: response.status, body };
}

/** A rendered page, compressed as the request accepts, on libuv's threads. */
async function compressed(request: Request, text: string): Promise<{ body: Uint8Array; encoding?: Coding }> {
  const body = new TextEncoder().encode(text);
  const coding = codingFor(request.headers.get("accept-encoding"));
  return coding ? { body: await encode(body, coding), encoding: coding } : { body };
}

/** The pages, GraphiQL's page, and their assets. */
export function useWebPages(options: WebPagesOptions = {}): Plugin {
  const log = options.log ?? (() => {});
  const graphiqlOn = options.graphiql ?? true;
  const signInOrigin = options.signInIssuer ? new URL(options.signInIssuer).origin : undefined;
  // Signing out is a form posted to /auth/logout, which redirects to the identity provider's own
  // sign-out: browsers hold that redirect to the form-action directive too.
  const pageCsp = signInOrigin
    ? PAGE_CSP.replace("form-action 'self'", `form-action 'self' ${signInOrigin}`)
    : PAGE_CSP;
  // The bundle is made on the first request that needs it (main.ts starts it as the server starts,
  // so that no visitor waits for it): an app that never serves a page never pays for one.
  let bundling: Promise<unknown> | undefined;
  const shells = new WeakMap<Bundle, Map<PageName | "graphiql", Promise<Shell>>>();
  const shellOf = (bundle: Bundle, page: PageName | "graphiql", render: () => string): Promise<Shell> => {
    let byPage = shells.get(bundle);
    if (!byPage) {
      byPage = new Map();
      shells.set(bundle, byPage);
    }
    let shell = byPage.get(page);
    if (!shell) {
      const html = new TextEncoder().encode(render());
      const etag = `"${createHash("sha256").update(html).digest("base64url").slice(0, 16)}"`;
      shell = assetOf(html, "text/html; charset=utf-8").then((asset) => ({ html: asset, etag }));
      byPage.set(page, shell);
    }
    return shell;
  };

  const app = options.app;

  /**
   * The directory or a profile rendered with its data, or null when the read did not answer
   * (an error, or a registry whose reads need a credential the request lacks): the page's shell
   * then, whose script reads and explains.
   */
  async function rendered(
    request: Request,
    url: URL,
    page: "directory" | "profile",
    bundle: Bundle,
  ): Promise<{ status: number; text: string } | null> {
    if (!app) return null;
    const common = { bundle, graphiql: graphiqlOn, signIn: signInOrigin !== undefined };
    if (page === "directory") {
      const info = PAGE_INFO.directory;
      // The page and its facets' counts, side by side: two reads any client could make.
      const [read, counted] = await Promise.all([
        readApi<ProviderPage>(app, request, url, `/api/v1/providers?${directoryQuery(url.searchParams)}`),
        readApi<DirectoryFacets>(
          app,
          request,
          url,
          `/api/v1/providers/facets?${directoryFacetsQuery(url.searchParams)}`,
        ),
      ]);
      return {
        status: 200,
        text: renderDocument({
          ...common,
          page,
          title: info.title,
          description: info.description,
          nav: info.nav,
          og: { url: `${url.origin}/`, type: "website" },
          ssr: "directory",
          body: renderDirectory(
            url.searchParams,
            read.status === 200 ? read.body : null,
            counted.status === 200 ? counted.body : null,
          ),
        }),
      };
    }
    let code: string;
    try {
      code = decodeURIComponent(url.pathname.slice("/providers/".length));
    } catch {
      code = "";
    }
    const read = code
      ? await readApi<Provider>(app, request, url, `/api/v1/providers/${encodeURIComponent(code)}`)
      : { status: 404, body: null };
    if (read.status === 404 || read.status === 400) {
      return {
        status: 404,
        text: renderDocument({
          ...common,
          page,
          title: "Agent not found",
          description: "There is no agent at this address that you may see.",
          nav: null,
          ssr: "profile-not-found",
          body: renderProfileNotFound(code),
        }),
      };
    }
    if (read.status !== 200 || !read.body) return null;
    const p = read.body;
    return {
      status: 200,
      text: renderDocument({
        ...common,
        page,
        title: p.name,
        description: profileDescription(p),
        nav: null,
        og: { url: `${url.origin}/providers/${encodeURIComponent(p.providerCode)}`, type: "profile" },
        // The script keeps what the server drew for a reader without a token; for its owner or a
        // reviewer (whose tokens only the tab knows) it reads and draws their view.
        ssr: "profile",
        body: renderProfile(p, url.origin),
      }),
    };
  }

  return {
    // A disposed app leaves no bundling behind it (esbuild's service process would keep the process alive).
    async onDispose() {
      await bundling;
    },
    async onRequest({ request, url, endResponse }) {
      const graphiqlPage = graphiqlOn && asksForGraphiql(request, url);
      const page = graphiqlPage ? null : pageOf(url.pathname);
      const asset = url.pathname.startsWith("/assets/") ? url.pathname.slice("/assets/".length) : null;
      if (page === null && asset === null && !graphiqlPage) return;
      if (request.method !== "GET" && request.method !== "HEAD") {
        return endResponse(
          new Response(`${request.method} is not allowed here`, {
            status: 405,
            headers: { ...COMMON_HEADERS, Allow: "GET, HEAD", "Content-Type": "text/plain; charset=utf-8" },
          }),
        );
      }
      // GraphiQL's files are loaded for its page or one of its assets only.
      const wantsGraphiql = graphiqlPage || (graphiqlOn && asset !== null && isGraphiqlAsset(asset));
      let bundle: Bundle;
      let graphiql: Graphiql | undefined;
      try {
        const pending = webBundle();
        bundling = pending.catch(() => {});
        bundle = await pending;
        if (wantsGraphiql) graphiql = await loadGraphiql();
      } catch (error) {
        log({ time: new Date().toISOString(), level: "error", msg: "web assets failed", error: String(error) });
        return endResponse(
          new Response("This page is unavailable right now; the API under /api/v1 and /graphql is not affected.", {
            status: 500,
            headers: NO_STORE_HEADERS,
          }),
        );
      }

      if (asset !== null) {
        const found = bundle.assets.get(asset) ?? graphiql?.assets.get(asset);
        if (!found) return endResponse(new Response("Not found", { status: 404, headers: NO_STORE_HEADERS }));
        const { body, encoding } = encodedBody(found, request);
        return endResponse(
          respond(request, body, {
            headers: {
              ...COMMON_HEADERS,
              "Content-Type": found.contentType,
              // Asset names carry their content's hash: a new build is a new URL.
              "Cache-Control": "public, max-age=31536000, immutable",
              Vary: "Accept-Encoding",
              ...(encoding ? { "Content-Encoding": encoding } : {}),
            },
          }),
        );
      }

      if (!graphiql && (page === "directory" || page === "profile")) {
        const done = await rendered(request, url, page, bundle).catch((error) => {
          log({ time: new Date().toISOString(), level: "error", msg: "page rendering failed", error: String(error) });
          return null;
        });
        if (done) {
          const { body, encoding } = await compressed(request, done.text);
          return endResponse(
            respond(request, body, {
              status: done.status,
              headers: {
                ...COMMON_HEADERS,
                "Content-Type": "text/html; charset=utf-8",
                // Rendered for this request's viewer from live data: never kept by a shared cache.
                "Cache-Control": "private, no-cache",
                Vary: "Accept-Encoding, Authorization, Cookie",
                "Content-Security-Policy": pageCsp,
                "Cross-Origin-Opener-Policy": "same-origin",
                ...(encoding ? { "Content-Encoding": encoding } : {}),
              },
            }),
          );
        }
      }

      const shell = await (graphiql
        ? shellOf(bundle, "graphiql", () => graphiql.page(bundle.icon))
        : shellOf(bundle, page as PageName, () =>
            renderShell(page as PageName, bundle, { graphiql: graphiqlOn, signIn: signInOrigin !== undefined }),
          ));
      const { body, encoding } = encodedBody(shell.html, request);
      const etag = etagOf(shell, encoding);
      const headers = {
        ...COMMON_HEADERS,
        "Content-Type": "text/html; charset=utf-8",
        // Revalidate every time (cheap: an ETag), so a new release's asset names are seen at once.
        "Cache-Control": "no-cache",
        Vary: "Accept-Encoding",
        ETag: etag,
        "Content-Security-Policy": graphiql ? GRAPHIQL_CSP : pageCsp,
        "Cross-Origin-Opener-Policy": "same-origin",
      };
      const match = request.headers.get("if-none-match");
      if (match?.split(",").some((tag) => tag.trim() === etag)) {
        return endResponse(new Response(null, { status: 304, headers }));
      }
      return endResponse(
        respond(request, body, { headers: { ...headers, ...(encoding ? { "Content-Encoding": encoding } : {}) } }),
      );
    },
  };
}
