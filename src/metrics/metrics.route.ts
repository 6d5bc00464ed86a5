/**
 * GET /metrics (and HEAD): the app's metrics in Prometheus' text format, a transport route like
 * /health. With METRICS_TOKEN it needs `Authorization: Bearer <token>`, and a wrong one counts as a
 * failed authentication of the address, as anywhere else; without, it is public, which the
 * configuration allows only under READ_ACCESS=public (config.ts, docs/security.md). Never kept by a
 * cache: the response cache keeps only API reads, and the answer says `no-store`.
 */
import { createHash, timingSafeEqual } from "node:crypto";
import type { Plugin } from "graphql-yoga";
import { apiError, codeOf } from "../errors.ts";
import { problemResponse } from "../http/rest/problem.ts";
import type { AddressSource, CredentialGuard } from "../limits/limits.plugin.ts";
import type { Metrics } from "./metrics.ts";

export const METRICS_PATH = "/metrics";

const digest = (text: string) => createHash("sha256").update(text).digest();

/**
 * Whether an `Authorization` header carries the token whose digest is `expected`. Digests are
 * compared, in constant time: how long the comparison takes tells nothing of the token, its length included.
 */
export function carriesToken(authorization: string | null, expected: Buffer): boolean {
  const token = /^Bearer +(\S+) *$/i.exec(authorization ?? "")?.[1];
  return token !== undefined && timingSafeEqual(digest(token), expected);
}

export function useMetricsRoute(metrics: Metrics, token: string | undefined, guard?: CredentialGuard): Plugin {
  if (!metrics.enabled) return {};
  const expected = token === undefined ? undefined : digest(token);
  return {
    async onRequest({ request, url, serverContext, endResponse, fetchAPI }) {
      if (url.pathname !== METRICS_PATH || (request.method !== "GET" && request.method !== "HEAD")) return;
      if (expected) {
        const verify = async () => {
          if (!carriesToken(request.headers.get("authorization"), expected)) {
            throw apiError("UNAUTHENTICATED", "Scraping the metrics needs the metrics token");
          }
        };
        const req = (serverContext as Partial<AddressSource>).req;
        try {
          await (guard ? guard(req ? { request, req } : { request }, verify) : verify());
        } catch (error) {
          // A bare challenge: the scrape token is no OAuth access token, so no resource metadata is
          // named (the edge adds it to Bearer challenges that have parameters).
          const challenge = codeOf(error) === "UNAUTHENTICATED" ? { "WWW-Authenticate": "Bearer" } : undefined;
          return endResponse(problemResponse(error, challenge));
        }
      }
      return endResponse(
        new fetchAPI.Response(await metrics.scrape(), {
          headers: { "Content-Type": metrics.contentType, "Cache-Control": "no-store" },
        }),
      );
    },
  };
}
