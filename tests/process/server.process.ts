/**
 * Real server processes for the process tests: `node dist/main.js`, as `npm start` runs it, on a
 * database of the test's choosing, PORT=0 (main.ts logs the bound URL), stdout kept line by line. Every process and
 * temporary folder made here is registered and removed by `cleanUp()`, which the test files call in
 * `afterAll`, whether the tests passed or not.
 */
import { type ChildProcess, spawn } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { Redis } from "ioredis";
import { copyOfTemplate } from "../database.ts";
import { until } from "../wait.ts";

const ROOT = fileURLToPath(new URL("../../", import.meta.url));
/** The reviewer JWT secret the processes are started with (NODE_ENV=production requires one). */
export const PROCESS_JWT_SECRET = "process-test-secret-0123456789-0123456789";

export interface Server {
  url: string;
  port: number;
  child: ChildProcess;
  /** Every stdout line so far. */
  lines: string[];
  /** Everything written to stderr. */
  stderr: string[];
  /** Resolves with the exit code (null when killed by a signal) and the signal. */
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
}

const children = new Set<ChildProcess>();
const folders = new Set<string>();

/** A fresh folder under the system's temp dir, removed by cleanUp(). */
export function tempDir(prefix = "agent-registry-process-"): string {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  folders.add(dir);
  return dir;
}

/** Starts a server and waits until /ready answers 200. */
export async function startServer(databaseUrl: string, env: Record<string, string> = {}): Promise<Server> {
  const { NODE_OPTIONS: _jestOnly, ...inherited } = process.env;
  // As `npm start` runs it: the build in dist/ (the global setup makes it from src/ for each run).
  const child = spawn(process.execPath, ["--single-threaded-gc", "dist/main.js"], {
    cwd: ROOT,
    env: {
      ...inherited,
      NODE_ENV: "production",
      REVIEWER_JWT_SECRET: PROCESS_JWT_SECRET,
      HOST: "127.0.0.1",
      PORT: "0",
      DATABASE_URL: databaseUrl,
      RATE_LIMITS: "off",
      LOG_LEVEL: "info",
      REDIS_URL: "",
      // The prober would probe the test data's example.com endpoints; the files about it turn it on.
      HEALTH: "off",
      ...env,
    },
    stdio: ["ignore", "pipe", "pipe"],
  });
  children.add(child);
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
    child.once("exit", (code, signal) => {
      children.delete(child);
      resolve({ code, signal });
    }),
  );
  const server: Server = { url: "", port: 0, child, lines: [], stderr: [], exited };
  const listening = new Promise<string>((resolve, reject) => {
    let buffered = "";
    child.stdout?.setEncoding("utf8").on("data", (chunk: string) => {
      buffered += chunk;
      const lines = buffered.split("\n");
      buffered = lines.pop() ?? "";
      for (const line of lines) {
        server.lines.push(line);
        const url = /"msg":"listening","url":"([^"]+)"/.exec(line)?.[1];
        if (url) resolve(url);
      }
    });
    child.stderr?.setEncoding("utf8").on("data", (chunk: string) => server.stderr.push(chunk));
    void exited.then(({ code }) =>
      reject(new Error(`the server exited (${code}) before listening: ${server.stderr.join("")}`)),
    );
  });
  server.url = await listening;
  server.port = Number(new URL(server.url).port);
  await until(
    () =>
      fetch(`${server.url}/ready`).then(
        (r) => r.status === 200,
        () => false,
      ),
    "the server ready",
  );
  return server;
}

/** Waits until a stdout line matches, or fails after `ms`. */
export function waitForLine(server: Server, pattern: RegExp, ms?: number): Promise<string> {
  return until(() => server.lines.find((l) => pattern.test(l)), `a log line matching ${pattern}`, ms);
}

/** SIGTERM, then SIGKILL if it has not exited within `ms`; answers how it exited. */
export async function stopServer(server: Server, ms = 10_000) {
  if (server.child.exitCode === null && server.child.signalCode === null) server.child.kill("SIGTERM");
  const timer = setTimeout(() => server.child.kill("SIGKILL"), ms);
  const how = await server.exited;
  clearTimeout(timer);
  return how;
}

/** Kills every process still running and removes every temporary folder. */
export async function cleanUp(): Promise<void> {
  await Promise.all(
    [...children].map((child) => {
      const gone = new Promise((resolve) => child.once("exit", resolve));
      child.kill("SIGKILL");
      return gone;
    }),
  );
  for (const dir of folders) rmSync(dir, { recursive: true, force: true });
  folders.clear();
}

export interface Answer {
  status: number;
  headers: Headers;
  body: any;
  text: string;
}

/** A JSON request to a server. */
export async function request(
  server: Server,
  method: string,
  path: string,
  options: { body?: unknown; token?: string; headers?: Record<string, string> } = {},
): Promise<Answer> {
  const headers: Record<string, string> = { ...options.headers };
  if (options.token) headers.authorization = `Bearer ${options.token}`;
  if (options.body !== undefined) headers["content-type"] = "application/json";
  const res = await fetch(`${server.url}${path}`, {
    method,
    headers,
    body: options.body === undefined ? undefined : JSON.stringify(options.body),
  });
  const text = await res.text();
  let body: unknown = text;
  try {
    body = JSON.parse(text);
  } catch {}
  return { status: res.status, headers: res.headers, body, text };
}

/** Runs the tasks with at most `limit` in flight. */
export async function pool<T>(tasks: (() => Promise<T>)[], limit: number): Promise<T[]> {
  const results: T[] = new Array(tasks.length);
  let next = 0;
  await Promise.all(
    Array.from({ length: Math.min(limit, tasks.length) }, async () => {
      while (next < tasks.length) {
        const i = next++;
        results[i] = await (tasks[i] as () => Promise<T>)();
      }
    }),
  );
  return results;
}

/** Redis on every development and CI machine (ARCHITECTURE.md). */
export const REDIS_URL = "redis://127.0.0.1:6379";
export interface ReplicaDatabase {
  url: string;
}

/**
 * A migrated PostgreSQL database of the file's own (tests/database.ts), for replicas that share it
 * with Redis: the replica files run when the suite runs on PostgreSQL (jest.config.js). When Redis
 * cannot be reached this fails and says so.
 */
export async function replicaDatabase(): Promise<ReplicaDatabase> {
  const redis = new Redis(REDIS_URL, { lazyConnect: true, connectTimeout: 2000, maxRetriesPerRequest: 1 });
  try {
    await redis.connect();
    await redis.ping();
  } catch (error) {
    throw new Error(`Redis must run at ${REDIS_URL} for this test (ARCHITECTURE.md): ${(error as Error).message}`);
  } finally {
    redis.disconnect();
  }
  return { url: await copyOfTemplate() };
}
