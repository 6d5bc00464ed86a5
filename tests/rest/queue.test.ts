/**
 * GET /api/v1/reviews/queue: active items only, filters that combine, URGENT first then oldest
 * first, and a cursor that neither skips nor repeats while the queue changes. Test files share one
 * database, so every assertion is scoped by a word only this file's providers carry.
 */
import { beforeAll, describe, expect, test } from "@jest/globals";
import { call, errorPaths, expectProblem, intake, reviewerToken, uniqueCode } from "../helpers.ts";

let rv: string;

beforeAll(async () => {
  rv = await reviewerToken("rv-queue");
});

/** A word no other test's provider name holds. */
const uniqueWord = () => uniqueCode("q").replace("-", "");

interface Item {
  reviewCode: string;
  providerCode: string;
  providerName: string;
  kind: string;
  status: string;
  priority: string;
  assignedTo: string | null;
  createdAt: string;
  decidedAt: string | null;
}

/** `token` null: anonymous. */
async function queue(params: Record<string, string | number>, token: string | null = rv) {
  const query = new URLSearchParams(Object.entries(params).map(([k, v]) => [k, String(v)])).toString();
  return call("GET", `/api/v1/reviews/queue${query ? `?${query}` : ""}`, token ? { token } : {});
}

/** The review codes of a queue read, which must succeed. */
async function codes(params: Record<string, string | number>): Promise<string[]> {
  const answer = await queue(params);
  expect(answer.status).toBe(200);
  return (answer.body.items as Item[]).map((i) => i.reviewCode);
}

const post = (path: string, body: unknown) => call("POST", `/api/v1${path}`, { body, token: rv });
const prioritise = async (reviewCode: string, priority: string) => {
  const answer = await call("PATCH", `/api/v1/reviews/${reviewCode}`, { body: { priority }, token: rv });
  expect(answer.status).toBe(200);
};

describe("who may read it", () => {
  test("no token: 401 with WWW-Authenticate; an agent token: 403", async () => {
    const agent = await intake();
    const anonymous = await queue({ providerCode: agent.providerCode }, null);
    expectProblem(anonymous, 401, "UNAUTHENTICATED");
    expect(anonymous.headers.get("www-authenticate")).toMatch(/^Bearer\b/);
    expectProblem(await queue({ providerCode: agent.providerCode }, agent.accessToken), 403, "FORBIDDEN");
  });
});

describe("what it holds", () => {
  test("active items with their fields; decided ones leave it, an update review joins it", async () => {
    const word = uniqueWord();
    const kept = await intake({ name: `Queue ${word} kept` });
    const decided = await intake({ name: `Queue ${word} decided` });
    const rejected = await intake({ name: `Queue ${word} rejected` });
    expect(await codes({ search: word })).toEqual([kept.reviewCode, decided.reviewCode, rejected.reviewCode]);

    const answer = await queue({ providerCode: kept.providerCode });
    expect(answer.body).toEqual({
      items: [
        {
          reviewCode: kept.reviewCode,
          providerCode: kept.providerCode,
          providerName: `Queue ${word} kept`,
          kind: "INTAKE",
          status: "OPEN",
          priority: "NORMAL",
          assignedTo: null,
          createdAt: expect.any(String),
          updatedAt: expect.any(String),
          decidedAt: null,
        },
      ],
      nextCursor: null,
    });

    expect((await post(`/reviews/${decided.reviewCode}/decision`, { decision: "APPROVE" })).status).toBe(200);
    expect((await post(`/reviews/${rejected.reviewCode}/decision`, { decision: "REJECT", note: "no" })).status).toBe(
      200,
    );
    expect(await codes({ search: word })).toEqual([kept.reviewCode]);

    // The approved provider changes its endpoint: its UPDATE review is queued, after the older intake.
    const patched = await call("PATCH", `/api/v1/providers/${decided.providerCode}`, {
      body: { endpoint: { url: "https://agent.example.com/v2", protocol: "MCP", authScheme: "NONE" } },
      token: decided.accessToken,
    });
    expect(patched.status).toBe(200);
    const after = await queue({ search: word });
    expect((after.body.items as Item[]).map((i) => [i.providerCode, i.kind])).toEqual([
      [kept.providerCode, "INTAKE"],
      [decided.providerCode, "UPDATE"],
    ]);
  });
});

