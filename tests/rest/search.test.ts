/**
 * Full-text search of GET /api/v1/providers and GET /api/v1/reviews/queue (API.md §4 "Lists"):
 * prefixes, case and accents, all words, ranking, filters, paging, hostile input, and an index the
 * database keeps itself. Test files share one database: every assertion is scoped by a unique label
 * or a word only this file's providers carry.
 */
import { randomBytes } from "node:crypto";
import { beforeAll, describe, expect, test } from "@jest/globals";
import { dialectOf } from "../../src/db/client.ts";
import { approve, call, config, db, expectProblem, intake, reviewerToken, uniqueCode } from "../helpers.ts";

/** A word of letters only that no other provider holds. */
const uniqueWord = (prefix = "sx") =>
  `${prefix}${[...randomBytes(8)].map((b) => String.fromCharCode(97 + (b % 26))).join("")}`;

const codes = (answer: { body: { items: { providerCode: string }[] } }) => answer.body.items.map((i) => i.providerCode);

/** A provider that carries none of the test words unless given: neutral name, summary and labels. */
async function made(label: string, overrides: Record<string, unknown> = {}, approved = true) {
  const created = await intake({ name: "Neutral agent", summary: "Does a thing", labels: [label], ...overrides });
  if (approved) await approve(created.providerCode);
  return created.providerCode;
}

function list(params: Record<string, string | number>, token?: string) {
  const query = new URLSearchParams(Object.entries(params).map(([k, v]) => [k, String(v)])).toString();
  return call("GET", `/api/v1/providers?${query}`, token ? { token } : {});
}

/** Every page of a list, following nextCursor; fails on any non-200. */
async function allPages(params: Record<string, string | number>, token?: string) {
  const seen: string[] = [];
  let cursor: string | null = null;
  for (let pages = 0; pages < 50; pages++) {
    const answer = await list(cursor ? { ...params, cursor } : params, token);
    expect(answer.status).toBe(200);
    seen.push(...codes(answer));
    cursor = answer.body.nextCursor;
    if (cursor === null) return seen;
  }
  throw new Error("too many pages");
}

