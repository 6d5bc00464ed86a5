/**
 * The search benchmark: how list, filter and search latency grow with the registry.
 *
 *   npm run bench:search -- [--dialect sqlite|postgresql] [--sizes 1000,1000000] [--requests 300]
 *                           [--runs 3] [--warmup 30] [--pg-url postgresql://postgres@127.0.0.1:5432/postgres]
 *                           [--window 1000]
 *
 * Each size gets its own database, seeded by scripts/synthetic/seed.ts (seed 1) and reused while it
 * holds exactly that many agents: `data/bench/sqlite-<size>.db`, or the PostgreSQL database
 * `agent_registry_bench_<size>` created on the server of --pg-url. The app runs in this process
 * (`createApp` on that database) and is called through `app.fetch` — no network — as an anonymous
 * caller. Per operation and size: `runs` rounds of `warmup` untimed then `requests` timed sequential
 * requests, the sizes interleaved (see measure); the median and p99 are over every timed request.
 * `--window` sets the search ranking window (src/providers/provider.search.store.ts) for the run, to
 * measure its trade-off. Results: tests/bench/results/search-<dialect>.{json,md}.
 */
import { existsSync, mkdirSync, rmSync, writeFileSync } from "node:fs";
import { cpus } from "node:os";
import Database from "better-sqlite3";
import { parseOptions } from "../../scripts/synthetic/cli.ts";
import { seedSynthetic } from "../../scripts/synthetic/seed.ts";
import { COMMON_LABEL, SEARCH_WORDS } from "../../scripts/synthetic/vocabulary.ts";
import { loadConfig } from "../../src/config.ts";
import { type Dialect, openDb, sqlitePath } from "../../src/db/client.ts";
import { migrate } from "../../src/db/migrate.ts";
import { searchTuning } from "../../src/providers/provider.search.store.ts";
import { createApp } from "../../src/yoga.ts";
import { ensurePgSeeded } from "./pg.seed.ts";

interface Options {
  dialect: Dialect;
  sizes: number[];
  requests: number;
  runs: number;
  warmup: number;
  pgUrl: string;
  /** The search ranking window (searchTuning.window) to measure with; the service's by default. */
  window: number;
}

function parseArgs(argv: string[]): Options {
  const args = parseOptions(argv, ["dialect", "sizes", "requests", "runs", "warmup", "pg-url", "window"]);
  const dialect = (args.get("dialect") ?? "sqlite") as Dialect;
  if (dialect !== "sqlite" && dialect !== "postgresql") throw new Error("--dialect is sqlite or postgresql");
  const sizes = (args.get("sizes") ?? "1000,100000,1000000").split(",").map((s) => Number(s.trim()));
  if (sizes.some((n) => !Number.isInteger(n) || n < 1)) throw new Error("--sizes is a comma-separated list of counts");
  const int = (name: string, fallback: number) => {
    const n = Number(args.get(name) ?? fallback);
    if (!Number.isInteger(n) || n < 0) throw new Error(`--${name} must be a whole number`);
    return n;
  };
  return {
    dialect,
    sizes: [...new Set(sizes)].sort((a, b) => a - b),
    requests: int("requests", 300),
    runs: int("runs", 3),
    warmup: int("warmup", 30),
    window: int("window", searchTuning.window),
    pgUrl: args.get("pg-url") || process.env.BENCH_PG_URL || "postgresql://postgres@127.0.0.1:5432/postgres",
  };
}

/** The operations measured, as anonymous REST calls. */
const OPERATIONS: { name: string; path: string }[] = [
  { name: "list", path: "/api/v1/providers?limit=20" },
  { name: "filter type+tier", path: "/api/v1/providers?agentType=ASSISTANT&trustTier=VERIFIED&limit=20" },
  { name: "filter label", path: `/api/v1/providers?labels=${COMMON_LABEL}&limit=20` },
  { name: "search common", path: `/api/v1/providers?search=${SEARCH_WORDS.common}&limit=20` },
  { name: "search selective", path: `/api/v1/providers?search=${SEARCH_WORDS.selective}&limit=20` },
];