describe("filters", () => {
  const word = uniqueWord();
  const assignee = `rv-alice-${word}`;
  let open: Awaited<ReturnType<typeof intake>>;
  let claimed: Awaited<ReturnType<typeof intake>>;
  let waiting: Awaited<ReturnType<typeof intake>>;
  let high: Awaited<ReturnType<typeof intake>>;
  let done: Awaited<ReturnType<typeof intake>>;

  beforeAll(async () => {
    open = await intake({ name: `Filter ${word} alpha` });
    claimed = await intake({ name: `Filter ${word} bravo` });
    waiting = await intake({ name: `Filter ${word} charlie` });
    high = await intake({ name: `Filter ${word} delta` });
    done = await intake({ name: `Filter ${word} echo` });
    expect((await post(`/reviews/${claimed.reviewCode}/assign`, { assignee })).status).toBe(200);
    expect(
      (await post(`/reviews/${waiting.reviewCode}/decision`, { decision: "REQUEST_CHANGES", note: "more" })).status,
    ).toBe(200);
    await prioritise(high.reviewCode, "HIGH");
    expect((await post(`/reviews/${done.reviewCode}/decision`, { decision: "APPROVE" })).status).toBe(200);
  });

  test("search alone: every active item, HIGH first, then oldest first", async () => {
    expect(await codes({ search: word })).toEqual([
      high.reviewCode,
      open.reviewCode,
      claimed.reviewCode,
      waiting.reviewCode,
    ]);
  });

  test.each([
    ["status OPEN", () => ({ status: "OPEN" }), () => [high.reviewCode, open.reviewCode]],
    ["status IN_PROGRESS", () => ({ status: "IN_PROGRESS" }), () => [claimed.reviewCode]],
    ["status CHANGES_REQUESTED", () => ({ status: "CHANGES_REQUESTED" }), () => [waiting.reviewCode]],
    ["priority HIGH", () => ({ priority: "HIGH" }), () => [high.reviewCode]],
    [
      "priority NORMAL",
      () => ({ priority: "NORMAL" }),
      () => [open.reviewCode, claimed.reviewCode, waiting.reviewCode],
    ],
    ["priority URGENT", () => ({ priority: "URGENT" }), () => []],
    ["assignedTo", () => ({ assignedTo: assignee }), () => [claimed.reviewCode]],
    ["status and priority", () => ({ status: "OPEN", priority: "NORMAL" }), () => [open.reviewCode]],
    ["status and assignedTo that never meet", () => ({ status: "OPEN", assignedTo: assignee }), () => []],
    ["a name word too", () => ({ search: `${word} charlie` }), () => [waiting.reviewCode]],
    [
      "the word in capitals",
      () => ({ search: word.toUpperCase() }),
      () => [high.reviewCode, open.reviewCode, claimed.reviewCode, waiting.reviewCode],
    ],
    ["a decided provider's code", () => ({ providerCode: done.providerCode }), () => []],
  ])("search and %s combine", async (_what, filters, expected) => {
    expect(await codes({ search: word, ...filters() })).toEqual(expected());
  });

  test("providerCode alone, and with a status it does not have", async () => {
    expect(await codes({ providerCode: claimed.providerCode })).toEqual([claimed.reviewCode]);
    expect(await codes({ providerCode: claimed.providerCode, status: "OPEN" })).toEqual([]);
  });

  test("assignedTo alone finds only that reviewer's items", async () => {
    expect(await codes({ assignedTo: assignee })).toEqual([claimed.reviewCode]);
  });

  test("search by a review code (any case) or a provider code", async () => {
    expect(await codes({ search: open.reviewCode })).toEqual([open.reviewCode]);
    expect(await codes({ search: open.reviewCode.toLowerCase() })).toEqual([open.reviewCode]);
    expect(await codes({ search: claimed.providerCode })).toEqual([claimed.reviewCode]);
    expect(await codes({ search: claimed.providerCode.toUpperCase() })).toEqual([claimed.reviewCode]);
    expect(await codes({ search: done.reviewCode })).toEqual([]);
  });

  test.each([
    ["a closed status", { status: "APPROVED" }, ["status"]],
    ["WITHDRAWN", { status: "WITHDRAWN" }, ["status"]],
    ["an unknown status", { status: "PENDING" }, ["status"]],
    ["an unknown priority", { priority: "CRITICAL" }, ["priority"]],
    ["limit 0", { limit: 0 }, ["limit"]],
    ["limit 101", { limit: 101 }, ["limit"]],
    ["an unknown parameter", { sort: "newest" }, ["sort"]],
    ["search over 200 characters", { search: "x".repeat(201) }, ["search"]],
  ])("%s is a 400 naming it", async (_what, params, paths) => {
    const answer = await queue(params);
    expectProblem(answer, 400, "BAD_USER_INPUT");
    expect(errorPaths(answer)).toEqual(paths);
  });

  test("a cursor that is not one is a 400", async () => {
    expectProblem(await queue({ search: word, cursor: "not-a-cursor" }), 400, "BAD_USER_INPUT");
  });
});

