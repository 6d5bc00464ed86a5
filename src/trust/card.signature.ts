/**
 * Signed agent cards (A2A v1 §8.4): the canonical payload of a card, the registry's signatures over
 * it, and the check of a card's signatures against a JWK set.
 *
 * The payload is RFC 8785 (JCS, by the `canonicalize` package) of the card without `signatures`,
 * after the proto default values are removed (§8.4.1): empty lists and empty objects, recursively
 * (an object emptied by that is removed too). `false` stays: the card's booleans are `optional bool`,
 * explicitly set. Null and empty strings never occur in the registry's cards.
 */

import { createHash } from "node:crypto";
import canonicalize from "canonicalize";
import { flattenedVerify, importJWK, type JWK } from "jose";
import { ASYMMETRIC_JWS_ALGORITHMS } from "../auth/jws.algorithms.ts";
import type { AgentCard, AgentCardSignature } from "../interop/agent.card.ts";
import type { KeySet } from "./signing.keys.ts";

/** A JSON value with its default values removed; `undefined` when nothing is left of it. */
function withoutDefaults(value: unknown): unknown {
  if (Array.isArray(value)) {
    const items = value.map(withoutDefaults).filter((v) => v !== undefined);
    return items.length ? items : undefined;
  }
  if (value !== null && typeof value === "object") {
    const entries = Object.entries(value)
      .map(([k, v]) => [k, withoutDefaults(v)] as const)
      .filter(([, v]) => v !== undefined);
    return entries.length ? Object.fromEntries(entries) : undefined;
  }
  return value;
}

/** The bytes an agent card's signatures sign: JCS of the card without `signatures` and default values. */
export function cardPayload(card: object): Uint8Array {
  const { signatures: _, ...content } = card as { signatures?: unknown };
  return new TextEncoder().encode(canonicalize(withoutDefaults(content) ?? {}) as string);
}

/**
 * Signatures already made, by payload and signing kids: a card is signed once per process when it
 * changes, not on every read, and the same card keeps the same bytes (ES256 signatures are
 * randomized), so its ETag holds. Bounded: the oldest entries go first.
 */
const made = new Map<string, Promise<AgentCardSignature[]>>();
const MEMO_ENTRIES = 10_000;

/** The card's signatures by the registry's active keys, one per key. */
export function signCard(card: AgentCard, keys: KeySet): Promise<AgentCardSignature[]> {
  const payload = cardPayload(card);
  const memo = `${createHash("sha256").update(payload).digest("base64url")} ${keys.activeKids().join(",")}`;
  let signed = made.get(memo);
  if (!signed) {
    signed = keys.sign(payload);
    made.set(memo, signed);
    signed.catch(() => made.delete(memo));
    if (made.size > MEMO_ENTRIES) made.delete(made.keys().next().value as string);
  }
  return signed;
}

export type SignatureCheck =
  | { status: "VERIFIED"; kid: string }
  | { status: "INVALID" }
  | { status: "UNTRUSTED_KEY"; kid: string }
  | { status: "UNSIGNED" };

function protectedHeader(signature: AgentCardSignature): { alg?: unknown; kid?: unknown } | undefined {
  try {
    const header = JSON.parse(Buffer.from(signature.protected, "base64url").toString("utf8"));
    return header !== null && typeof header === "object" ? header : undefined;
  } catch {
    return undefined;
  }
}

/**
 * Checks a card's signatures against a JWK set (the trusted keys): VERIFIED, with its kid, when a
 * signature by a key of the set verifies and none by a key of the set fails; INVALID when one by a
 * key of the set fails (the card was changed after signing) or a signature is malformed;
 * UNTRUSTED_KEY, with the first kid, when no signature is by a key of the set; UNSIGNED without
 * signatures.
 */
export async function verifyCardSignatures(card: object, jwks: { keys: JWK[] }): Promise<SignatureCheck> {
  const signatures = (card as { signatures?: unknown }).signatures;
  if (signatures === undefined || (Array.isArray(signatures) && signatures.length === 0)) return { status: "UNSIGNED" };
  if (!Array.isArray(signatures)) return { status: "INVALID" };
  const payload = Buffer.from(cardPayload(card)).toString("base64url");
  let verified: string | undefined;
  let untrusted: string | undefined;
  for (const signature of signatures as AgentCardSignature[]) {
    if (typeof signature?.protected !== "string" || typeof signature.signature !== "string")
      return { status: "INVALID" };
    const header = protectedHeader(signature);
    if (!header || typeof header.kid !== "string" || typeof header.alg !== "string") return { status: "INVALID" };
    const jwk = jwks.keys.find((k) => k.kid === header.kid && (k.use === undefined || k.use === "sig"));
    if (!jwk) {
      untrusted ??= header.kid;
      continue;
    }
    try {
      if (jwk.alg !== undefined && jwk.alg !== header.alg) throw new Error("alg differs from the key's");
      const key = await importJWK(jwk, header.alg);
      await flattenedVerify(
        { protected: signature.protected, signature: signature.signature, header: signature.header, payload },
        key,
        { algorithms: ASYMMETRIC_JWS_ALGORITHMS },
      );
      verified ??= header.kid;
    } catch {
      return { status: "INVALID" };
    }
  }
  if (verified !== undefined) return { status: "VERIFIED", kid: verified };
  return { status: "UNTRUSTED_KEY", kid: untrusted as string };
}
