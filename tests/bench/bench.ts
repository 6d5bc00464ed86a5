/**
 * The benchmark: the service's reads and writes side by side with the bare limit of one
 * Node process on the same database, in one run, interleaved.
 *
 *   npm run bench -- [--sizes 1000,100000,1000000] [--ops detail,list,list-all,list-type,search,facets,card,patch,intake,queue]
 *                    [--targets bare,rest,graphql,rest-nocache,graphql-nocache,postgraphile]
 *                    [--dialects sqlite,postgresql] [--pg-url postgresql://postgres@127.0.0.1:5432/postgres]
 *                    [--duration 3] [--warmup 5] [--runs 3] [--rate 100] [--connections 32]
 *                    [--cpu-prof] [--baseline <git ref>] [--mirror-servers 20000]
 *
 * Servers (child processes pinned to core 0 with `taskset -c 0`, one set per registry size):
 * - `bare`: tests/bench/bare.server.ts — node:http + better-sqlite3, hand-written SQL (detail, list, search);
 * - `rest` / `graphql`: the service itself as `npm start` runs it (its build, `dist/main.js`,
 *   NODE_ENV=production, logging on, rate limits off), through its REST routes (SOFA) and through
 *   /graphql, with its response cache (the default);
 * - `rest-nocache` / `graphql-nocache`: the same service started with RESPONSE_CACHE=off;
 * - `feed` (op): on the largest registry's service, 1,000 SSE subscribers and a change every 500 ms:
 *   how long a change takes to reach every subscriber (tests/bench/feed.bench.ts), once per run;
 * - `webhooks` (op): one replica's webhook deliveries to a local receiver, by tests/bench/webhooks.bench.ts
 *   (its own process and database), once, after the runs; its report is appended to this one's;
 * - `mirror` (op): a bootstrap of `--mirror-servers` upstream servers and an incremental sync of 100
 *   changes, with reads' p99 beside them, by tests/bench/mirror.bench.ts (its own processes and
 *   database), `runs` times per dialect after the cells, its goals judged on their medians and joining
 *   this report's, each run's page appended;
 * - `rest-before` / `graphql-before` (with `--baseline <ref>`): the service as it was at that git
 *   ref, built from a worktree in data/bench/, on the same database: what a change costs a read or a
 *   write, side by side with it.
 * - `postgraphile` (PostgreSQL only): PostGraphile v5 over the same tables, the peer, for detail,
 *   every list shape the directory sends (list, list-all, list-type, search) and facets
 *   (tests/bench/peer/): installed by the benchmark into data/bench/postgraphile/, its answers
 *   checked against the service's before anything is measured.
 * Operations: `detail` (one profile); `list` (type, tier and label), `list-all` (no filter: the
 * directory's first page) and `list-type` (one filter, agentType), 20 newest each; `search` (a
 * common word, 20, by relevance); `facets` (the whole directory's, no filter); `card`, `patch`,
 * `intake`, `queue`, and the scenarios below.
 * Each dialect has its own servers and databases; PostgreSQL itself is not pinned, and its CPU per
 * request (all its processes, from /proc) is recorded beside the server's.
 * Both run as plain JavaScript, without a loader: the service built by scripts/build.mjs, the bare
 * baseline built the same way by esbuild into data/bench/.
 * The load generator is autocannon's programmatic API in this process, which pins itself to core 1.
 *
 * Per cell (target × operation × size) and run: `warmup` seconds unrecorded, as long in every run:
 * users feel the steady state, and V8 optimizes a cell's path again after the server has served other
 * operations (docs/performance.md). Then `duration` seconds at saturation (`connections` connections,
 * as fast as the server answers: throughput), then `duration` seconds at a fixed moderate rate (`rate`
 * requests/s, evenly spaced, by a small open-model client in this process: autocannon's rate limit
 * sends each second's quota in one burst; p50/p99 latency). Runs are interleaved — run 1 of every
 * cell, then run 2 … — so that whatever else the machine does weighs on all alike; each figure is the
 * median over the runs.
 *
 * Databases: `data/bench/sqlite-<size>.db` and the PostgreSQL database `agent_registry_bench_<size>`
 * on the server of --pg-url, seeded by scripts/synthetic/seed.ts (seed 1) when missing or not holding
 * exactly `size` agents — the same ones tests/bench/search.bench.ts reuses. The writes the benchmark
 * makes (intakes, PATCHes) are removed at the end, so each holds its `size` seeded agents again.
 * Results: tests/bench/results/bench.{json,md}.
 */
