/** Query.reviewQueue and Query.review with reviewer JWTs (API.md §3) through /graphql. */
import { describe, expect, test } from "@jest/globals";
import { SignJWT } from "jose";
import { config, db, gql, gqlCodes, intake, reviewerToken, uniqueCode } from "../helpers.ts";

const QUEUE = `query Q($search: String, $code: String, $limit: Int, $cursor: String) {
  reviewQueue(search: $search, providerCode: $code, limit: $limit, cursor: $cursor) {
    items { reviewCode priority status } nextCursor
  }
}`;

function signed(options: { audience?: string; expiresIn?: string | number; key?: string } = {}) {
  return new SignJWT({ roles: ["reviewer"] })
    .setProtectedHeader({ alg: "HS256" })
    .setSubject("reviewer-gql")
    .setIssuer(config.reviewerJwtIssuer)
    .setAudience(options.audience ?? config.reviewerJwtAudience)
    .setIssuedAt()
    .setExpirationTime(options.expiresIn ?? "5m")
    .sign(new TextEncoder().encode(options.key ?? config.reviewerJwtSecret));
}

describe("Query.reviewQueue", () => {
  test("no token, agent token, reviewer token", async () => {
    const agent = await intake();
    expect(gqlCodes(await gql(QUEUE, { code: agent.providerCode }))).toEqual(["UNAUTHENTICATED"]);
    expect(gqlCodes(await gql(QUEUE, { code: agent.providerCode }, { token: agent.accessToken }))).toEqual([
      "FORBIDDEN",
    ]);
    const ok = await gql(QUEUE, { code: agent.providerCode }, { token: await reviewerToken() });
    expect(ok.body.errors).toBeUndefined();
    expect(ok.body.data.reviewQueue).toEqual({
      items: [{ reviewCode: agent.reviewCode, priority: "NORMAL", status: "OPEN" }],
      nextCursor: null,
    });
  });

  test.each([
    ["expired", () => signed({ expiresIn: Math.floor(Date.now() / 1000) - 10 })],
    ["for another audience", () => signed({ audience: "elsewhere" })],
    ["signed with another secret", () => signed({ key: "another-secret-that-is-long-enough-0123456789" })],
  ])("a reviewer token %s is UNAUTHENTICATED (401)", async (_what, make) => {
    const answer = await gql(QUEUE, {}, { token: await make() });
    expect(answer.status).toBe(401);
    expect(gqlCodes(answer)).toEqual(["UNAUTHENTICATED"]);
  });

  test("URGENT first, then oldest first", async () => {
    const word = uniqueCode("gqueue").replace("-", "");
    const older = await intake({ name: `Queue ${word} older` });
    const urgent = await intake({ name: `Queue ${word} urgent` });
    const newer = await intake({ name: `Queue ${word} newer` });
    const now = Date.now();
    await db.review.update({ where: { reviewCode: older.reviewCode }, data: { createdAt: new Date(now - 50_000) } });
    await db.review.update({ where: { reviewCode: newer.reviewCode }, data: { createdAt: new Date(now - 10_000) } });
    await db.review.update({
      where: { reviewCode: urgent.reviewCode },
      data: { priority: "URGENT", priorityRank: 0, createdAt: new Date(now - 1_000) },
    });
    const answer = await gql(QUEUE, { search: word }, { token: await reviewerToken() });
    expect(answer.body.data.reviewQueue.items.map((r: { reviewCode: string }) => r.reviewCode)).toEqual([
      urgent.reviewCode,
      older.reviewCode,
      newer.reviewCode,
    ]);
  });
});

describe("Query.review", () => {
  test("the reviewer and the owner read it; another agent gets NOT_FOUND; anonymous UNAUTHENTICATED", async () => {
    const created = await intake();
    const other = await intake();
    const query = `query R($c: String!) { review(reviewCode: $c) { reviewCode providerCode kind } }`;
    const byReviewer = await gql(query, { c: created.reviewCode }, { token: await reviewerToken() });
    expect(byReviewer.body.data.review).toEqual({
      reviewCode: created.reviewCode,
      providerCode: created.providerCode,
      kind: "INTAKE",
    });
    const byOwner = await gql(query, { c: created.reviewCode }, { token: created.accessToken });
    expect(byOwner.body.data.review.reviewCode).toBe(created.reviewCode);
    expect(gqlCodes(await gql(query, { c: created.reviewCode }, { token: other.accessToken }))).toEqual(["NOT_FOUND"]);
    expect(gqlCodes(await gql(query, { c: created.reviewCode }))).toEqual(["UNAUTHENTICATED"]);
    expect(gqlCodes(await gql(query, { c: "RV-00000000" }, { token: await reviewerToken() }))).toEqual(["NOT_FOUND"]);
  });
});
