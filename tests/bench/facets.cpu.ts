/**
 * CPU per facets request, and what the facet counts' triggers add to a write, in process
 * (`npx tsx tests/bench/facets.cpu.ts [--size 100000] [--dialects sqlite,postgresql]`).
 *
 * Each dialect gets a database of its own (`data/bench/facets-sqlite-<size>.db`, PostgreSQL's
 * `agent_registry_facets_<size>`), seeded by scripts/synthetic/seed.ts like the benchmark's and reused
 * while it holds `size` agents plus the writes of earlier runs. The app is called through
 * `app.fetch` with the response cache off, as an anonymous caller; per request: this process's CPU
 * (SQLite's included, process.cpuUsage) and PostgreSQL's (its processes' from /proc, measure.ts),
 * averaged over `--requests` sequential requests after `--warmup` unmeasured ones. Writes are
 * measured with the facet triggers on, then with them off (dropped on SQLite and made again from
 * their own SQL, disabled on PostgreSQL), the difference being what the counts cost a write.
 */
import { existsSync, mkdirSync } from "node:fs";
import { parseArgs } from "node:util";
import Database from "better-sqlite3";
import { seedSynthetic } from "../../scripts/synthetic/seed.ts";
import { loadConfig } from "../../src/config.ts";
import { openDb, sqlitePath } from "../../src/db/client.ts";
import { migrate } from "../../src/db/migrate.ts";
import { facetCounts } from "../../src/providers/provider.facets.store.ts";
import { listFilters } from "../../src/providers/provider.filters.ts";
import { createApp } from "../../src/yoga.ts";
import { intakeBody } from "../builders.ts";
import { postgresCpu, postgresCpuSince } from "./measure.ts";
import { withPg } from "./pg.seed.ts";

const { values } = parseArgs({
  options: {
    size: { type: "string", default: "100000" },
    dialects: { type: "string", default: "sqlite,postgresql" },
    requests: { type: "string", default: "30" },
    warmup: { type: "string", default: "10" },
    writes: { type: "string", default: "30" },
    /** Measure only the writes. */
    "writes-only": { type: "boolean", default: false },
    "pg-url": { type: "string", default: process.env.BENCH_PG_URL ?? "postgresql://postgres@127.0.0.1:5432/postgres" },
  },
});
const size = Number(values.size);
const requests = Number(values.requests);
const warmup = Number(values.warmup);
const writes = Number(values.writes);
const log = (line: string) => process.stderr.write(`${line}\n`);

/** The requests measured: a name, the REST query, and the same as the list's arguments. */
const FACETS: [string, string, Record<string, unknown>][] = [
  ["no filter", "", {}],
  ["agentType=ASSISTANT", "agentType=ASSISTANT", { agentType: "ASSISTANT" }],
  ["labels=llm (scanned)", "labels=llm", { labels: ["llm"] }],
  ["search=weather (scanned)", "search=weather", { search: "weather" }],
];

/** The facet triggers of migration 20261211000000_facet_counts that the writing statements fire. */
const PG_TRIGGERS: [string, string][] = [
  ["providers", "facet_providers_insert_delete"],
  ["providers", "facet_providers_update"],
  ["provider_labels", "facet_labels_change"],
  ["provider_packages", "facet_packages_change"],
];