describe("providers search", () => {
  test("every word is a prefix: `rout` finds routing and route-planner (code, name, labels)", async () => {
    const label = uniqueCode("s-prefix");
    const routing = await made(label, { name: "Routing engine" });
    const planner = await made(label, { labels: [label, "route-planner"] });
    const inCode = await made(label, { providerCode: uniqueCode("router") });
    const other = await made(label, { name: "Path finder", summary: "Finds a path, not a r-o-u-t-e" });

    const found = await list({ labels: label, search: "rout" });
    expect(found.status).toBe(200);
    expect(codes(found).sort()).toEqual([routing, planner, inCode].sort());
    expect(codes(found)).not.toContain(other);
    // Separators in labels and codes split words: `planner` and `route planner` find the label too.
    expect(codes(await list({ labels: label, search: "plann" }))).toEqual([planner]);
    expect(codes(await list({ labels: label, search: "route-plan" }))).toEqual([planner]);
    // A prefix, not a substring: `outing` is inside `routing` but starts no word.
    expect(codes(await list({ labels: label, search: "outing" }))).toEqual([]);
  });

  test("case and accents are ignored both ways: café, CAFE, Café", async () => {
    const label = uniqueCode("s-accent");
    const w = uniqueWord();
    const accented = await made(label, { name: `Café Crème ${w}` });
    const plain = await made(label, { summary: `A cafe creme ${w} agent` });
    for (const search of [`café ${w}`, `CAFE ${w}`, `Café ${w.toUpperCase()}`, `creme ${w}`, `CRÈME ${w}`]) {
      expect([search, codes(await list({ labels: label, search })).sort()]).toEqual([search, [accented, plain].sort()]);
    }
    // Still prefixes of whole words: `cafés` is longer than `cafe`.
    expect(codes(await list({ labels: label, search: `cafés ${w}` }))).toEqual([]);
  });

  test("all words must match, in any field", async () => {
    const label = uniqueCode("s-all");
    const w = uniqueWord();
    const ab = await made(label, { name: `Alpha ${w}`, summary: "bravo things" });
    const ac = await made(label, { name: `Alpha ${w}`, description: "charlie things" });
    expect(codes(await list({ labels: label, search: `alpha bravo ${w}` }))).toEqual([ab]);
    expect(codes(await list({ labels: label, search: `alp cha ${w}` }))).toEqual([ac]);
    expect(codes(await list({ labels: label, search: `alpha zulu ${w}` }))).toEqual([]);
    expect(codes(await list({ labels: label, search: `${w} alpha` })).sort()).toEqual([ab, ac].sort());
  });

  test("best match first: name and code, then labels, then summary, then description; ties by id", async () => {
    const label = uniqueCode("s-rank");
    const w = uniqueWord();
    // Made best first, so ids ascend with the expected rank: ties by id alone would list them reversed.
    const inName = await made(label, { name: `The ${w} agent` });
    const inLabel = await made(label, { labels: [label, `${w}-tools`] });
    const inSummary = await made(label, { summary: `Answers about ${w} and more` });
    const inDescription = await made(label, { description: `Long text. Mentions ${w} once.` });
    const order = codes(await list({ labels: label, search: w }));
    expect(order).toEqual([inName, inLabel, inSummary, inDescription]);
    // Equal matches are in a stable order: newest id first.
    const twinA = await made(label, { summary: `twin ${w}q` });
    const twinB = await made(label, { summary: `twin ${w}q` });
    expect(codes(await list({ labels: label, search: `${w}q` }))).toEqual([twinB, twinA]);
  });

  test("combines with every filter and the caller's visibility, filtering before the page is cut", async () => {
    const label = uniqueCode("s-filter");
    const second = uniqueCode("s-second");
    const w = uniqueWord();
    const visible = [
      await made(label, { summary: `listed ${w}` }),
      await made(label, { summary: `listed ${w}` }),
      await made(label, { summary: `listed ${w}`, labels: [label, second], agentType: "TOOL_SERVER" }),
    ];
    // Better matches (in the name) that anonymous callers may not see: pending, private, rejected.
    const pending = await made(label, { name: `Pending ${w}` }, false);
    const hidden = await made(label, { name: `Private ${w}`, visibility: "PRIVATE" });
    const rv = await reviewerToken("rv-search");

    // Anonymous: only the approved public ones, two per page, none lost to the hidden ones.
    const first = await list({ labels: label, search: w, limit: 2 });
    expect(first.status).toBe(200);
    expect(codes(first)).toHaveLength(2);
    const paged = await allPages({ labels: label, search: w, limit: 2 });
    expect([...paged].sort()).toEqual([...visible].sort());
    expect(paged).toEqual(codes(await list({ labels: label, search: w })));
    // A reviewer sees everything, best (name) matches first.
    const all = codes(await list({ labels: label, search: w }, rv));
    expect(all.slice(0, 2).sort()).toEqual([pending, hidden].sort());
    expect(all.slice(2)).toEqual(paged);

    expect(codes(await list({ labels: `${label},${second}`, search: w }))).toEqual([visible[2]]);
    expect(codes(await list({ labels: label, search: w, agentType: "TOOL_SERVER" }))).toEqual([visible[2]]);
    expect(codes(await list({ labels: label, search: w, agentType: "WORKFLOW" }))).toEqual([]);
    expect(codes(await list({ labels: label, search: w, visibility: "PRIVATE" }, rv))).toEqual([hidden]);
    expect(codes(await list({ labels: label, search: w, reviewStage: "SUBMITTED" }, rv))).toEqual([pending]);
    await db.provider.update({ where: { providerCode: visible[0] }, data: { trustTier: "TRUSTED" } });
    expect(codes(await list({ labels: label, search: w, trustTier: "TRUSTED" }))).toEqual([visible[0]]);
  });

  test("an agent finds its own unlisted provider, and no one else's", async () => {
    const label = uniqueCode("s-own");
    const w = uniqueWord();
    const mine = await intake({ name: `Mine ${w}`, summary: "x", labels: [label] });
    const theirs = await made(label, { name: `Theirs ${w}` }, false);
    expect(codes(await list({ labels: label, search: w }, mine.accessToken))).toEqual([mine.providerCode]);
    expect(codes(await list({ labels: label, search: w }))).toEqual([]);
    expect(theirs).toBeTruthy();
  });

  test("paging with limit 2 neither skips nor repeats, and matches the one-page order", async () => {
    const label = uniqueCode("s-page");
    const w = uniqueWord();
    const made7: string[] = [];
    for (let i = 0; i < 7; i++) {
      // Some ties, some different ranks.
      const where = i % 3 === 0 ? { name: `Item ${w}` } : i % 3 === 1 ? { summary: `item ${w}` } : { description: w };
      made7.push(await made(label, where));
    }
    const ordered = codes(await list({ labels: label, search: w, limit: 100 }));
    expect([...ordered].sort()).toEqual([...made7].sort());
    const paged = await allPages({ labels: label, search: w, limit: 2 });
    expect(paged).toEqual(ordered);
    expect(new Set(paged).size).toBe(7);
  });

  test("a cursor belongs to its search: another search or the plain list refuses it with 400", async () => {
    const label = uniqueCode("s-cursor");
    const w = uniqueWord();
    for (let i = 0; i < 3; i++) await made(label, { name: `Cursor ${w}` });
    const first = await list({ labels: label, search: w, limit: 1 });
    expect(first.body.nextCursor).toEqual(expect.any(String));
    expectProblem(
      await list({ labels: label, search: `${w} cursor`, limit: 1, cursor: first.body.nextCursor }),
      400,
      "BAD_USER_INPUT",
    );
    expectProblem(await list({ labels: label, limit: 1, cursor: first.body.nextCursor }), 400, "BAD_USER_INPUT");
    const plain = await list({ labels: label, limit: 1 });
    expectProblem(
      await list({ labels: label, search: w, limit: 1, cursor: plain.body.nextCursor }),
      400,
      "BAD_USER_INPUT",
    );
  });

  test("full-text syntax in the input is only ever text: never an error", async () => {
    const label = uniqueCode("s-syntax");
    const w = uniqueWord();
    const near = await made(label, { name: `Nearby ${w}`, summary: "or and not" });
    const hostile = [
      '"',
      `"${w}`,
      `${w}"`,
      "*",
      `${w}*`,
      "(",
      `(${w}`,
      ")",
      `NEAR(${w} x)`,
      "NEAR",
      "-",
      `-${w}`,
      ":",
      `name:${w}`,
      `{name}: ${w}`,
      "&",
      `${w} & x`,
      "|",
      `${w} | x`,
      "!",
      `!${w}`,
      "^",
      `${w}:*`,
      "'",
      "\\",
      "AND OR NOT",
      `${w} OR x`,
      "&&||!!::**(())",
      "%_%",
      "\u0301",
      "🙂",
      "-.-".repeat(66),
    ];
    for (const search of hostile) {
      const answer = await list({ labels: label, search });
      expect([search, answer.status]).toEqual([search, 200]);
    }
    // Operators are words like any other: `near or` finds the name and the summary's words.
    expect(codes(await list({ labels: label, search: `"NEAR" OR ${w}` }))).toEqual([near]);
    expect(codes(await list({ labels: label, search: `(${w}) & !near*` }))).toEqual([near]);
    expect(codes(await list({ labels: label, search: `-${w}` }))).toEqual([near]);
    // Only separators: no words, so no search — the plain list.
    expect(codes(await list({ labels: label, search: '"*"' }))).toEqual([near]);
  });

  test("rows written with plain SQL are indexed by the database itself", async () => {
    const w = uniqueWord();
    const code = uniqueCode("s-sql");
    const now = new Date().toISOString();
    const json = (v: unknown) => `'${JSON.stringify(v)}'`;
    await db.$executeRawUnsafe(
      `INSERT INTO "providers" ("providerCode", "name", "summary", "description", "labels", "agentType", "visibility", "reviewStage", "contactEmail", "capabilities", "models", "tools", "endpoint", "roles", "updatedAt")
       VALUES ('${code}', 'Bulk ${w}', 'Loaded by SQL', NULL, ${json([`${w}-bulk`])}, 'ASSISTANT', 'PUBLIC', 'APPROVED', 'ops@example.com', '[]', '[]', '[]', ${json({ url: "https://x.example/a2a", protocol: "A2A", authScheme: "NONE" })}, '[]', '${now}')`,
    );
    expect(codes(await list({ search: w }))).toEqual([code]);
    expect(codes(await list({ search: `${w} bulk` }))).toEqual([code]);
    await db.$executeRawUnsafe(
      `UPDATE "providers" SET "name" = 'Renamed', "labels" = '[]' WHERE "providerCode" = '${code}'`,
    );
    expect(codes(await list({ search: w }))).toEqual([]);
    expect(codes(await list({ search: `renamed ${code}` }))).toEqual([code]);
    await db.$executeRawUnsafe(`DELETE FROM "providers" WHERE "providerCode" = '${code}'`);
    expect(codes(await list({ search: `renamed ${code}` }))).toEqual([]);
  });

  test("the index is the database's: an FTS5 table on SQLite, a GIN index on PostgreSQL", async () => {
    const indexed =
      dialectOf(config.databaseUrl) === "postgresql"
        ? await db.$queryRawUnsafe<{ n: bigint }[]>(
            `SELECT count(*) AS n FROM pg_indexes WHERE tablename = 'providers' AND indexdef LIKE '%USING gin ("searchVector")%'`,
          )
        : await db.$queryRawUnsafe<{ n: bigint }[]>(
            `SELECT count(*) AS n FROM sqlite_master WHERE name = 'provider_search' AND sql LIKE '%fts5%'`,
          );
    expect(Number(indexed[0]?.n)).toBe(1);
  });
});

