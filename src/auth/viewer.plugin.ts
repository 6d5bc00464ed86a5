/**
 * The one place credentials are read. Once per request, before any resolver runs, this Yoga plugin
 * reads `Authorization`, identifies the caller and puts the viewer on the context. Every refusal
 * (missing scheme, malformed, bad checksum, unknown, revoked, expired) gives the same 401. With
 * READ_ACCESS=authenticated a request without a credential is that 401 too: every route that runs
 * an operation builds its context here, so none is left open.
 *
 * Where people sign in (src/signin/), a request without `Authorization` may carry the session
 * cookie instead: a write made with it must come from the registry's own origin (CSRF), and a
 * session that is over is the same 401, which also clears the cookie.
 */
import type { Plugin } from "graphql-yoga";
import { API_KEY_PREFIX, looksLikeApiKey } from "../apikeys/apikey.rules.ts";
import { apiKeyByHash, touchApiKey } from "../apikeys/apikey.store.ts";
import type { AccessTokenConfig, Config } from "../config.ts";
import type { Db } from "../db/client.ts";
import { apiError, forbidden, insufficientScope, unauthenticated } from "../errors.ts";
import type { AddressSource, CredentialGuard } from "../limits/limits.plugin.ts";
import type { Outbound } from "../outbound/outbound.ts";
import { clearCookie, cookieName, hasSessionCookie, SESSION_COOKIE } from "../signin/signin.rules.ts";
import { createSessions, type LiveSession, type Sessions } from "../signin/signin.session.ts";
import { type AccessTokenVerifier, accessTokenIssuer, accessTokenVerifier } from "./access.token.ts";
import { AGENT_TOKEN_PREFIX, hashToken, hasValidChecksum, looksLikeAgentToken } from "./agent.token.ts";
import { type ReviewerVerifier, reviewerVerifier } from "./reviewer.jwt.ts";
import { hasRole, highestRole } from "./roles.ts";
import { tokenByHash, touchToken } from "./token.store.ts";
import type { Viewer } from "./viewer.ts";

/** How stale `lastUsedAt` may get before a request refreshes it (a write per read would be waste). */
const LAST_USED_RESOLUTION_MS = 60_000;

/** What the viewer is resolved with: the database, and the verifiers of the two kinds of JWT. */
export interface Credentials {
  db: Db;
  verifyReviewer: ReviewerVerifier;
  /** Access tokens of the issuers the operator lists (src/auth/access.token.ts). */
  accessTokens: AccessTokenConfig;
  verifyAccessToken: AccessTokenVerifier;
  /** People's sessions (src/signin/), where people sign in: the cookie is read only then. */
  sessions?: Sessions | undefined;
}

export function credentials(config: Config, db: Db, outbound: Outbound): Credentials {
  return {
    db,
    verifyReviewer: reviewerVerifier(config),
    accessTokens: config.accessTokens,
    verifyAccessToken: accessTokenVerifier(config.accessTokens, outbound),
    sessions: config.signIn ? createSessions(db, config.signIn, config.publicUrl) : undefined,
  };
}

/** A secret of ours (an agent token or an API key) as its row, if it is one that works now. */
async function secretRow<
  T extends { id: number; revokedAt: Date | null; expiresAt: Date | null; lastUsedAt: Date | null },
>(
  token: string,
  prefix: string,
  find: (hash: string) => Promise<T | null>,
  touch: (id: number, at: Date) => Promise<void>,
): Promise<T | null> {
  if (!hasValidChecksum(token, prefix)) return null;
  const row = await find(hashToken(token));
  const now = Date.now();
  if (!row || row.revokedAt) return null;
  if (row.expiresAt && row.expiresAt.getTime() <= now) return null;
  if (!row.lastUsedAt || now - row.lastUsedAt.getTime() > LAST_USED_RESOLUTION_MS) await touch(row.id, new Date(now));
  return row;
}

/**
 * The viewer of a request that sent an `Authorization` header (without one, it is anonymous:
 * `useViewer`). An agent token is an agent; an API key a reader; a JWT from a listed issuer is an
 * access token whose roles (roles.ts) make it a reader or a reviewer; any other JWT a reviewer token.
 */