import { type ChildProcess, execFileSync, spawn, spawnSync } from "node:child_process";
import { cpSync, existsSync, mkdirSync, readFileSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { createServer } from "node:net";
import { cpus, loadavg, totalmem } from "node:os";
import { fileURLToPath } from "node:url";
import autocannon from "autocannon";
import Database from "better-sqlite3";
import { build } from "esbuild";
import { parseOptions } from "../../scripts/synthetic/cli.ts";
import { seedSynthetic } from "../../scripts/synthetic/seed.ts";
import { COMMON_LABEL, SEARCH_WORDS } from "../../scripts/synthetic/vocabulary.ts";
import { signReviewerToken } from "../../src/auth/reviewer.jwt.ts";
import { loadConfig } from "../../src/config.ts";
import { sqlitePath } from "../../src/db/client.ts";
import { migrate } from "../../src/db/migrate.ts";
import { benchFeed, type FeedSample } from "./feed.bench.ts";
import {
  cpuSeconds,
  distinct,
  fixedRate,
  postgresCpu,
  postgresCpuSince,
  quantile,
  type RawRequest,
  type Request,
} from "./measure.ts";
import {
  comparePeer,
  installPeer,
  PEER_OPS,
  PEER_READY,
  type PeerOp,
  peerCheckRequest,
  peerRequest,
} from "./peer/postgraphile.ts";
import { ensurePgSeeded, withPg } from "./pg.seed.ts";

const ROOT = fileURLToPath(new URL("../../", import.meta.url));
const RESULTS = new URL("./results/", import.meta.url);
const JWT_SECRET = "bench-reviewer-secret-0123456789-0123456789";

const TARGETS = [
  "bare",
  "rest",
  "graphql",
  "rest-nocache",
  "graphql-nocache",
  "rest-before",
  "graphql-before",
  "postgraphile",
] as const;
type TargetName = (typeof TARGETS)[number];
const DIALECTS = ["sqlite", "postgresql"] as const;
type Dialect = (typeof DIALECTS)[number];
/** Targets that run on one dialect only: the bare baseline is better-sqlite3, the peer PostgreSQL's. */
const ONLY_ON: Partial<Record<TargetName, Dialect>> = { bare: "sqlite", postgraphile: "postgresql" };
const OPS = [
  "detail",
  "list",
  "list-all",
  "list-type",
  "search",
  "facets",
  "card",
  "patch",
  "intake",
  "queue",
  "feed",
  "webhooks",
  "mirror",
] as const;
type OpName = (typeof OPS)[number];
/** Operations measured by a scenario of their own, not by autocannon. */
const SCENARIOS: readonly OpName[] = ["feed", "webhooks", "mirror"];
/** Scenarios that start their own service and database: without other operations, no server is started here. */
const OWN_PROCESSES: readonly OpName[] = ["webhooks", "mirror"];

/** Which operations each target serves: the bare baseline reads only; the cache does not apply to writes or the (authenticated) queue. */
const SERVES: Record<TargetName, readonly OpName[]> = {
  bare: ["detail", "list", "search"],
  rest: OPS,
  graphql: OPS,
  "rest-nocache": ["detail", "list", "list-all", "list-type", "search", "facets", "card"],
  "graphql-nocache": ["detail", "list", "list-all", "list-type", "search", "facets", "card"],
  "rest-before": ["detail", "list", "search", "card", "patch", "intake"],
  "graphql-before": ["detail", "list", "search", "card", "patch", "intake"],
  postgraphile: PEER_OPS,
};

interface Options {
  sizes: number[];
  ops: OpName[];
  targets: TargetName[];
  duration: number;
  warmup: number;
  runs: number;
  rate: number;
  connections: number;
  cpuProf: boolean;
  /** The git ref of the `-before` targets; without it they are left out. */
  baseline: string | undefined;
  dialects: Dialect[];
  /** The PostgreSQL server whose databases the benchmark creates. */
  pgUrl: string;
  /** Upstream servers the `mirror` scenario bootstraps. */
  mirrorServers: number;
}

function parseArgs(argv: string[]): Options {
  const args = parseOptions(argv, [
    "sizes",
    "ops",
    "targets",
    "duration",
    "warmup",
    "runs",
    "rate",
    "connections",
    "cpu-prof",
    "baseline",
    "dialects",
    "pg-url",
    "mirror-servers",
  ]);
  const list = <T extends string>(name: string, all: readonly T[], fallback: string): T[] => {
    const items = (args.get(name) ?? fallback).split(",").map((s) => s.trim());
    for (const item of items) if (!all.includes(item as T)) throw new Error(`--${name}: unknown "${item}" (${all})`);
    return items as T[];
  };
  const num = (name: string, fallback: number) => {
    const n = Number(args.get(name) ?? fallback);
    if (!Number.isFinite(n) || n <= 0) throw new Error(`--${name} must be a positive number`);
    return n;
  };
  const sizes = (args.get("sizes") ?? "1000,100000,1000000").split(",").map((s) => Number(s.trim()));
  if (sizes.some((n) => !Number.isInteger(n) || n < 1)) throw new Error("--sizes is a comma-separated list of counts");
  return {
    sizes: [...new Set(sizes)].sort((a, b) => a - b),
    ops: list("ops", OPS, OPS.join(",")),
    targets: list("targets", TARGETS, TARGETS.join(",")).filter((t) => args.has("baseline") || !t.endsWith("-before")),
    duration: num("duration", 3),
    warmup: num("warmup", 5),
    runs: Math.round(num("runs", 3)),
    rate: num("rate", 100),
    connections: Math.round(num("connections", 32)),
    cpuProf: args.has("cpu-prof") && args.get("cpu-prof") !== "false",
    baseline: args.get("baseline"),
    dialects: list("dialects", DIALECTS, DIALECTS.join(",")),
    pgUrl: args.get("pg-url") || process.env.BENCH_PG_URL || "postgresql://postgres@127.0.0.1:5432/postgres",
    mirrorServers: Math.round(num("mirror-servers", 20_000)),
  };
}

const log = (line: string) => process.stderr.write(`${line}\n`);

// ── Databases ─────────────────────────────────────────────────────────────────────────────────
async function ensureSeeded(size: number): Promise<string> {
  const url = `file:./data/bench/sqlite-${size}.db`;
  const path = sqlitePath(url);
  mkdirSync(`${ROOT}data/bench`, { recursive: true });
  if (existsSync(path)) {
    await migrate(url);
    removeBenchWrites(path, size);
    const db = new Database(path, { readonly: true });
    const n = (db.prepare(`SELECT count(*) AS n FROM "providers"`).get() as { n: number }).n;
    db.close();
    if (n === size) return url;
    log(`bench: ${path} holds ${n} agents, not ${size}: seeding it again`);
    removeSqlite(path);
  }
  await seedSynthetic({ databaseUrl: url, count: size, log });
  return url;
}

/**
 * The benchmark's own writes are the agents past the seeded ones (the seed numbers them 1..size);
 * removing them, with their rows in every table, gives the file back as seeded.
 */
function removeBenchWrites(path: string, size: number): void {
  const db = new Database(path);
  db.pragma("busy_timeout = 10000");
  // Children go first, below; checking each deleted review against review_events (no index on
  // reviewId) took minutes at a million agents.
  db.pragma("foreign_keys = OFF");
  const extra = (db.prepare(`SELECT count(*) AS n FROM "providers" WHERE "id" > ?`).get(size) as { n: number }).n;
  if (extra > 0) {
    db.transaction(() => {
      for (const table of WRITTEN) {
        db.prepare(`DELETE FROM "${table}" WHERE "providerId" > ?`).run(size);
      }
      db.prepare(`DELETE FROM "reviews" WHERE "providerId" > ?`).run(size);
      for (const table of ["idempotency_keys"]) {
        const exists = db.prepare(`SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = ?`).get(table);
        if (exists) db.prepare(`DELETE FROM "${table}"`).run();
      }
      db.prepare(`DELETE FROM "providers" WHERE "id" > ?`).run(size);
    })();
    log(`bench: removed ${extra} agents the benchmark had written to ${path}`);
  }
  db.pragma("wal_checkpoint(TRUNCATE)");
  db.close();
}

/** The tables holding the benchmark's writes by `providerId`, children first; then `reviews` and `providers`. */
const WRITTEN = [
  "review_events",
  "provider_versions",
  "access_tokens",
  "provider_labels",
  "provider_packages",
  "mcp_server_versions",
  "events",
];

/** removeBenchWrites on PostgreSQL, then VACUUM, so the next run reads the tables as seeded. */
async function removePgBenchWrites(url: string, size: number): Promise<void> {
  await withPg(url, async (db) => {
    const extra = Number((await db.query(`SELECT count(*) AS n FROM "providers" WHERE "id" > $1`, [size])).rows[0].n);
    if (extra > 0) {
      await db.query("BEGIN");
      for (const table of [...WRITTEN, "reviews"])
        await db.query(`DELETE FROM "${table}" WHERE "providerId" > $1`, [size]);
      await db.query(`DELETE FROM "idempotency_keys"`);
      await db.query(`DELETE FROM "providers" WHERE "id" > $1`, [size]);
      await db.query("COMMIT");
      log(`bench: removed ${extra} agents the benchmark had written to ${new URL(url).pathname.slice(1)}`);
    }
    await db.query("VACUUM ANALYZE");
  });
}

/** A size's database of a dialect, seeded and as seeded. */
async function ensureDatabase(dialect: Dialect, size: number, options: Options): Promise<string> {
  if (dialect === "sqlite") return ensureSeeded(size);
  const { url } = await ensurePgSeeded(options.pgUrl, size);
  await removePgBenchWrites(url, size);
  return url;
}

/** Gives a database back as seeded: the benchmark's own writes removed. */
async function cleanUp(dialect: Dialect, url: string, size: number): Promise<void> {
  if (dialect === "sqlite") removeBenchWrites(sqlitePath(url), size);
  else await removePgBenchWrites(url, size);
}

function removeSqlite(path: string): void {
  for (const suffix of ["", "-wal", "-shm"]) rmSync(`${path}${suffix}`, { force: true });
}

/** A copy of a seeded SQLite database beside it, for a server that must not share its file. */
function copySqlite(url: string, name: string): string {
  const path = sqlitePath(url);
  const db = new Database(path);
  db.pragma("wal_checkpoint(TRUNCATE)");
  db.close();
  const copy = path.replace(/\.db$/, `-${name}.db`);
  removeSqlite(copy);
  cpSync(path, copy);
  return `file:${copy}`;
}

const SAMPLE = `SELECT "providerCode" FROM "providers" WHERE "visibility" = 'PUBLIC' AND "reviewStage" = 'APPROVED' ORDER BY "id" LIMIT 1 OFFSET 10`;

/** A public, approved agent of the seeded registry (what an anonymous detail can show), the same at every size. */
async function sampleCode(dialect: Dialect, url: string): Promise<string> {
  if (dialect === "postgresql") return withPg(url, async (db) => (await db.query(SAMPLE)).rows[0].providerCode);
  const db = new Database(sqlitePath(url), { readonly: true });
  const row = db.prepare(SAMPLE).get() as { providerCode: string };
  db.close();
  return row.providerCode;
}

// ── Servers ───────────────────────────────────────────────────────────────────────────────────
async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolve(port));
    });
  });
}

