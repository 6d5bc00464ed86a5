/**
 * Agent access tokens (API.md §3): `agr_` + 32 base62 characters + the 6-character base62 CRC32
 * of those 32. The checksum lets a mistyped or forged token be refused without a database
 * look-up; only the SHA-256 of a token is ever stored.
 */
import { createHash, randomBytes, randomInt } from "node:crypto";
import { crc32 } from "node:zlib";

const ALPHABET = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz";
const PREFIX = "agr_";
const BODY_LENGTH = 32;
const CHECKSUM_LENGTH = 6;
const TOKEN_PATTERN = /^agr_[0-9A-Za-z]{38}$/;

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

export function mintToken(): MintedToken {
  const body = randomBase62(BODY_LENGTH);
  const secret = `${PREFIX}${body}${checksum(body)}`;
  return {
    secret,
    hash: hashToken(secret),
    prefix: secret.slice(0, PREFIX.length + 6),
    tokenId: `tok_${randomBytes(9).toString("base64url")}`,
  };
}

/** Whether a string looks like an agent token at all (so it is not tried as a JWT). */
export function looksLikeAgentToken(value: string): boolean {
  return value.startsWith(PREFIX);
}

/** True when the token has the right shape and its checksum matches. No database involved. */
export function hasValidChecksum(token: string): boolean {
  if (!TOKEN_PATTERN.test(token)) return false;
  const body = token.slice(PREFIX.length, PREFIX.length + BODY_LENGTH);
  return token.slice(PREFIX.length + BODY_LENGTH) === checksum(body);
}

export function hashToken(token: string): string {
  return createHash("sha256").update(token).digest("hex");
}