export async function resolveViewer(
  authorization: string,
  { db, verifyReviewer, accessTokens, verifyAccessToken }: Credentials,
): Promise<Viewer> {
  const match = /^Bearer ([^\s]+)$/i.exec(authorization.trim());
  const token = match?.[1];
  if (!token) throw unauthenticated();

  if (looksLikeAgentToken(token)) {
    const row = await secretRow(
      token,
      AGENT_TOKEN_PREFIX,
      (hash) => tokenByHash(db, hash),
      (id, at) => touchToken(db, id, at),
    );
    if (!row) throw unauthenticated();
    return { kind: "agent", providerId: row.providerId, providerCode: row.providerCode, tokenId: row.tokenId };
  }
  if (looksLikeApiKey(token)) {
    const row = await secretRow(
      token,
      API_KEY_PREFIX,
      (hash) => apiKeyByHash(db, hash),
      (id, at) => touchApiKey(db, id, at),
    );
    if (!row) throw unauthenticated();
    return { kind: "reader", subject: row.keyId };
  }

  if (accessTokenIssuer(accessTokens, token)) {
    const claims = await verifyAccessToken(token);
    if (!claims) throw unauthenticated();
    const role = highestRole(claims.roles);
    if (!role) throw insufficientScope("registry:read");
    return role === "reader"
      ? { kind: "reader", subject: claims.subject }
      : { kind: "reviewer", subject: claims.subject, roles: claims.roles };
  }
  const claims = await verifyReviewer(token);
  if (!claims) throw unauthenticated();
  return { kind: "reviewer", subject: claims.subject, roles: claims.roles };
}

/**
 * The viewer a live session stands for. Its roles are those the ID token's claims granted; a person
 * with none is anonymous (READ_ACCESS=authenticated then refuses them as it refuses an access token
 * without a role): every request of theirs carries the cookie, which must not shut them out of what
 * anyone may read.
 */
export function sessionViewer(session: LiveSession): Viewer {
  const role = highestRole(session.roles);
  if (!role) return { kind: "anonymous" };
  return role === "reader"
    ? { kind: "reader", subject: session.subject }
    : { kind: "reviewer", subject: session.subject, roles: session.roles };
}

/** Methods that change nothing, which a cookie may make from anywhere (SameSite=Lax sends it on links). */
const SAFE_METHODS = new Set(["GET", "HEAD", "OPTIONS"]);

/**
 * The viewer of a request that sent the session cookie and no `Authorization`: refused (403) before
 * anything runs when it is a write from another origin or none named, a 401 that clears the cookie
 * when the session is over or unknown, and undefined when the header holds no cookie of the
 * registry's scheme after all (the request is then anonymous).
 */
function viewerOfCookie(
  request: Request,
  cookie: string,
  sessions: Sessions,
  context: AddressSource,
  guard: CredentialGuard | undefined,
): Promise<Viewer> | undefined {
  const url = new URL(request.url);
  const secret = sessions.secretIn(cookie, url);
  if (secret === undefined) return undefined;
  if (!SAFE_METHODS.has(request.method) && request.headers.get("origin") !== sessions.originOf(url)) {
    throw forbidden(
      "A request signed in by the session cookie that changes anything must come from the registry's own pages (its Origin header)",
    );
  }
  const secure = sessions.secure(url);
  const resolve = () =>
    sessions.resolve(secret).then((session) => {
      if (session) return sessionViewer(session);
      throw apiError("UNAUTHENTICATED", "Missing or invalid credentials", {
        headers: { "Set-Cookie": clearCookie(cookieName(SESSION_COOKIE, secure), secure) },
      });
    });
  return guard ? guard(context, resolve) : resolve();
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
  credentials: Credentials,
  access: Pick<Config, "readAccess">,
  guard?: CredentialGuard,
): Plugin<{ viewer: Viewer } & AddressSource> {
  const authenticated = access.readAccess === "authenticated";
  const { sessions } = credentials;
  return {
    onContextBuilding({ context, extendContext }) {
      const authorization = context.request.headers.get("authorization");
      // An anonymous caller needs no lookup: its context is built without waiting a turn.
      if (authorization === null) {
        const cookie = sessions ? context.request.headers.get("cookie") : null;
        const signedIn =
          sessions && hasSessionCookie(cookie)
            ? viewerOfCookie(context.request, cookie as string, sessions, context, guard)
            : undefined;
        if (signedIn) {
          return signedIn.then((viewer) => {
            if (authenticated && !hasRole(viewer, "reader")) throw insufficientScope("registry:read");
            extendContext({ viewer });
          });
        }
        if (!authenticated) return extendContext({ viewer: { kind: "anonymous" } });
        throw unauthenticated();
      }
      // node:http keeps the first of two Authorization headers and drops the other: a request that
      // sends two is ambiguous about who makes it, so it is refused as a malformed credential.
      const resolve = () =>
        authorizationHeaders(context) > 1
          ? Promise.reject(unauthenticated())
          : resolveViewer(authorization, credentials);
      return (guard ? guard(context, resolve) : resolve()).then((viewer) => {
        if (authenticated && !hasRole(viewer, "reader")) throw insufficientScope("registry:read");
        extendContext({ viewer });
      });
    },
  };
}
