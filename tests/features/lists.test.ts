/** The provider list (Query.providers, GET /api/v1/providers) through both doors: filters, limit bounds and cursor paging, each test scoped by a unique label. */
import { describe, expect, test } from "@jest/globals";
import { uniqueCode } from "../builders.ts";
import { doors, type Outcome } from "../doors.ts";
import { approve, db, intake, reviewerToken } from "../helpers.ts";

const codes = (outcome: Outcome): string[] =>
  (outcome.data.items as { providerCode: string }[]).map((i) => i.providerCode);

async function approvedWith(label: string, count: number) {
  const made: string[] = [];
  for (let i = 0; i < count; i++) {
    const created = await intake({ labels: [label] });
    await approve(created.providerCode);
    made.push(created.providerCode);
  }
  return made;
}

describe.each(doors)("$name", (door) => {
  /** A page of the list; fails unless the door answered it. */
  async function list(args: Record<string, unknown>, token?: string) {
    const outcome = await door.run("Query.providers", args, token ? { token } : {});
    expect([args, outcome.code]).toEqual([args, undefined]);
    expect(outcome.status).toBe(200);
    return outcome;
  }

  /** A list the door must refuse as bad input naming one argument. */
  async function refused(args: Record<string, unknown>, path: string) {
    const outcome = await door.run("Query.providers", args);
    expect(outcome.code).toBe("BAD_USER_INPUT");
    expect(outcome.status).toBe(400);
    expect(outcome.paths).toEqual([path]);
    expect(outcome.data).toBeNull();
  }

  describe("filters", () => {
    test("agentType, visibility, trustTier and reviewStage each narrow the list, and combine", async () => {
      const label = uniqueCode("filters");
      const tool = await intake({ labels: [label], agentType: "TOOL_SERVER" });
      const workflow = await intake({ labels: [label], agentType: "WORKFLOW" });
      const unlisted = await intake({ labels: [label], visibility: "UNLISTED" });
      const priv = await intake({ labels: [label], visibility: "PRIVATE" });
      const trusted = await intake({ labels: [label] });
      await db.provider.update({ where: { providerCode: trusted.providerCode }, data: { trustTier: "TRUSTED" } });
      const official = await intake({ labels: [label] });
      await db.provider.update({ where: { providerCode: official.providerCode }, data: { trustTier: "OFFICIAL" } });
      const inReview = await intake({ labels: [label] });
      await db.provider.update({ where: { providerCode: inReview.providerCode }, data: { reviewStage: "IN_REVIEW" } });
      const approved = await intake({ labels: [label] });
      await approve(approved.providerCode);
      const token = await reviewerToken();
      const only = async (args: Record<string, unknown>) => codes(await list({ labels: [label], ...args }, token));

      expect((await only({ limit: 100 })).sort()).toEqual(
        [tool, workflow, unlisted, priv, trusted, official, inReview, approved].map((p) => p.providerCode).sort(),
      );
      expect(await only({ agentType: "TOOL_SERVER" })).toEqual([tool.providerCode]);
      expect(await only({ agentType: "WORKFLOW" })).toEqual([workflow.providerCode]);
      expect(await only({ visibility: "UNLISTED" })).toEqual([unlisted.providerCode]);
      expect(await only({ visibility: "PRIVATE" })).toEqual([priv.providerCode]);
      expect(await only({ trustTier: "TRUSTED" })).toEqual([trusted.providerCode]);
      expect(await only({ trustTier: "OFFICIAL" })).toEqual([official.providerCode]);
      expect(await only({ reviewStage: "APPROVED" })).toEqual([approved.providerCode]);
      expect(await only({ reviewStage: "IN_REVIEW" })).toEqual([inReview.providerCode]);
      expect(await only({ reviewStage: "SUBMITTED", agentType: "TOOL_SERVER" })).toEqual([tool.providerCode]);
      expect(await only({ reviewStage: "IN_REVIEW", agentType: "WORKFLOW" })).toEqual([]);
    });

    test("an unknown enumeration value is BAD_USER_INPUT naming it", async () => {
      await refused({ agentType: "ROBOT" }, "agentType");
    });

    test("labels must all match, in any case, listed or comma-separated", async () => {
      const a = uniqueCode("la");
      const b = uniqueCode("lb");
      const both = await intake({ labels: [a, b] });
      const onlyA = await intake({ labels: [a] });
      await approve(both.providerCode);
      await approve(onlyA.providerCode);
      expect(codes(await list({ labels: [a] })).sort()).toEqual([both.providerCode, onlyA.providerCode].sort());
      expect(codes(await list({ labels: [a, b] }))).toEqual([both.providerCode]);
      expect(codes(await list({ labels: [`${a},${b}`] }))).toEqual([both.providerCode]);
      expect(codes(await list({ labels: [b.toUpperCase(), a] }))).toEqual([both.providerCode]);
      expect(codes(await list({ labels: [a, uniqueCode("none")] }))).toEqual([]);
    });

    test("search matches words of code, name, summary, description and labels, case-insensitively", async () => {
      const word = uniqueCode("zq").replace("-", "");
      const label = uniqueCode("search");
      const inName = await intake({ labels: [label], name: `Alpha ${word}` });
      const inDescription = await intake({ labels: [label], description: `Knows about ${word.toUpperCase()} things` });
      const inLabel = await intake({ labels: [label, `${word}-tag`] });
      const inSummary = await intake({ labels: [label], summary: "Translates invoices quickly" });
      const other = await intake({ labels: [label] });
      for (const p of [inName, inDescription, inLabel, inSummary, other]) await approve(p.providerCode);

      expect(codes(await list({ search: word.toUpperCase() })).sort()).toEqual(
        [inName.providerCode, inDescription.providerCode, inLabel.providerCode].sort(),
      );
      expect(codes(await list({ search: `alpha ${word}` }))).toEqual([inName.providerCode]);
      expect(codes(await list({ search: other.providerCode }))).toEqual([other.providerCode]);
      expect(codes(await list({ labels: [label], search: "INVOICES translates" }))).toEqual([inSummary.providerCode]);
      expect(codes(await list({ labels: [label], search: "nothing-like-this" }))).toEqual([]);
    });

    test("search longer than 200 characters is BAD_USER_INPUT naming it", async () => {
      await refused({ search: "a".repeat(201) }, "search");
    });
  });

  describe("limit", () => {
    test.each([0, 101, -1, -5, 2.5, "abc"])("limit %p is BAD_USER_INPUT naming limit", async (limit) => {
      await refused({ limit }, "limit");
    });

    test("limit 1 and limit 100 are accepted", async () => {
      const one = await list({ limit: 1 });
      expect(one.data.items.length).toBeLessThanOrEqual(1);
      await list({ limit: 100 });
    });

    test("the default page is 20", async () => {
      const label = uniqueCode("default");
      const made = await approvedWith(label, 21);
      const first = await list({ labels: [label] });
      expect(first.data.items).toHaveLength(20);
      expect(first.data.nextCursor).toEqual(expect.any(String));
      const second = await list({ labels: [label], cursor: first.data.nextCursor });
      expect(second.data.items).toHaveLength(1);
      expect(second.data.nextCursor).toBeNull();
      expect([...codes(first), ...codes(second)].sort()).toEqual([...made].sort());
    });
  });

  describe("cursor paging", () => {
    test("pages of 2 neither skip nor repeat, most recently updated first", async () => {
      const label = uniqueCode("pages");
      const made = await approvedWith(label, 5);
      const seen: string[] = [];
      const sizes: number[] = [];
      let cursor: string | null = null;
      do {
        const page: Outcome = await list({ labels: [label], limit: 2, ...(cursor ? { cursor } : {}) });
        seen.push(...codes(page));
        sizes.push(page.data.items.length);
        cursor = page.data.nextCursor;
      } while (cursor !== null && sizes.length < 10);
      expect(sizes).toEqual([2, 2, 1]);
      expect(new Set(seen).size).toBe(5);
      expect([...seen].sort()).toEqual([...made].sort());

      expect(codes(await list({ labels: [label], limit: 100 }))).toEqual(seen);
      const rows = await db.provider.findMany({
        where: { providerCode: { in: made } },
        orderBy: [{ updatedAt: "desc" }, { id: "desc" }],
      });
      expect(rows.map((r) => r.providerCode)).toEqual(seen);
    });

    test("providers updated between pages are not repeated", async () => {
      const label = uniqueCode("moving");
      await approvedWith(label, 4);
      const first = await list({ labels: [label], limit: 2 });
      // The first item moves to the top of the order; the next page continues after the cursor.
      await db.provider.update({ where: { providerCode: codes(first)[0] }, data: { summary: "Touched" } });
      const second = await list({ labels: [label], limit: 2, cursor: first.data.nextCursor });
      expect(second.data.items).toHaveLength(2);
      expect(codes(second).some((c) => codes(first).includes(c))).toBe(false);
    });

    test.each([
      "not-a-cursor",
      "garbage!",
      Buffer.from('["x"]').toString("base64url"),
      Buffer.from("{}").toString("base64url"),
    ])("cursor %s is BAD_USER_INPUT naming cursor", async (cursor) => {
      await refused({ cursor }, "cursor");
    });
  });
});
