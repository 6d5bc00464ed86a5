/**
 * Webhooks, the pure part: what a subscription may point at and filter on, the ids and secrets it
 * is given, the message a delivery sends and how it is signed (Standard Webhooks), and when a failed
 * attempt is tried again.
 */
import { randomBytes } from "node:crypto";
import { Webhook } from "standardwebhooks";
import type { FieldError } from "../errors.ts";
import { EVENT_KINDS } from "../events/event.rules.ts";
import { refusedRange } from "../outbound/outbound.ts";

/** The type of a test ping's message. */
export const PING_KIND = "PING";

export const MAX_URL_LENGTH = 2000;

/** A public id: a prefix and 16 random bytes, base64url. */
const publicId = (prefix: string) => `${prefix}${randomBytes(16).toString("base64url")}`;
export const newWebhookId = () => publicId("wh_");
/** A Standard Webhooks message id: the `webhook-id` of every attempt of one message. */
export const newMessageId = () => publicId("msg_");
/** The signing secret in the Standard Webhooks form: `whsec_` and 24 random bytes, base64. */
export const newSecret = () => `whsec_${randomBytes(24).toString("base64")}`;

export type Checked<T> = { ok: true; value: T } | { ok: false; errors: FieldError[] };

/**
 * A subscription's target: an absolute https: URL without credentials, whose host is a name or a
 * public address. The outbound door checks the addresses a name resolves to at every delivery; this
 * refuses early what could never be delivered to.
 */
export function checkUrl(raw: string): Checked<string> {
  const refuse = (message: string): Checked<string> => ({ ok: false, errors: [{ path: "url", message }] });
  if (raw.length > MAX_URL_LENGTH) return refuse(`at most ${MAX_URL_LENGTH} characters`);
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    return refuse("not an absolute URL");
  }
  if (url.protocol !== "https:") return refuse("must be an https: URL");
  if (url.username || url.password) return refuse("may not carry a user name or password");
  const host = url.hostname.replace(/^\[|\]$/g, "").toLowerCase();
  if (host === "localhost" || host.endsWith(".localhost")) return refuse("must be a public host, not localhost");
  if (/^[\d.]+$/.test(host) || host.includes(":")) {
    const range = refusedRange(host);
    if (range) return refuse(`must be a public address, not a ${range} one`);
  }
  return { ok: true, value: url.href };
}

/** The kinds filter: absent for every kind; otherwise known kinds, at least one, each once. */
export function checkKinds(kinds: readonly string[] | null | undefined): Checked<string[] | null> {
  if (kinds === null || kinds === undefined) return { ok: true, value: null };
  const errors: FieldError[] = [];
  if (kinds.length === 0)
    errors.push({ path: "kinds", message: "name at least one kind, or leave it out for every kind" });
  kinds.forEach((kind, i) => {
    if (!(EVENT_KINDS as readonly string[]).includes(kind)) {
      errors.push({ path: `kinds.${i}`, message: `not an event kind (one of ${EVENT_KINDS.join(", ")})` });
    } else if (kinds.indexOf(kind) !== i) {
      errors.push({ path: `kinds.${i}`, message: "named twice" });
    }
  });
  return errors.length ? { ok: false, errors } : { ok: true, value: [...kinds] };
}

/** The body of a message, as Standard Webhooks suggests: its type, when it happened, and its data. */
export function messageBody(message: { kind: string; at: Date; data: unknown }): string {
  return JSON.stringify({ type: message.kind, timestamp: message.at.toISOString(), data: message.data });
}

/**
 * The headers of one attempt: `webhook-id` (the same for every attempt of a message, so a receiver
 * can drop duplicates), `webhook-timestamp` (this attempt's, in seconds) and `webhook-signature`
 * (`v1,` and the base64 HMAC-SHA256 of `id.timestamp.body` with the secret), signed by the
 * `standardwebhooks` package, the same code receivers verify with.
 */
export function signedHeaders(secret: string, messageId: string, body: string, now: Date): Record<string, string> {
  return {
    "content-type": "application/json",
    "webhook-id": messageId,
    "webhook-timestamp": String(Math.floor(now.getTime() / 1000)),
    "webhook-signature": new Webhook(secret).sign(messageId, now, body),
  };
}

export interface Backoff {
  backoffBaseMs: number;
  backoffMaxMs: number;
}

/**
 * The delay before the next attempt after `attempts` attempts: "full jitter", a random delay up to
 * a ceiling that doubles with each attempt (from the base, up to the maximum). The randomness spreads
 * the retries of a receiver that failed many messages at once.
 */
export function retryDelayMs(attempts: number, backoff: Backoff, random: () => number = Math.random): number {
  const ceiling = Math.min(backoff.backoffMaxMs, backoff.backoffBaseMs * 2 ** Math.min(Math.max(attempts - 1, 0), 40));
  return Math.floor(random() * ceiling);
}

/**
 * When to try again after a failed attempt, or null to give up: never after the message's
 * `expiresAt`, and a delay that would pass it is cut to it, so the last attempt is made then.
 */
export function nextAttemptAt(
  attempts: number,
  now: Date,
  expiresAt: Date,
  backoff: Backoff,
  random: () => number = Math.random,
): Date | null {
  if (now.getTime() >= expiresAt.getTime()) return null;
  return new Date(Math.min(now.getTime() + retryDelayMs(attempts, backoff, random), expiresAt.getTime()));
}

/** An attempt's outcome in the words a delivery log shows; any 2xx status is a success. */
export function attemptOutcome(answer: { status: number } | { error: string }): {
  ok: boolean;
  statusCode: number | null;
  error: string | null;
} {
  if ("error" in answer) return { ok: false, statusCode: null, error: answer.error.slice(0, 500) };
  const ok = answer.status >= 200 && answer.status < 300;
  return { ok, statusCode: answer.status, error: ok ? null : `the receiver answered ${answer.status}` };
}