async function database(dialect: string): Promise<string> {
  if (dialect === "sqlite") {
    mkdirSync("data/bench", { recursive: true });
    const url = `file:./data/bench/facets-sqlite-${size}.db`;
    if (existsSync(sqlitePath(url))) {
      await migrate(url);
      const raw = new Database(sqlitePath(url), { readonly: true });
      const n = (raw.prepare(`SELECT count(*) AS n FROM "providers"`).get() as { n: number }).n;
      raw.close();
      if (n >= size) return url;
      throw new Error(`${sqlitePath(url)} holds ${n} agents, not ${size}: remove it`);
    }
    const seeded = await seedSynthetic({ databaseUrl: url, count: size, log });
    log(`facets.cpu: seeded SQLite with ${size} agents in ${Math.round(seeded.ms / 1000)} s`);
    return url;
  }
  const url = new URL(values["pg-url"] as string);
  const name = `agent_registry_facets_${size}`;
  const fresh = await withPg(url.toString(), async (admin) => {
    if ((await admin.query("SELECT 1 FROM pg_database WHERE datname = $1", [name])).rowCount === 1) return false;
    await admin.query(`CREATE DATABASE "${name}"`);
    return true;
  });
  url.pathname = `/${name}`;
  if (fresh) {
    const seeded = await seedSynthetic({ databaseUrl: url.toString(), count: size, log });
    log(`facets.cpu: seeded PostgreSQL with ${size} agents in ${Math.round(seeded.ms / 1000)} s`);
    await withPg(url.toString(), (db) => db.query("VACUUM ANALYZE"));
  } else await migrate(url.toString());
  // Time in the triggers' functions, for the writes' figures (new connections take it).
  await withPg(url.toString(), (db) => db.query(`ALTER DATABASE "${name}" SET track_functions = 'pl'`));
  return url.toString();
}

/** Milliseconds of CPU per call of `work`: this process's, and PostgreSQL's. */
async function cpuOf(times: number, work: (i: number) => Promise<void>): Promise<{ app: number; pg: number }> {
  const pgBefore = postgresCpu();
  const before = process.cpuUsage();
  for (let i = 0; i < times; i++) await work(i);
  const used = process.cpuUsage(before);
  const pg = postgresCpuSince(pgBefore);
  return { app: (used.user + used.system) / 1000 / times, pg: (pg * 1000) / times };
}

const fmt = (n: number) => (n >= 10 ? n.toFixed(0) : n.toFixed(2));

async function run(dialect: string): Promise<string[]> {
  const url = await database(dialect);
  const config = loadConfig({ ...process.env, NODE_ENV: "test", DATABASE_URL: url, RESPONSE_CACHE: "off" });
  const db = await openDb(url);
  const app = createApp({ ...config, databaseUrl: url }, db);
  const fetch = async (method: string, path: string, body?: unknown, token?: string) => {
    const res = await app.fetch(`http://bench.local${path}`, {
      method,
      headers: {
        "content-type": "application/json",
        ...(token ? { authorization: `Bearer ${token}` } : {}),
      },
      ...(body ? { body: JSON.stringify(body) } : {}),
    });
    const text = await res.text();
    if (res.status >= 300) throw new Error(`${method} ${path}: ${res.status} ${text.slice(0, 300)}`);
    return JSON.parse(text);
  };
  const lines: string[] = [];
  const postgres = dialect === "postgresql";
  const row = (what: string, cpu: { app: number; pg: number }) => {
    const cell = postgres ? `${fmt(cpu.app)} / ${fmt(cpu.pg)} ms` : `${fmt(cpu.app)} ms`;
    log(`facets.cpu: ${dialect} ${what}: ${cell}`);
    lines.push(`| ${dialect} | ${what} | ${cell} |`);
  };
  try {
    const ctx = { viewer: { kind: "anonymous" as const }, config };
    for (const [name, query, args] of values["writes-only"] ? [] : FACETS) {
      const path = `/api/v1/providers/facets${query ? `?${query}` : ""}`;
      for (let i = 0; i < warmup; i++) await fetch("GET", path);
      row(`facets, ${name}`, await cpuOf(requests, () => fetch("GET", path)));
      // The store's one statement alone: the database's part of the request (SQLite's in this process).
      const filters = listFilters(args, ctx);
      row(
        `… its statement alone`,
        await cpuOf(requests, async () => {
          await facetCounts(db, filters);
        }),
      );
    }
    // Writes: intakes, and PATCHes of the type and labels of one of them (each moves its counts).
    const writeCost = async () => {
      const intake = await cpuOf(writes, async () => {
        await fetch("POST", "/api/v1/providers", intakeBody({ labels: ["llm", "bench-facets"] }));
      });
      const made = await fetch("POST", "/api/v1/providers", intakeBody());
      const patch = await cpuOf(writes, async (i) => {
        await fetch(
          "PATCH",
          `/api/v1/providers/${made.providerCode}`,
          { agentType: i % 2 ? "ASSISTANT" : "TOOL_SERVER", labels: i % 2 ? ["llm", "maps"] : ["routing"] },
          made.accessToken,
        );
      });
      return { intake, patch };
    };
    await writeCost(); // unmeasured: the first writes compile what every later one runs
    const before = postgres ? await triggerMs(url) : 0;
    const on = await writeCost();
    if (postgres) {
      // /proc counts whole ticks of every PostgreSQL process, others' too: the time spent in the
      // triggers' functions themselves is the cleaner figure (pg_stat_user_functions).
      const spent = (await triggerMs(url)) - before;
      row("the facet triggers' functions per write (intake or PATCH), PostgreSQL", {
        app: 0,
        pg: spent / (2 * writes + 1),
      });
    }
    const off = await withoutTriggers(dialect, url, writeCost);
    for (const op of ["intake", "patch"] as const) {
      row(`${op}, facet triggers off`, off[op]);
      row(`${op}, facet triggers on`, on[op]);
    }
  } finally {
    await app.dispose();
    await db.$disconnect();
  }
  return lines;
}

