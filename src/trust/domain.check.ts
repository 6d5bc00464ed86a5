/**
 * The proof of control of a domain, over the network: the well-known file first, then the TXT
 * record, both through the one outbound door (src/outbound). Never called inside a transaction.
 */
import { randomBytes } from "node:crypto";
import type { Outbound } from "../outbound/outbound.ts";
import { challengeOf, type DomainMethod, fileHoldsToken, txtHoldsToken } from "./domain.rules.ts";

export type Proof = { verified: true; method: DomainMethod } | { verified: false; reason: string };

/** A fresh challenge token: 24 random bytes, base64url (32 characters, safe in a URL, a file and a TXT record). */
export function newChallengeToken(): string {
  return randomBytes(24).toString("base64url");
}

/** Why a request of the outbound door failed, in plain words. */
function failure(error: unknown): string {
  const reason = (error as { reason?: string } | null)?.reason;
  switch (reason) {
    case "DNS":
      return "its name did not resolve";
    case "TIMEOUT":
      return "it did not answer in time";
    case "PRIVATE_ADDRESS":
      return "it resolves to a private or local address, which the registry does not contact";
    case "TOO_LARGE":
      return "the answer was too large";
    case "REDIRECT":
      return "it redirected somewhere the registry does not follow";
    case "BAD_URL":
      return "the address is not valid";
    default:
      return "it could not be reached";
  }
}

async function byFile(outbound: Outbound, url: string, token: string): Promise<string | null> {
  try {
    const answer = await outbound.get(url, { accept: "text/plain" });
    if (answer.status !== 200) return `the file ${url} answered HTTP ${answer.status}`;
    return fileHoldsToken(answer.body, token) ? null : `the file ${url} does not hold the token`;
  } catch (error) {
    return `the file ${url} could not be read: ${failure(error)}`;
  }
}

async function byDns(outbound: Outbound, name: string, value: string, token: string): Promise<string | null> {
  try {
    const records = await outbound.resolveTxt(name);
    return txtHoldsToken(records, token) ? null : `no TXT record of ${name} is "${value}"`;
  } catch (error) {
    const reason = (error as { reason?: string } | null)?.reason;
    return reason === "DNS"
      ? `${name} has no TXT record`
      : `the TXT records of ${name} could not be read: ${failure(error)}`;
  }
}

/** Checks the file, then the TXT record; answers the first that proves control, or why neither did. */
export async function proveControl(
  outbound: Outbound,
  input: { domain: string; providerCode: string; token: string },
): Promise<Proof> {
  const { http, dns } = challengeOf(input.domain, input.providerCode, input.token);
  const file = await byFile(outbound, http.url, input.token);
  if (file === null) return { verified: true, method: "HTTP" };
  const txt = await byDns(outbound, dns.name, dns.value, input.token);
  if (txt === null) return { verified: true, method: "DNS" };
  return { verified: false, reason: `Neither proof was found: ${file}, and ${txt}.` };
}
