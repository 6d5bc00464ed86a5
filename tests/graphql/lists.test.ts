/** Query.providers: filters, limit bounds and cursor paging. Each test scopes itself by a unique label. */
import { describe, expect, test } from "@jest/globals";
import { approve, db, errorPaths, gql, gqlCodes, intake, reviewerToken, uniqueCode } from "../helpers.ts";

const LIST = `
  query L($search: String, $agentType: AgentType, $visibility: Visibility, $trustTier: TrustTier,
          $reviewStage: ReviewStage, $labels: [String!], $limit: Int, $cursor: String) {
    providers(search: $search, agentType: $agentType, visibility: $visibility, trustTier: $trustTier,
              reviewStage: $reviewStage, labels: $labels, limit: $limit, cursor: $cursor) {
      items { providerCode } nextCursor
    }
  }`;

async function list(variables: Record<string, unknown>, token?: string) {
  const answer = await gql(LIST, variables, token ? { token } : {});
  expect(answer.body.errors).toBeUndefined();
  const page = answer.body.data.providers as { items: { providerCode: string }[]; nextCursor: string | null };
  return { codes: page.items.map((i) => i.providerCode), nextCursor: page.nextCursor };
}

describe("Query.providers filters", () => {
  test("agentType, visibility, trustTier and reviewStage", async () => {
    const label = uniqueCode("gfilters");
    const workflow = await intake({ labels: [label], agentType: "WORKFLOW" });
    const priv = await intake({ labels: [label], visibility: "PRIVATE" });
    const official = await intake({ labels: [label] });
    await db.provider.update({ where: { providerCode: official.providerCode }, data: { trustTier: "OFFICIAL" } });
    const inReview = await intake({ labels: [label] });
    await db.provider.update({ where: { providerCode: inReview.providerCode }, data: { reviewStage: "IN_REVIEW" } });
    const token = await reviewerToken();

    expect((await list({ labels: [label] }, token)).codes).toHaveLength(4);
    expect((await list({ labels: [label], agentType: "WORKFLOW" }, token)).codes).toEqual([workflow.providerCode]);
    expect((await list({ labels: [label], visibility: "PRIVATE" }, token)).codes).toEqual([priv.providerCode]);
    expect((await list({ labels: [label], trustTier: "OFFICIAL" }, token)).codes).toEqual([official.providerCode]);
    expect((await list({ labels: [label], reviewStage: "IN_REVIEW" }, token)).codes).toEqual([inReview.providerCode]);
  });

  test("labels must all match; search matches words", async () => {
    const a = uniqueCode("gla");
    const b = uniqueCode("glb");
    const both = await intake({ labels: [a, b], summary: "Translates invoices quickly" });
    const onlyA = await intake({ labels: [a] });
    await approve(both.providerCode);
    await approve(onlyA.providerCode);
    expect((await list({ labels: [a, b] })).codes).toEqual([both.providerCode]);
    expect((await list({ labels: [`${a},${b}`] })).codes).toEqual([both.providerCode]);
    expect((await list({ labels: [a] })).codes.sort()).toEqual([both.providerCode, onlyA.providerCode].sort());
    expect((await list({ labels: [a], search: "INVOICES translates" })).codes).toEqual([both.providerCode]);
    expect((await list({ labels: [a], search: "nothing-like-this" })).codes).toEqual([]);
  });
});

describe("Query.providers limit and cursor", () => {
  test.each([0, 101, -5])("limit %s is BAD_USER_INPUT naming limit", async (limit) => {
    const answer = await gql(LIST, { limit });
    expect(gqlCodes(answer)).toEqual(["BAD_USER_INPUT"]);
    expect(errorPaths(answer)).toEqual(["limit"]);
    expect(answer.body.data?.providers ?? null).toBeNull();
  });

  test('limit "abc" is BAD_USER_INPUT', async () => {
    const answer = await gql(LIST, { limit: "abc" });
    expect(gqlCodes(answer)).toEqual(["BAD_USER_INPUT"]);
    expect(answer.body.errors[0].message).toContain('"$limit"');
  });

  test("pages of 2 neither skip nor repeat", async () => {
    const label = uniqueCode("gpages");
    const made: string[] = [];
    for (let i = 0; i < 5; i++) {
      const created = await intake({ labels: [label] });
      await approve(created.providerCode);
      made.push(created.providerCode);
    }
    const seen: string[] = [];
    let cursor: string | null = null;
    let pages = 0;
    do {
      const page = await list({ labels: [label], limit: 2, cursor });
      seen.push(...page.codes);
      cursor = page.nextCursor;
      pages++;
    } while (cursor !== null && pages < 10);
    expect(pages).toBe(3);
    expect(seen).toHaveLength(5);
    expect([...seen].sort()).toEqual([...made].sort());
    expect((await list({ labels: [label], limit: 100 })).codes).toEqual(seen);
  });

  test("the default page is 20", async () => {
    const label = uniqueCode("gdefault");
    for (let i = 0; i < 21; i++) {
      const created = await intake({ labels: [label] });
      await approve(created.providerCode);
    }
    const page = await list({ labels: [label] });
    expect(page.codes).toHaveLength(20);
    expect(page.nextCursor).not.toBeNull();
  });

  test("an invalid cursor is BAD_USER_INPUT naming cursor", async () => {
    const answer = await gql(LIST, { cursor: "garbage!" });
    expect(gqlCodes(answer)).toEqual(["BAD_USER_INPUT"]);
    expect(errorPaths(answer)).toEqual(["cursor"]);
  });

  test("an unknown argument is BAD_USER_INPUT", async () => {
    const answer = await gql("{ providers(sort: NAME) { items { providerCode } } }");
    expect(gqlCodes(answer)).toEqual(["BAD_USER_INPUT"]);
  });
});