/** Milliseconds spent so far in the facet triggers' functions (track_functions is set for the database). */
async function triggerMs(url: string): Promise<number> {
  await new Promise((r) => setTimeout(r, 1500)); // backends flush their function statistics when idle, within a second
  return withPg(url, async (c) =>
    Number(
      (
        await c.query(
          `SELECT coalesce(sum("self_time"), 0) AS ms FROM pg_stat_user_functions WHERE "funcname" LIKE 'facet_%'`,
        )
      ).rows[0].ms,
    ),
  );
}

/** Runs `work` with the facet triggers off, then puts them back and counts what it wrote. */
async function withoutTriggers<T>(dialect: string, url: string, work: () => Promise<T>): Promise<T> {
  const recount = `INSERT INTO "facet_dirty" ("providerId") SELECT "id" FROM "providers" WHERE "id" > `;
  if (dialect === "postgresql") {
    const each = (on: boolean) =>
      withPg(url, async (c) => {
        for (const [table, trigger] of PG_TRIGGERS)
          await c.query(`ALTER TABLE "${table}" ${on ? "ENABLE" : "DISABLE"} TRIGGER "${trigger}"`);
      });
    const last = await withPg(url, async (c) =>
      Number((await c.query(`SELECT max("id") AS n FROM "providers"`)).rows[0].n),
    );
    await each(false);
    try {
      return await work();
    } finally {
      await each(true);
      await withPg(url, (c) => c.query(`${recount}${last}`));
    }
  }
  const raw = new Database(sqlitePath(url));
  const triggers = raw
    .prepare(
      `SELECT "name", "sql" FROM sqlite_master WHERE "type" = 'trigger' AND "name" LIKE 'facet_%' AND "name" <> 'facet_recount'`,
    )
    .all() as { name: string; sql: string }[];
  const last = (raw.prepare(`SELECT max("id") AS n FROM "providers"`).get() as { n: number }).n;
  try {
    for (const t of triggers) raw.exec(`DROP TRIGGER "${t.name}"`);
    return await work();
  } finally {
    for (const t of triggers) raw.exec(t.sql);
    raw.exec(`${recount}${last}`);
    raw.close();
  }
}

const out = [
  "| dialect | request | CPU (SQLite: the process; PostgreSQL: the process / PostgreSQL's) |",
  "|---|---|---|",
];
for (const dialect of (values.dialects as string).split(",")) out.push(...(await run(dialect)));
process.stdout.write(`${out.join("\n")}\n`);
