/**
 * Query.providers(search) and Query.reviewQueue(search) over GraphQL: the same full-text index as
 * REST. Test files share one database: every assertion is scoped by a unique label or word.
 */
import { randomBytes } from "node:crypto";
import { describe, expect, test } from "@jest/globals";
import { approve, gql, intake, reviewerToken, uniqueCode } from "../helpers.ts";

const LIST = `
  query L($search: String, $labels: [String!], $agentType: AgentType, $limit: Int, $cursor: String) {
    providers(search: $search, labels: $labels, agentType: $agentType, limit: $limit, cursor: $cursor) {
      items { providerCode } nextCursor
    }
  }`;

const QUEUE = `
  query Q($search: String) { reviewQueue(search: $search, limit: 100) { items { reviewCode } nextCursor } }`;

const uniqueWord = () => `gs${[...randomBytes(8)].map((b) => String.fromCharCode(97 + (b % 26))).join("")}`;

async function list(variables: Record<string, unknown>) {
  const answer = await gql(LIST, variables);
  expect([variables, answer.body.errors]).toEqual([variables, undefined]);
  const page = answer.body.data.providers as { items: { providerCode: string }[]; nextCursor: string | null };
  return { codes: page.items.map((i) => i.providerCode), nextCursor: page.nextCursor };
}

async function made(label: string, overrides: Record<string, unknown>) {
  const created = await intake({ name: "Neutral agent", summary: "Does a thing", labels: [label], ...overrides });
  await approve(created.providerCode);
  return created.providerCode;
}

describe("Query.providers(search)", () => {
  test("prefixes, case and accents; all words; best match first", async () => {
    const label = uniqueCode("gs-words");
    const w = uniqueWord();
    const named = await made(label, { name: `Routing Café ${w}` });
    const described = await made(label, { description: `Explains route-planner cafe work, ${w}.` });
    const unrelated = await made(label, { name: `Billing ${w}` });

    expect((await list({ labels: [label], search: `ROUT CAFE ${w}` })).codes).toEqual([named, described]);
    expect((await list({ labels: [label], search: `café ${w}` })).codes).toEqual([named, described]);
    expect((await list({ labels: [label], search: `planner ${w}` })).codes).toEqual([described]);
    expect((await list({ labels: [label], search: `bill rout ${w}` })).codes).toEqual([]);
    expect((await list({ labels: [label], search: w, agentType: "WORKFLOW" })).codes).toEqual([]);
    expect((await list({ labels: [label], search: w })).codes).toContain(unrelated);
  });

  test("pages of 2 neither skip nor repeat", async () => {
    const label = uniqueCode("gs-page");
    const w = uniqueWord();
    const all: string[] = [];
    for (let i = 0; i < 5; i++) all.push(await made(label, i % 2 ? { name: `P ${w}` } : { summary: `p ${w}` }));
    const whole = (await list({ labels: [label], search: w, limit: 100 })).codes;
    const seen: string[] = [];
    let cursor: string | null = null;
    do {
      const page: { codes: string[]; nextCursor: string | null } = await list({
        labels: [label],
        search: w,
        limit: 2,
        ...(cursor ? { cursor } : {}),
      });
      expect(page.codes.length).toBeLessThanOrEqual(2);
      seen.push(...page.codes);
      cursor = page.nextCursor;
    } while (cursor);
    expect(seen).toEqual(whole);
    expect([...seen].sort()).toEqual([...all].sort());
  });

  test("query-language characters are plain text", async () => {
    for (const search of ['"', "*", "(", "NEAR(a b)", "-x", "a:b", "a & b", "a | b", "!a", "a:*", "'", ")"]) {
      await list({ search });
    }
  });
});

describe("Query.reviewQueue(search)", () => {
  test("review code, provider code and name by prefix, any case", async () => {
    const w = uniqueWord();
    const one = await intake({ name: `Queue ${w} routing` });
    const two = await intake({ name: `Queue ${w} billing` });
    const token = await reviewerToken("rv-gql-search");
    const queue = async (search: string) => {
      const answer = await gql(QUEUE, { search }, { token });
      expect([search, answer.body.errors]).toEqual([search, undefined]);
      return (answer.body.data.reviewQueue.items as { reviewCode: string }[]).map((i) => i.reviewCode);
    };
    expect(await queue(`${w.toUpperCase()} Rout`)).toEqual([one.reviewCode]);
    expect(await queue(`${w} BILL`)).toEqual([two.reviewCode]);
    expect(await queue(`${one.reviewCode.slice(0, 9).toLowerCase()} ${w}`)).toEqual([one.reviewCode]);
    expect(await queue(two.providerCode.toUpperCase())).toEqual([two.reviewCode]);
    expect((await queue(w)).sort()).toEqual([one.reviewCode, two.reviewCode].sort());
    for (const hostile of ['"', "*", "(", "NEAR", "-", ":", "&", "|", "!"]) await queue(`${hostile} ${w}`);
  });
});
