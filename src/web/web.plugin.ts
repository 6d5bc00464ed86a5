/**
 * The web pages of API.md §4 (`/`, `/intake`, `/providers/{providerCode}`, `/reviews`) and their
 * assets under `/assets/`. Pages are HTML shells plus ES modules bundled in memory by esbuild
 * (web.bundle.ts); they call `/api/v1` with fetch like any other client. Also gives GraphiQL's page
 * (inline assets, served by Yoga) a Content-Security-Policy of its own.
 */
import { createHash } from "node:crypto";
import type { Plugin } from "graphql-yoga";
import { type Bundle, type PageName, webBundle } from "./web.bundle.ts";
import { renderShell } from "./web.shell.ts";

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
 * GraphiQL's page is one HTML document with its scripts and styles inline, and its editor runs
 * web workers from blob: URLs: it needs inline scripts and styles and blob: workers (not eval:
 * the browser test fails on any policy violation) — but still nothing from another origin.
 */
export const GRAPHIQL_CSP = [
  "default-src 'self'",
  "script-src 'self' 'unsafe-inline' blob:",
  "worker-src 'self' blob:",
  "style-src 'self' 'unsafe-inline'",
  "img-src 'self' data: blob:",
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
  /** Whether GraphiQL is served (its link in the footer). */
  graphiql?: boolean;
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
  }
  return /^\/providers\/[^/]+$/.test(pathname) ? "profile" : null;
}

/** Whether an Accept-Encoding header takes gzip (and does not refuse it with q=0). */
export function acceptsGzip(header: string | null): boolean {
  for (const part of (header ?? "").toLowerCase().split(",")) {
    const [coding, ...params] = part.split(";").map((p) => p.trim());
    if (coding !== "gzip" && coding !== "*") continue;
    const q = params.find((p) => p.startsWith("q="));
    return !q || Number(q.slice(2)) > 0;
  }
  return false;
}

interface Shell {
  html: Uint8Array;
  etag: string;
}

function respond(request: Request, body: Uint8Array | string | null, init: ResponseInit): Response {
  // A Uint8Array is a valid body; TypeScript's DOM types only want one backed by an ArrayBuffer.
  return new Response(request.method === "HEAD" ? null : (body as BodyInit | null), init);
}

/** The pages, their assets, and GraphiQL's security policy. */
export function useWebPages(options: WebPagesOptions = {}): Plugin {
  const log = options.log ?? (() => {});
  const graphiql = options.graphiql ?? true;
  // Start bundling as the app is created, so the first page is served without waiting for it.
  webBundle().catch((error) =>
    log({ time: new Date().toISOString(), level: "error", msg: "web pages bundle failed", error: String(error) }),
  );
  const shells = new WeakMap<Bundle, Map<PageName, Shell>>();
  const shellOf = (bundle: Bundle, page: PageName): Shell => {
    let byPage = shells.get(bundle);
    if (!byPage) {
      byPage = new Map();
      shells.set(bundle, byPage);
    }
    let shell = byPage.get(page);
    if (!shell) {
      const html = new TextEncoder().encode(renderShell(page, bundle, { graphiql }));
      shell = { html, etag: `"${createHash("sha256").update(html).digest("base64url").slice(0, 16)}"` };
      byPage.set(page, shell);
    }
    return shell;
  };

  return {
    async onRequest({ request, url, endResponse }) {
      const page = pageOf(url.pathname);
      const asset = url.pathname.startsWith("/assets/") ? url.pathname.slice("/assets/".length) : null;
      if (page === null && asset === null) return;
      if (request.method !== "GET" && request.method !== "HEAD") {
        return endResponse(
          new Response(`${request.method} is not allowed here`, {
            status: 405,
            headers: { ...COMMON_HEADERS, Allow: "GET, HEAD", "Content-Type": "text/plain; charset=utf-8" },
          }),
        );
      }
      let bundle: Bundle;
      try {
        bundle = await webBundle();
      } catch (error) {
        log({ time: new Date().toISOString(), level: "error", msg: "web pages bundle failed", error: String(error) });
        return endResponse(
          new Response("The pages are unavailable right now; the API under /api/v1 is not affected.", {
            status: 500,
            headers: { ...COMMON_HEADERS, "Content-Type": "text/plain; charset=utf-8", "Cache-Control": "no-store" },
          }),
        );
      }

      if (asset !== null) {
        const found = bundle.assets.get(asset);
        if (!found) {
          return endResponse(
            new Response("Not found", {
              status: 404,
              headers: { ...COMMON_HEADERS, "Content-Type": "text/plain; charset=utf-8", "Cache-Control": "no-store" },
            }),
          );
        }
        const gzip = found.gzip && acceptsGzip(request.headers.get("accept-encoding")) ? found.gzip : null;
        return endResponse(
          respond(request, gzip ?? found.body, {
            headers: {
              ...COMMON_HEADERS,
              "Content-Type": found.contentType,
              // Asset names carry their content's hash: a new build is a new URL.
              "Cache-Control": "public, max-age=31536000, immutable",
              Vary: "Accept-Encoding",
              ...(gzip ? { "Content-Encoding": "gzip" } : {}),
            },
          }),
        );
      }

      const shell = shellOf(bundle, page as PageName);
      const headers = {
        ...COMMON_HEADERS,
        "Content-Type": "text/html; charset=utf-8",
        // Revalidate every time (cheap: an ETag), so a new release's asset names are seen at once.
        "Cache-Control": "no-cache",
        ETag: shell.etag,
        "Content-Security-Policy": PAGE_CSP,
        "Cross-Origin-Opener-Policy": "same-origin",
      };
      const match = request.headers.get("if-none-match");
      if (match?.split(",").some((tag) => tag.trim() === shell.etag)) {
        return endResponse(new Response(null, { status: 304, headers }));
      }
      return endResponse(respond(request, shell.html, { headers }));
    },

    onResponse({ request, response, setResponse }) {
      // The HTML answer of /graphql is GraphiQL's. The content type is asked first: every answer
      // passes here, and parsing its URL again cost ~1% of an uncached read.
      if (!graphiql || !response.headers.get("content-type")?.startsWith("text/html")) return;
      if (new URL(request.url).pathname !== "/graphql") return;
      const headers = new Headers(response.headers);
      headers.set("Content-Security-Policy", GRAPHIQL_CSP);
      headers.set("Cache-Control", "no-cache");
      for (const [key, value] of Object.entries(COMMON_HEADERS)) headers.set(key, value);
      setResponse(new Response(response.body, { status: response.status, headers }));
    },
  };
}
