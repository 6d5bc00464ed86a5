/**
 * `npm run lighthouse`: the four pages people land on — the directory, a profile, the intake form and
 * the reviewers' queue signed in — measured in a real Chromium against the real app on a real port,
 * over a fresh SQLite database of ~300 synthetic agents and one with a rich Markdown description.
 *
 * Asserted, each page: Lighthouse 12's performance, accessibility, best-practices and SEO scores
 * (mobile, its default simulated throttling) ≥ 0.95 and cumulative layout shift < 0.05, on the
 * median of LIGHTHOUSE_RUNS runs (default 3: Lighthouse's own advice, performance varying from run
 * to run); axe-core finding no violation at phone and at desktop width; every HTML, CSS, script and
 * API answer compressed. Prints a table, exits 1 when anything fails. Lighthouse's HTML and JSON
 * reports and each page's phone and desktop screenshot go to tests/browser/artifacts/.
 *
 * A script rather than a jest file: it is one long measurement, not a test among others, and jest's
 * workers would run beside it on the same cores and skew the performance score.
 */
import { type ChildProcess, spawn } from "node:child_process";
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import lighthouse from "lighthouse";
import { type Browser, chromium, type Page } from "playwright-core";
import { signReviewerToken } from "../src/auth/reviewer.jwt.ts";
import { loadConfig } from "../src/config.ts";
import { openDb } from "../src/db/client.ts";
import { webBundle } from "../src/web/web.bundle.ts";
import { createApp } from "../src/yoga.ts";
import { ARTIFACTS, browserPath, CHROMIUM_ARGS, DESKTOP, PHONE } from "../tests/browser/browser.path.ts";
import { seedSynthetic } from "./synthetic/seed.ts";

const BAR = 0.95;
const CLS_BAR = 0.05;
const CATEGORIES = ["performance", "accessibility", "best-practices", "seo"] as const;
const RUNS = Math.max(1, Number(process.env.LIGHTHOUSE_RUNS ?? 3));
const AGENTS = 300;
const REVIEWER_TOKEN_KEY = "agent-registry.reviewer-token";

const started = performance.now();
mkdirSync(ARTIFACTS, { recursive: true });
const failures: string[] = [];
const log = (line: string) => process.stderr.write(`${line}\n`);

// --- the app, over a database of its own in a temp folder ------------------------------------------

const folder = mkdtempSync(join(tmpdir(), "agent-registry-lighthouse-"));
const databaseUrl = `file:${join(folder, "registry.db")}`;
// Production, as a registry is deployed (GraphiQL off, errors masked), with a secret of this run only.
const config = loadConfig({
  ...process.env,
  NODE_ENV: "production",
  LOG_LEVEL: "silent",
  DATABASE_URL: databaseUrl,
  REVIEWER_JWT_SECRET: `lighthouse-${Math.random().toString(36).slice(2)}`.padEnd(40, "x"),
});
log(`seeding ${AGENTS} synthetic agents into ${databaseUrl}`);
await seedSynthetic({ databaseUrl, count: AGENTS, seed: 7 });
const db = await openDb(databaseUrl);
const app = createApp(config, db);
await webBundle();
const server = createServer(app);
await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
const reviewer = await signReviewerToken(config, "lighthouse", { roles: ["reviewer"] });

