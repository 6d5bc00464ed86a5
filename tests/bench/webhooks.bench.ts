/**
 * Webhook deliveries of one replica to a local receiver, end to end: fan-out from the event log,
 * claims under a lease, a signed POST through the outbound door, the attempt recorded.
 *
 *   npx tsx tests/bench/webhooks.bench.ts [--events 500] [--subscriptions 10] [--rate 200] [--seconds 10]
 *                                          [--database postgresql://…]
 *
 * The service runs as a real process (`node --import tsx src/main.ts`, pinned to core 0 with
 * `taskset -c 0` where there is one) with NODE_ENV=test, the only setting in which OUTBOUND_TEST_HOSTS
 * may send https://hooks.test to the receiver here (a node:http server answering 204 at once).
 *
 * 1. Backlog: a first process with its worker off (WEBHOOK_POLL_INTERVAL_MS=0) takes `subscriptions`
 *    reviewer subscriptions and `events` PATCHes; a second one, worker on, then delivers all of them
 *    (events × subscriptions): deliveries/s from its start to the last delivery received.
 * 2. Sustained: the same process, PATCHes at `rate / subscriptions` per second for `seconds`, so
 *    `rate` deliveries/s are asked for: deliveries/s achieved, and the delay from a PATCH's answer to
 *    the receipt of each of its deliveries (p50, p99).
 * Results: tests/bench/results/webhooks-{sqlite,postgresql}.md. The database is a fresh SQLite file unless --database names
 * a (throwaway) PostgreSQL one.
 */
import { type ChildProcess, execFileSync, spawn } from "node:child_process";
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { cpus, tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { parseArgs } from "node:util";
import { signReviewerToken } from "../../src/auth/reviewer.jwt.ts";
import { loadConfig } from "../../src/config.ts";
import { migrate } from "../../src/db/migrate.ts";

const ROOT = fileURLToPath(new URL("../../", import.meta.url));
const JWT_SECRET = "bench-reviewer-secret-0123456789-0123456789";

const { values } = parseArgs({
  options: {
    events: { type: "string", default: "500" },
    subscriptions: { type: "string", default: "10" },
    rate: { type: "string", default: "200" },
    seconds: { type: "string", default: "10" },
    database: { type: "string" },
  },
});
const EVENTS = Number(values.events);
const SUBSCRIPTIONS = Number(values.subscriptions);
const RATE = Number(values.rate);
const SECONDS = Number(values.seconds);

// The receiver: answers 204 at once and notes when each message first arrived, and which change it carries.
const firstSeen = new Map<string, number>();
const changeOf = new Map<string, string>();
let requests = 0;
const receiver = createServer((req, res) => {
  const chunks: Buffer[] = [];
  req.on("data", (c: Buffer) => chunks.push(c));
  req.on("end", () => {
    requests += 1;
    const id = `${req.url} ${req.headers["webhook-id"]}`;
    if (!firstSeen.has(id)) {
      firstSeen.set(id, performance.now());
      const body = Buffer.concat(chunks).toString("utf8");
      changeOf.set(id, /"Change (\d+)"/.exec(body)?.[1] ?? "");
    }
    res.writeHead(204).end();
  });
});
await new Promise<void>((resolve) => receiver.listen(0, "127.0.0.1", resolve));
const receiverPort = (receiver.address() as AddressInfo).port;

const folder = mkdtempSync(join(tmpdir(), "agent-registry-webhooks-bench-"));
const databaseUrl = values.database ?? `file:${join(folder, "bench.db")}`;
await migrate(databaseUrl);

const pin = (() => {
  try {
    execFileSync("taskset", ["-c", "0", "true"]);
    return cpus().length > 1;
  } catch {
    return false;
  }
})();

interface Proc {
  child: ChildProcess;
  url: string;
}

async function start(env: Record<string, string>): Promise<Proc> {
  const { NODE_OPTIONS: _ignored, ...inherited } = process.env;
  const args = ["--single-threaded-gc", "--import", "tsx", "src/main.ts"];
  const child = spawn(pin ? "taskset" : process.execPath, pin ? ["-c", "0", process.execPath, ...args] : args, {
    cwd: ROOT,
    env: {
      ...inherited,
      NODE_ENV: "test",
      REVIEWER_JWT_SECRET: JWT_SECRET,
      HOST: "127.0.0.1",
      PORT: "0",
      DATABASE_URL: databaseUrl,
      REDIS_URL: "",
      SIGNING_KEYS_FILE: join(folder, "keys.json"),
      OUTBOUND_TEST_HOSTS: `hooks.test=127.0.0.1:${receiverPort}`,
      ...env,
    },
    stdio: ["ignore", "pipe", "inherit"],
  });
  const url = await new Promise<string>((resolve, reject) => {
    let buffered = "";
    child.stdout?.setEncoding("utf8").on("data", (chunk: string) => {
      buffered += chunk;
      const found = /"msg":"listening","url":"([^"]+)"/.exec(buffered)?.[1];
      if (found) resolve(found);
    });
    child.once("exit", (code) => reject(new Error(`the server exited (${code})`)));
  });
  return { child, url };
}

async function stop(proc: Proc): Promise<void> {
  const exited = new Promise((resolve) => proc.child.once("exit", resolve));
  proc.child.kill("SIGTERM");
  await exited;
}

