/**
 * CORS (API.md §4, "HTTP conventions"): off unless CORS_ORIGINS lists origins. An allowed origin
 * gets its own name back (`*` when any origin is allowed), any other gets no grant, so its pages
 * cannot read the answer; credentials are never granted, since the API's credentials are bearer
 * tokens a page sends itself. Yoga's own CORS is not used: it grants credentials by default and
 * replaces an answer's `Vary` where this must add to it.
 */
import type { Plugin } from "graphql-yoga";
import type { Config } from "../config.ts";

const METHODS = "GET, HEAD, POST, PATCH, DELETE";
const ALLOWED_HEADERS =
  "Authorization, Content-Type, If-Match, If-None-Match, Idempotency-Key, Last-Event-ID, X-Request-Id";
const EXPOSED_HEADERS = "ETag, Location, Retry-After, WWW-Authenticate, X-Request-Id";
const PREFLIGHT_MAX_AGE = "600";

/** The plugin for the configured origins; none when CORS is off. */
export function useCors(origins: Config["corsOrigins"]): Plugin[] {
  if (origins !== "*" && origins.length === 0) return [];
  const listed = origins === "*" ? null : new Set(origins);
  const grant = (origin: string | null) =>
    origin === null || (listed && !listed.has(origin)) ? null : listed ? origin : "*";
  return [
    {
      onRequest({ request, endResponse, fetchAPI }) {
        if (request.method !== "OPTIONS" || !request.headers.has("access-control-request-method")) return;
        const headers = new fetchAPI.Headers({
          "Content-Length": "0",
          Vary: "Origin, Access-Control-Request-Method, Access-Control-Request-Headers",
        });
        const granted = grant(request.headers.get("origin"));
        if (granted) {
          headers.set("Access-Control-Allow-Origin", granted);
          headers.set("Access-Control-Allow-Methods", METHODS);
          headers.set("Access-Control-Allow-Headers", ALLOWED_HEADERS);
          headers.set("Access-Control-Max-Age", PREFLIGHT_MAX_AGE);
        }
        endResponse(new fetchAPI.Response(null, { status: 204, headers }));
      },
      onResponse({ request, response, setResponse, fetchAPI }) {
        if (request.method === "OPTIONS" && response.status === 204) return;
        const granted = grant(request.headers.get("origin"));
        const apply = (headers: Headers) => {
          // Whether an answer is shared depends on who asks when only some origins are allowed.
          if (listed) headers.append("Vary", "Origin");
          if (!granted) return;
          headers.set("Access-Control-Allow-Origin", granted);
          headers.set("Access-Control-Expose-Headers", EXPOSED_HEADERS);
        };
        if (!listed && !granted) return;
        try {
          apply(response.headers);
        } catch {
          // An answer with immutable headers is copied.
          const headers = new Headers(response.headers);
          apply(headers);
          setResponse(new fetchAPI.Response(response.body, { status: response.status, headers }));
        }
      },
    },
  ];
}