const log = (line: string) => process.stderr.write(`${line}\n`);

/** The database of a size, seeded unless it already holds exactly `size` agents. */
async function ensureSeeded(options: Options, size: number): Promise<{ url: string; seededMs: number | null }> {
  if (options.dialect === "sqlite") {
    const url = `file:./data/bench/sqlite-${size}.db`;
    const path = sqlitePath(url);
    mkdirSync("data/bench", { recursive: true });
    if (existsSync(path)) {
      await migrate(url); // later migrations (search indexes) apply to a reused database too
      const db = new Database(path, { readonly: true });
      const n = (db.prepare(`SELECT count(*) AS n FROM "providers"`).get() as { n: number }).n;
      db.close();
      if (n === size) return { url, seededMs: null };
      log(`bench: ${path} holds ${n} agents, not ${size}: seeding it again`);
      for (const suffix of ["", "-wal", "-shm"]) rmSync(`${path}${suffix}`, { force: true });
    }
    const seeded = await seedSynthetic({ databaseUrl: url, count: size, log });
    return { url, seededMs: seeded.ms };
  }
  return ensurePgSeeded(options.pgUrl, size);
}

interface Measurement {
  size: number;
  operation: string;
  path: string;
  medianMs: number;
  p99Ms: number;
  /** Items on the page the last request answered. */
  items: number;
}

function quantile(sorted: number[], q: number): number {
  if (sorted.length === 0) return Number.NaN;
  return sorted[Math.min(sorted.length - 1, Math.ceil(q * sorted.length) - 1)]!;
}
const round = (ms: number) => Math.round(ms * 1000) / 1000;

/** One size's app, on its own database, ready to be called. */
interface Target {
  size: number;
  call: (path: string) => Promise<string>;
  close: () => Promise<void>;
}

async function openTarget(options: Options, size: number): Promise<Target & { seededMs: number | null }> {
  const { url, seededMs } = await ensureSeeded(options, size);
  const config = loadConfig({ ...process.env, NODE_ENV: "test", DATABASE_URL: url });
  const db = await openDb(url);
  const app = createApp({ ...config, databaseUrl: url }, db);
  const call = async (path: string) => {
    const res = await app.fetch(`http://bench.local${path}`, { method: "GET" });
    const text = await res.text();
    if (res.status !== 200) throw new Error(`${path} at ${size}: ${res.status} ${text.slice(0, 300)}`);
    return text;
  };
  return { size, seededMs, call, close: () => db.$disconnect() };
}

/**
 * Every operation at every size, interleaved: each run goes through the operations, and for each
 * one through the sizes, so that whatever else the machine does weighs on all sizes alike.
 */
async function measure(options: Options, targets: Target[]): Promise<Measurement[]> {
  const times = new Map<string, number[]>();
  const last = new Map<string, string>();
  const key = (size: number, op: string) => `${size} ${op}`;
  for (let run = 0; run < options.runs; run++) {
    for (const op of OPERATIONS) {
      for (const target of targets) {
        const k = key(target.size, op.name);
        for (let i = 0; i < options.warmup; i++) await target.call(op.path);
        const list = times.get(k) ?? [];
        for (let i = 0; i < options.requests; i++) {
          const t = performance.now();
          last.set(k, await target.call(op.path));
          list.push(performance.now() - t);
        }
        times.set(k, list);
      }
    }
  }
  const rows: Measurement[] = [];
  for (const target of targets) {
    for (const op of OPERATIONS) {
      const k = key(target.size, op.name);
      const sorted = (times.get(k) ?? []).sort((a, b) => a - b);
      const items = (JSON.parse(last.get(k) ?? "{}") as { items?: unknown[] }).items?.length ?? 0;
      const row = {
        size: target.size,
        operation: op.name,
        path: op.path,
        medianMs: round(quantile(sorted, 0.5)),
        p99Ms: round(quantile(sorted, 0.99)),
        items,
      };
      log(`bench: ${target.size} ${op.name}: median ${row.medianMs} ms, p99 ${row.p99Ms} ms, ${items} items`);
      rows.push(row);
    }
  }
  return rows;
}