async function send(proc: Proc, method: string, path: string, token: string, body: unknown) {
  const res = await fetch(`${proc.url}${path}`, {
    method,
    headers: { authorization: `Bearer ${token}`, "content-type": "application/json" },
    body: JSON.stringify(body),
  });
  const answer = (await res.json()) as Record<string, any>;
  if (res.status >= 300) throw new Error(`${method} ${path}: ${res.status} ${JSON.stringify(answer)}`);
  return answer;
}

const percentile = (sorted: number[], p: number) =>
  sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] ?? Number.NaN;

const reviewer = await signReviewerToken(loadConfig({ NODE_ENV: "test", REVIEWER_JWT_SECRET: JWT_SECRET }), "bench", {
  roles: ["reviewer"],
});

// 1. The backlog, written with no worker running.
const writer = await start({ WEBHOOK_POLL_INTERVAL_MS: "0", LOG_LEVEL: "silent" });
const agent = await fetch(`${writer.url}/api/v1/providers`, {
  method: "POST",
  headers: { "content-type": "application/json" },
  body: JSON.stringify({
    providerCode: `bench-${Date.now()}`,
    name: "Bench Agent",
    summary: "Plans delivery routes across a city",
    agentType: "ASSISTANT",
    contactEmail: "ops@example.com",
    endpoint: { url: "https://agent.example.com/a2a", protocol: "A2A", authScheme: "BEARER" },
  }),
}).then((r) => r.json() as Promise<{ providerCode: string; accessToken: string }>);
for (let i = 0; i < SUBSCRIPTIONS; i++) {
  await send(writer, "POST", "/api/v1/webhooks", reviewer, {
    url: `https://hooks.test/s${i}`,
    providerCode: agent.providerCode,
  });
}
const patch = (proc: Proc, n: number) =>
  send(proc, "PATCH", `/api/v1/providers/${agent.providerCode}`, agent.accessToken, { summary: `Change ${n}` });
let n = 0;
await Promise.all(
  Array.from({ length: 8 }, async () => {
    while (n < EVENTS) await patch(writer, n++);
  }),
);
await stop(writer);

const backlog = EVENTS * SUBSCRIPTIONS;
const started = performance.now();
const worker = await start({ LOG_LEVEL: "silent" });
while (firstSeen.size < backlog) {
  if (performance.now() - started > 300_000) throw new Error(`only ${firstSeen.size} of ${backlog} delivered`);
  await new Promise((r) => setTimeout(r, 20));
}
const backlogMs = Math.max(...firstSeen.values()) - started;
const firstAt = Math.min(...firstSeen.values());
const backlogRate = backlog / (backlogMs / 1000);
const steadyRate = (backlog - 1) / ((Math.max(...firstSeen.values()) - firstAt) / 1000);

// 2. Sustained: `RATE` deliveries/s asked for.
firstSeen.clear();
changeOf.clear();
const patchesPerSecond = RATE / SUBSCRIPTIONS;
const answeredAt = new Map<number, number>();
const sustainedStart = performance.now();
const sends: Promise<unknown>[] = [];
for (let i = 0; i < patchesPerSecond * SECONDS; i++) {
  const due = sustainedStart + (i * 1000) / patchesPerSecond;
  const wait = due - performance.now();
  if (wait > 0) await new Promise((r) => setTimeout(r, wait));
  sends.push(
    patch(worker, 100_000 + i).then(() => {
      answeredAt.set(i, performance.now());
    }),
  );
}
await Promise.all(sends);
const asked = patchesPerSecond * SECONDS * SUBSCRIPTIONS;
while (firstSeen.size < asked) {
  if (performance.now() - sustainedStart > SECONDS * 1000 + 60_000) break;
  await new Promise((r) => setTimeout(r, 20));
}
const sustainedEnd = Math.max(...firstSeen.values());
const sustainedRate = firstSeen.size / ((sustainedEnd - sustainedStart) / 1000);
// Each message's delay from the answer to the PATCH whose change it carries.
const perPatch: number[] = [];
for (const [id, t] of firstSeen) {
  const answered = answeredAt.get(Number(changeOf.get(id)) - 100_000);
  if (answered !== undefined) perPatch.push(Math.max(0, t - answered));
}
perPatch.sort((x, y) => x - y);
await stop(worker);
receiver.close();
rmSync(folder, { recursive: true, force: true });

const dialect = databaseUrl.startsWith("file:") ? "SQLite" : "PostgreSQL";
const lines = [
  `# Webhook deliveries, one replica (${dialect}${pin ? ", pinned to one core" : ""})`,
  "",
  `Receiver on loopback answering 204; ${SUBSCRIPTIONS} subscriptions; WEBHOOK_CONCURRENCY default.`,
  "",
  "| phase | deliveries | deliveries/s | notes |",
  "|---|---|---|---|",
  `| backlog | ${backlog} | ${backlogRate.toFixed(0)} | from process start; ${steadyRate.toFixed(0)}/s from the first delivery to the last |`,
  `| sustained, ${RATE}/s asked | ${firstSeen.size} of ${asked} | ${sustainedRate.toFixed(0)} | PATCH answer → receipt p50 ${percentile(perPatch, 50).toFixed(0)} ms, p99 ${percentile(perPatch, 99).toFixed(0)} ms |`,
  "",
  `Requests the receiver saw: ${requests} (a retry or a duplicate would add to them).`,
];
const results = new URL("./results/", import.meta.url);
mkdirSync(results, { recursive: true });
writeFileSync(new URL(`webhooks-${dialect.toLowerCase()}.md`, results), `${lines.join("\n")}\n`);
console.log(lines.join("\n"));
process.exit(0);
