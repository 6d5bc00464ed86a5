/** Who sees what (API.md §2) through /graphql. */
import { describe, expect, test } from "@jest/globals";
import { approve, db, gql, gqlCodes, intake, reviewerToken, uniqueCode } from "../helpers.ts";

const DETAIL = `query P($code: String!) { provider(providerCode: $code) {
  providerCode contactEmail tokens { tokenId } reviewTimeline { kind actor note } } }`;
const LIST = `query L($labels: [String!]) { providers(labels: $labels, limit: 100) { items { providerCode } } }`;
const VERSION = `query V($code: String!) { providerVersion(providerCode: $code, version: 1) {
  version snapshot { name contactEmail } } }`;
const VERSIONS = `query V($code: String!) { providerVersions(providerCode: $code) { items { version } } }`;

const as = (token?: string) => (token ? { token } : {});

async function listed(label: string, token?: string): Promise<string[]> {
  const answer = await gql(LIST, { labels: [label] }, as(token));
  expect(answer.body.errors).toBeUndefined();
  return answer.body.data.providers.items.map((i: { providerCode: string }) => i.providerCode);
}

describe("Query.providers", () => {
  test("anonymous: PUBLIC and APPROVED only; agent: plus itself; reviewer: everything", async () => {
    const label = uniqueCode("gvis");
    const pub = await intake({ labels: [label] });
    await approve(pub.providerCode);
    const mine = await intake({ labels: [label], visibility: "PRIVATE" });
    const unlisted = await intake({ labels: [label], visibility: "UNLISTED" });
    await approve(unlisted.providerCode);
    const rejected = await intake({ labels: [label] });
    await db.provider.update({ where: { providerCode: rejected.providerCode }, data: { reviewStage: "REJECTED" } });

    expect(await listed(label)).toEqual([pub.providerCode]);
    expect((await listed(label, mine.accessToken)).sort()).toEqual([pub.providerCode, mine.providerCode].sort());
    expect((await listed(label, await reviewerToken())).sort()).toEqual(
      [pub, mine, unlisted, rejected].map((p) => p.providerCode).sort(),
    );
  });
});

describe("Query.provider", () => {
  test("PRIVATE: NOT_FOUND for anonymous callers and other agents; owner and reviewer read it", async () => {
    const priv = await intake({ visibility: "PRIVATE" });
    const other = await intake();
    for (const token of [undefined, other.accessToken]) {
      const answer = await gql(DETAIL, { code: priv.providerCode }, as(token));
      expect(gqlCodes(answer)).toEqual(["NOT_FOUND"]);
      expect(answer.body.data?.provider ?? null).toBeNull();
    }
    for (const token of [priv.accessToken, await reviewerToken()]) {
      const answer = await gql(DETAIL, { code: priv.providerCode }, { token });
      expect(answer.body.errors).toBeUndefined();
      expect(answer.body.data.provider).toMatchObject({
        providerCode: priv.providerCode,
        contactEmail: "ops@example.com",
      });
      expect(answer.body.data.provider.tokens).toHaveLength(1);
    }
  });

  test("UNLISTED is readable by anyone; REJECTED and SUSPENDED are not", async () => {
    const unlisted = await intake({ visibility: "UNLISTED" });
    const read = await gql(DETAIL, { code: unlisted.providerCode });
    expect(read.body.data.provider).toMatchObject({
      providerCode: unlisted.providerCode,
      contactEmail: null,
      tokens: null,
    });
    for (const stage of ["REJECTED", "SUSPENDED"]) {
      const hidden = await intake();
      await db.provider.update({ where: { providerCode: hidden.providerCode }, data: { reviewStage: stage } });
      expect(gqlCodes(await gql(DETAIL, { code: hidden.providerCode }))).toEqual(["NOT_FOUND"]);
      expect(gqlCodes(await gql(VERSIONS, { code: hidden.providerCode }))).toEqual(["NOT_FOUND"]);
      const owner = await gql(DETAIL, { code: hidden.providerCode }, { token: hidden.accessToken });
      expect(owner.body.data.provider.providerCode).toBe(hidden.providerCode);
    }
  });
});

describe("Query.providerVersion(s)", () => {
  test("follow the profile's visibility; the snapshot's contactEmail only for owner and reviewer", async () => {
    const pub = await intake();
    const anonymous = await gql(VERSION, { code: pub.providerCode });
    expect(anonymous.body.data.providerVersion).toEqual({
      version: 1,
      snapshot: { name: "Route Planner", contactEmail: null },
    });
    const owner = await gql(VERSION, { code: pub.providerCode }, { token: pub.accessToken });
    expect(owner.body.data.providerVersion.snapshot.contactEmail).toBe("ops@example.com");

    const priv = await intake({ visibility: "PRIVATE" });
    expect(gqlCodes(await gql(VERSION, { code: priv.providerCode }))).toEqual(["NOT_FOUND"]);
    expect(gqlCodes(await gql(VERSIONS, { code: priv.providerCode }, { token: pub.accessToken }))).toEqual([
      "NOT_FOUND",
    ]);
    const reviewer = await gql(VERSIONS, { code: priv.providerCode }, { token: await reviewerToken() });
    expect(reviewer.body.data.providerVersions.items).toEqual([{ version: 1 }]);
  });
});
