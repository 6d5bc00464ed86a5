/**
 * Bounded ranking of a search (src/providers/provider.search.store.ts): matches are ranked in
 * blocks of `searchTuning.window`, newest block first, best match first within a block. Shown here
 * with a window of 3: a search with at most 3 filtered matches is ranked exactly; one with more is
 * ranked block by block, and paging at any page size follows that one fixed order.
 */
import { randomBytes } from "node:crypto";
import { afterAll, beforeAll, describe, expect, test } from "@jest/globals";
import { searchTuning } from "../../src/providers/provider.search.store.ts";
import { uniqueCode } from "../builders.ts";
import { approve, call, intake } from "../helpers.ts";

const uniqueWord = (prefix = "sw") =>
  `${prefix}${[...randomBytes(8)].map((b) => String.fromCharCode(97 + (b % 26))).join("")}`;

const codes = (answer: { body: { items: { providerCode: string }[] } }) => answer.body.items.map((i) => i.providerCode);

async function made(label: string, overrides: Record<string, unknown>) {
  const created = await intake({ name: "Neutral agent", summary: "Does a thing", labels: [label], ...overrides });
  await approve(created.providerCode);
  return created.providerCode as string;
}

function list(params: Record<string, string | number>) {
  const query = new URLSearchParams(Object.entries(params).map(([k, v]) => [k, String(v)])).toString();
  return call("GET", `/api/v1/providers?${query}`);
}

async function allPages(params: Record<string, string | number>) {
  const seen: string[] = [];
  let cursor: string | null = null;
  for (let pages = 0; pages < 50; pages++) {
    const answer = await list(cursor ? { ...params, cursor } : params);
    expect(answer.status).toBe(200);
    seen.push(...codes(answer));
    cursor = answer.body.nextCursor;
    if (cursor === null) return seen;
  }
  throw new Error("too many pages");
}

describe("search ranks in bounded windows", () => {
  const saved = searchTuning.window;
  const label = uniqueCode("s-window");
  const w = uniqueWord();
  const x = uniqueWord("sx");
  let a: string[] = [];

  beforeAll(async () => {
    // Created in this order, so ids ascend a0 … a6. `w` is in the name (a strong match) of a0, a3
    // and a6 and in the description (a weak one) of the others; `x` is in three of them only.
    a = [];
    a.push(await made(label, { name: `The ${w} ${x} agent` }));
    a.push(await made(label, { description: `Mentions ${w} once.` }));
    a.push(await made(label, { description: `Mentions ${w} once.` }));
    a.push(await made(label, { name: `The ${w} agent` }));
    a.push(await made(label, { description: `Mentions ${w} once, and ${x}.` }));
    a.push(await made(label, { description: `Mentions ${w} once, and ${x}.` }));
    a.push(await made(label, { name: `The ${w} agent` }));
    searchTuning.window = 3;
  });
  afterAll(() => {
    searchTuning.window = saved;
  });

  test("at most a window of matches: exact ranking, the oldest best match first", async () => {
    const [a0, , , , a4, a5] = a;
    expect(codes(await list({ labels: label, search: x }))).toEqual([a0, a5, a4]);
  });

  test("more matches than the window: best first within each block of the newest matches", async () => {
    const [a0, a1, a2, a3, a4, a5, a6] = a;
    const order = await allPages({ labels: label, search: w, limit: 100 });
    expect(order).toHaveLength(7);
    expect(order[0]).toBe(a6);
    expect(order.slice(0, 3).sort()).toEqual([a4, a5, a6].sort());
    expect(order[3]).toBe(a3);
    expect(order.slice(3, 6).sort()).toEqual([a1, a2, a3].sort());
    expect(order[6]).toBe(a0);
    // With a large window the same search is ranked exactly: the three name matches first.
    searchTuning.window = 1000;
    try {
      const exact = codes(await list({ labels: label, search: w }));
      expect(exact.slice(0, 3)).toEqual([a6, a3, a0]);
      expect(exact.slice(3).sort()).toEqual([a1, a2, a4, a5].sort());
    } finally {
      searchTuning.window = 3;
    }
  });

  test("paging at any page size follows the one order: no skips, no repeats across blocks", async () => {
    const order = await allPages({ labels: label, search: w, limit: 100 });
    for (const limit of [1, 2, 4, 5]) {
      expect(await allPages({ labels: label, search: w, limit })).toEqual(order);
    }
  });
});