describe("review queue search", () => {
  let rv: string;
  beforeAll(async () => {
    rv = await reviewerToken("rv-queue-search");
  });
  const queue = async (search: string) => {
    const answer = await call("GET", `/api/v1/reviews/queue?${new URLSearchParams({ search, limit: "100" })}`, {
      token: rv,
    });
    expect([search, answer.status]).toEqual([search, 200]);
    return (answer.body.items as { reviewCode: string }[]).map((i) => i.reviewCode);
  };

  test("review code, provider code and name words: prefixes, any case, all terms", async () => {
    const w = uniqueWord("qs");
    const routing = await intake({ name: `Routing ${w}`, providerCode: uniqueCode("qsearch") });
    const billing = await intake({ name: `Billing ${w}` });

    expect((await queue(w)).sort()).toEqual([routing.reviewCode, billing.reviewCode].sort());
    expect(await queue(`${w.toUpperCase()} ROUT`)).toEqual([routing.reviewCode]);
    expect(await queue(`${w.slice(0, 6)} bill`)).toEqual([billing.reviewCode]);
    // The review code by prefix, any case, alone or with a name word.
    expect(await queue(routing.reviewCode.toLowerCase())).toEqual([routing.reviewCode]);
    expect(await queue(`${routing.reviewCode.slice(0, 8).toLowerCase()} ${w}`)).toEqual([routing.reviewCode]);
    // The provider code by prefix, any case.
    expect(await queue(routing.providerCode.toUpperCase())).toEqual([routing.reviewCode]);
    expect(await queue(`${routing.providerCode.slice(0, 12)} ${w}`)).toEqual([routing.reviewCode]);
    // Summary words are not the queue's to search, nor substrings.
    expect(await queue(`${w} delivery`)).toEqual([]);
    expect(await queue(`${w} outing`)).toEqual([]);
    for (const hostile of ['"', "*", "(", "NEAR", "-", ":", "&", "|", "!", "%", "_", `RV-%${w}`, "rv-_"])
      await queue(hostile);
  });

  test("searched, the queue keeps its order and its cursor neither skips nor repeats", async () => {
    const w = uniqueWord("qp");
    const made: string[] = [];
    for (let i = 0; i < 5; i++) made.push((await intake({ name: `Paged ${w} ${i}` })).reviewCode);
    await intake({ name: `Other ${uniqueWord()}` });
    const urgent = made[3] as string;
    const patched = await call("PATCH", `/api/v1/reviews/${urgent}`, { body: { priority: "URGENT" }, token: rv });
    expect(patched.status).toBe(200);
    const seen: string[] = [];
    let cursor: string | null = null;
    for (let pages = 0; pages < 10; pages++) {
      const params: Record<string, string> = { search: `paged ${w.toUpperCase()}`, limit: "1" };
      if (cursor) params.cursor = cursor;
      const answer = await call("GET", `/api/v1/reviews/queue?${new URLSearchParams(params)}`, { token: rv });
      expect(answer.status).toBe(200);
      seen.push(...(answer.body.items as { reviewCode: string }[]).map((i) => i.reviewCode));
      cursor = answer.body.nextCursor;
      if (!cursor) break;
    }
    expect(seen).toEqual([urgent, ...made.filter((c) => c !== urgent)]);
  });
});
