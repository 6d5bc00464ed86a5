/** Token issue, rotation, revocation and use through both doors, and that no plaintext token is ever stored. */
import { createHash } from "node:crypto";
import { describe, expect, test } from "@jest/globals";
import { dialectOf } from "../../src/db/client.ts";
import { type Door, doors, expectCode, expectOk } from "../doors.ts";
import { approve, config, db, intake, reviewerToken, tableNames } from "../helpers.ts";

async function activeTokens(providerCode: string): Promise<number> {
  return db.accessToken.count({ where: { provider: { providerCode }, revokedAt: null } });
}

describe.each(doors)("$name", (door: Door) => {
  const issue = (providerCode: string, token: string | undefined, args: Record<string, unknown> = {}) =>
    door.run("Mutation.issueToken", { providerCode, ...args }, token ? { token } : {});
  const revoke = (providerCode: string, tokenId: string, token?: string) =>
    door.run("Mutation.revokeToken", { providerCode, tokenId }, token ? { token } : {});
  const read = (providerCode: string, token?: string) =>
    door.run("Query.provider", { providerCode }, token ? { token } : {});

  describe("issueToken", () => {
    test("issues a token once (201, no-store) and it authenticates", async () => {
      const created = await intake({ visibility: "PRIVATE" });
      const answer = await issue(created.providerCode, created.accessToken, { label: "deploy" });
      const issued = expectOk(answer, 201);
      expect(answer.answer.headers.get("cache-control")).toBe("no-store");
      expect(issued.accessToken).toMatch(/^agr_[0-9A-Za-z]{38}$/);
      expect(issued.accessToken).not.toBe(created.accessToken);
      expect(issued.token).toMatchObject({
        tokenId: expect.stringMatching(/^tok_/),
        label: "deploy",
        prefix: issued.accessToken.slice(0, 10),
        revokedAt: null,
      });
      expect(await activeTokens(created.providerCode)).toBe(2);

      const profile = await read(created.providerCode, issued.accessToken);
      const provider = expectOk(profile);
      expect(provider.tokens.map((t: { label: string }) => t.label)).toEqual(["intake", "deploy"]);
      expect(provider.reviewTimeline.map((e: { kind: string }) => e.kind)).toContain("TOKEN_ISSUED");
      // The secret is never shown again.
      expect(profile.answer.text).not.toContain(issued.accessToken);
    });

    test("at most 5 active tokens: the sixth is a CONFLICT (409); a rotation frees its own slot", async () => {
      const created = await intake();
      for (let i = 2; i <= 5; i++)
        expectOk(await issue(created.providerCode, created.accessToken, { label: `t${i}` }), 201);
      expect(await activeTokens(created.providerCode)).toBe(5);
      expectCode(await issue(created.providerCode, created.accessToken, { label: "t6" }), "CONFLICT");
      expect(await activeTokens(created.providerCode)).toBe(5);
      expect(await db.accessToken.count({ where: { provider: { providerCode: created.providerCode } } })).toBe(5);

      // A rotation frees its own slot: the current token is revoked in the same step.
      expectOk(await issue(created.providerCode, created.accessToken, { revokeCurrent: true }), 201);
      expect(await activeTokens(created.providerCode)).toBe(5);
    });

    test("rotation with revokeCurrent revokes the token it was made with, at the next request", async () => {
      const created = await intake({ visibility: "PRIVATE" });
      const rotated = expectOk(
        await issue(created.providerCode, created.accessToken, { revokeCurrent: true, label: "rotated" }),
        201,
      );
      const fresh = rotated.accessToken as string;
      expectCode(await read(created.providerCode, created.accessToken), "UNAUTHENTICATED");

      const provider = expectOk(await read(created.providerCode, fresh));
      expect(provider.tokens).toHaveLength(2);
      expect(
        provider.tokens
          .filter((t: { revokedAt: string | null }) => t.revokedAt === null)
          .map((t: { tokenId: string }) => t.tokenId),
      ).toEqual([rotated.token.tokenId]);
      const patched = await door.run(
        "Mutation.updateProvider",
        { providerCode: created.providerCode, summary: "Rotated" },
        { token: fresh },
      );
      expect(expectOk(patched).summary).toBe("Rotated");
      const intakeRow = await db.accessToken.findFirstOrThrow({
        where: { provider: { providerCode: created.providerCode }, label: "intake" },
      });
      expect(intakeRow.revokedAt).toBeInstanceOf(Date);
    });

    test("a label over 80 characters is BAD_USER_INPUT (400) naming it", async () => {
      const created = await intake();
      const answer = await issue(created.providerCode, created.accessToken, { label: "x".repeat(81) });
      expectCode(answer, "BAD_USER_INPUT");
      expect(answer.paths).toEqual(["label"]);
      expect(await activeTokens(created.providerCode)).toBe(1);
    });

    test("anonymous: 401; another agent: 403 on a visible provider, 404 on a private one; a reviewer may issue", async () => {
      const target = await intake();
      await approve(target.providerCode);
      const hidden = await intake({ visibility: "PRIVATE" });
      const other = await intake();
      expectCode(await issue(target.providerCode, undefined), "UNAUTHENTICATED");
      expectCode(await issue(target.providerCode, other.accessToken), "FORBIDDEN");
      expectCode(await issue(hidden.providerCode, other.accessToken), "NOT_FOUND");
      expect(await activeTokens(target.providerCode)).toBe(1);
      expectOk(await issue(target.providerCode, await reviewerToken()), 201);
      expect(await activeTokens(target.providerCode)).toBe(2);
      expect(await activeTokens(hidden.providerCode)).toBe(1);
    });
  });

  describe("revokeToken", () => {
    test("the owner revokes a token; it stops working at once; revoking again answers the same token", async () => {
      const created = await intake();
      const spare = expectOk(await issue(created.providerCode, created.accessToken, { label: "spare" }), 201);
      const revoked = expectOk(await revoke(created.providerCode, spare.token.tokenId, created.accessToken));
      expect(revoked).toMatchObject({ tokenId: spare.token.tokenId, revokedAt: expect.any(String) });
      expectCode(await read(created.providerCode, spare.accessToken), "UNAUTHENTICATED");
      // Revoking again changes nothing and still answers the token.
      const again = expectOk(await revoke(created.providerCode, spare.token.tokenId, created.accessToken));
      expect(again.revokedAt).toBe(revoked.revokedAt);
    });

    test("a reviewer may revoke (recorded as the reviewer); the revoked token stops working", async () => {
      const created = await intake();
      await approve(created.providerCode);
      const row = await db.accessToken.findFirstOrThrow({
        where: { provider: { providerCode: created.providerCode } },
      });
      const answer = await revoke(created.providerCode, row.tokenId, await reviewerToken("reviewer-revoker"));
      expect(expectOk(answer).tokenId).toBe(row.tokenId);
      expect(await activeTokens(created.providerCode)).toBe(0);
      expectCode(await read(created.providerCode, created.accessToken), "UNAUTHENTICATED");
      const event = await db.reviewEvent.findFirstOrThrow({
        where: { provider: { providerCode: created.providerCode }, kind: "TOKEN_REVOKED" },
      });
      expect(event.actor).toBe("reviewer:reviewer-revoker");
    });

    test("another agent may not: FORBIDDEN on a visible provider, NOT_FOUND on a private one; nothing revoked", async () => {
      const visible = await intake();
      await approve(visible.providerCode);
      const hidden = await intake({ visibility: "PRIVATE" });
      const other = await intake();
      for (const [target, code] of [
        [visible, "FORBIDDEN"],
        [hidden, "NOT_FOUND"],
      ] as const) {
        const row = await db.accessToken.findFirstOrThrow({
          where: { provider: { providerCode: target.providerCode } },
        });
        expectCode(await revoke(target.providerCode, row.tokenId, other.accessToken), code);
        expect(await activeTokens(target.providerCode)).toBe(1);
      }
    });

    test("anonymous: 401; a token of another provider or an unknown token id: NOT_FOUND", async () => {
      const created = await intake();
      const other = await intake();
      const row = await db.accessToken.findFirstOrThrow({ where: { provider: { providerCode: other.providerCode } } });
      expectCode(await revoke(created.providerCode, row.tokenId), "UNAUTHENTICATED");
      expectCode(await revoke(created.providerCode, row.tokenId, created.accessToken), "NOT_FOUND");
      expectCode(await revoke(created.providerCode, "tok_nothing", created.accessToken), "NOT_FOUND");
      expect(await activeTokens(other.providerCode)).toBe(1);
      expect(await activeTokens(created.providerCode)).toBe(1);
    });
  });

  describe("lastUsedAt", () => {
    test("a token's first use records when it was used, and the profile shows that instant", async () => {
      const created = await intake({ visibility: "PRIVATE" });
      const stored = () =>
        db.accessToken.findFirstOrThrow({ where: { provider: { providerCode: created.providerCode } } });
      expect((await stored()).lastUsedAt).toBeNull();
      const before = Date.now();
      expectOk(await read(created.providerCode, created.accessToken));
      const used = (await stored()).lastUsedAt;
      expect(used).toBeInstanceOf(Date);
      expect(used?.getTime()).toBeGreaterThanOrEqual(before - 1000);
      expect(used?.getTime()).toBeLessThanOrEqual(Date.now());
      const again = expectOk(await read(created.providerCode, created.accessToken));
      expect(again.tokens[0].lastUsedAt).toBe(used?.toISOString());
    });
  });

  describe("storage", () => {
    test("no plaintext token anywhere in the database; access_tokens.hash is its SHA-256", async () => {
      const created = await intake();
      const issued = expectOk(await issue(created.providerCode, created.accessToken, { label: "second" }), 201);
      const secrets = [created.accessToken, issued.accessToken as string];
      // The part after the prefix is what must never be stored, in whole or as its random body.
      const bodies = secrets.map((s) => s.slice(4, 36));

      const tables = await tableNames();
      expect(tables.map((t) => t.name)).toEqual(
        expect.arrayContaining(["providers", "provider_versions", "reviews", "review_events", "access_tokens"]),
      );
      let cells = 0;
      for (const { name } of tables) {
        // PostgreSQL: each row as its text form, which also covers columns the client cannot read
        // (the tsvector of the search index).
        const rows = await db.$queryRawUnsafe<Record<string, unknown>[]>(
          dialectOf(config.databaseUrl) === "postgresql"
            ? `SELECT t::text AS "row" FROM "${name}" AS t`
            : `SELECT * FROM "${name}"`,
        );
        for (const row of rows) {
          for (const value of Object.values(row)) {
            cells++;
            const text = value instanceof Uint8Array ? Buffer.from(value).toString("latin1") : String(value);
            for (const secret of [...secrets, ...bodies]) expect(text.includes(secret)).toBe(false);
          }
        }
      }
      expect(cells).toBeGreaterThan(0);

      const stored = await db.accessToken.findMany({
        where: { provider: { providerCode: created.providerCode } },
        orderBy: { id: "asc" },
      });
      expect(stored.map((t) => t.hash)).toEqual(secrets.map((s) => createHash("sha256").update(s).digest("hex")));
      expect(stored.map((t) => t.prefix)).toEqual(secrets.map((s) => s.slice(0, 10)));
    });
  });
});
