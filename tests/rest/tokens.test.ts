/** Token issue, rotation and revocation through /api/v1, and that no plaintext token is ever stored. */
import { createHash } from "node:crypto";
import { describe, expect, test } from "@jest/globals";
import { dialectOf } from "../../src/db/client.ts";
import { approve, call, config, db, expectProblem, intake, reviewerToken, tableNames } from "../helpers.ts";

const issue = (providerCode: string, token: string, body: Record<string, unknown> = {}) =>
  call("POST", `/api/v1/providers/${providerCode}/tokens`, { token, body });
const revoke = (providerCode: string, tokenId: string, token?: string) =>
  call("DELETE", `/api/v1/providers/${providerCode}/tokens/${tokenId}`, token ? { token } : {});

async function activeTokens(providerCode: string): Promise<number> {
  return db.accessToken.count({ where: { provider: { providerCode }, revokedAt: null } });
}

describe("POST /api/v1/providers/{providerCode}/tokens", () => {
  test("issues a token once (201, no-store) and it authenticates", async () => {
    const created = await intake({ visibility: "PRIVATE" });
    const answer = await issue(created.providerCode, created.accessToken, { label: "deploy" });
    expect(answer.status).toBe(201);
    expect(answer.headers.get("cache-control")).toBe("no-store");
    expect(answer.body.accessToken).toMatch(/^agr_[0-9A-Za-z]{38}$/);
    expect(answer.body.accessToken).not.toBe(created.accessToken);
    expect(answer.body.token).toMatchObject({
      tokenId: expect.stringMatching(/^tok_/),
      label: "deploy",
      prefix: answer.body.accessToken.slice(0, 10),
      revokedAt: null,
    });
    expect(await activeTokens(created.providerCode)).toBe(2);

    const read = await call("GET", `/api/v1/providers/${created.providerCode}`, { token: answer.body.accessToken });
    expect(read.status).toBe(200);
    expect(read.body.tokens.map((t: { label: string }) => t.label)).toEqual(["intake", "deploy"]);
    expect(read.body.reviewTimeline.map((e: { kind: string }) => e.kind)).toContain("TOKEN_ISSUED");
    // The secret is never shown again.
    expect(read.text).not.toContain(answer.body.accessToken);
  });

  test("at most 5 active tokens: the sixth is a 409", async () => {
    const created = await intake();
    for (let i = 2; i <= 5; i++) {
      const answer = await issue(created.providerCode, created.accessToken, { label: `t${i}` });
      expect(answer.status).toBe(201);
    }
    expect(await activeTokens(created.providerCode)).toBe(5);
    const sixth = await issue(created.providerCode, created.accessToken, { label: "t6" });
    expectProblem(sixth, 409, "CONFLICT");
    expect(await activeTokens(created.providerCode)).toBe(5);
    expect(await db.accessToken.count({ where: { provider: { providerCode: created.providerCode } } })).toBe(5);

    // A rotation frees its own slot: the current token is revoked in the same step.
    const rotated = await issue(created.providerCode, created.accessToken, { revokeCurrent: true });
    expect(rotated.status).toBe(201);
    expect(await activeTokens(created.providerCode)).toBe(5);
  });

  test("rotation with revokeCurrent revokes the old token at the next request", async () => {
    const created = await intake();
    const rotated = await issue(created.providerCode, created.accessToken, { revokeCurrent: true, label: "rotated" });
    expect(rotated.status).toBe(201);
    const old = await call("GET", `/api/v1/providers/${created.providerCode}`, { token: created.accessToken });
    expectProblem(old, 401, "UNAUTHENTICATED");
    const fresh = await call("PATCH", `/api/v1/providers/${created.providerCode}`, {
      token: rotated.body.accessToken,
      body: { summary: "Rotated" },
    });
    expect(fresh.status).toBe(200);
    const intakeRow = await db.accessToken.findFirstOrThrow({
      where: { provider: { providerCode: created.providerCode }, label: "intake" },
    });
    expect(intakeRow.revokedAt).toBeInstanceOf(Date);
  });

  test("a label over 80 characters is a 400", async () => {
    const created = await intake();
    const answer = await issue(created.providerCode, created.accessToken, { label: "x".repeat(81) });
    expectProblem(answer, 400, "BAD_USER_INPUT");
    expect(await activeTokens(created.providerCode)).toBe(1);
  });

  test("anonymous: 401; another agent: 403 or 404; a reviewer may issue one (access after reinstatement)", async () => {
    const target = await intake();
    await approve(target.providerCode);
    const hidden = await intake({ visibility: "PRIVATE" });
    const other = await intake();
    const anonymous = await call("POST", `/api/v1/providers/${target.providerCode}/tokens`, { body: {} });
    expectProblem(anonymous, 401, "UNAUTHENTICATED");
    expectProblem(await issue(target.providerCode, other.accessToken), 403, "FORBIDDEN");
    expectProblem(await issue(hidden.providerCode, other.accessToken), 404, "NOT_FOUND");
    expect(await activeTokens(target.providerCode)).toBe(1);
    const byReviewer = await issue(target.providerCode, await reviewerToken());
    expect(byReviewer.status).toBe(201);
    expect(await activeTokens(target.providerCode)).toBe(2);
    expect(await activeTokens(hidden.providerCode)).toBe(1);
  });
});