async function api(method: string, path: string, body?: unknown, token?: string): Promise<any> {
  const answer = await fetch(`${base}/api/v1${path}`, {
    method,
    headers: {
      "content-type": "application/json",
      origin: base,
      ...(token ? { authorization: `Bearer ${token}` } : {}),
    },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  const text = await answer.text();
  if (!answer.ok) throw new Error(`${method} ${path}: ${answer.status} ${text}`);
  return JSON.parse(text);
}

// The profile measured: an approved agent with the Markdown a real one has (headings, lists, a table,
// code, links), capabilities and tools, so the page has all its parts to draw.
const DESCRIPTION = `## What it does

Route Planner plans **delivery and pick-up routes** across a city, for fleets of 1 to 500 vehicles.
It takes orders, time windows and vehicle capacities, and answers with a route per vehicle.

- Time windows, capacities and driver breaks
- Live traffic from the city's open data
- Re-planning when an order is added mid-day

### Limits

| what | limit |
|---|---|
| orders per request | 5,000 |
| vehicles | 500 |
| answer time | under 30 s |

\`\`\`json
{ "orders": [{ "id": "o-1", "window": ["09:00", "11:00"] }], "vehicles": 3 }
\`\`\`

See the [documentation](https://planner.example.com/docs) and the [status page](https://status.example.com).
`;
const rich = await api("POST", "/providers", {
  providerCode: "route-planner",
  name: "Route Planner",
  summary: "Plans delivery and pick-up routes across a city, with time windows and live traffic",
  description: DESCRIPTION,
  agentType: "ASSISTANT",
  contactEmail: "ops@example.com",
  homepageUrl: "https://planner.example.com",
  labels: ["maps", "routing", "logistics"],
  endpoint: { url: "https://planner.example.com/a2a", protocol: "A2A", authScheme: "BEARER" },
});
await api(
  "POST",
  `/reviews/${rich.reviewCode}/decision`,
  { decision: "APPROVE", trustTier: "VERIFIED", note: "Checked endpoint and policy" },
  reviewer,
);

const PAGES = [
  { name: "directory", path: "/" },
  { name: "profile", path: `/providers/${rich.providerCode}` },
  { name: "intake", path: "/intake" },
  { name: "reviews", path: "/reviews", signedIn: true },
] as const;
type PageSpec = (typeof PAGES)[number];

// --- Chromium, with a debugging port for Lighthouse and playwright-core on the same browser ---------

const chrome = await startChromium();
const browser = await chromium.connectOverCDP(`http://127.0.0.1:${chrome.port}`);

/** Chromium started here (not by playwright-core), so that Lighthouse can reach it on its port. */
async function startChromium(): Promise<{ port: number; process: ChildProcess }> {
  const profile = join(folder, "chromium");
  const child = spawn(
    await browserPath(),
    ["--headless=new", "--remote-debugging-port=0", `--user-data-dir=${profile}`, ...CHROMIUM_ARGS, "about:blank"],
    { stdio: ["ignore", "ignore", "pipe"] },
  );
  // Chromium says where it listens on stderr once the port is open.
  const port = await new Promise<number>((resolve, reject) => {
    let seen = "";
    child.stderr?.on("data", (chunk: Buffer) => {
      seen += chunk.toString();
      const found = /DevTools listening on ws:\/\/[^:]+:(\d+)\//.exec(seen);
      if (found) resolve(Number(found[1]));
    });
    child.once("exit", (code) => reject(new Error(`Chromium exited (${code}) before listening:\n${seen}`)));
    child.once("error", reject);
  });
  return { port, process: child };
}

// Lighthouse opens a tab of its own for each run; the reviewers' page reads its token from the tab's
// sessionStorage, so the default context puts it there before that page's own script runs, as a
// reviewer who pasted it would have it.
const defaultContext = browser.contexts()[0];
if (!defaultContext) throw new Error("Chromium has no default context");
await defaultContext.addInitScript(
  ({ key, value }) => {
    if (location.pathname === "/reviews") sessionStorage.setItem(key, value);
  },
  { key: REVIEWER_TOKEN_KEY, value: reviewer },
);

// --- Lighthouse ------------------------------------------------------------------------------------

interface Measured {
  scores: Record<(typeof CATEGORIES)[number], number>;
  cls: number;
  lcp: number;
  tbt: number;
  failing: string[];
  html: string;
  json: string;
}

async function measure(spec: PageSpec): Promise<Measured> {
  const result = await lighthouse(`${base}${spec.path}`, {
    port: chrome.port,
    output: ["html", "json"],
    onlyCategories: [...CATEGORIES],
    logLevel: "error",
    // The reviewer's token must survive to the page; no other storage is set before a run.
    disableStorageReset: true,
  });
  if (!result) throw new Error(`Lighthouse gave no result for ${spec.path}`);
  const { lhr, report } = result;
  if (lhr.runtimeError) throw new Error(`Lighthouse: ${spec.path}: ${lhr.runtimeError.message}`);
  const scores = Object.fromEntries(CATEGORIES.map((c) => [c, lhr.categories[c]?.score ?? 0])) as Measured["scores"];
  // What pulls a category below 1, so that a failure says why.
  const failing = CATEGORIES.flatMap((c) =>
    (lhr.categories[c]?.auditRefs ?? [])
      .filter((ref) => ref.weight > 0 && (lhr.audits[ref.id]?.score ?? 1) < 0.9)
      .map((ref) => `${c}: ${ref.id} (${lhr.audits[ref.id]?.displayValue ?? lhr.audits[ref.id]?.score})`),
  );
  // Signed in, the page reads the queue: without that answer it measured the sign-in form instead.
  if ("signedIn" in spec) {
    const requests = (lhr.audits["network-requests"]?.details as { items?: { url: string; statusCode: number }[] })
      ?.items;
    if (!requests?.some((r) => r.url.includes("/api/v1/reviews/queue") && r.statusCode === 200)) {
      throw new Error("Lighthouse's run of /reviews did not read the queue: it measured the page signed out");
    }
  }
  const [html, json] = report as string[];
  return {
    scores,
    cls: lhr.audits["cumulative-layout-shift"]?.numericValue ?? Number.NaN,
    lcp: lhr.audits["largest-contentful-paint"]?.numericValue ?? Number.NaN,
    tbt: lhr.audits["total-blocking-time"]?.numericValue ?? Number.NaN,
    failing,
    html: html ?? "",
    json: json ?? "",
  };
}

// --- axe-core, screenshots and compression, in playwright-core -------------------------------------

const AXE = readFileSync(fileURLToPath(import.meta.resolve("axe-core/axe.min.js")), "utf8");
/** Answers that must come compressed: the page, its styles, its scripts and the API answers it reads. */
const PAGE_TYPES = new Set(["document", "stylesheet", "script", "fetch", "xhr"]);

interface Inspected {
  violations: string[];
  uncompressed: string[];
}

async function inspect(b: Browser, spec: PageSpec, viewport: typeof PHONE | typeof DESKTOP, size: string) {
  // bypassCSP lets axe's own script in: the pages allow their own scripts only, as they should.
  const context = await b.newContext({ viewport, locale: "en-GB", timezoneId: "UTC", bypassCSP: true });
  const uncompressed: string[] = [];
  try {
    if ("signedIn" in spec) {
      await context.addInitScript(({ key, value }) => sessionStorage.setItem(key, value), {
        key: REVIEWER_TOKEN_KEY,
        value: reviewer,
      });
    }
    const page = await context.newPage();
    page.on("response", async (response) => {
      const type = response.request().resourceType();
      if (!PAGE_TYPES.has(type) || response.status() === 304 || response.status() === 204) return;
      const headers = await response.allHeaders();
      const length = Number(headers["content-length"] ?? Number.NaN);
      // An empty body has nothing to compress.
      if (length === 0) return;
      if (!/^(br|gzip|zstd)$/.test(headers["content-encoding"] ?? "")) {
        uncompressed.push(`${type} ${response.status()} ${response.url().replace(base, "")}`);
      }
    });
    await page.goto(`${base}${spec.path}`, { waitUntil: "load" });
    await page.waitForLoadState("networkidle");
    await ready(page, spec);
    await page.addScriptTag({ content: AXE });
    const violations = await page.evaluate(async () => {
      const axe = (window as unknown as { axe: { run(): Promise<{ violations: any[] }> } }).axe;
      const { violations } = await axe.run();
      return violations.map(
        (v) => `${v.id} (${v.impact}): ${v.help} — ${v.nodes.map((n: any) => n.target.join(" ")).join(", ")}`,
      );
    });
    await page.screenshot({ path: `${ARTIFACTS}lighthouse-${spec.name}-${size}.png`, fullPage: true });
    return { violations, uncompressed } satisfies Inspected;
  } finally {
    await context.close();
  }
}

/** What shows the page has drawn its content, so that axe and the screenshot see the whole page. */
async function ready(page: Page, spec: PageSpec): Promise<void> {
  const WAIT = { timeout: 15_000 };
  if (spec.name === "directory") await page.locator(".card").first().waitFor(WAIT);
  if (spec.name === "profile") await page.locator("h1", { hasText: "Route Planner" }).waitFor(WAIT);
  if (spec.name === "intake") await page.locator("form").first().waitFor(WAIT);
  // Signed in, the queue shows rows, not the sign-in form.
  if (spec.name === "reviews") await page.locator("tbody.review").first().waitFor(WAIT);
}

// --- the run ---------------------------------------------------------------------------------------

const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)] ?? Number.NaN;
const pct = (score: number) => String(Math.round(score * 100));
const rows: string[][] = [];