describe("order", () => {
  test("priorities set with PATCH /reviews/{code}: URGENT, HIGH, NORMAL, LOW, each oldest first", async () => {
    const word = uniqueWord();
    const made = [];
    for (let i = 0; i < 5; i++) made.push((await intake({ name: `Order ${word} ${i}` })).reviewCode);
    const [r0, r1, r2, r3, r4] = made as [string, string, string, string, string];
    expect(await codes({ search: word })).toEqual([r0, r1, r2, r3, r4]);

    await prioritise(r3, "URGENT");
    await prioritise(r1, "HIGH");
    await prioritise(r0, "LOW");
    expect(await codes({ search: word })).toEqual([r3, r1, r2, r4, r0]);

    // Raising an older one puts it ahead of the newer urgent one.
    await prioritise(r2, "URGENT");
    expect(await codes({ search: word })).toEqual([r2, r3, r1, r4, r0]);
    const answer = await queue({ search: word });
    expect((answer.body.items as Item[]).map((i) => i.priority)).toEqual(["URGENT", "URGENT", "HIGH", "NORMAL", "LOW"]);
  });
});

describe("pages", () => {
  test("limit 2 walks every item once and ends with a null cursor", async () => {
    const word = uniqueWord();
    const made = [];
    for (let i = 0; i < 5; i++) made.push((await intake({ name: `Page ${word} ${i}` })).reviewCode);
    const seen: string[] = [];
    let cursor: string | null = null;
    let pages = 0;
    do {
      const answer = await queue({ search: word, limit: 2, ...(cursor ? { cursor } : {}) });
      expect(answer.status).toBe(200);
      expect(answer.body.items.length).toBeLessThanOrEqual(2);
      seen.push(...(answer.body.items as Item[]).map((i) => i.reviewCode));
      cursor = answer.body.nextCursor;
      pages++;
    } while (cursor && pages < 10);
    expect(seen).toEqual(made);
    expect(pages).toBe(3);
  });

  test("while reviews are added and decided between pages, nothing is skipped and nothing repeats", async () => {
    const word = uniqueWord();
    const add = async (n: number) => (await intake({ name: `Moving ${word} ${n}` })).reviewCode;
    const decide = async (code: string) =>
      expect((await post(`/reviews/${code}/decision`, { decision: "APPROVE" })).status).toBe(200);
    const first: string[] = [];
    for (let i = 0; i < 5; i++) first.push(await add(i));
    const [s0, s1, s2, s3, s4] = first as [string, string, string, string, string];

    const pages: string[][] = [];
    const read = async (cursor: string | null) => {
      const answer = await queue({ search: word, limit: 2, ...(cursor ? { cursor } : {}) });
      expect(answer.status).toBe(200);
      pages.push((answer.body.items as Item[]).map((i) => i.reviewCode));
      return answer.body.nextCursor as string | null;
    };

    let cursor = await read(null);
    expect(pages[0]).toEqual([s0, s1]);
    // Between pages: two new reviews arrive, one already seen is decided.
    const s5 = await add(5);
    const s6 = await add(6);
    await decide(s0);
    cursor = await read(cursor);
    expect(pages[1]).toEqual([s2, s3]);
    // One not yet reached is decided, one seen too, and another arrives.
    await decide(s4);
    await decide(s1);
    const s7 = await add(7);
    while (cursor && pages.length < 10) cursor = await read(cursor);
    expect(cursor).toBeNull();

    const union = pages.flat();
    expect(new Set(union).size).toBe(union.length);
    for (const code of [s2, s3]) expect(union.filter((c) => c === code)).toHaveLength(1);
    // Keyset paging: what arrived later comes later, what was decided before it was reached is gone.
    expect(union).toEqual([s0, s1, s2, s3, s5, s6, s7]);
    expect(await codes({ search: word })).toEqual([s2, s3, s5, s6, s7]);
  });
});