interface Server {
  name: string;
  url: string;
  child: ChildProcess;
}

/** The service's build (as `npm start` makes it) and the bare baseline's, as plain JavaScript. */
async function buildServers(): Promise<{ service: string; bare: string }> {
  execFileSync(process.execPath, ["scripts/build.mjs"], { cwd: ROOT, stdio: "inherit" });
  const bare = "data/bench/bare.server.mjs";
  await build({
    absWorkingDir: ROOT,
    entryPoints: ["tests/bench/bare.server.ts"],
    outfile: bare,
    bundle: true,
    packages: "external",
    platform: "node",
    format: "esm",
    target: "node20",
    logLevel: "warning",
  });
  return { service: "dist/main.js", bare };
}

/**
 * The service as it was at a git ref, built as `npm start` builds it, in a worktree of its own under
 * data/bench/ (kept between runs): the same installed packages and generated client.
 */
function buildBaseline(ref: string): string {
  const dir = `${ROOT}data/bench/baseline`;
  if (!existsSync(dir)) execFileSync("git", ["worktree", "add", "--detach", dir, ref], { cwd: ROOT, stdio: "ignore" });
  execFileSync("git", ["checkout", "--detach", "--force", ref], { cwd: dir, stdio: "ignore" });
  if (!existsSync(`${dir}/node_modules`)) symlinkSync(`${ROOT}node_modules`, `${dir}/node_modules`);
  rmSync(`${dir}/src/generated`, { recursive: true, force: true });
  cpSync(`${ROOT}src/generated`, `${dir}/src/generated`, { recursive: true });
  execFileSync(process.execPath, ["scripts/build.mjs"], { cwd: dir, stdio: "inherit" });
  return `${dir}/dist/main.js`;
}

/** How a server says it is ready: the service's /ready, else a request of its own. */
type Probe = { path: string; method?: string; headers?: Record<string, string>; body?: string };
const READY: Probe = { path: "/ready" };

