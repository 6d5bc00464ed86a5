/**
 * Verified publisher domains, the pure part: which domain a provider may claim, what a challenge
 * asks it to publish, what counts as proof, and what a re-check's outcome does to a verified domain.
 * The writes are in domain.store.ts, the network in domain.check.ts.
 */
import { isIP } from "node:net";
import { domainToASCII } from "node:url";
import { parse } from "tldts";
import type { FieldError } from "../errors.ts";

export const DOMAIN_STATES = ["PENDING", "VERIFIED"] as const;
export type DomainState = (typeof DOMAIN_STATES)[number];
export const DOMAIN_METHODS = ["HTTP", "DNS"] as const;
export type DomainMethod = (typeof DOMAIN_METHODS)[number];

/** Consecutive failed re-checks after which a verified domain is no longer verified. */
export const MAX_RECHECK_FAILURES = 3;

/** The DNS name a TXT proof is published under, and the prefix of its value. */
export const DNS_LABEL = "_agent-registry";
export const DNS_VALUE_PREFIX = "agent-registry-verification=";

type Checked<T> = { ok: true; value: T } | { ok: false; errors: FieldError[] };
const refuse = (message: string): Checked<never> => ({ ok: false, errors: [{ path: "domain", message }] });

/** The host of an endpoint URL, lower-case ASCII without a trailing dot; null when it has none. */
export function endpointHost(url: string): string | null {
  try {
    const host = new URL(url).hostname.toLowerCase().replace(/\.$/, "");
    return host || null;
  } catch {
    return null;
  }
}

/** A domain as the owner names it in a later request, in the stored form (no checks: a look-up key). */
export function domainKey(input: string): string {
  const raw = input.trim().replace(/\.$/, "");
  return (domainToASCII(raw) || raw).toLowerCase();
}

/** Whether `domain` is `host` or a parent of it (`example.com` covers `api.example.com`). */
export function covers(domain: string, host: string | null): boolean {
  return host !== null && (host === domain || host.endsWith(`.${domain}`));
}

/**
 * The domain an owner asks to verify, normalized: lower-case, IDNA (A-labels), no trailing dot. It
 * must be a hostname (no IP literal, not `localhost`), not a public suffix (the Public Suffix List,
 * through tldts, private section included: nobody proves control of `co.uk` or `github.io` for one
 * agent), and the endpoint's host or a parent of it.
 */
export function normalizeDomain(input: unknown, endpointUrl: string): Checked<string> {
  if (typeof input !== "string" || input.trim() === "") return refuse("is required: a domain name such as example.com");
  const raw = input.trim().replace(/\.$/, "");
  if (raw.length > 253) return refuse("must be at most 253 characters");
  const bare = raw.replace(/^\[|\]$/g, "");
  if (isIP(bare) !== 0 || /^[\d.]+$/.test(raw)) return refuse("must be a domain name, not an IP address");
  if (/[/:@?#\s]/.test(raw)) return refuse("must be a domain name alone, without scheme, port or path");
  const ascii = domainToASCII(raw).toLowerCase();
  if (!ascii) return refuse("is not a valid domain name");
  const labels = ascii.split(".");
  if (labels.some((label) => !/^[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?$/.test(label)))
    return refuse("is not a valid domain name");
  if (ascii === "localhost" || ascii.endsWith(".localhost"))
    return refuse("must be a public domain name, not localhost");
  const parsed = parse(ascii, { allowPrivateDomains: true });
  if (labels.length < 2 || !parsed.domain || parsed.publicSuffix === ascii)
    return refuse("is a public suffix (like com or co.uk), which no single agent controls");
  if (!covers(ascii, endpointHost(endpointUrl))) return refuse("must be the endpoint's host or a parent of it");
  return { ok: true, value: ascii };
}

/** What a challenge asks the owner to publish (either proof will do). */
export function challengeOf(domain: string, providerCode: string, token: string) {
  return {
    http: { url: `https://${domain}/.well-known/agent-registry/${providerCode}.txt`, body: token },
    dns: { name: `${DNS_LABEL}.${domain}`, value: `${DNS_VALUE_PREFIX}${token}` },
  };
}

/** The well-known file proves control when one of its lines is the token (whitespace around it ignored). */
export function fileHoldsToken(body: string, token: string): boolean {
  return body.split(/\r?\n/).some((line) => line.trim() === token);
}

/** The TXT records prove control when one of them is `agent-registry-verification=<token>`. */
export function txtHoldsToken(records: readonly string[], token: string): boolean {
  return records.some((record) => record.trim() === `${DNS_VALUE_PREFIX}${token}`);
}

/** What a failed re-check of a verified domain does: count it, and at the limit lose the verification. */
export function afterFailedRecheck(failures: number): { failures: number; lost: boolean } {
  const next = failures + 1;
  return next >= MAX_RECHECK_FAILURES ? { failures: 0, lost: true } : { failures: next, lost: false };
}
