/**
 * A person's session as a request meets it: which cookie to read (by the registry's scheme), the
 * registry's origin (for the CSRF check of writes), and the session a cookie's secret stands for,
 * its use recorded at most once a minute. The viewer plugin (src/auth/viewer.plugin.ts) and the
 * /auth routes (signin.routes.ts) share it.
 */
import { randomBytes } from "node:crypto";
import type { Role } from "../auth/roles.ts";
import type { SignInConfig } from "../config.ts";
import type { Db } from "../db/client.ts";
import {
  cookieName,
  hashSecret,
  isLive,
  isSecretShaped,
  readCookie,
  refreshedIdleExpiry,
  rolesOfText,
  SESSION_COOKIE,
} from "./signin.rules.ts";
import { sessionByHash, touchSession } from "./signin.store.ts";

export interface LiveSession {
  subject: string;
  name: string | null;
  roles: Role[];
  idleExpiresAt: Date;
  expiresAt: Date;
}

export interface Sessions {
  /** The registry's base URL: PUBLIC_URL (without a trailing `/`), else the request's origin. */
  baseOf(requestUrl: URL): string;
  /** The registry's origin, the only `Origin` a write authenticated by the cookie may carry. */
  originOf(requestUrl: URL): string;
  /** Whether the registry is reached over https: the cookie is then `__Host-` and Secure. */
  secure(requestUrl: URL): boolean;
  /** The session cookie's value in a `Cookie` header, under the name of the registry's scheme. */
  secretIn(cookieHeader: string | null, requestUrl: URL): string | undefined;
  /** The session a secret stands for if it is live, its use recorded; null when over or unknown. */
  resolve(secret: string): Promise<LiveSession | null>;
}

/** A new secret: 32 random bytes, base64url. */
export function newSecret(): string {
  return randomBytes(32).toString("base64url");
}

export function createSessions(db: Db, config: SignInConfig, publicUrl: string | undefined): Sessions {
  const base = publicUrl?.replace(/\/+$/, "");
  const origin = base === undefined ? undefined : new URL(base).origin;
  const secureBase = base?.startsWith("https:");
  const secure = (url: URL) => secureBase ?? url.protocol === "https:";
  return {
    baseOf: (url) => base ?? url.origin,
    originOf: (url) => origin ?? url.origin,
    secure,
    secretIn: (header, url) => readCookie(header, cookieName(SESSION_COOKIE, secure(url))),
    async resolve(secret) {
      // A cookie that is no secret of ours costs no look-up.
      if (!isSecretShaped(secret)) return null;
      const row = await sessionByHash(db, hashSecret(secret));
      const now = Date.now();
      if (!row || !isLive(row, now)) return null;
      let idleExpiresAt = row.idleExpiresAt;
      const moved = refreshedIdleExpiry(row, now, config.idleMinutes);
      if (moved) {
        await touchSession(db, row.id, new Date(now), moved);
        idleExpiresAt = moved;
      }
      return {
        subject: row.subject,
        name: row.name,
        roles: rolesOfText(row.roles),
        idleExpiresAt,
        expiresAt: row.expiresAt,
      };
    },
  };
}
