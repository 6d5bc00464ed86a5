/**
 * Signed agent cards in: whose keys the registry trusts with an imported card's signatures, and
 * what it records. A key is trusted when it is in the configured trust list (CARD_TRUST_JWKS), or
 * when it is published by a domain this provider has verified — fetched through the outbound door,
 * and never from a `jku` outside that domain. At intake no domain is verified yet, so a card signed
 * by another key is recorded UNTRUSTED_KEY with the card kept; when the owner later verifies a
 * domain whose JWKS holds that key, the record becomes VERIFIED with the domain.
 */
import type { JWK } from "jose";
import type { TrustConfig } from "../config.ts";
import type { Db } from "../db/client.ts";
import { badInput } from "../errors.ts";
import type { Outbound } from "../outbound/outbound.ts";
import { verifyCardSignatures } from "./card.signature.ts";
import { covers } from "./domain.rules.ts";

export const CARD_SIGNATURE_STATUSES = ["VERIFIED", "UNTRUSTED_KEY", "UNSIGNED"] as const;

/** What the profile shows of the card a provider was imported from. */
export interface CardSignature {
  status: (typeof CARD_SIGNATURE_STATUSES)[number];
  /** The verified domain whose JWKS holds the key; null for a key of the trust list. */
  domain: string | null;
  kid: string | null;
}

/** A JWK set's keys, or undefined when `value` is not one. */
export function jwkSetKeys(value: unknown): JWK[] | undefined {
  const keys = (value as { keys?: unknown } | null)?.keys;
  if (!Array.isArray(keys) || !keys.every((k) => k !== null && typeof k === "object" && !Array.isArray(k))) {
    return undefined;
  }
  return keys as JWK[];
}

const trustLists = new Map<string, { keys: JWK[] }>();

/** The configured trust list (CARD_TRUST_JWKS), parsed once; checked by loadConfig. */
function trustList(config: Pick<TrustConfig, "cardTrustJwks">): { keys: JWK[] } {
  const text = config.cardTrustJwks;
  if (!text) return { keys: [] };
  let list = trustLists.get(text);
  if (!list) {
    list = { keys: jwkSetKeys(JSON.parse(text)) ?? [] };
    trustLists.set(text, list);
  }
  return list;
}

/**
 * The check of an imported card's signatures against the trust list. A signature by a trusted key
 * that does not verify is a 400: nothing is written.
 */
export async function importedCardSignature(
  card: object,
  config: Pick<TrustConfig, "cardTrustJwks">,
): Promise<{ record: CardSignature; signedCard: object | null }> {
  const check = await verifyCardSignatures(card, trustList(config));
  switch (check.status) {
    case "INVALID":
      throw badInput("The card's signature does not verify", [
        { path: "document.signatures", message: "does not verify with the key it names, or is malformed" },
      ]);
    case "UNSIGNED":
      return { record: { status: "UNSIGNED", domain: null, kid: null }, signedCard: null };
    default:
      return { record: { status: check.status, domain: null, kid: check.kid }, signedCard: card };
  }
}

/**
 * Where a verified domain publishes its keys: a signature's `jku` when it is on that domain, and
 * the domain's `/.well-known/jwks.json`.
 */
function jwksUrls(card: object, domain: string): string[] {
  const urls = new Set<string>();
  for (const signature of ((card as { signatures?: unknown }).signatures as { protected?: unknown }[]) ?? []) {
    try {
      const header = JSON.parse(Buffer.from(String(signature?.protected), "base64url").toString("utf8"));
      const jku = typeof header?.jku === "string" ? new URL(header.jku) : undefined;
      if (jku?.protocol === "https:" && covers(domain, jku.hostname)) urls.add(jku.href);
    } catch {}
  }
  urls.add(`https://${domain}/.well-known/jwks.json`);
  return [...urls];
}

/**
 * A domain of the provider was just verified: when its imported card waits for a trusted key, the
 * domain's JWKS is fetched (outside any transaction) and, when it holds the key and the signature
 * verifies, the record becomes VERIFIED with the domain. Answers whether it changed.
 */
export async function vouchByDomain(db: Db, outbound: Outbound, providerId: number, domain: string): Promise<boolean> {
  const row = await db.provider.findUnique({
    where: { id: providerId },
    select: { cardSignature: true, signedCard: true },
  });
  const record = row?.cardSignature as CardSignature | null | undefined;
  if (!row?.signedCard || record?.status !== "UNTRUSTED_KEY") return false;
  const card = row.signedCard as object;
  for (const url of jwksUrls(card, domain)) {
    let keys: JWK[] | undefined;
    try {
      const answer = await outbound.get(url, { accept: "application/jwk-set+json, application/json" });
      keys = answer.status === 200 ? jwkSetKeys(JSON.parse(answer.body)) : undefined;
    } catch {
      // Unreachable, refused or not JSON: this place vouches for nothing.
    }
    if (!keys) continue;
    const check = await verifyCardSignatures(card, { keys });
    if (check.status !== "VERIFIED") continue;
    const verified: CardSignature = { status: "VERIFIED", domain, kid: check.kid };
    // Only a record still waiting for a key is replaced: a concurrent change wins.
    return db.$transaction(async (tx) => {
      const current = await tx.provider.findUnique({ where: { id: providerId }, select: { cardSignature: true } });
      if ((current?.cardSignature as CardSignature | null)?.status !== "UNTRUSTED_KEY") return false;
      await tx.provider.update({
        where: { id: providerId },
        data: { cardSignature: verified as object, updatedAt: new Date() },
      });
      return true;
    });
  }
  return false;
}

/** The record of a card whose vouching domain is no longer verified: its key is untrusted again. */
export function untrusted(record: CardSignature): CardSignature {
  return { status: "UNTRUSTED_KEY", domain: null, kid: record.kid };
}