try {
  for (const spec of PAGES) {
    const runs: Measured[] = [];
    for (let i = 0; i < RUNS; i++) {
      const m = await measure(spec);
      log(
        `${spec.name} run ${i + 1}/${RUNS}: ${CATEGORIES.map((c) => `${c} ${pct(m.scores[c])}`).join(", ")}, CLS ${m.cls.toFixed(3)}, LCP ${Math.round(m.lcp)} ms, TBT ${Math.round(m.tbt)} ms`,
      );
      runs.push(m);
    }
    // The run of median performance, as Lighthouse's own advice picks it; its report is the one kept.
    const byPerformance = [...runs].sort((a, b) => a.scores.performance - b.scores.performance);
    const chosen = byPerformance[Math.floor(runs.length / 2)] as Measured;
    writeFileSync(`${ARTIFACTS}lighthouse-${spec.name}.html`, chosen.html);
    writeFileSync(`${ARTIFACTS}lighthouse-${spec.name}.json`, chosen.json);
    const cls = median(runs.map((r) => r.cls));

    const phone = await inspect(browser, spec, PHONE, "phone");
    const desktop = await inspect(browser, spec, DESKTOP, "desktop");

    const problems: string[] = [];
    for (const c of CATEGORIES)
      if (chosen.scores[c] < BAR) problems.push(`${c} ${pct(chosen.scores[c])} < ${pct(BAR)}`);
    if (!(cls < CLS_BAR)) problems.push(`CLS ${cls.toFixed(3)} ≥ ${CLS_BAR}`);
    for (const v of phone.violations) problems.push(`axe (phone): ${v}`);
    for (const v of desktop.violations) problems.push(`axe (desktop): ${v}`);
    for (const u of new Set([...phone.uncompressed, ...desktop.uncompressed])) problems.push(`not compressed: ${u}`);
    if (problems.length) {
      failures.push(...problems.map((p) => `${spec.name} (${spec.path}): ${p}`));
      failures.push(...chosen.failing.map((f) => `${spec.name}:   audit below 0.9 — ${f}`));
    }
    rows.push([
      spec.name,
      ...CATEGORIES.map((c) => `${pct(chosen.scores[c])} (${runs.map((r) => pct(r.scores[c])).join("/")})`),
      cls.toFixed(3),
      String(phone.violations.length + desktop.violations.length),
      phone.uncompressed.length + desktop.uncompressed.length ? "NO" : "yes",
      problems.length ? "FAIL" : "ok",
    ]);
  }
} catch (error) {
  failures.push(`run failed: ${(error as Error).stack ?? error}`);
} finally {
  await browser.close().catch(() => {});
  chrome.process.kill();
  server.closeAllConnections();
  await new Promise<void>((resolve) => server.close(() => resolve()));
  await app.dispose();
  await db.$disconnect();
  rmSync(folder, { recursive: true, force: true });
}

const header = ["page", "perf", "a11y", "best pr.", "SEO", "CLS", "axe", "compressed", ""];
const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => (r[i] ?? "").length)));
const line = (cells: string[]) =>
  cells
    .map((c, i) => c.padEnd(widths[i] ?? 0))
    .join("  ")
    .trimEnd();
process.stdout.write(
  `Lighthouse 12, mobile, simulated throttling: median of ${RUNS} run(s) (each run in brackets); bar ${pct(BAR)}, CLS < ${CLS_BAR}; axe at ${PHONE.width}×${PHONE.height} and ${DESKTOP.width}×${DESKTOP.height}\n\n`,
);
process.stdout.write(`${[line(header), ...rows.map(line)].join("\n")}\n\n`);
process.stdout.write(
  `reports and screenshots: ${ARTIFACTS} · ${((performance.now() - started) / 1000).toFixed(0)} s\n`,
);
if (failures.length) {
  process.stdout.write(`\nFAILED:\n${failures.map((f) => `  ${f}`).join("\n")}\n`);
  process.exitCode = 1;
}
