/**
 * Agent access tokens (API.md §3): `agr_` + 32 base62 characters + the 6-character base62 CRC32
 * of those 32. The checksum lets a mistyped or forged token be refused without a database
 * look-up; only the SHA-256 of a token is ever stored. API keys (src/apikeys) are the same secret
 * under a prefix of their own.
 */
import { createHash, randomBytes, randomInt } from "node:crypto";
import { crc32 } from "node:zlib";

const ALPHABET = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz";
export const AGENT_TOKEN_PREFIX = "agr_";
const PREFIX = AGENT_TOKEN_PREFIX;
const BODY_LENGTH = 32;
const CHECKSUM_LENGTH = 6;
/** The body and the checksum, after the prefix. */
const SECRET_REST = /^[0-9A-Za-z]{38}$/;

function randomBase62(length: number): string {
  let out = "";
  for (let i = 0; i < length; i++) out += ALPHABET[randomInt(62)];
  return out;
}

function base62(n: number, width: number): string {
  let out = "";
  let rest = n;
  while (rest > 0) {
    out = ALPHABET[rest % 62] + out;
    rest = Math.floor(rest / 62);
  }
  return out.padStart(width, "0");
}

function checksum(body: string): string {
  return base62(crc32(body), CHECKSUM_LENGTH);
}

/** A freshly minted token: the secret (shown once), its stored hash and its public metadata. */
export interface MintedToken {
  secret: string;
  hash: string;
  /** The first characters of the secret, safe to show so an owner can tell tokens apart. */
  prefix: string;
  /** The public identifier of the token, used to revoke it. */
  tokenId: string;
}

/** A secret with this prefix (`xxx_`), and a public identifier with `idPrefix`. */
export function mintSecret(prefix: string, idPrefix: string): MintedToken {
  const body = randomBase62(BODY_LENGTH);
  const secret = `${prefix}${body}${checksum(body)}`;
  return {
    secret,
    hash: hashToken(secret),
    prefix: secret.slice(0, prefix.length + 6),
    tokenId: `${idPrefix}${randomBytes(9).toString("base64url")}`,
  };
}

export function mintToken(): MintedToken {
  return mintSecret(PREFIX, "tok_");
}

/** Whether a string looks like an agent token at all (so it is not tried as a JWT). */
export function looksLikeAgentToken(value: string): boolean {
  return value.startsWith(PREFIX);
}

/** True when the secret has the prefix, the right shape and a matching checksum. No database involved. */
export function hasValidChecksum(token: string, prefix = PREFIX): boolean {
  if (!token.startsWith(prefix) || !SECRET_REST.test(token.slice(prefix.length))) return false;
  const body = token.slice(prefix.length, prefix.length + BODY_LENGTH);
  return token.slice(prefix.length + BODY_LENGTH) === checksum(body);
}

export function hashToken(token: string): string {
  return createHash("sha256").update(token).digest("hex");
}
