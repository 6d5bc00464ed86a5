/**
 * Query.reviewQueue: the same queue as GET /api/v1/reviews/queue — active items only, filters that
 * combine, URGENT first then oldest first, a cursor that survives changes, reviewers only.
 * Every assertion is scoped by a word only this file's providers carry (the database is shared).
 */
import { beforeAll, describe, expect, test } from "@jest/globals";
import { errorPaths, gql, gqlCodes, intake, reviewerToken, uniqueCode } from "../helpers.ts";

const QUEUE = `query Q($status: ReviewStatus, $priority: ReviewPriority, $assignedTo: String, $providerCode: String,
                    $search: String, $limit: Int, $cursor: String) {
  reviewQueue(status: $status, priority: $priority, assignedTo: $assignedTo, providerCode: $providerCode,
              search: $search, limit: $limit, cursor: $cursor) {
    items { reviewCode providerCode kind status priority assignedTo decidedAt }
    nextCursor
  }
}`;
const ASSIGN = `mutation A($c: String!, $a: String) { assignReview(reviewCode: $c, assignee: $a) { status } }`;
const DECIDE = `mutation D($c: String!, $d: ReviewDecision!, $n: String) {
  decideReview(reviewCode: $c, decision: $d, note: $n) { status }
}`;
const PRIORITY = `mutation P($c: String!, $p: ReviewPriority!) { updateReview(reviewCode: $c, priority: $p) { priority } }`;

let rv: string;

beforeAll(async () => {
  rv = await reviewerToken("rv-gql-queue");
});

const uniqueWord = () => uniqueCode("gq").replace("-", "");

async function mutate(query: string, variables: Record<string, unknown>) {
  const answer = await gql(query, variables, { token: rv });
  expect(answer.body.errors).toBeUndefined();
}

async function page(variables: Record<string, unknown>) {
  const answer = await gql(QUEUE, variables, { token: rv });
  expect(answer.body.errors).toBeUndefined();
  const result = answer.body.data.reviewQueue as {
    items: { reviewCode: string; decidedAt: string | null }[];
    nextCursor: string | null;
  };
  return { codes: result.items.map((i) => i.reviewCode), nextCursor: result.nextCursor, items: result.items };
}

const codes = async (variables: Record<string, unknown>) => (await page(variables)).codes;

describe("Query.reviewQueue", () => {
  test("UNAUTHENTICATED without a token, FORBIDDEN with an agent token", async () => {
    const agent = await intake();
    const anonymous = await gql(QUEUE, { providerCode: agent.providerCode });
    expect(anonymous.status).toBe(401);
    expect(gqlCodes(anonymous)).toEqual(["UNAUTHENTICATED"]);
    const asAgent = await gql(QUEUE, { providerCode: agent.providerCode }, { token: agent.accessToken });
    expect(asAgent.status).toBe(403);
    expect(gqlCodes(asAgent)).toEqual(["FORBIDDEN"]);
  });

  test("filters combine; decided items leave; priorities set by updateReview order it", async () => {
    const word = uniqueWord();
    const assignee = `rv-bob-${word}`;
    const a = await intake({ name: `Gq ${word} alpha` });
    const b = await intake({ name: `Gq ${word} bravo` });
    const c = await intake({ name: `Gq ${word} charlie` });
    const d = await intake({ name: `Gq ${word} delta` });
    await mutate(ASSIGN, { c: b.reviewCode, a: assignee });
    await mutate(DECIDE, { c: c.reviewCode, d: "REQUEST_CHANGES", n: "please" });
    await mutate(PRIORITY, { c: d.reviewCode, p: "URGENT" });
    await mutate(PRIORITY, { c: b.reviewCode, p: "HIGH" });

    expect(await codes({ search: word })).toEqual([d.reviewCode, b.reviewCode, a.reviewCode, c.reviewCode]);
    expect(await codes({ search: word, status: "OPEN" })).toEqual([d.reviewCode, a.reviewCode]);
    expect(await codes({ search: word, status: "OPEN", priority: "NORMAL" })).toEqual([a.reviewCode]);
    expect(await codes({ search: word, assignedTo: assignee, status: "IN_PROGRESS" })).toEqual([b.reviewCode]);
    expect(await codes({ search: word, assignedTo: assignee, priority: "URGENT" })).toEqual([]);
    expect(await codes({ search: `${word} charlie`, status: "CHANGES_REQUESTED" })).toEqual([c.reviewCode]);
    expect(await codes({ providerCode: a.providerCode, search: a.reviewCode.toLowerCase() })).toEqual([a.reviewCode]);
    expect(await codes({ providerCode: a.providerCode, search: b.reviewCode })).toEqual([]);

    await mutate(DECIDE, { c: d.reviewCode, d: "APPROVE" });
    await mutate(DECIDE, { c: a.reviewCode, d: "REJECT", n: "no" });
    const after = await page({ search: word });
    expect(after.codes).toEqual([b.reviewCode, c.reviewCode]);
    expect(after.items.map((i) => i.decidedAt)).toEqual([null, null]);
  });

  test("pages of 2 neither skip nor repeat while reviews arrive and are decided", async () => {
    const word = uniqueWord();
    const add = async () => (await intake({ name: `Gq ${word} moving` })).reviewCode;
    const first: string[] = [];
    for (let i = 0; i < 4; i++) first.push(await add());
    const [s0, s1, s2, s3] = first as [string, string, string, string];

    const one = await page({ search: word, limit: 2 });
    expect(one.codes).toEqual([s0, s1]);
    const s4 = await add();
    await mutate(DECIDE, { c: s0, d: "APPROVE" });
    const two = await page({ search: word, limit: 2, cursor: one.nextCursor });
    expect(two.codes).toEqual([s2, s3]);
    const s5 = await add();
    await mutate(DECIDE, { c: s2, d: "REJECT", n: "no" });
    const three = await page({ search: word, limit: 2, cursor: two.nextCursor });
    expect(three.codes).toEqual([s4, s5]);
    // The last page: nothing after it.
    expect(three.nextCursor).toBeNull();

    const union = [...one.codes, ...two.codes, ...three.codes];
    expect(new Set(union).size).toBe(union.length);
    for (const code of [s1, s3]) expect(union.filter((c) => c === code)).toHaveLength(1);
  });

  test.each([
    ["a closed status", { status: "APPROVED" }, "status"],
    ["REJECTED", { status: "REJECTED" }, "status"],
    ["limit 0", { limit: 0 }, "limit"],
    ["limit 500", { limit: 500 }, "limit"],
  ])("%s is BAD_USER_INPUT (400) naming it", async (_what, variables, path) => {
    const answer = await gql(QUEUE, variables, { token: rv });
    expect(answer.status).toBe(400);
    expect(gqlCodes(answer)).toEqual(["BAD_USER_INPUT"]);
    expect(errorPaths(answer)).toEqual([path]);
  });

  test("a forged cursor is BAD_USER_INPUT", async () => {
    const answer = await gql(QUEUE, { cursor: "eyJub3QiOiJhIGN1cnNvciJ9" }, { token: rv });
    expect(gqlCodes(answer)).toEqual(["BAD_USER_INPUT"]);
  });
});