function markdown(options: Options, rows: Measurement[]): string {
  const sizes = options.sizes;
  const smallest = sizes[0]!;
  const largest = sizes[sizes.length - 1]!;
  const head = [
    "operation",
    ...sizes.map((s) => `${s.toLocaleString("en")} median / p99 (ms)`),
    ...(sizes.length > 1 ? [`median ${largest.toLocaleString("en")} / ${smallest.toLocaleString("en")}`] : []),
  ];
  const lines = [`| ${head.join(" | ")} |`, `|${head.map(() => "---").join("|")}|`];
  for (const op of OPERATIONS) {
    const cell = (size: number) => rows.find((r) => r.size === size && r.operation === op.name);
    const ratio = (cell(largest)?.medianMs ?? Number.NaN) / (cell(smallest)?.medianMs ?? Number.NaN);
    lines.push(
      `| ${op.name} | ${sizes
        .map((s) => {
          const c = cell(s);
          return c ? `${c.medianMs.toFixed(2)} / ${c.p99Ms.toFixed(2)}` : "—";
        })
        .join(" | ")}${sizes.length > 1 ? ` | ${ratio.toFixed(2)}×` : ""} |`,
    );
  }
  return lines.join("\n");
}

async function main() {
  const options = parseArgs(process.argv.slice(2));
  searchTuning.window = options.window;
  const seeded: Record<number, number | null> = {};
  const targets: Target[] = [];
  let rows: Measurement[];
  try {
    for (const size of options.sizes) {
      const target = await openTarget(options, size);
      targets.push(target);
      seeded[size] = target.seededMs === null ? null : Math.round(target.seededMs);
    }
    rows = await measure(options, targets);
  } finally {
    await Promise.all(targets.map((t) => t.close()));
  }
  const table = markdown(options, rows);
  const smallest = options.sizes[0]!;
  const largest = options.sizes[options.sizes.length - 1]!;
  const report = {
    dialect: options.dialect,
    date: new Date().toISOString(),
    machine: { cpus: cpus().length, cpu: cpus()[0]?.model ?? "", node: process.version },
    method: {
      caller: "anonymous",
      transport: "app.fetch (in process)",
      runs: options.runs,
      warmup: options.warmup,
      requestsPerRun: options.requests,
      searchWindow: options.window,
    },
    searchWords: SEARCH_WORDS,
    label: COMMON_LABEL,
    seedMs: seeded,
    results: rows,
    ratios: Object.fromEntries(
      OPERATIONS.map((op) => {
        const m = (size: number) => rows.find((r) => r.size === size && r.operation === op.name)?.medianMs;
        return [op.name, round((m(largest) ?? Number.NaN) / (m(smallest) ?? Number.NaN))];
      }),
    ),
  };
  mkdirSync(new URL("./results/", import.meta.url), { recursive: true });
  writeFileSync(
    new URL(`./results/search-${options.dialect}.json`, import.meta.url),
    `${JSON.stringify(report, null, 2)}\n`,
  );
  const md = [
    `# Search benchmark — ${options.dialect}`,
    "",
    `${report.date}, ${report.machine.cpus} × ${report.machine.cpu}, Node ${report.machine.node}. Anonymous GET through ` +
      `\`app.fetch\`; ${options.runs} runs × (${options.warmup} warm-up + ${options.requests} timed) sequential requests ` +
      `per cell, sizes interleaved; search ranking window ${options.window}. Search words: common "${SEARCH_WORDS.common}", selective "${SEARCH_WORDS.selective}"; label "${COMMON_LABEL}".`,
    "",
    table,
    "",
  ].join("\n");
  writeFileSync(new URL(`./results/search-${options.dialect}.md`, import.meta.url), md);
  process.stdout.write(`${table}\n`);
}

main().catch((error) => {
  process.stderr.write(`bench:search failed: ${(error as Error).stack ?? error}\n`);
  process.exitCode = 1;
});
