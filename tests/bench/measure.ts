/**
 * What the benchmarks measure with: the open-model fixed-rate client their latencies come from, and
 * the CPU time of processes (the service's, PostgreSQL's) from /proc. Shared by bench.ts and the
 * scenarios that run as processes of their own (mirror.bench.ts), so that a p99 means the same in each.
 */
import { execFileSync } from "node:child_process";
import { readdirSync, readFileSync } from "node:fs";
import http from "node:http";

export interface Request {
  method: "GET" | "POST" | "PATCH";
  path: string;
  headers?: Record<string, string>;
  /** A fixed body, or one per request (intakes need unique codes). */
  body?: string | (() => string);
  /** Each request as sent (PATCHes go round their agents). */
  setup?: (request: RawRequest) => RawRequest;
}
export interface RawRequest {
  method: string;
  path: string;
  headers: Record<string, string>;
  body?: string;
}

export interface FixedSample {
  /** Answers (2xx) per second of the phase. */
  rps: number;
  p50: number;
  p99: number;
  /** Answers other than 2xx, and errors, during the phase. */
  failures: number;
  /** 2xx answers timed, and the slowest of them (ms). */
  count?: number;
  max?: number;
  /** The failures by status, or by error code for a request that got no answer. */
  failed?: Record<string, number>;
}

export function quantile(sorted: number[], q: number): number {
  if (sorted.length === 0) return Number.NaN;
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil(q * sorted.length) - 1))] as number;
}

/**
 * The fixed-rate phase: one request every 1/rate s, sent whether or not the earlier ones have been
 * answered (an open model), over keep-alive connections; latency from the moment each is sent to
 * its whole answer. autocannon's own rate limit sends each second's quota back to back at the start
 * of the second — a burst at full speed, then silence — which measures a saturated server again.
 * With `stop`, the phase ends when it is aborted, or after `seconds` at the latest; `timed` hears of
 * every answer timed (when it was sent, performance.now(), and its latency).
 */
export async function fixedRate(
  url: string,
  request: Request,
  seconds: number,
  rate: number,
  stop?: AbortSignal,
  timed?: (sentAt: number, ms: number) => void,
  /** Kept-alive connections of the caller's, reused from phase to phase; else this phase's own. */
  shared?: http.Agent,
): Promise<FixedSample> {
  const target = new URL(url);
  const agent = shared ?? new http.Agent({ keepAlive: true, maxSockets: 64 });
  const latencies: number[] = [];
  let failures = 0;
  const failed: Record<string, number> = {};
  const fail = (kind: string) => {
    failures += 1;
    failed[kind] = (failed[kind] ?? 0) + 1;
  };
  const total = Math.max(1, Math.round(seconds * rate));
  const start = performance.now();
  const pending: Promise<void>[] = [];
  for (let i = 0; i < total && !stop?.aborted; i++) {
    const wait = start + (i * 1000) / rate - performance.now();
    if (wait > 0) await new Promise((resolve) => setTimeout(resolve, wait));
    if (stop?.aborted) break;
    let sent: RawRequest = {
      method: request.method,
      path: request.path,
      headers: request.headers ?? {},
      body: typeof request.body === "function" ? request.body() : request.body,
    };
    if (request.setup) sent = request.setup(sent);
    pending.push(
      new Promise<void>((resolve) => {
        const began = performance.now();
        const req = http.request(
          {
            host: target.hostname,
            port: target.port,
            path: sent.path,
            method: sent.method,
            headers: sent.headers,
            agent,
          },
          (res) => {
            res.resume();
            res.once("end", () => {
              if (res.statusCode && res.statusCode >= 200 && res.statusCode < 300) {
                const ms = performance.now() - began;
                latencies.push(ms);
                timed?.(began, ms);
              } else fail(String(res.statusCode));
              resolve();
            });
          },
        );
        req.once("error", (error: NodeJS.ErrnoException) => {
          fail(error.code ?? error.message);
          resolve();
        });
        req.end(sent.body);
      }),
    );
  }
  const elapsed = stop ? (performance.now() - start) / 1000 : seconds;
  await Promise.all(pending);
  if (!shared) agent.destroy();
  return { ...sampleOf(latencies, elapsed), failures, failed };
}

/** The figures of answers' latencies (ms) over `seconds`, failures apart. */
export function sampleOf(latencies: readonly number[], seconds: number): FixedSample {
  const all = [...latencies].sort((a, b) => a - b);
  return {
    rps: all.length / seconds,
    p50: quantile(all, 0.5),
    p99: quantile(all, 0.99),
    failures: 0,
    count: all.length,
    max: all.at(-1) ?? Number.NaN,
  };
}

/** The different values of a list, in their first order, each said once ("; " between: no table cell breaks). */
export const distinct = (values: readonly (number | string)[]) => [...new Set(values.map(String))].join("; ");

/** CPU seconds (user + system) a process has used so far, from /proc (Linux). */
const TICKS_PER_SECOND = Number(execFileSync("getconf", ["CLK_TCK"], { encoding: "utf8" }).trim()) || 100;
export function cpuSeconds(pid: number | string): number {
  const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
  // The fields after the command name (which may hold spaces, inside parentheses): utime is the 14th field.
  const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
  return (Number(fields[11]) + Number(fields[12])) / TICKS_PER_SECOND;
}

/** CPU seconds each of this machine's PostgreSQL processes has used so far, by pid. */
export function postgresCpu(): Map<string, number> {
  const used = new Map<string, number>();
  for (const pid of readdirSync("/proc")) {
    if (!/^\d+$/.test(pid)) continue;
    try {
      if (readFileSync(`/proc/${pid}/comm`, "utf8").trim() === "postgres") used.set(pid, cpuSeconds(pid));
    } catch {
      // The process ended meanwhile.
    }
  }
  return used;
}

/** PostgreSQL's CPU seconds since `before`: a connection opened meanwhile counts whole, one closed meanwhile is lost. */
export function postgresCpuSince(before: Map<string, number>): number {
  let total = 0;
  for (const [pid, seconds] of postgresCpu()) total += seconds - (before.get(pid) ?? 0);
  return total;
}
