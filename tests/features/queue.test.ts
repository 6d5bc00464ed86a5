/**
 * The review queue through both doors: active items only, filters that combine, URGENT first then
 * oldest first, and a cursor that neither skips nor repeats while the queue changes. Test files
 * share one database, so every assertion is scoped by a word only this file's providers carry.
 */
import { beforeAll, describe, expect, test } from "@jest/globals";
import { uniqueCode } from "../builders.ts";
import { type Door, doors, expectCode, expectOk } from "../doors.ts";
import { intake, reviewerToken } from "../helpers.ts";

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

describe.each(doors)("$name", (door: Door) => {
  let rv: string;

  beforeAll(async () => {
    rv = await reviewerToken("rv-queue");
  });

  /** `token` null: anonymous. */
  const queue = (args: Record<string, unknown>, token: string | null = rv) =>
    door.run("Query.reviewQueue", args, token ? { token } : {});

  /** A queue read, which must succeed. */
  async function page(args: Record<string, unknown>) {
    const data = expectOk(await queue(args)) as { items: Item[]; nextCursor: string | null };
    return { codes: data.items.map((i) => i.reviewCode), nextCursor: data.nextCursor, items: data.items };
  }

  /** The review codes of a queue read, which must succeed. */
  const codes = async (args: Record<string, unknown>) => (await page(args)).codes;

  const assign = async (reviewCode: string, assignee?: string) =>
    expectOk(await door.run("Mutation.assignReview", { reviewCode, assignee }, { token: rv }));
  // Approving an agent whose endpoint's domain is not verified takes a note (src/trust).
  const decide = async (
    reviewCode: string,
    decision: string,
    note = decision === "APPROVE" ? "approved in tests" : undefined,
  ) => expectOk(await door.run("Mutation.decideReview", { reviewCode, decision, note }, { token: rv }));
  const prioritise = async (reviewCode: string, priority: string) =>
    expect(expectOk(await door.run("Mutation.updateReview", { reviewCode, priority }, { token: rv })).priority).toBe(
      priority,
    );

  describe("who may read it", () => {
    test("no token: UNAUTHENTICATED (401) with WWW-Authenticate; an agent token: FORBIDDEN (403)", async () => {
      const agent = await intake();
      const anonymous = await queue({ providerCode: agent.providerCode }, null);
      expectCode(anonymous, "UNAUTHENTICATED");
      expect(anonymous.answer.headers.get("www-authenticate")).toMatch(/^Bearer\b/);
      expectCode(await queue({ providerCode: agent.providerCode }, agent.accessToken), "FORBIDDEN");
    });
  });

  describe("what it holds", () => {
    test("active items with their fields; decided ones leave it, an update review joins it", async () => {
      const word = uniqueWord();
      const kept = await intake({ name: `Queue ${word} kept` });
      const decided = await intake({ name: `Queue ${word} decided` });
      const rejected = await intake({ name: `Queue ${word} rejected` });
      expect(await codes({ search: word })).toEqual([kept.reviewCode, decided.reviewCode, rejected.reviewCode]);

      expect(expectOk(await queue({ providerCode: kept.providerCode }))).toEqual({
        items: [
          {
            id: Buffer.from(`Review:${kept.reviewCode}`).toString("base64"),
            reviewCode: kept.reviewCode,
            providerCode: kept.providerCode,
            providerName: `Queue ${word} kept`,
            // Reached at its endpoint: no package for a reviewer to look at.
            providerPackages: [],
            kind: "INTAKE",
            status: "OPEN",
            priority: "NORMAL",
            assignedTo: null,
            createdAt: expect.any(String),
            updatedAt: expect.any(String),
            decidedAt: null,
            endpointVerified: false,
            healthState: null,
            driftSummary: null,
            driftDetectedAt: null,
          },
        ],
        nextCursor: null,
      });

      await decide(decided.reviewCode, "APPROVE");
      await decide(rejected.reviewCode, "REJECT", "no");
      expect(await codes({ search: word })).toEqual([kept.reviewCode]);

      // The approved provider changes its endpoint: its UPDATE review is queued, after the older intake.
      const patched = await door.run(
        "Mutation.updateProvider",
        {
          providerCode: decided.providerCode,
          endpoint: { url: "https://agent.example.com/v2", protocol: "MCP", authScheme: "NONE" },
        },
        { token: decided.accessToken },
      );
      expectOk(patched);
      const after = await page({ search: word });
      expect(after.items.map((i) => [i.providerCode, i.kind])).toEqual([
        [kept.providerCode, "INTAKE"],
        [decided.providerCode, "UPDATE"],
      ]);
    });

    test("filters combine; decided items leave; priorities set by updateReview order it", async () => {
      const word = uniqueWord();
      const assignee = `rv-bob-${word}`;
      const a = await intake({ name: `Gq ${word} alpha` });
      const b = await intake({ name: `Gq ${word} bravo` });
      const c = await intake({ name: `Gq ${word} charlie` });
      const d = await intake({ name: `Gq ${word} delta` });
      await assign(b.reviewCode, assignee);
      await decide(c.reviewCode, "REQUEST_CHANGES", "please");
      await prioritise(d.reviewCode, "URGENT");
      await prioritise(b.reviewCode, "HIGH");

      expect(await codes({ search: word })).toEqual([d.reviewCode, b.reviewCode, a.reviewCode, c.reviewCode]);
      expect(await codes({ search: word, status: "OPEN" })).toEqual([d.reviewCode, a.reviewCode]);
      expect(await codes({ search: word, status: "OPEN", priority: "NORMAL" })).toEqual([a.reviewCode]);
      expect(await codes({ search: word, assignedTo: assignee, status: "IN_PROGRESS" })).toEqual([b.reviewCode]);
      expect(await codes({ search: word, assignedTo: assignee, priority: "URGENT" })).toEqual([]);
      expect(await codes({ search: `${word} charlie`, status: "CHANGES_REQUESTED" })).toEqual([c.reviewCode]);
      expect(await codes({ providerCode: a.providerCode, search: a.reviewCode.toLowerCase() })).toEqual([a.reviewCode]);
      expect(await codes({ providerCode: a.providerCode, search: b.reviewCode })).toEqual([]);

      await decide(d.reviewCode, "APPROVE");
      await decide(a.reviewCode, "REJECT", "no");
      const after = await page({ search: word });
      expect(after.codes).toEqual([b.reviewCode, c.reviewCode]);
      expect(after.items.map((i) => i.decidedAt)).toEqual([null, null]);
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
      await assign(claimed.reviewCode, assignee);
      await decide(waiting.reviewCode, "REQUEST_CHANGES", "more");
      await prioritise(high.reviewCode, "HIGH");
      await decide(done.reviewCode, "APPROVE");
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
      ["REJECTED", { status: "REJECTED" }, ["status"]],
      ["WITHDRAWN", { status: "WITHDRAWN" }, ["status"]],
      ["an unknown status", { status: "PENDING" }, ["status"]],
      ["an unknown priority", { priority: "CRITICAL" }, ["priority"]],
      ["limit 0", { limit: 0 }, ["limit"]],
      ["limit 101", { limit: 101 }, ["limit"]],
      ["limit 500", { limit: 500 }, ["limit"]],
      ["search over 200 characters", { search: "x".repeat(201) }, ["search"]],
    ])("%s is BAD_USER_INPUT (400) naming it", async (_what, args, paths) => {
      const answer = await queue(args);
      expectCode(answer, "BAD_USER_INPUT");
      expect(answer.paths).toEqual(paths);
    });

    test.each([
      ["a cursor that is not one", "not-a-cursor"],
      ["a forged cursor (base64 JSON)", "eyJub3QiOiJhIGN1cnNvciJ9"],
    ])("%s is BAD_USER_INPUT (400)", async (_what, cursor) => {
      expectCode(await queue({ search: word, cursor }), "BAD_USER_INPUT");
    });
  });

  describe("order", () => {
    test("priorities set with updateReview: URGENT, HIGH, NORMAL, LOW, each oldest first", async () => {
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
      const answer = await page({ search: word });
      expect(answer.codes).toEqual([r2, r3, r1, r4, r0]);
      expect(answer.items.map((i) => i.priority)).toEqual(["URGENT", "URGENT", "HIGH", "NORMAL", "LOW"]);
    });

    test("sort: by opening and by last change, both ways, paged by a cursor that holds to its sort", async () => {
      const word = uniqueWord();
      const made = [];
      for (let i = 0; i < 4; i++) made.push((await intake({ name: `Sorted ${word} ${i}` })).reviewCode);
      const [r0, r1, r2, r3] = made as [string, string, string, string];
      // The oldest review changes last.
      await prioritise(r0, "LOW");
      expect(await codes({ search: word, sort: "PRIORITY" })).toEqual([r1, r2, r3, r0]);
      expect(await codes({ search: word, sort: "OLDEST" })).toEqual([r0, r1, r2, r3]);
      expect(await codes({ search: word, sort: "NEWEST" })).toEqual([r3, r2, r1, r0]);
      expect(await codes({ search: word, sort: "RECENTLY_UPDATED" })).toEqual([r0, r3, r2, r1]);
      expect(await codes({ search: word, sort: "LEAST_RECENTLY_UPDATED" })).toEqual([r1, r2, r3, r0]);

      const one = await page({ search: word, sort: "NEWEST", limit: 3 });
      expect(one.codes).toEqual([r3, r2, r1]);
      expect((await page({ search: word, sort: "NEWEST", limit: 3, cursor: one.nextCursor })).codes).toEqual([r0]);
      // A cursor of one order does not page another.
      expectCode(await queue({ search: word, sort: "OLDEST", cursor: one.nextCursor }), "BAD_USER_INPUT");
      expectCode(await queue({ search: word, cursor: one.nextCursor }), "BAD_USER_INPUT");
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
        const answer = await page({ search: word, limit: 2, ...(cursor ? { cursor } : {}) });
        expect(answer.codes.length).toBeLessThanOrEqual(2);
        seen.push(...answer.codes);
        cursor = answer.nextCursor;
        pages++;
      } while (cursor && pages < 10);
      expect(seen).toEqual(made);
      expect(pages).toBe(3);
    });

    test("while reviews are added and decided between pages, nothing is skipped and nothing repeats", async () => {
      const word = uniqueWord();
      const add = async (n: number) => (await intake({ name: `Moving ${word} ${n}` })).reviewCode;
      const first: string[] = [];
      for (let i = 0; i < 5; i++) first.push(await add(i));
      const [s0, s1, s2, s3, s4] = first as [string, string, string, string, string];

      const pages: string[][] = [];
      const read = async (cursor: string | null) => {
        const answer = await page({ search: word, limit: 2, ...(cursor ? { cursor } : {}) });
        pages.push(answer.codes);
        return answer.nextCursor;
      };

      let cursor = await read(null);
      expect(pages[0]).toEqual([s0, s1]);
      // Between pages: two new reviews arrive, one already seen is decided.
      const s5 = await add(5);
      const s6 = await add(6);
      await decide(s0, "APPROVE");
      cursor = await read(cursor);
      expect(pages[1]).toEqual([s2, s3]);
      // One not yet reached is decided, one seen too, and another arrives.
      await decide(s4, "APPROVE");
      await decide(s1, "APPROVE");
      const s7 = await add(7);
      cursor = await read(cursor);
      expect(pages[2]).toEqual([s5, s6]);
      while (cursor && pages.length < 10) cursor = await read(cursor);
      expect(cursor).toBeNull();

      const union = pages.flat();
      expect(new Set(union).size).toBe(union.length);
      for (const code of [s2, s3]) expect(union.filter((c) => c === code)).toHaveLength(1);
      // Keyset paging: what arrived later comes later, what was decided before it was reached is gone.
      expect(union).toEqual([s0, s1, s2, s3, s5, s6, s7]);
      expect(await codes({ search: word })).toEqual([s2, s3, s5, s6, s7]);
    });

    test("pages of 2 neither skip nor repeat while reviews arrive and are decided; the last page ends it", async () => {
      const word = uniqueWord();
      const add = async () => (await intake({ name: `Gq ${word} moving` })).reviewCode;
      const first: string[] = [];
      for (let i = 0; i < 4; i++) first.push(await add());
      const [s0, s1, s2, s3] = first as [string, string, string, string];

      const one = await page({ search: word, limit: 2 });
      expect(one.codes).toEqual([s0, s1]);
      const s4 = await add();
      await decide(s0, "APPROVE");
      const two = await page({ search: word, limit: 2, cursor: one.nextCursor });
      expect(two.codes).toEqual([s2, s3]);
      const s5 = await add();
      await decide(s2, "REJECT", "no");
      const three = await page({ search: word, limit: 2, cursor: two.nextCursor });
      expect(three.codes).toEqual([s4, s5]);
      // The last page: nothing after it.
      expect(three.nextCursor).toBeNull();

      const union = [...one.codes, ...two.codes, ...three.codes];
      expect(new Set(union).size).toBe(union.length);
      for (const code of [s1, s3]) expect(union.filter((c) => c === code)).toHaveLength(1);
    });
  });
});