describe("DELETE /api/v1/providers/{providerCode}/tokens/{tokenId}", () => {
  test("the owner revokes a token; it stops working at once", async () => {
    const created = await intake();
    const spare = await issue(created.providerCode, created.accessToken, { label: "spare" });
    const answer = await revoke(created.providerCode, spare.body.token.tokenId, created.accessToken);
    expect(answer.status).toBe(200);
    expect(answer.body).toMatchObject({ tokenId: spare.body.token.tokenId, revokedAt: expect.any(String) });
    expectProblem(
      await call("GET", `/api/v1/providers/${created.providerCode}`, { token: spare.body.accessToken }),
      401,
      "UNAUTHENTICATED",
    );
    // Revoking again changes nothing and still answers the token.
    const again = await revoke(created.providerCode, spare.body.token.tokenId, created.accessToken);
    expect(again.status).toBe(200);
    expect(again.body.revokedAt).toBe(answer.body.revokedAt);
  });

  test("a reviewer may revoke", async () => {
    const created = await intake();
    const row = await db.accessToken.findFirstOrThrow({ where: { provider: { providerCode: created.providerCode } } });
    const answer = await revoke(created.providerCode, row.tokenId, await reviewerToken("reviewer-revoker"));
    expect(answer.status).toBe(200);
    expectProblem(
      await call("GET", `/api/v1/providers/${created.providerCode}`, { token: created.accessToken }),
      401,
      "UNAUTHENTICATED",
    );
    const event = await db.reviewEvent.findFirstOrThrow({
      where: { provider: { providerCode: created.providerCode }, kind: "TOKEN_REVOKED" },
    });
    expect(event.actor).toBe("reviewer:reviewer-revoker");
  });

  test("another agent may not: 403 on a visible provider, 404 on a private one; nothing revoked", async () => {
    const visible = await intake();
    await approve(visible.providerCode);
    const hidden = await intake({ visibility: "PRIVATE" });
    const other = await intake();
    for (const [target, status, code] of [
      [visible, 403, "FORBIDDEN"],
      [hidden, 404, "NOT_FOUND"],
    ] as const) {
      const row = await db.accessToken.findFirstOrThrow({ where: { provider: { providerCode: target.providerCode } } });
      expectProblem(await revoke(target.providerCode, row.tokenId, other.accessToken), status, code);
      expect(await activeTokens(target.providerCode)).toBe(1);
    }
  });

  test("anonymous: 401; a token of another provider: 404", async () => {
    const created = await intake();
    const other = await intake();
    const row = await db.accessToken.findFirstOrThrow({ where: { provider: { providerCode: other.providerCode } } });
    expectProblem(await revoke(created.providerCode, row.tokenId), 401, "UNAUTHENTICATED");
    expectProblem(await revoke(created.providerCode, row.tokenId, created.accessToken), 404, "NOT_FOUND");
    expect(await activeTokens(other.providerCode)).toBe(1);
  });
});

describe("storage", () => {
  test("no plaintext token anywhere in the database; access_tokens.hash is its SHA-256", async () => {
    const created = await intake();
    const issued = await issue(created.providerCode, created.accessToken, { label: "second" });
    expect(issued.status).toBe(201);
    const secrets = [created.accessToken, issued.body.accessToken as string];
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
