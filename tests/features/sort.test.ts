/** The provider list's `sort` (Query.providers, GET /api/v1/providers) through both doors: by name, by update, by relevance, with a search and without, paged, and cursors held to their order. */
import { describe, expect, test } from "@jest/globals";
import { uniqueCode } from "../builders.ts";
import { doors, type Outcome } from "../doors.ts";
import { approve, db, intake } from "../helpers.ts";

const names = (outcome: Outcome): string[] => (outcome.data.items as { name: string }[]).map((i) => i.name);

/** Approved agents carrying one label, each updated at the given minute (so the newest-first order is known). */
async function agents(label: string, list: { name: string; summary?: string; minute: number }[]) {
  for (const { name, summary, minute } of list) {
    const p = await intake({ name, summary: summary ?? "Does a thing", labels: [label] });
    await approve(p.providerCode);
    await db.provider.update({
      where: { providerCode: p.providerCode },
      data: { updatedAt: new Date(Date.UTC(2026, 0, 1, 0, minute)) },
    });
  }
}

describe.each(doors)("$name", (door) => {
  async function list(args: Record<string, unknown>) {
    const outcome = await door.run("Query.providers", args);
    expect([args, outcome.code, outcome.status]).toEqual([args, undefined, 200]);
    return outcome;
  }
  async function refused(args: Record<string, unknown>, path: string) {
    const outcome = await door.run("Query.providers", args);
    expect([outcome.code, outcome.status, outcome.paths]).toEqual(["BAD_USER_INPUT", 400, [path]]);
  }
  /** Every page of a list, two rows at a time, by following nextCursor. */
  async function allPages(args: Record<string, unknown>): Promise<string[]> {
    const seen: string[] = [];
    let cursor: string | undefined;
    for (let i = 0; i < 10; i++) {
      const outcome = await list({ ...args, limit: 2, ...(cursor ? { cursor } : {}) });
      seen.push(...names(outcome));
      cursor = outcome.data.nextCursor ?? undefined;
      if (!cursor) return seen;
    }
    throw new Error("the list did not end");
  }

  test("NAME sorts A to Z with case ignored, ties by creation, across pages; UPDATED newest first; the default is UPDATED", async () => {
    const label = uniqueCode("sort");
    await agents(label, [
      { name: "beta planner", minute: 1 },
      { name: "Alpha Planner", minute: 4 },
      { name: "Delta planner", minute: 2 },
      { name: "charlie Planner", minute: 3 },
      { name: "Beta planner", minute: 5 },
    ]);
    const byName = ["Alpha Planner", "beta planner", "Beta planner", "charlie Planner", "Delta planner"];
    const byUpdate = ["Beta planner", "Alpha Planner", "charlie Planner", "Delta planner", "beta planner"];
    expect(names(await list({ labels: [label], sort: "NAME" }))).toEqual(byName);
    expect(await allPages({ labels: [label], sort: "NAME" })).toEqual(byName);
    expect(names(await list({ labels: [label], sort: "UPDATED" }))).toEqual(byUpdate);
    expect(names(await list({ labels: [label] }))).toEqual(byUpdate);
    // Without a search there is nothing to rank: RELEVANCE is the newest-first order.
    expect(names(await list({ labels: [label], sort: "RELEVANCE" }))).toEqual(byUpdate);
  });

  test("with a search: RELEVANCE ranks (the default), NAME and UPDATED order the same matches", async () => {
    const label = uniqueCode("sortq");
    const word = `zq${label.replaceAll("-", "").slice(-8)}`;
    await agents(label, [
      { name: "Zulu agent", summary: `Mentions ${word} in passing`, minute: 3 },
      { name: `${word} Yankee`, minute: 1 },
      { name: "Xray agent", summary: `Also ${word}`, minute: 2 },
      { name: "Whiskey agent", minute: 4 },
    ]);
    const ranked = names(await list({ search: word }));
    expect(ranked[0]).toBe(`${word} Yankee`);
    expect(ranked.sort()).toEqual([`${word} Yankee`, "Xray agent", "Zulu agent"].sort());
    expect(names(await list({ search: word, sort: "NAME" }))).toEqual(["Xray agent", `${word} Yankee`, "Zulu agent"]);
    expect(await allPages({ search: word, sort: "NAME" })).toEqual(["Xray agent", `${word} Yankee`, "Zulu agent"]);
    expect(names(await list({ search: word, sort: "UPDATED" }))).toEqual([
      "Zulu agent",
      "Xray agent",
      `${word} Yankee`,
    ]);
    expect(names(await list({ search: word, sort: "NAME", labels: [label] }))).toHaveLength(3);
  });

  test("a cursor holds to its order; an unknown sort, or a sort of the change feed, is refused", async () => {
    const label = uniqueCode("sortc");
    await agents(label, [
      { name: "One", minute: 1 },
      { name: "Two", minute: 2 },
      { name: "Three", minute: 3 },
    ]);
    const byName = await list({ labels: [label], sort: "NAME", limit: 1 });
    const byUpdate = await list({ labels: [label], limit: 1 });
    expect(byName.data.nextCursor).toEqual(expect.any(String));
    await refused({ labels: [label], sort: "UPDATED", limit: 1, cursor: byName.data.nextCursor }, "cursor");
    await refused({ labels: [label], sort: "NAME", limit: 1, cursor: byUpdate.data.nextCursor }, "cursor");
    await refused({ labels: [label], sort: "SIZE" }, "sort");
    await refused({ labels: [label], sort: "NAME", updatedSince: "2026-01-01T00:00:00Z" }, "sort");
  });
});
