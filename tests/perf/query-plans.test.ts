/**
 * The provider detail's one statement finds everything through an index on SQLite, whatever the
 * registry's size. SQLite plans without statistics, so a query that is instant on a test
 * database can walk a whole table at a million agents: the predecessors sub-query once walked the
 * providerCode index for its ORDER BY and checked every row (0.25 ms at 1,000 agents, a full scan at
 * 1,000,000). This test plans the statement readProvider sends — on a migrated SQLite file of its
 * own, whichever database the run uses, since the plan is SQLite's — and refuses any walk of a table;
 * and it holds the list's pages to the directory's indexes, which the facets' index once took from them,
 * and the facets of column filters to the counts the database keeps.
 */
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, expect, test } from "@jest/globals";
import Database from "better-sqlite3";
import type { Context } from "../../src/builder.ts";
import { migrate } from "../../src/db/migrate.ts";
import { facetCounts } from "../../src/providers/provider.facets.store.ts";
import { filterWheres, listFilters } from "../../src/providers/provider.filters.ts";
import { listProviders } from "../../src/providers/provider.search.store.ts";
import { readProvider } from "../../src/providers/provider.store.ts";
import { type CountingDb, openCountingDb } from "./counting.db.ts";

const path = join(mkdtempSync(join(tmpdir(), "agent-registry-plans-")), "plans.db");
let counting: CountingDb;

/**
 * Statistics as ANALYZE would write them for a registry of a million agents in which no agent names
 * a successor: one value (NULL) in successorCode, a unique providerCode and updatedAt. With them
 * SQLite plans as it would at that size (the seed of the benchmark runs ANALYZE).
 */
function writeStatistics(): void {
  const raw = new Database(path);
  try {
    raw.exec("ANALYZE");
    const rowsPerValue: Record<string, number> = { id: 1, providerCode: 1, updatedAt: 1, successorCode: 1_000_000 };
    const indexes = raw.prepare(`SELECT "name" FROM pragma_index_list('providers')`).all() as { name: string }[];
    const insert = raw.prepare(`INSERT INTO "sqlite_stat1" ("tbl", "idx", "stat") VALUES ('providers', ?, ?)`);
    raw.prepare(`DELETE FROM "sqlite_stat1" WHERE "tbl" = 'providers'`).run();
    for (const { name } of indexes) {
      const columns = raw.prepare(`SELECT "name" FROM pragma_index_info(?)`).all(name) as { name: string }[];
      let estimate = 1_000_000;
      const stat = ["1000000"];
      for (const column of columns) {
        estimate = Math.min(estimate, rowsPerValue[column.name] ?? 100_000);
        stat.push(String(estimate));
      }
      insert.run(name, stat.join(" "));
    }
  } finally {
    raw.close();
  }
}

beforeAll(async () => {
  await migrate(`file:${path}`);
  writeStatistics();
  counting = await openCountingDb(`file:${path}`);
});

afterAll(async () => {
  await counting.db.$disconnect();
});

/** SQLite's plan of a statement, one line per step, with every parameter bound to null. */
function planOf(sql: string): string[] {
  const raw = new Database(path, { readonly: true });
  try {
    const statement = raw.prepare(`EXPLAIN QUERY PLAN ${sql}`);
    const params = (sql.match(/\?/g) ?? []).map(() => null);
    return (statement.all(...params) as { detail: string }[]).map((row) => row.detail);
  } finally {
    raw.close();
  }
}

/** Steps that read a table or index from end to end: a SCAN of anything but a sub-query's own rows. */
function walks(plan: string[]): string[] {
  const coroutines = new Set(plan.flatMap((step) => step.match(/^CO-ROUTINE (\w+)/)?.slice(1) ?? []));
  return plan.filter((step) => {
    const scanned = step.match(/^SCAN (\w+)/)?.[1];
    return scanned !== undefined && !coroutines.has(scanned);
  });
}

test("the detail (with tokens, timeline and predecessors) searches indexes only", async () => {
  counting.reset();
  await readProvider(counting.db, "any-code", { tokens: true, events: true, domains: true });
  const [sql] = counting.statements;
  expect(counting.statements).toHaveLength(1);
  const plan = planOf(sql as string);
  expect(plan.some((step) => step.startsWith("SEARCH p USING INDEX providers_providerCode_key"))).toBe(true);
  expect(walks(plan)).toEqual([]);
});

test("the check itself: a walk of a table is caught", () => {
  const plan = planOf(`SELECT "id" FROM "providers" WHERE "summary" = ? ORDER BY "providerCode" LIMIT 10`);
  expect(walks(plan)).not.toEqual([]);
});

test("the list's pages never take the facets' index, and the facets' statement does", async () => {
  const ctx = { viewer: { kind: "anonymous" as const }, config: { health: { enabled: true } } as Context["config"] };
  for (const args of [
    {},
    { agentType: "ASSISTANT" },
    { agentType: "ASSISTANT", trustTier: "VERIFIED", labels: ["llm"] },
  ]) {
    counting.reset();
    await listProviders(counting.db, filterWheres(listFilters(args, ctx)), 20, null);
    expect([args, planOf(counting.statements[0] as string).filter((s) => s.includes("providers_facets_idx"))]).toEqual([
      args,
      [],
    ]);
  }
  // A label filter is not counted by the database: the facets count the providers, through their index.
  counting.reset();
  await facetCounts(counting.db, listFilters({ labels: ["llm"] }, ctx));
  expect(planOf(counting.statements[0] as string).some((s) => s.includes("providers_facets_idx"))).toBe(true);
});

test("the facets of column filters read the counts the database keeps, never the providers", async () => {
  const ctx = { viewer: { kind: "anonymous" as const }, config: { health: { enabled: true } } as Context["config"] };
  for (const args of [{}, { agentType: "ASSISTANT" }, { agentType: "ASSISTANT", trustTier: "VERIFIED" }]) {
    counting.reset();
    await facetCounts(counting.db, listFilters(args, ctx));
    expect(counting.statements).toHaveLength(1);
    const sql = counting.statements[0] as string;
    expect([args, sql.match(/"provider(s|_labels|_packages)"/g)]).toEqual([args, null]);
    // The anonymous rule (PUBLIC and APPROVED) is the counts' keys' first columns: a range, not a walk.
    const plan = planOf(sql);
    expect([args, plan.filter((step) => /USING (COVERING )?INDEX sqlite_autoindex_facet_/.test(step)).length]).toEqual([
      args,
      3,
    ]);
  }
});
