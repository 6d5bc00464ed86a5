/** Mutation.issueToken and Mutation.revokeToken: the same rules as the REST token routes. */
import { describe, expect, test } from "@jest/globals";
import { approve, call, db, gql, gqlCodes, intake, reviewerToken } from "../helpers.ts";

const ISSUE = `mutation I($code: String!, $label: String, $revokeCurrent: Boolean) {
  issueToken(providerCode: $code, label: $label, revokeCurrent: $revokeCurrent) { accessToken token { tokenId label } }
}`;
const REVOKE = `mutation R($code: String!, $id: String!) {
  revokeToken(providerCode: $code, tokenId: $id) { tokenId revokedAt }
}`;
const WHO = `query P($code: String!) { provider(providerCode: $code) { providerCode tokens { tokenId revokedAt } } }`;

async function activeTokens(providerCode: string): Promise<number> {
  return db.accessToken.count({ where: { provider: { providerCode }, revokedAt: null } });
}

describe("lastUsedAt", () => {
  test("a token's first use records when it was used, as the ORM and the raw reads both read it", async () => {
    const created = await intake({ visibility: "PRIVATE" });
    const stored = () =>
      db.accessToken.findFirstOrThrow({ where: { provider: { providerCode: created.providerCode } } });
    expect((await stored()).lastUsedAt).toBeNull();
    const before = Date.now();
    const read = await call("GET", `/api/v1/providers/${created.providerCode}`, { token: created.accessToken });
    expect(read.status).toBe(200);
    const used = (await stored()).lastUsedAt;
    expect(used).toBeInstanceOf(Date);
    expect(used!.getTime()).toBeGreaterThanOrEqual(before - 1000);
    expect(used!.getTime()).toBeLessThanOrEqual(Date.now());
    // The profile (raw reads) and GraphQL's token field (the ORM) show the same instant.
    const again = await call("GET", `/api/v1/providers/${created.providerCode}`, { token: created.accessToken });
    expect(again.body.tokens[0].lastUsedAt).toBe(used!.toISOString());
    const graph = await gql(
      `query P($code: String!) { provider(providerCode: $code) { tokens { lastUsedAt } } }`,
      { code: created.providerCode },
      { token: created.accessToken },
    );
    expect(graph.body.data.provider.tokens[0].lastUsedAt).toBe(used!.toISOString());
  });
});

describe("Mutation.issueToken", () => {
  test("at most 5 active tokens: the sixth is CONFLICT", async () => {
    const created = await intake();
    for (let i = 0; i < 4; i++) {
      const answer = await gql(ISSUE, { code: created.providerCode }, { token: created.accessToken });
      expect(answer.body.errors).toBeUndefined();
    }
    const sixth = await gql(ISSUE, { code: created.providerCode }, { token: created.accessToken });
    expect(gqlCodes(sixth)).toEqual(["CONFLICT"]);
    expect(sixth.body.data?.issueToken ?? null).toBeNull();
    expect(await activeTokens(created.providerCode)).toBe(5);
  });

  test("rotation revokes the token it was made with", async () => {
    const created = await intake({ visibility: "PRIVATE" });
    const rotated = await gql(
      ISSUE,
      { code: created.providerCode, label: "rotated", revokeCurrent: true },
      { token: created.accessToken },
    );
    expect(rotated.body.errors).toBeUndefined();
    const fresh = rotated.body.data.issueToken.accessToken as string;
    const old = await gql(WHO, { code: created.providerCode }, { token: created.accessToken });
    expect(old.status).toBe(401);
    expect(gqlCodes(old)).toEqual(["UNAUTHENTICATED"]);
    const read = await gql(WHO, { code: created.providerCode }, { token: fresh });
    expect(read.body.data.provider.tokens).toHaveLength(2);
    expect(read.body.data.provider.tokens.filter((t: { revokedAt: string | null }) => t.revokedAt === null)).toEqual([
      { tokenId: rotated.body.data.issueToken.token.tokenId, revokedAt: null },
    ]);
  });

  test("the owner or a reviewer: UNAUTHENTICATED, FORBIDDEN, NOT_FOUND for others", async () => {
    const visible = await intake();
    await approve(visible.providerCode);
    const hidden = await intake({ visibility: "PRIVATE" });
    const other = await intake();
    expect(gqlCodes(await gql(ISSUE, { code: visible.providerCode }))).toEqual(["UNAUTHENTICATED"]);
    expect(gqlCodes(await gql(ISSUE, { code: visible.providerCode }, { token: other.accessToken }))).toEqual([
      "FORBIDDEN",
    ]);
    expect(gqlCodes(await gql(ISSUE, { code: hidden.providerCode }, { token: other.accessToken }))).toEqual([
      "NOT_FOUND",
    ]);
    expect(await activeTokens(visible.providerCode)).toBe(1);
    const byReviewer = await gql(ISSUE, { code: visible.providerCode }, { token: await reviewerToken() });
    expect(byReviewer.body.errors).toBeUndefined();
    expect(await activeTokens(visible.providerCode)).toBe(2);
    expect(await activeTokens(hidden.providerCode)).toBe(1);
  });
});

describe("Mutation.revokeToken", () => {
  test("a reviewer may revoke; another agent may not", async () => {
    const visible = await intake();
    await approve(visible.providerCode);
    const other = await intake();
    const row = await db.accessToken.findFirstOrThrow({ where: { provider: { providerCode: visible.providerCode } } });
    const refused = await gql(REVOKE, { code: visible.providerCode, id: row.tokenId }, { token: other.accessToken });
    expect(gqlCodes(refused)).toEqual(["FORBIDDEN"]);
    expect(await activeTokens(visible.providerCode)).toBe(1);

    const answer = await gql(REVOKE, { code: visible.providerCode, id: row.tokenId }, { token: await reviewerToken() });
    expect(answer.body.errors).toBeUndefined();
    expect(answer.body.data.revokeToken.tokenId).toBe(row.tokenId);
    expect(await activeTokens(visible.providerCode)).toBe(0);
    const after = await gql(WHO, { code: visible.providerCode }, { token: visible.accessToken });
    expect(gqlCodes(after)).toEqual(["UNAUTHENTICATED"]);
  });

  test("an unknown token id is NOT_FOUND", async () => {
    const created = await intake();
    const answer = await gql(REVOKE, { code: created.providerCode, id: "tok_nothing" }, { token: created.accessToken });
    expect(gqlCodes(answer)).toEqual(["NOT_FOUND"]);
  });
});
