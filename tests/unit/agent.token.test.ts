/** Agent tokens: format, checksum and hash (pure; no database). */
import { createHash } from "node:crypto";
import { crc32 } from "node:zlib";
import { describe, expect, test } from "@jest/globals";
import { hashToken, hasValidChecksum, looksLikeAgentToken, mintToken } from "../../src/auth/agent.token.ts";

const BASE62 = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz";

describe("mintToken", () => {
  test("agr_ + 32 base62 + a 6-character base62 CRC32 of those 32", () => {
    const { secret } = mintToken();
    expect(secret).toMatch(/^agr_[0-9A-Za-z]{38}$/);
    const body = secret.slice(4, 36);
    let n = 0;
    for (const ch of secret.slice(36)) n = n * 62 + BASE62.indexOf(ch);
    expect(n).toBe(crc32(body));
  });

  test("tokens are random, with their hash, prefix and a public id", () => {
    const minted = Array.from({ length: 50 }, () => mintToken());
    expect(new Set(minted.map((t) => t.secret)).size).toBe(50);
    expect(new Set(minted.map((t) => t.tokenId)).size).toBe(50);
    for (const t of minted) {
      expect(t.hash).toBe(createHash("sha256").update(t.secret).digest("hex"));
      expect(t.prefix).toBe(t.secret.slice(0, 10));
      expect(t.tokenId).toMatch(/^tok_[A-Za-z0-9_-]{12}$/);
      expect(t.tokenId).not.toContain(t.secret.slice(4, 12));
    }
  });
});

describe("hasValidChecksum", () => {
  test("accepts every minted token", () => {
    for (let i = 0; i < 200; i++) expect(hasValidChecksum(mintToken().secret)).toBe(true);
  });

  test("rejects any single flipped character", () => {
    const { secret } = mintToken();
    for (let i = 4; i < secret.length; i++) {
      const ch = secret[i] as string;
      const other = BASE62[(BASE62.indexOf(ch) + 1) % 62] as string;
      const flipped = `${secret.slice(0, i)}${other}${secret.slice(i + 1)}`;
      expect({ i, ok: hasValidChecksum(flipped) }).toEqual({ i, ok: false });
    }
  });

  test.each([
    ["empty", ""],
    ["no prefix", "x".repeat(42)],
    ["wrong prefix", `agx_${"a".repeat(38)}`],
    ["too short", "agr_abc"],
    ["non-base62", `agr_${"-".repeat(38)}`],
  ])("rejects %s", (_what, token) => {
    expect(hasValidChecksum(token)).toBe(false);
  });

  test("rejects a token with trailing characters", () => {
    expect(hasValidChecksum(`${mintToken().secret}0`)).toBe(false);
  });
});

describe("hashToken and looksLikeAgentToken", () => {
  test("the hash is the hex SHA-256 of the whole token", () => {
    expect(hashToken("agr_abc")).toBe(createHash("sha256").update("agr_abc").digest("hex"));
    expect(hashToken("agr_abc")).toMatch(/^[0-9a-f]{64}$/);
  });

  test("agent tokens are told apart from JWTs by their prefix", () => {
    expect(looksLikeAgentToken(mintToken().secret)).toBe(true);
    expect(looksLikeAgentToken("eyJhbGciOiJIUzI1NiJ9.e30.sig")).toBe(false);
  });
});
