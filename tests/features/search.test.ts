/** Full-text search of the provider list and the review queue (API.md §4 "Lists") through both doors: prefixes, case and accents, all words, ranking, filters, paging, hostile input, an index the database keeps itself. */
import { randomBytes } from "node:crypto";
import { beforeAll, describe, expect, test } from "@jest/globals";
import { dialectOf } from "../../src/db/client.ts";
import { uniqueCode } from "../builders.ts";
import { doors, type Outcome } from "../doors.ts";
import { approve, call, config, db, intake, reviewerToken } from "../helpers.ts";

/** A word of letters only that no other provider holds. */
const uniqueWord = (prefix = "sx") =>
  `${prefix}${[...randomBytes(8)].map((b) => String.fromCharCode(97 + (b % 26))).join("")}`;

const codes = (outcome: Outcome): string[] =>
  (outcome.data.items as { providerCode: string }[]).map((i) => i.providerCode);

/** A provider that carries none of the test words unless given: neutral name, summary and labels. */
async function made(label: string, overrides: Record<string, unknown> = {}, approved = true) {
  const created = await intake({ name: "Neutral agent", summary: "Does a thing", labels: [label], ...overrides });
  if (approved) await approve(created.providerCode);
  return created.providerCode;
}

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

describe.each(doors)("$name", (door) => {
  /** The list the door answers for these arguments; fails unless it answered. */
  async function answered(args: Record<string, unknown>, token?: string) {
    const outcome = await door.run("Query.providers", args, token ? { token } : {});
    expect([args, outcome.code, outcome.status]).toEqual([args, undefined, 200]);
    return outcome;
  }
  const list = async (args: Record<string, unknown>, token?: string) => codes(await answered(args, token));

  /** Every page of a list, following nextCursor. */
  async function allPages(args: Record<string, unknown>, token?: string) {
    const seen: string[] = [];
    let cursor: string | null = null;
    for (let pages = 0; pages < 50; pages++) {
      const page = await answered(cursor ? { ...args, cursor } : args, token);
      expect(page.data.items.length).toBeLessThanOrEqual(Number(args.limit ?? 20));
      seen.push(...codes(page));
      cursor = page.data.nextCursor;
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

      const found = await list({ labels: [label], search: "rout" });
      expect([...found].sort()).toEqual([routing, planner, inCode].sort());
      expect(found).not.toContain(other);
      // Separators in labels and codes split words: `planner` and `route planner` find the label too.
      expect(await list({ labels: [label], search: "plann" })).toEqual([planner]);
      expect(await list({ labels: [label], search: "route-plan" })).toEqual([planner]);
      // A prefix, not a substring: `outing` is inside `routing` but starts no word.
      expect(await list({ labels: [label], search: "outing" })).toEqual([]);
    });

    test("case and accents are ignored both ways: café, CAFE, Café", async () => {
      const label = uniqueCode("s-accent");
      const w = uniqueWord();
      const accented = await made(label, { name: `Café Crème ${w}` });
      const plain = await made(label, { summary: `A cafe creme ${w} agent` });
      for (const search of [`café ${w}`, `CAFE ${w}`, `Café ${w.toUpperCase()}`, `creme ${w}`, `CRÈME ${w}`]) {
        expect([search, (await list({ labels: [label], search })).sort()]).toEqual([search, [accented, plain].sort()]);
      }
      // Still prefixes of whole words: `cafés` is longer than `cafe`.
      expect(await list({ labels: [label], search: `cafés ${w}` })).toEqual([]);
    });

    test("all words must match, in any field", async () => {
      const label = uniqueCode("s-all");
      const w = uniqueWord();
      const ab = await made(label, { name: `Alpha ${w}`, summary: "bravo things" });
      const ac = await made(label, { name: `Alpha ${w}`, description: "charlie things" });
      expect(await list({ labels: [label], search: `alpha bravo ${w}` })).toEqual([ab]);
      expect(await list({ labels: [label], search: `alp cha ${w}` })).toEqual([ac]);
      expect(await list({ labels: [label], search: `alpha zulu ${w}` })).toEqual([]);
      expect((await list({ labels: [label], search: `${w} alpha` })).sort()).toEqual([ab, ac].sort());
    });

    test("best match first: name and code, then labels, then summary, then description; ties by id", async () => {
      const label = uniqueCode("s-rank");
      const w = uniqueWord();
      // Made best first, so ids ascend with the expected rank: ties by id alone would list them reversed.
      const inName = await made(label, { name: `The ${w} agent` });
      const inLabel = await made(label, { labels: [label, `${w}-tools`] });
      const inSummary = await made(label, { summary: `Answers about ${w} and more` });
      const inDescription = await made(label, { description: `Long text. Mentions ${w} once.` });
      expect(await list({ labels: [label], search: w })).toEqual([inName, inLabel, inSummary, inDescription]);
      // Equal matches are in a stable order: newest id first.
      const twinA = await made(label, { summary: `twin ${w}q` });
      const twinB = await made(label, { summary: `twin ${w}q` });
      expect(await list({ labels: [label], search: `${w}q` })).toEqual([twinB, twinA]);
    });

    test("prefixes, case, accents and all words together, best match first, with a filter", async () => {
      const label = uniqueCode("s-words");
      const w = uniqueWord();
      const named = await made(label, { name: `Routing Café ${w}` });
      const described = await made(label, { description: `Explains route-planner cafe work, ${w}.` });
      const unrelated = await made(label, { name: `Billing ${w}` });

      expect(await list({ labels: [label], search: `ROUT CAFE ${w}` })).toEqual([named, described]);
      expect(await list({ labels: [label], search: `café ${w}` })).toEqual([named, described]);
      expect(await list({ labels: [label], search: `planner ${w}` })).toEqual([described]);
      expect(await list({ labels: [label], search: `bill rout ${w}` })).toEqual([]);
      expect(await list({ labels: [label], search: w, agentType: "WORKFLOW" })).toEqual([]);
      expect(await list({ labels: [label], search: w })).toContain(unrelated);
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
      // Better matches (in the name) that anonymous callers may not see: pending, private.
      const pending = await made(label, { name: `Pending ${w}` }, false);
      const hidden = await made(label, { name: `Private ${w}`, visibility: "PRIVATE" });
      const rv = await reviewerToken("rv-search");

      // Anonymous: only the approved public ones, two per page, none lost to the hidden ones.
      const first = await list({ labels: [label], search: w, limit: 2 });
      expect(first).toHaveLength(2);
      const paged = await allPages({ labels: [label], search: w, limit: 2 });
      expect([...paged].sort()).toEqual([...visible].sort());
      expect(paged).toEqual(await list({ labels: [label], search: w }));
      // A reviewer sees everything, best (name) matches first.
      const all = await list({ labels: [label], search: w }, rv);
      expect(all.slice(0, 2).sort()).toEqual([pending, hidden].sort());
      expect(all.slice(2)).toEqual(paged);

      expect(await list({ labels: [label, second], search: w })).toEqual([visible[2]]);
      expect(await list({ labels: [label], search: w, agentType: "TOOL_SERVER" })).toEqual([visible[2]]);
      expect(await list({ labels: [label], search: w, agentType: "WORKFLOW" })).toEqual([]);
      expect(await list({ labels: [label], search: w, visibility: "PRIVATE" }, rv)).toEqual([hidden]);
      expect(await list({ labels: [label], search: w, reviewStage: "SUBMITTED" }, rv)).toEqual([pending]);
      await db.provider.update({ where: { providerCode: visible[0] }, data: { trustTier: "TRUSTED" } });
      expect(await list({ labels: [label], search: w, trustTier: "TRUSTED" })).toEqual([visible[0]]);
    });

    test("an agent finds its own unlisted provider, and no one else's", async () => {
      const label = uniqueCode("s-own");
      const w = uniqueWord();
      const mine = await intake({ name: `Mine ${w}`, summary: "x", labels: [label] });
      const theirs = await made(label, { name: `Theirs ${w}` }, false);
      expect(await list({ labels: [label], search: w }, mine.accessToken)).toEqual([mine.providerCode]);
      expect(await list({ labels: [label], search: w })).toEqual([]);
      expect(await list({ labels: [label], search: w }, await reviewerToken())).toContain(theirs);
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
      const ordered = await list({ labels: [label], search: w, limit: 100 });
      expect([...ordered].sort()).toEqual([...made7].sort());
      const paged = await allPages({ labels: [label], search: w, limit: 2 });
      expect(paged).toEqual(ordered);
      expect(new Set(paged).size).toBe(7);
    });

    test("a cursor belongs to its search: another search or the plain list refuses it", async () => {
      const label = uniqueCode("s-cursor");
      const w = uniqueWord();
      for (let i = 0; i < 3; i++) await made(label, { name: `Cursor ${w}` });
      const refused = async (args: Record<string, unknown>) => {
        const outcome = await door.run("Query.providers", args);
        expect([outcome.code, outcome.status, outcome.paths]).toEqual(["BAD_USER_INPUT", 400, ["cursor"]]);
      };
      const first = await answered({ labels: [label], search: w, limit: 1 });
      expect(first.data.nextCursor).toEqual(expect.any(String));
      await refused({ labels: [label], search: `${w} cursor`, limit: 1, cursor: first.data.nextCursor });
      await refused({ labels: [label], limit: 1, cursor: first.data.nextCursor });
      const plain = await answered({ labels: [label], limit: 1 });
      expect(plain.data.nextCursor).toEqual(expect.any(String));
      await refused({ labels: [label], search: w, limit: 1, cursor: plain.data.nextCursor });
    });

    test("full-text syntax in the input is only ever text: never an error", async () => {
      const label = uniqueCode("s-syntax");
      const w = uniqueWord();
      const near = await made(label, { name: `Nearby ${w}`, summary: "or and not" });
      // biome-ignore format: one hostile input a cell
      const hostile = [
        '"', `"${w}`, `${w}"`, "*", `${w}*`, "(", `(${w}`, ")", `NEAR(${w} x)`, "NEAR", "NEAR(a b)", "-", `-${w}`, "-x",
        ":", `name:${w}`, "a:b", `{name}: ${w}`, "&", `${w} & x`, "a & b", "|", `${w} | x`, "a | b", "!", `!${w}`, "!a",
        "^", `${w}:*`, "a:*", "'", "\\", "AND OR NOT", `${w} OR x`, "&&||!!::**(())", "%_%", "\u0301", "🙂", "-.-".repeat(66),
      ];
      for (const search of hostile) await answered({ labels: [label], search });
      // Over the whole list too, not only within a label.
      for (const search of ['"', "*", "(", "NEAR(a b)", "-x", "a:b", "a & b", "a | b", "!a", "a:*", "'", ")"]) {
        await answered({ search });
      }
      // Operators are words like any other: `near or` finds the name and the summary's words.
      expect(await list({ labels: [label], search: `"NEAR" OR ${w}` })).toEqual([near]);
      expect(await list({ labels: [label], search: `(${w}) & !near*` })).toEqual([near]);
      expect(await list({ labels: [label], search: `-${w}` })).toEqual([near]);
      // Only separators: no words, so no search — the plain list.
      expect(await list({ labels: [label], search: '"*"' })).toEqual([near]);
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
      expect(await list({ search: w })).toEqual([code]);
      expect(await list({ search: `${w} bulk` })).toEqual([code]);
      await db.$executeRawUnsafe(
        `UPDATE "providers" SET "name" = 'Renamed', "labels" = '[]' WHERE "providerCode" = '${code}'`,
      );
      expect(await list({ search: w })).toEqual([]);
      expect(await list({ search: `renamed ${code}` })).toEqual([code]);
      await db.$executeRawUnsafe(`DELETE FROM "providers" WHERE "providerCode" = '${code}'`);
      expect(await list({ search: `renamed ${code}` })).toEqual([]);
    });
  });

  describe("review queue search", () => {
    let rv: string;
    beforeAll(async () => {
      rv = await reviewerToken("rv-queue-search");
    });
    /** A page of the queue for these arguments; fails unless the door answered it. */
    async function queuePage(args: Record<string, unknown>) {
      const outcome = await door.run("Query.reviewQueue", args, { token: rv });
      expect([args, outcome.code, outcome.status]).toEqual([args, undefined, 200]);
      return outcome;
    }
    const queue = async (search: string) =>
      ((await queuePage({ search, limit: 100 })).data.items as { reviewCode: string }[]).map((i) => i.reviewCode);

    test("review code, provider code and name words: prefixes, any case, all terms", async () => {
      const w = uniqueWord("qs");
      const routing = await intake({ name: `Routing ${w}`, providerCode: uniqueCode("qsearch") });
      const billing = await intake({ name: `Billing ${w}` });

      expect((await queue(w)).sort()).toEqual([routing.reviewCode, billing.reviewCode].sort());
      expect(await queue(`${w.toUpperCase()} ROUT`)).toEqual([routing.reviewCode]);
      expect(await queue(`${w.toUpperCase()} Rout`)).toEqual([routing.reviewCode]);
      expect(await queue(`${w.slice(0, 6)} bill`)).toEqual([billing.reviewCode]);
      expect(await queue(`${w} BILL`)).toEqual([billing.reviewCode]);
      // The review code by prefix, any case, alone or with a name word.
      expect(await queue(routing.reviewCode.toLowerCase())).toEqual([routing.reviewCode]);
      expect(await queue(`${routing.reviewCode.slice(0, 8).toLowerCase()} ${w}`)).toEqual([routing.reviewCode]);
      expect(await queue(`${routing.reviewCode.slice(0, 9).toLowerCase()} ${w}`)).toEqual([routing.reviewCode]);
      // The provider code by prefix, any case.
      expect(await queue(routing.providerCode.toUpperCase())).toEqual([routing.reviewCode]);
      expect(await queue(billing.providerCode.toUpperCase())).toEqual([billing.reviewCode]);
      expect(await queue(`${routing.providerCode.slice(0, 12)} ${w}`)).toEqual([routing.reviewCode]);
      // Summary words are not the queue's to search, nor substrings.
      expect(await queue(`${w} delivery`)).toEqual([]);
      expect(await queue(`${w} outing`)).toEqual([]);
      // Query-language characters are plain text, alone or beside a word.
      for (const hostile of ['"', "*", "(", "NEAR", "-", ":", "&", "|", "!", "%", "_", `RV-%${w}`, "rv-_"]) {
        await queue(hostile);
        await queue(`${hostile} ${w}`);
      }
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
        const page: Outcome = await queuePage({
          search: `paged ${w.toUpperCase()}`,
          limit: 1,
          ...(cursor ? { cursor } : {}),
        });
        seen.push(...(page.data.items as { reviewCode: string }[]).map((i) => i.reviewCode));
        cursor = page.data.nextCursor;
        if (!cursor) break;
      }
      expect(seen).toEqual([urgent, ...made.filter((c) => c !== urgent)]);
    });
  });
});