async function startServer(
  name: string,
  script: string,
  env: Record<string, string>,
  cpuProf: boolean,
  probe: Probe = READY,
) {
  const port = await freePort();
  const profile = cpuProf ? ["--cpu-prof", `--cpu-prof-dir=${fileURLToPath(RESULTS)}profiles`] : [];
  // As `npm start` runs the service (package.json; see src/main.ts), the bare baseline alike.
  const node = [process.execPath, "--single-threaded-gc", ...profile, script];
  const child = spawn("taskset", ["-c", "0", ...node], {
    cwd: ROOT,
    env: { ...process.env, HOST: "127.0.0.1", PORT: String(port), ...env },
    stdio: ["ignore", "ignore", "pipe"],
  });
  let stderr = "";
  child.stderr?.setEncoding("utf8").on("data", (chunk: string) => {
    stderr += chunk;
  });
  const url = `http://127.0.0.1:${port}`;
  for (let i = 0; ; i++) {
    if (child.exitCode !== null) throw new Error(`${name} exited (${child.exitCode}): ${stderr}`);
    const ok = await fetch(`${url}${probe.path}`, probe).then(
      (r) => r.status === 200,
      () => false,
    );
    if (ok) return { name, url, child } satisfies Server;
    if (i > 600) throw new Error(`${name} never became ready: ${stderr}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

async function stopServer(server: Server): Promise<void> {
  const { child } = server;
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise((resolve) => child.once("exit", resolve));
  child.kill("SIGTERM");
  const timer = setTimeout(() => child.kill("SIGKILL"), 10_000);
  await exited;
  clearTimeout(timer);
}

// ── Operations ────────────────────────────────────────────────────────────────────────────────

/** The full profile, as SOFA's REST route selects it. */
const PROFILE_FIELDS = `providerCode name summary description labels agentType visibility trustTier reviewStage
  contactEmail capabilities { key name description tags inputModes outputModes }
  models { vendor model role contextWindow } tools { name kind description scopes }
  endpoint { url protocol authScheme healthUrl } packages { registryType identifier version fileSha256 }
  policy { dataRetentionDays humanOversight allowedUseCases prohibitedUseCases termsUrl privacyUrl }
  roles { subject role } tokens { tokenId prefix label createdAt lastUsedAt expiresAt revokedAt }
  reviewTimeline { at kind actor note } version createdAt updatedAt`;
const SUMMARY_FIELDS = `items { providerCode name summary agentType visibility trustTier reviewStage labels endpoint { protocol } updatedAt } nextCursor`;

const graphql = (query: string, variables: Record<string, unknown>, headers: Record<string, string> = {}): Request => ({
  method: "POST",
  path: "/graphql",
  headers: { "content-type": "application/json", ...headers },
  body: JSON.stringify({ query, variables }),
});

type Owner = { code: string; token: string };

interface Fixture {
  code: string;
  /**
   * Agents of the benchmark's own (intakes), for PATCH, with their tokens. A PATCH answers the
   * whole profile with its whole timeline, and every PATCH adds an event to it: the PATCHes go round
   * a pool registered afresh for each cell and run (`freshOwners`), so that what a PATCH costs does
   * not grow with the length of the run (each owner takes ~20 PATCHes of one cell's run).
   */
  owners: Owner[];
  reviewer: string;
}

/** How many agents the PATCHes of one cell's run go round. */
const PATCH_POOL = 200;

let sequence = 0;
function intakeBody(): string {
  sequence += 1;
  return JSON.stringify({
    providerCode: `bench-${process.pid}-${Date.now().toString(36)}-${sequence}`,
    name: "Bench Agent",
    summary: "Written by the benchmark",
    agentType: "ASSISTANT",
    contactEmail: "bench@example.com",
    labels: ["bench"],
    endpoint: { url: "https://bench.example.com/a2a", protocol: "A2A", authScheme: "BEARER" },
  });
}

function requestOf(target: TargetName, op: OpName, f: Fixture): Request {
  if (target === "postgraphile") return peerRequest(op as PeerOp, f);
  const rest = !target.startsWith("graphql");
  const filter = { agentType: "ASSISTANT", trustTier: "VERIFIED", labels: [COMMON_LABEL], limit: 20 };
  switch (op) {
    case "detail":
      return rest
        ? { method: "GET", path: `/api/v1/providers/${f.code}` }
        : graphql(`query ($c: String!) { provider(providerCode: $c) { ${PROFILE_FIELDS} } }`, { c: f.code });
    case "card":
      // The signed A2A card of an approved agent: signed once when it changes, not per read.
      return rest
        ? { method: "GET", path: `/api/v1/providers/${f.code}/agent-card.json` }
        : graphql(
            `query ($c: String!) { agentCard(providerCode: $c) { name description version documentationUrl
              supportedInterfaces { url protocolBinding protocolVersion } provider { organization url }
              capabilities { streaming pushNotifications extensions } securitySchemes securityRequirements { schemes }
              defaultInputModes defaultOutputModes skills { id name description tags examples inputModes outputModes }
              signatures { protected signature } } }`,
            { c: f.code },
          );
    case "list":
      return rest
        ? {
            method: "GET",
            path: `/api/v1/providers?agentType=${filter.agentType}&trustTier=${filter.trustTier}&labels=${COMMON_LABEL}&limit=20`,
          }
        : graphql(
            `query ($t: AgentType, $tier: TrustTier, $l: [String!], $n: Int) { providers(agentType: $t, trustTier: $tier, labels: $l, limit: $n) { ${SUMMARY_FIELDS} } }`,
            { t: filter.agentType, tier: filter.trustTier, l: filter.labels, n: 20 },
          );
    case "list-all":
      // The directory's first page: every listable agent, newest first.
      return rest
        ? { method: "GET", path: "/api/v1/providers?limit=20" }
        : graphql(`query ($n: Int) { providers(limit: $n) { ${SUMMARY_FIELDS} } }`, { n: 20 });
    case "list-type":
      // The directory with one facet chosen.
      return rest
        ? { method: "GET", path: `/api/v1/providers?agentType=${filter.agentType}&limit=20` }
        : graphql(`query ($t: AgentType, $n: Int) { providers(agentType: $t, limit: $n) { ${SUMMARY_FIELDS} } }`, {
            t: filter.agentType,
            n: 20,
          });
    case "facets":
      // The directory's first page: every facet of the whole public directory, the widest count there is.
      return rest
        ? { method: "GET", path: "/api/v1/providers/facets" }
        : graphql(
            `{ providerFacets { total facets { ${["agentType", "protocol", "transport", "packageRegistry", "trustTier", "health", "publisherVerified", "lifecycle", "visibility", "reviewStage", "labels"].map((f) => `${f} { value count }`).join(" ")} } } }`,
            {},
          );
    case "search":
      return rest
        ? { method: "GET", path: `/api/v1/providers?search=${SEARCH_WORDS.common}&limit=20` }
        : graphql(`query ($s: String, $n: Int) { providers(search: $s, limit: $n) { ${SUMMARY_FIELDS} } }`, {
            s: SEARCH_WORDS.common,
            n: 20,
          });
    case "patch": {
      let n = 0;
      const next = () => f.owners[n++ % f.owners.length] as Owner;
      return rest
        ? {
            method: "PATCH",
            path: `/api/v1/providers/${f.owners[0]?.code}`,
            headers: { "content-type": "application/json" },
            setup: (req) => {
              const owner = next();
              return {
                ...req,
                path: `/api/v1/providers/${owner.code}`,
                headers: { ...req.headers, authorization: `Bearer ${owner.token}` },
                body: JSON.stringify({ summary: `Patched by the benchmark, ${n}` }),
              };
            },
          }
        : {
            ...graphql("", {}),
            setup: (req) => {
              const owner = next();
              return {
                ...req,
                headers: { ...req.headers, authorization: `Bearer ${owner.token}` },
                body: JSON.stringify({
                  query:
                    "mutation ($c: String!, $s: String) { updateProvider(providerCode: $c, summary: $s) { version } }",
                  variables: { c: owner.code, s: `Patched by the benchmark, ${n}` },
                }),
              };
            },
          };
    }
    case "intake":
      return rest
        ? {
            method: "POST",
            path: "/api/v1/providers",
            headers: { "content-type": "application/json" },
            body: intakeBody,
          }
        : {
            ...graphql("", {}),
            body: () =>
              JSON.stringify({
                query: `mutation ($c: String, $n: String!, $s: String!, $t: AgentType!, $e: String!, $l: [String!], $ep: EndpointInput!) {
                  createProvider(providerCode: $c, name: $n, summary: $s, agentType: $t, contactEmail: $e, labels: $l, endpoint: $ep) { providerCode reviewCode accessToken } }`,
                variables: (() => {
                  const b = JSON.parse(intakeBody());
                  return {
                    c: b.providerCode,
                    n: b.name,
                    s: b.summary,
                    t: b.agentType,
                    e: b.contactEmail,
                    l: b.labels,
                    ep: b.endpoint,
                  };
                })(),
              }),
          };
    case "queue":
      return rest
        ? { method: "GET", path: "/api/v1/reviews/queue?limit=20", headers: { authorization: `Bearer ${f.reviewer}` } }
        : graphql(
            "query ($n: Int) { reviewQueue(limit: $n) { items { reviewCode providerCode providerName kind status priority assignedTo createdAt updatedAt decidedAt } nextCursor } }",
            { n: 20 },
            { authorization: `Bearer ${f.reviewer}` },
          );
    case "feed":
    case "webhooks":
    case "mirror":
      throw new Error(`${op} is a scenario of its own`);
  }
}

// ── Load ──────────────────────────────────────────────────────────────────────────────────────
interface Sample {
  rps: number;
  p50: number;
  p99: number;
  /** Answers other than 2xx, and errors and timeouts, during the phase. */
  failures: number;
  /**
   * At saturation: the server's CPU time over the phase, as a fraction of its one core. Below ~0.9
   * the server was waiting — on the load generator (its own single core at its limit) or on the disk.
   */
  serverCpu?: number;
  /** At saturation: CPU per answered request, in µs, of the server's process and of PostgreSQL (all its processes). */
  cpuUs?: number;
  pgCpuUs?: number;
}

/**
 * One autocannon phase; latencies are taken per response here (autocannon's histogram keeps whole ms).
 * `amount`: instead of `seconds`, that many requests, throughput over the time they took.
 */
async function load(
  url: string,
  request: Request,
  seconds: number,
  connections: number,
  rate?: number,
  amount?: number,
) {
  const latencies: number[] = [];
  let failures = 0;
  const body = request.body;
  const began = performance.now();
  const instance = autocannon({
    url,
    connections,
    // By count, a slow server's answers may take longer than autocannon's 10 s default to come.
    ...(amount ? { amount, timeout: 120 } : { duration: seconds }),
    ...(rate ? { overallRate: rate } : {}),
    requests: [
      {
        method: request.method,
        path: request.path,
        headers: request.headers,
        ...(request.setup
          ? { setupRequest: request.setup as (req: object) => object }
          : typeof body === "function"
            ? { setupRequest: (req: object) => ({ ...req, body: body() }) }
            : { body }),
      },
    ],
  });
  instance.on("response", (_client: unknown, status: number, _bytes: number, ms: number) => {
    if (status >= 200 && status < 300) latencies.push(ms);
    else failures += 1;
  });
  const result = await instance;
  failures += result.errors + result.timeouts;
  latencies.sort((a, b) => a - b);
  const elapsed = amount ? (performance.now() - began) / 1000 : seconds;
  return {
    elapsed,
    rps: latencies.length / elapsed,
    p50: quantile(latencies, 0.5),
    p99: quantile(latencies, 0.99),
    failures,
  } satisfies Sample & { elapsed: number };
}

/** One request, checked: the benchmark measures answers, not errors. */
async function check(url: string, request: Request): Promise<string> {
  let sent: RawRequest = {
    method: request.method,
    path: request.path,
    headers: request.headers ?? {},
    body: typeof request.body === "function" ? request.body() : request.body,
  };
  if (request.setup) sent = request.setup(sent);
  const res = await fetch(`${url}${sent.path}`, { method: sent.method, headers: sent.headers, body: sent.body });
  const text = await res.text();
  if (res.status >= 300 || text.includes('"errors":['))
    throw new Error(`${request.method} ${url}${request.path}: ${res.status} ${text.slice(0, 400)}`);
  return text;
}

/**
 * PATCH_POOL agents registered through the service at `app`, with their tokens. PATCH cells are
 * the cached app's (SERVES): writes go to it only, so that its cache sees every write (without Redis
 * each process invalidates only its own).
 */
async function freshOwners(app: string, count = PATCH_POOL): Promise<Owner[]> {
  const owners: Owner[] = [];
  for (let i = 0; i < count; i++) {
    const created = JSON.parse(
      await check(app, {
        method: "POST",
        path: "/api/v1/providers",
        headers: { "content-type": "application/json" },
        body: intakeBody(),
      }),
    ) as { providerCode: string; accessToken: string };
    owners.push({ code: created.providerCode, token: created.accessToken });
  }
  return owners;
}

/** The request of a cell served at `url`; a PATCH cell's goes round owners registered for it now. */
async function requestFor(url: string, target: TargetName, op: OpName, fixture: Fixture): Promise<Request> {
  if (op === "patch") fixture.owners = await freshOwners(url);
  return requestOf(target, op, fixture);
}

// ── Main ──────────────────────────────────────────────────────────────────────────────────────
interface Cell {
  dialect: Dialect;
  size: number;
  target: TargetName;
  op: OpName;
  runs: { saturation: Sample; fixed: Sample }[];
}

const median = (values: number[]) => {
  const sorted = [...values].filter((v) => !Number.isNaN(v)).sort((a, b) => a - b);
  if (sorted.length === 0) return Number.NaN;
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2 ? (sorted[mid] as number) : ((sorted[mid - 1] as number) + (sorted[mid] as number)) / 2;
};
const r2 = (n: number) => Math.round(n * 100) / 100;

function summarize(cell: Cell) {
  return {
    dialect: cell.dialect,
    size: cell.size,
    target: cell.target,
    op: cell.op,
    rps: Math.round(median(cell.runs.map((r) => r.saturation.rps))),
    p50Ms: r2(median(cell.runs.map((r) => r.fixed.p50))),
    p99Ms: r2(median(cell.runs.map((r) => r.fixed.p99))),
    saturationP99Ms: r2(median(cell.runs.map((r) => r.saturation.p99))),
    serverCpu: r2(median(cell.runs.map((r) => r.saturation.serverCpu ?? Number.NaN))),
    cpuUs: Math.round(median(cell.runs.map((r) => r.saturation.cpuUs ?? Number.NaN))),
    pgCpuUs: Math.round(median(cell.runs.map((r) => r.saturation.pgCpuUs ?? Number.NaN))),
    failures: cell.runs.reduce((n, r) => n + r.saturation.failures + r.fixed.failures, 0),
    runs: cell.runs,
  };
}
type Row = ReturnType<typeof summarize>;

async function main() {
  const options = parseArgs(process.argv.slice(2));
  // The load generator on core 1; every server is started on core 0.
  execFileSync("taskset", ["-cp", "1", String(process.pid)], { stdio: "ignore" });
  const before = loadavg();
  mkdirSync(RESULTS, { recursive: true });
  const servers: Server[] = [];
  const cells: Cell[] = [];
  const feedRuns: FeedSample[] = [];
  /** Each dialect's and size's database, cleaned at the end. */
  const databases: { dialect: Dialect; size: number; url: string }[] = [];
  /** The SQLite copies made for one server each, removed at the end. */
  const copies: string[] = [];
  const cleanAll = async () => {
    for (const d of databases) await cleanUp(d.dialect, d.url, d.size);
    for (const url of copies) removeSqlite(sqlitePath(url));
  };
  try {
    const reviewer = await signReviewerToken(
      loadConfig({ ...process.env, NODE_ENV: "production", REVIEWER_JWT_SECRET: JWT_SECRET }),
      "bench-reviewer",
      { roles: ["reviewer"] },
    );
    const urls = new Map<string, string>();
    const fixtures = new Map<string, Fixture>();
    mkdirSync(`${ROOT}data/bench`, { recursive: true });
    const scripts = await buildServers();
    const wanted = new Set(options.targets);
    const served = options.ops.some((op) => !OWN_PROCESSES.includes(op));
    const peer =
      served && options.dialects.includes("postgresql") && wanted.has("postgraphile") ? installPeer(ROOT) : null;
    for (const dialect of served ? options.dialects : []) {
      for (const size of options.sizes) {
        const databaseUrl = await ensureDatabase(dialect, size, options);
        databases.push({ dialect, size, url: databaseUrl });
        const at = (target: string) => `${dialect} ${size} ${target}`;
        const env = {
          DATABASE_URL: databaseUrl,
          NODE_ENV: "production",
          REVIEWER_JWT_SECRET: JWT_SECRET,
          RATE_LIMITS: "off",
          LOG_LEVEL: "info",
          REDIS_URL: "",
          // The registry signs approved agents' cards only under its own origin in production.
          PUBLIC_URL: "https://registry.example.com",
          // On PostgreSQL in production every replica must sign with keys it shares (signing.keys.ts).
          SIGNING_KEYS_FILE: `${ROOT}data/bench/signing-keys.json`,
          // The synthetic agents' endpoints are made-up names: probing them would put failing look-ups
          // on the pinned core. The prober's own cost is `npm run bench:health`'s to measure.
          HEALTH: "off",
        };
        const start = async (targets: TargetName[], name: string, script: string, extra: Record<string, string>) => {
          if (!targets.some((t) => wanted.has(t))) return;
          const s = await startServer(`${name}-${dialect}-${size}`, script, { ...env, ...extra }, options.cpuProf);
          servers.push(s);
          for (const t of targets) urls.set(at(t), s.url);
        };
        if (dialect === "sqlite" && wanted.has("bare")) {
          const s = await startServer(`bare-${size}`, scripts.bare, { DATABASE_URL: databaseUrl }, false, {
            path: "/api/v1/providers?limit=1",
          });
          servers.push(s);
          urls.set(at("bare"), s.url);
        }
        if (dialect === "postgresql" && peer) {
          const s = await startServer(`postgraphile-${size}`, peer, { DATABASE_URL: databaseUrl }, false, PEER_READY);
          servers.push(s);
          urls.set(at("postgraphile"), s.url);
        }
        await start(["rest", "graphql"], "app", scripts.service, { RESPONSE_CACHE: "on" });
        await start(["rest-nocache", "graphql-nocache"], "app-nocache", scripts.service, { RESPONSE_CACHE: "off" });
        if (options.baseline) {
          // On SQLite the baseline gets a copy of its own: sharing one file and its WAL, the cells
          // that wrote second paid for the first's checkpoints.
          const own = dialect === "sqlite" ? copySqlite(databaseUrl, "before") : databaseUrl;
          if (own !== databaseUrl) copies.push(own);
          await start(["rest-before", "graphql-before"], "app-before", buildBaseline(options.baseline), {
            RESPONSE_CACHE: "on",
            DATABASE_URL: own,
          });
        }
        fixtures.set(`${dialect} ${size}`, { code: await sampleCode(dialect, databaseUrl), owners: [], reviewer });
      }
    }
    for (const op of options.ops) {
      if (SCENARIOS.includes(op)) continue;
      for (const dialect of options.dialects) {
        for (const size of options.sizes) {
          const fixture = fixtures.get(`${dialect} ${size}`) as Fixture;
          for (const target of options.targets) {
            if (!SERVES[target].includes(op) || (ONLY_ON[target] ?? dialect) !== dialect) continue;
            const url = urls.get(`${dialect} ${size} ${target}`);
            if (!url) continue;
            const answer = await check(url, await requestFor(url, target, op, fixture));
            if (target === "postgraphile") {
              // The peer must answer what the service answers, or the comparison means nothing.
              const service = urls.get(`${dialect} ${size} rest-nocache`) ?? urls.get(`${dialect} ${size} rest`);
              if (!service) throw new Error("the peer is compared with the service: run rest or rest-nocache too");
              const own = JSON.parse(await check(service, requestOf("rest-nocache", op, fixture)));
              // Search's pages cannot hold the same rows (the service ranks, the peer cannot): a
              // second, unmeasured request finds the service's page among the peer's matches.
              const second = peerCheckRequest(op as PeerOp, own);
              const checked = second ? JSON.parse(await check(url, second)) : undefined;
              const difference = comparePeer(op as PeerOp, own, JSON.parse(answer), checked);
              if (difference) throw new Error(`postgraphile ${op} at ${size} answers other data: ${difference}`);
            }
            cells.push({ dialect, size, target, op, runs: [] });
          }
        }
      }
    }
    log(`bench: ${cells.length} cells × ${options.runs} runs × (${options.warmup} + 0.5 + 2 × ${options.duration}) s`);
    for (let run = 0; run < options.runs; run++) {
      for (const cell of cells) {
        const url = urls.get(`${cell.dialect} ${cell.size} ${cell.target}`) as string;
        const fixture = fixtures.get(`${cell.dialect} ${cell.size}`) as Fixture;
        const request = await requestFor(url, cell.target, cell.op, fixture);
        await load(url, request, options.warmup, options.connections);
        // taskset execs node: the child's pid is the server's.
        const pid = servers.find((s) => s.url === url)?.child.pid as number;
        const saturate = async (amount?: number) => {
          const cpuBefore = cpuSeconds(pid);
          const pgBefore = cell.dialect === "postgresql" ? postgresCpu() : null;
          const { elapsed, ...sample }: Sample & { elapsed: number } = await load(
            url,
            request,
            options.duration,
            options.connections,
            undefined,
            amount,
          );
          const cpu = cpuSeconds(pid) - cpuBefore;
          const answered = Math.max(1, sample.rps * elapsed);
          sample.serverCpu = cpu / elapsed;
          sample.cpuUs = (1e6 * cpu) / answered;
          if (pgBefore) sample.pgCpuUs = (1e6 * postgresCpuSince(pgBefore)) / answered;
          return sample;
        };
        let saturation: Sample = await saturate();
        // A server slower than the window answers few or none of its connections' requests within
        // it (the peer's facets: 32 in flight, each waiting on the others): such a cell is measured
        // again by a count of requests instead, four per connection, over the time they take.
        if (saturation.rps * options.duration < 2 * options.connections) {
          log(
            `bench: ${cell.target} ${cell.op} answered ${Math.round(saturation.rps * options.duration)} in ${options.duration} s: measured by count`,
          );
          saturation = await saturate(4 * options.connections);
        }
        // The requests autocannon left in flight are still being answered when it stops: without a
        // pause the first requests of the fixed rate would queue behind them (32 × the service time).
        await new Promise((resolve) => setTimeout(resolve, 500));
        const fixed = await fixedRate(url, request, options.duration, options.rate);
        cell.runs.push({ saturation, fixed });
        // A cell slower than the rate leaves requests queued in the server (uncached facets at 100,000
        // agents): /ready reads the database after them, so the next cell starts on an idle server.
        await fetch(`${url}/ready`).then((r) => r.text());
        log(
          `bench: run ${run + 1} ${cell.dialect} ${cell.size} ${cell.target} ${cell.op}: ${Math.round(saturation.rps)} req/s (server CPU ${Math.round(100 * (saturation.serverCpu ?? 0))}%, ${Math.round(saturation.cpuUs ?? 0)} µs/req${saturation.pgCpuUs === undefined ? "" : `, PostgreSQL ${Math.round(saturation.pgCpuUs)} µs/req`}); at ${options.rate}/s p50 ${r2(fixed.p50)} ms, p99 ${r2(fixed.p99)} ms${saturation.failures + fixed.failures ? `, ${saturation.failures + fixed.failures} failures` : ""}`,
        );
      }
      const largest = options.sizes[options.sizes.length - 1] as number;
      const service = urls.get(`sqlite ${largest} rest`);
      if (options.ops.includes("feed") && service) {
        const [owner] = await freshOwners(service, 1);
        const sample = await benchFeed({
          url: service,
          reviewer,
          owner: owner as Owner,
          subscribers: 1000,
          events: 40,
          warmup: 10,
          rate: 2,
        });
        feedRuns.push(sample);
        log(
          `bench: run ${run + 1} feed: ${sample.delivered} of ${sample.events} × ${sample.subscribers} arrived; p50 ${r2(sample.p50)} ms, p99 ${r2(sample.p99)} ms, max ${r2(sample.max)} ms`,
        );
      }
    }
  } catch (error) {
    await Promise.all(servers.map(stopServer));
    await cleanAll();
    throw error;
  }
  await Promise.all(servers.map(stopServer));
  let webhooks = "";
  if (options.ops.includes("webhooks")) {
    execFileSync(process.execPath, ["--import", "tsx", "tests/bench/webhooks.bench.ts"], {
      cwd: ROOT,
      stdio: "inherit",
    });
    webhooks = readFileSync(new URL("webhooks-sqlite.md", RESULTS), "utf8");
  }
  const mirrorRuns: MirrorRun[] = [];
  if (options.ops.includes("mirror")) {
    // Run after run, each dialect in turn, as the cells are interleaved: the machine weighs on all alike.
    const runs = new Map<Dialect, MirrorRun[]>(options.dialects.map((d) => [d, []]));
    for (let run = 0; run < options.runs; run++)
      for (const dialect of options.dialects) runs.get(dialect)?.push(benchMirror(dialect, options));
    for (const each of runs.values()) if (each.length > 0) mirrorRuns.push(mirrorMedian(each));
  }
  // The results are written before the databases are cleaned: cleaning a million agents' file can
  // take a while, and an interrupted clean-up is redone by the next run (ensureDatabase).
  const rows = cells.map(summarize);
  const report = {
    date: new Date().toISOString(),
    command: `npm run bench -- ${process.argv.slice(2).join(" ")}`.trim(),
    machine: {
      cpus: cpus().length,
      cpu: cpus()[0]?.model ?? "",
      memoryGiB: Math.round(totalmem() / 2 ** 30),
      node: process.version,
      loadAverageAtStart: before.map(r2),
      loadAverageAtEnd: loadavg().map(r2),
    },
    method: {
      pinning:
        "servers: taskset -c 0 (child processes); load generator (autocannon 9, in process): core 1; PostgreSQL not pinned",
      saturation: `${options.connections} connections, ${options.duration} s, after ${options.warmup} s of warm-up`,
      fixedRate: `${options.rate} requests/s, evenly spaced (open model, keep-alive), ${options.duration} s; p50/p99 per response, from send to whole answer`,
      runs: options.runs,
      figure: "median over the runs",
      service:
        "dist/main.js (npm start's build), NODE_ENV=production, JSON request log on (to /dev/null), RATE_LIMITS=off, SQLite or PostgreSQL",
      peer: "PostGraphile v5 (tests/bench/peer/), installed into data/bench/postgraphile/, Promise.withResolvers polyfilled on Node 20",
    },
    ratios: ratios(rows, options, feedRuns, mirrorRuns),
    results: rows,
    feed: feedRuns,
    mirror: mirrorRuns.map(({ page: _page, ...run }) => run),
  };
  writeFileSync(new URL("bench.json", RESULTS), `${JSON.stringify(report, null, 2)}\n`);
  const pages = [webhooks, ...mirrorRuns.map((run) => run.page)].filter(Boolean);
  const md = `${markdown(report, rows, options, feedRuns, mirrorRuns)}${pages.map((page) => `\n${page.replace(/^# /, "## ")}`).join("")}`;
  writeFileSync(new URL("bench.md", RESULTS), md);
  process.stdout.write(md);
  await cleanAll();
}

type Goal = { target: string; size: number; value: number | string | null; goal: string; met: boolean | null };

/** One dialect's run of tests/bench/mirror.bench.ts: its goals as it judged them, and its page. */
interface MirrorRun {
  dialect: Dialect;
  servers: number;
  goals: { target: string; value: number | string; goal: string; met: boolean }[];
  page: string;
}

/**
 * The mirror scenario on one dialect, in processes of its own (the service it starts is pinned to
 * core 0, the upstream to core 1): it exits 1 when a goal is missed, which is a result, not a failure.
 */
function benchMirror(dialect: Dialect, options: Options): MirrorRun {
  const args = ["--dialect", dialect, "--servers", String(options.mirrorServers), "--rate", String(options.rate)];
  args.push("--pg-url", options.pgUrl, "--skip-build", ...(options.cpuProf ? ["--cpu-prof"] : []));
  const run = spawnSync(process.execPath, ["--import", "tsx", "tests/bench/mirror.bench.ts", ...args], {
    cwd: ROOT,
    stdio: ["ignore", "ignore", "inherit"],
  });
  if (run.status !== 0 && run.status !== 1) throw new Error(`mirror.bench.ts on ${dialect} failed (${run.status})`);
  const report = JSON.parse(readFileSync(new URL(`mirror-${dialect}.json`, RESULTS), "utf8")) as MirrorRun;
  return {
    dialect,
    servers: report.servers,
    goals: report.goals,
    page: readFileSync(new URL(`mirror-${dialect}.md`, RESULTS), "utf8"),
  };
}

/**
 * One dialect's mirror runs as one, as every cell's figures are: a numeric goal's value is the median
 * over the runs (each run's beside it), met when the median meets it; a count or a failure is met only
 * when every run met it. The page holds each run's own.
 */
function mirrorMedian(runs: MirrorRun[]): MirrorRun {
  const [first] = runs as [MirrorRun];
  if (runs.length === 1) return first;
  const goals = first.goals.map((goal, i) => {
    const all = runs.map((r) => r.goals[i] as MirrorRun["goals"][number]);
    const values = all.map((g) => g.value);
    const limit = /^≤ ([\d.]+)$/.exec(goal.goal);
    if (!limit || !values.every((v) => typeof v === "number")) {
      return { ...goal, value: distinct(values), met: all.every((g) => g.met) };
    }
    const mid = median(values as number[]);
    return { ...goal, value: `${r2(mid)} (${values.join(", ")})`, met: mid <= Number(limit[1]) };
  });
  const pages = runs.map((r, i) => r.page.replace(/^# (.*)/, `# $1: run ${i + 1} of ${runs.length}`));
  return { ...first, goals, page: pages.join("\n") };
}

/** The targets (docs/performance.md), as ratios and limits of this run, each dialect's on its own rows. */
function ratios(rows: Row[], options: Options, feedRuns: FeedSample[] = [], mirrorRuns: MirrorRun[] = []) {
  const on = (dialect: Dialect) => rows.filter((r) => r.dialect === dialect);
  const measured = (dialect: Dialect) => options.dialects.includes(dialect) && on(dialect).length > 0;
  const goals = [
    ...(measured("sqlite") || feedRuns.length > 0
      ? sqliteGoals(on("sqlite"), options, feedRuns).map((g) => ({ dialect: "sqlite", ...g }))
      : []),
    ...(measured("postgresql")
      ? postgresGoals(on("postgresql"), options).map((g) => ({ dialect: "postgresql", ...g }))
      : []),
    ...mirrorRuns.flatMap((run) =>
      run.goals.map((g) => ({ dialect: run.dialect, ...g, target: `mirror: ${g.target}`, size: run.servers })),
    ),
  ];
  return goals.map((t) => ({ ...t, value: typeof t.value === "number" ? Math.round(t.value * 1000) / 1000 : t.value }));
}

/** On PostgreSQL: against the peer (PostGraphile) at every size, and search's latency at the largest. */
function postgresGoals(rows: Row[], options: Options): Goal[] {
  const get = (size: number, target: TargetName, op: OpName) =>
    rows.find((r) => r.size === size && r.target === target && r.op === op);
  const out: Goal[] = [];
  for (const size of options.sizes) {
    for (const op of PEER_OPS) {
      const peer = get(size, "postgraphile", op);
      if (!peer) continue;
      for (const target of ["rest-nocache", "graphql-nocache"] as const) {
        const row = get(size, target, op);
        if (!row) continue;
        const v = row.rps / peer.rps;
        out.push({ target: `${op} (${target}) / PostGraphile`, size, value: v, goal: "≥ 2", met: v >= 2 });
        const cpu = row.pgCpuUs / peer.pgCpuUs;
        out.push({
          target: `${op} (${target}): PostgreSQL CPU per request / PostGraphile's`,
          size,
          value: cpu,
          goal: "≤ 1",
          met: cpu <= 1,
        });
      }
      // The cached goal is the two reads' it was set for.
      for (const target of op === "detail" || op === "list" ? (["rest", "graphql"] as const) : []) {
        const row = get(size, target, op);
        if (!row) continue;
        const v = row.rps / peer.rps;
        out.push({ target: `${op} (${target}, cached) / PostGraphile`, size, value: v, goal: "≥ 20", met: v >= 20 });
      }
    }
  }
  const largest = options.sizes[options.sizes.length - 1] as number;
  out.push(...facetsGoals(rows, largest));
  for (const target of ["rest-nocache", "graphql-nocache"] as const) {
    const row = get(largest, target, "search");
    if (row)
      out.push({
        target: `search p99 (${target})`,
        size: largest,
        value: row.p99Ms,
        goal: "< 20 ms",
        met: row.p99Ms < 20,
      });
  }
  return out;
}

/** The facets' latency at the largest size, on either dialect: every service target that served them. */
function facetsGoals(rows: Row[], largest: number): Goal[] {
  return (["rest-nocache", "graphql-nocache", "rest", "graphql"] as const).flatMap((target) => {
    const row = rows.find((r) => r.size === largest && r.target === target && r.op === "facets");
    return row
      ? [{ target: `facets p99 (${target})`, size: largest, value: row.p99Ms, goal: "< 100 ms", met: row.p99Ms < 100 }]
      : [];
  });
}

/** On SQLite: against the bare baseline, GraphQL against REST, latency, writes and the feed. */
function sqliteGoals(rows: Row[], options: Options, feedRuns: FeedSample[]): Goal[] {
  const get = (size: number, target: TargetName, op: OpName) =>
    rows.find((r) => r.size === size && r.target === target && r.op === op);
  const largest = options.sizes[options.sizes.length - 1] as number;
  const out: Goal[] = [];
  // Unrounded: a goal is judged on the ratio itself (0.196 is not 0.20); the report rounds to 3 places.
  const ratio = (a?: Row, b?: Row) => (a && b ? a.rps / b.rps : null);
  for (const size of options.sizes) {
    const bare = get(size, "bare", "detail");
    const v1 = ratio(get(size, "rest", "detail"), bare);
    out.push({
      target: "REST detail (anonymous, cache on) / bare",
      size,
      value: v1,
      goal: "≥ 0.50",
      met: v1 === null ? null : v1 >= 0.5,
    });
    const v2 = ratio(get(size, "rest-nocache", "detail"), bare);
    out.push({
      target: "REST detail (anonymous, cache off) / bare",
      size,
      value: v2,
      goal: "≥ 0.20",
      met: v2 === null ? null : v2 >= 0.2,
    });
    for (const op of options.ops) {
      for (const [g, r] of [
        ["graphql", "rest"],
        ["graphql-nocache", "rest-nocache"],
      ] as const) {
        const v = ratio(get(size, g, op), get(size, r, op));
        if (v !== null) out.push({ target: `${g} / ${r}: ${op}`, size, value: v, goal: "≥ 0.90", met: v >= 0.9 });
      }
    }
  }
  out.push(...facetsGoals(rows, largest));
  for (const op of ["list", "search"] as const) {
    for (const target of ["rest-nocache", "graphql-nocache", "rest", "graphql"] as const) {
      const row = get(largest, target, op);
      if (row)
        out.push({
          target: `${op} p99 (${target})`,
          size: largest,
          value: row.p99Ms,
          goal: "< 20 ms",
          met: row.p99Ms < 20,
        });
    }
  }
  for (const size of options.sizes) {
    for (const target of ["rest", "graphql"] as const) {
      const row = get(size, target, "patch");
      if (!row) continue;
      const before = get(size, `${target}-before`, "patch");
      if (before) {
        const v = row.rps / before.rps;
        out.push({ target: `PATCH (${target}) / as at --baseline`, size, value: v, goal: "≥ 0.85", met: v >= 0.85 });
      }
      out.push({ target: `PATCH throughput (${target})`, size, value: row.rps, goal: "≥ 500/s", met: row.rps >= 500 });
      out.push({
        target: `PATCH p99 at ${options.rate}/s (${target})`,
        size,
        value: row.p99Ms,
        goal: "< 20 ms",
        met: row.p99Ms < 20,
      });
    }
  }
  if (feedRuns.length > 0) {
    const p99 = median(feedRuns.map((f) => f.p99));
    const largest = options.sizes[options.sizes.length - 1] as number;
    out.push({
      target: "feed: a change reaching 1,000 SSE subscribers, p99 ms",
      size: largest,
      value: p99,
      goal: "< 100 ms",
      met: p99 < 100,
    });
    const lost = feedRuns.reduce((n, f) => n + f.events * f.subscribers - f.delivered, 0);
    out.push({ target: "feed: messages not delivered", size: largest, value: lost, goal: "0", met: lost === 0 });
  }
  return out;
}

function markdown(
  report: { date: string; command: string; machine: Record<string, unknown> },
  rows: Row[],
  options: Options,
  feedRuns: FeedSample[],
  mirrorRuns: MirrorRun[],
) {
  const m = report.machine as {
    cpus: number;
    cpu: string;
    memoryGiB: number;
    node: string;
    loadAverageAtStart: number[];
  };
  const lines = [
    "# Benchmark — the service against the bare limit (SQLite) and against PostGraphile (PostgreSQL)",
    "",
    `${report.date}; ${m.cpus} × ${m.cpu}, ${m.memoryGiB} GiB, Node ${m.node}; load average at start ${m.loadAverageAtStart.join(" / ")}.`,
    `\`${report.command}\` — servers pinned to core 0, autocannon to core 1, PostgreSQL not pinned; throughput at saturation (${options.connections} connections), latency at ${options.rate} requests/s; median of ${options.runs} runs.`,
  ];
  // A dialect whose only operations ran in processes of their own has no cells here.
  for (const dialect of options.dialects.filter((d) => rows.some((r) => r.dialect === d))) {
    const pg = dialect === "postgresql";
    lines.push(
      "",
      `## ${pg ? "PostgreSQL" : "SQLite"}`,
      "",
      pg
        ? "req/s · p50 / p99 ms · CPU per request at saturation, µs: the server's process / PostgreSQL's."
        : "req/s · p50 / p99 ms.",
      "",
      `| operation | target | ${options.sizes.map((s) => s.toLocaleString("en")).join(" | ")} |`,
      `|---|---|${options.sizes.map(() => "---").join("|")}|`,
    );
    for (const op of options.ops) {
      for (const target of options.targets) {
        const cells = options.sizes.map((size) =>
          rows.find((r) => r.dialect === dialect && r.size === size && r.target === target && r.op === op),
        );
        if (cells.every((c) => !c)) continue;
        lines.push(
          `| ${op} | ${target} | ${cells
            .map((c) =>
              c
                ? `${c.rps.toLocaleString("en")} · ${c.p50Ms.toFixed(2)} / ${c.p99Ms.toFixed(2)}${pg ? ` · ${c.cpuUs} / ${c.pgCpuUs}` : ""}${c.failures ? ` (${c.failures} failed)` : ""}`
                : "—",
            )
            .join(" | ")} |`,
        );
      }
    }
  }
  const waiting = rows.filter((r) => r.serverCpu < 0.9);
  if (waiting.length > 0) {
    lines.push(
      "",
      `The server used less than 90% of its core at saturation (it waited — on the one-core load generator, or on the disk) in: ${waiting
        .map(
          (r) => `${r.dialect} ${r.op} ${r.target} ${r.size.toLocaleString("en")} (${Math.round(100 * r.serverCpu)}%)`,
        )
        .join(", ")}.`,
    );
  }
  lines.push("", "| dialect | target | size | measured | goal | met |", "|---|---|---|---|---|---|");
  for (const t of ratios(rows, options, feedRuns, mirrorRuns)) {
    lines.push(
      `| ${t.dialect} | ${t.target} | ${t.size.toLocaleString("en")} | ${t.value ?? "—"} | ${t.goal} | ${t.met === null ? "—" : t.met ? "yes" : "**no**"} |`,
    );
  }
  return `${lines.join("\n")}\n`;
}

main().catch((error) => {
  process.stderr.write(`bench failed: ${(error as Error).stack ?? error}\n`);
  process.exitCode = 1;
});
