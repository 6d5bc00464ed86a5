/**
 * The rules of people signing in, pure: where a sign-in may come back to, the cookies (names,
 * attributes, reading them from a `Cookie` header), the session's secret and its hash, and when a
 * session is over.
 */
import { createHash } from "node:crypto";
import { ROLES, type Role } from "../auth/roles.ts";

/**
 * The session cookie. Over https it is `__Host-` prefixed, which browsers accept only with `Secure`,
 * `Path=/` and no `Domain`, so no other host (a sibling subdomain) can set or shadow it; over plain
 * http (local development) browsers refuse that prefix, so the cookie goes without it. The registry
 * reads only the name of its own scheme.
 */
export const SESSION_COOKIE = "registry_session";
/** The browser's sign-in cookie: the callback must come from the browser that started the sign-in. */
export const BINDING_COOKIE = "registry_signin";

/** How long a sign-in may take, from GET /auth/login to the callback. */
export const ATTEMPT_TTL_MS = 10 * 60_000;
/** How stale `lastSeenAt` (and so the idle expiry) may get before a request refreshes it. */
export const LAST_SEEN_RESOLUTION_MS = 60_000;
/** Where the identity provider sends people back, under the registry's base URL. */
export const CALLBACK_PATH = "/auth/callback";
export const LOGIN_PATH = "/auth/login";

/** The name of a cookie of the registry, by whether the registry is reached over https. */
export function cookieName(base: string, secure: boolean): string {
  return secure ? `__Host-${base}` : base;
}

const SESSION_COOKIE_PAIR = `${SESSION_COOKIE}=`;

/**
 * Whether a `Cookie` header may hold a session cookie (of either scheme): a substring test, so a
 * request without one costs nothing more. What does is read and checked by `readCookie`.
 */
export function hasSessionCookie(header: string | null | undefined): boolean {
  return header?.includes(SESSION_COOKIE_PAIR) === true;
}

/** The value of the first cookie named exactly `name` in a `Cookie` header, if any. */
export function readCookie(header: string | null | undefined, name: string): string | undefined {
  if (!header) return undefined;
  for (const pair of header.split(";")) {
    const at = pair.indexOf("=");
    if (at > 0 && pair.slice(0, at).trim() === name) return pair.slice(at + 1).trim();
  }
  return undefined;
}

/**
 * A `Set-Cookie` value: HttpOnly (no script reads it), SameSite=Lax (not sent on another site's
 * POST or sub-request, sent when a person follows a link here), Path=/, Secure over https.
 */
export function setCookie(name: string, value: string, secure: boolean, maxAgeSeconds: number): string {
  return `${name}=${value}; Path=/; Max-Age=${Math.max(0, Math.floor(maxAgeSeconds))}; HttpOnly; SameSite=Lax${secure ? "; Secure" : ""}`;
}

/** The `Set-Cookie` value that removes a cookie. */
export function clearCookie(name: string, secure: boolean): string {
  return setCookie(name, "", secure, 0);
}

/** A session's or a binding's secret: 32 random bytes, base64url (43 characters). */
const SECRET_SHAPE = /^[A-Za-z0-9_-]{43}$/;

export function isSecretShaped(value: string): boolean {
  return SECRET_SHAPE.test(value);
}

/** What is stored of a secret: its SHA-256, hex. */
export function hashSecret(secret: string): string {
  return createHash("sha256").update(secret).digest("hex");
}

/** The longest `returnTo` kept. */
const MAX_RETURN_TO = 2000;

/**
 * Where a sign-in comes back to: a path of the registry's own, starting with exactly one `/`. Anything
 * that a browser could read as another origin is `/`: `//host` and `/\host` (browsers read a
 * backslash as a slash), a scheme (`https:`, `javascript:`), control characters (a browser drops tabs
 * and line breaks, so `/\t/host` would become `//host`), or a path too long to be one of ours.
 */
export function safeReturnTo(value: string | null | undefined): string {
  if (!value || value.length > MAX_RETURN_TO) return "/";
  if (value[0] !== "/" || value[1] === "/" || value.includes("\\")) return "/";
  // biome-ignore lint/suspicious/noControlCharactersInRegex: control characters are what is refused.
  if (/[\u0000-\u001f\u007f-\u009f]/.test(value)) return "/";
  let url: URL;
  try {
    url = new URL(value, "http://registry.invalid");
  } catch {
    return "/";
  }
  return url.origin === "http://registry.invalid" ? value : "/";
}

/** The roles kept on a session row, and read back (anything that is not a role is dropped). */
export function rolesText(roles: readonly Role[]): string {
  return roles.join(" ");
}

export function rolesOfText(text: string): Role[] {
  const words = text.split(" ");
  return ROLES.filter((role) => words.includes(role));
}

export interface SessionTimes {
  lastSeenAt: Date;
  idleExpiresAt: Date;
  expiresAt: Date;
  endedAt: Date | null;
}

/** A new session's times: idle and absolute expiry from `now`. */
export function newSessionTimes(now: number, idleMinutes: number, maxHours: number): SessionTimes {
  const expiresAt = now + maxHours * 3_600_000;
  return {
    lastSeenAt: new Date(now),
    idleExpiresAt: new Date(Math.min(now + idleMinutes * 60_000, expiresAt)),
    expiresAt: new Date(expiresAt),
    endedAt: null,
  };
}

/** Whether a session still stands at `now`: not ended, not idle too long, not past its absolute expiry. */
export function isLive(session: SessionTimes, now: number): boolean {
  return session.endedAt === null && session.idleExpiresAt.getTime() > now && session.expiresAt.getTime() > now;
}

/**
 * The idle expiry a request made at `now` moves the session to, or undefined when `lastSeenAt` is
 * recent enough to be left alone (a write per request would be waste); never past the absolute expiry.
 */
export function refreshedIdleExpiry(session: SessionTimes, now: number, idleMinutes: number): Date | undefined {
  if (now - session.lastSeenAt.getTime() < LAST_SEEN_RESOLUTION_MS) return undefined;
  return new Date(Math.min(now + idleMinutes * 60_000, session.expiresAt.getTime()));
}
