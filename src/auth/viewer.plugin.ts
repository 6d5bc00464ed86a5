/**
 * The one place credentials are read. Once per request, before any resolver runs, this Yoga plugin
 * reads `Authorization`, identifies the caller and puts the viewer on the context. Every refusal
 * (missing scheme, malformed, bad checksum, unknown, revoked, expired) gives the same 401.
 */
import type { Plugin } from "graphql-yoga";
import type { Db } from "../db/client.ts";
import { unauthenticated } from "../errors.ts";
import type { AddressSource, CredentialGuard } from "../limits/limits.plugin.ts";
import { hashToken, hasValidChecksum, looksLikeAgentToken } from "./agent.token.ts";
import type { ReviewerVerifier } from "./reviewer.jwt.ts";
import { tokenByHash, touchToken } from "./token.store.ts";
import type { Viewer } from "./viewer.ts";

/** How stale `lastUsedAt` may get before a request refreshes it (a write per read would be waste). */
const LAST_USED_RESOLUTION_MS = 60_000;

/** The viewer of a request that sent an `Authorization` header (without one, it is anonymous: `useViewer`). */
export async function resolveViewer(authorization: string, db: Db, verifyReviewer: ReviewerVerifier): Promise<Viewer> {
  const match = /^Bearer ([^\s]+)$/i.exec(authorization.trim());
  const token = match?.[1];
  if (!token) throw unauthenticated();

  if (looksLikeAgentToken(token)) {
    if (!hasValidChecksum(token)) throw unauthenticated();
    const row = await tokenByHash(db, hashToken(token));
    const now = Date.now();
    if (!row || row.revokedAt) throw unauthenticated();
    if (row.expiresAt && row.expiresAt.getTime() <= now) throw unauthenticated();
    if (!row.lastUsedAt || now - row.lastUsedAt.getTime() > LAST_USED_RESOLUTION_MS) {
      await touchToken(db, row.id, new Date(now));
    }
    return { kind: "agent", providerId: row.providerId, providerCode: row.providerCode, tokenId: row.tokenId };
  }

  const claims = await verifyReviewer(token);
  if (!claims) throw unauthenticated();
  return { kind: "reviewer", subject: claims.subject, roles: claims.roles };
}

/** How many `Authorization` headers node:http received (its `headers` object keeps only the first). */
function authorizationHeaders(context: object): number {
  const raw = (context as { req?: { rawHeaders?: string[] } }).req?.rawHeaders;
  let count = 0;
  for (let i = 0; raw && i < raw.length; i += 2) {
    const name = raw[i] as string;
    if (name.length === 13 && name.toLowerCase() === "authorization") count++;
  }
  return count;
}

/**
 * `guard` (src/limits) counts failed authentications per client address and refuses an address
 * over its limit before its credentials are verified; requests without credentials skip it.
 */
export function useViewer(
  db: Db,
  verifyReviewer: ReviewerVerifier,
  guard?: CredentialGuard,
): Plugin<{ viewer: Viewer } & AddressSource> {
  return {
    onContextBuilding({ context, extendContext }) {
      const authorization = context.request.headers.get("authorization");
      // An anonymous caller needs no lookup: its context is built without waiting a turn.
      if (authorization === null) return extendContext({ viewer: { kind: "anonymous" } });
      // node:http keeps the first of two Authorization headers and drops the other: a request that
      // sends two is ambiguous about who makes it, so it is refused as a malformed credential.
      const resolve = () =>
        authorizationHeaders(context) > 1
          ? Promise.reject(unauthenticated())
          : resolveViewer(authorization, db, verifyReviewer);
      return (guard ? guard(context, resolve) : resolve()).then((viewer) => extendContext({ viewer }));
    },
  };
}
