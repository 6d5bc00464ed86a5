/**
 * A fake of the official MCP registry's read API (tests/interop/mcp-registry/openapi.yaml: `GET /v0.1/servers`,
 * `…/{serverName}/versions`, `…/{serverName}/versions/{version}`, also under `/v0`): a real HTTP server on
 * 127.0.0.1, with mutations, faults and introspection as methods for tests.
 *
 * Where the document is vague it follows modelcontextprotocol/registry @ 29e32c39 (handlers/v0/servers.go,
 * database/postgres.go, service/registry_service.go, versioning.go): every server version is an item, ordered by
 * (name, version) as plain strings, `nextCursor` being the last item's `name:version` whenever a page is full (so the
 * last page may be empty); `limit` defaults to 30 and outside 1..100 is a 422; `updated_since` keeps what has
 * `updatedAt` strictly after it and forces `include_deleted` (else false) to true, `include_deleted=false` with it
 * being a 400. A new version is the latest only when higher (semver; else by publication time; a semver above a
 * non-semver), a status change moves `isLatest` to the highest version not deleted, and, as there (`UnmarkAsLatest`
 * and `SetLatestVersion` set only `is_latest`; no trigger since migration 003), a flip of `isLatest` leaves
 * `updatedAt` alone, so `updated_since` does not show the demoted version unless the option `touchOnLatestChange`
 * is set. Differences: strings compare by code unit, not PostgreSQL's collation; an entry is ordered, paged and
 * searched under the name and version it was stored with (so a malformed `server` still pages); examples that share
 * a name and a version are renamed `<name>-2`, `-3`, … (with different versions they are versions of one name).
 */
import { readdirSync, readFileSync } from "node:fs";
import { createServer, type IncomingMessage, type Server, type ServerResponse, STATUS_CODES } from "node:http";
import type { AddressInfo } from "node:net";
import { join } from "node:path";

export type ServerJson = Record<string, unknown>;
export type Status = "active" | "deprecated" | "deleted";
export const OFFICIAL = "io.modelcontextprotocol.registry/official";
export const SCHEMA_2025_12_11 = "https://static.modelcontextprotocol.io/schemas/2025-12-11/server.schema.json";

export interface Official {
  status: Status;
  statusChangedAt: string;
  statusMessage?: string;
  publishedAt: string;
  updatedAt: string;
  isLatest: boolean;
}
/** One item of a list: a server version, as the registry answers it. */
export interface Entry {
  server: ServerJson;
  _meta: { [OFFICIAL]: Official };
}

export interface FakeRegistryOptions {
  /** Seed the 32 server.json examples of tests/interop/mcp-registry/examples, in file order. */
  examples?: boolean;
  /** Then this many generated servers (`generatedServer(1…n)`). */
  generated?: number;
  /** The clock's start (default 2026-01-01T00:00:00.000Z); each change without `at` happens `tickMs` later. */
  start?: Date;
  /** Default 1000. */
  tickMs?: number;
  /** A flip of `isLatest` also sets that entry's `updatedAt` (the real registry does not). Default false. */
  touchOnLatestChange?: boolean;
  /** Every request must carry `Authorization: Bearer <bearer>`, or is answered 401 (a private registry). */
  bearer?: string;
}

export type MalformedKind = "missing-name" | "description-type";

interface Rec {
  name: string;
  version: string;
  server: ServerJson;
  status: Status;
  statusMessage: string | undefined;
  statusChangedAt: number;
  publishedAt: number;
  updatedAt: number;
  isLatest: boolean;
  seq: number;
  /** `_meta` keys beside the official one, as another registry's annotations would be. */
  meta?: Record<string, unknown>;
}

const EXAMPLES = join(import.meta.dirname, "..", "interop", "mcp-registry", "examples");

/** Generated server `i`: valid against the 2025-12-11 schema; a remote (streamable-http, sse) or a package (npm, pypi, oci). */
export function generatedServer(i: number, version = `1.0.${i % 10}`): ServerJson {
  const server: ServerJson = {
    $schema: SCHEMA_2025_12_11,
    name: `io.github.gen-${i}/server-${i}`,
    title: `Generated server ${i}`,
    description: `Generated MCP server number ${i}, for the mirror tests`,
    version,
    repository: { url: `https://github.com/gen-${i}/server-${i}`, source: "github" },
  };
  const stdio = { type: "stdio" };
  switch (i % 5) {
    case 0:
      server.remotes = [{ type: "streamable-http", url: `https://gen-${i}.example.com/mcp` }];
      break;
    case 1:
      server.remotes = [{ type: "sse", url: `https://gen-${i}.example.com/sse` }];
      break;
    case 2:
      server.packages = [{ registryType: "npm", identifier: `@gen-${i}/server-${i}`, version, transport: stdio }];
      break;
    case 3:
      server.packages = [{ registryType: "pypi", identifier: `gen-${i}-server`, version, transport: stdio }];
      break;
    default:
      server.packages = [
        { registryType: "oci", identifier: `docker.io/gen-${i}/server-${i}:${version}`, transport: stdio },
      ];
  }
  return server;
}

// ── Versions, as internal/service/versioning.go compares them (golang.org/x/mod/semver) ────────────

const IDENT = "(?:0|[1-9]\\d*|\\d*[A-Za-z-][0-9A-Za-z-]*)";
const SEMVER = new RegExp(
  `^v?(0|[1-9]\\d*)\\.(0|[1-9]\\d*)\\.(0|[1-9]\\d*)(?:-(${IDENT}(?:\\.${IDENT})*))?(?:\\+[0-9A-Za-z-]+(?:\\.[0-9A-Za-z-]+)*)?$`,
);
const numeric = (a: string, b: string) => Math.sign(a.length - b.length) || (a < b ? -1 : a > b ? 1 : 0);

function comparePrerelease(a: string | undefined, b: string | undefined): number {
  if (a === b) return 0;
  if (a === undefined) return 1;
  if (b === undefined) return -1;
  const [x, y] = [a.split("."), b.split(".")];
  for (let i = 0; i < Math.min(x.length, y.length); i++) {
    const [p, q] = [x[i] as string, y[i] as string];
    const [pn, qn] = [/^\d+$/.test(p), /^\d+$/.test(q)];
    const order = pn && qn ? numeric(p, q) : pn ? -1 : qn ? 1 : p < q ? -1 : p > q ? 1 : 0;
    if (order) return order;
  }
  return Math.sign(x.length - y.length);
}

/** CompareVersions: semver against semver; else publication time; a semver is above a non-semver. */
export function compareVersions(v1: string, v2: string, published1: number, published2: number): number {
  const [a, b] = [SEMVER.exec(v1), SEMVER.exec(v2)];
  if (a && b) {
    for (const i of [1, 2, 3]) {
      const order = numeric(a[i] as string, b[i] as string);
      if (order) return order;
    }
    return comparePrerelease(a[4], b[4]);
  }
  if (!a && !b) return Math.sign(published1 - published2);
  return a ? 1 : -1;
}

// ── The registry ─────────────────────────────────────────────────────────────────────────────────

const byKey = (a: Rec, b: Rec) =>
  a.name < b.name ? -1 : a.name > b.name ? 1 : a.version < b.version ? -1 : a.version > b.version ? 1 : 0;
const iso = (ms: number) => new Date(ms).toISOString();
const RFC3339 = /^(\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2})(?:\.(\d+))?(Z|[+-]\d{2}:\d{2})$/;

/** RFC 3339 as Go's time.Parse(time.RFC3339) takes it, to the millisecond (enough: stored times are whole ms). */
function parseTime(text: string): number | undefined {
  const match = RFC3339.exec(text);
  if (!match) return undefined;
  const ms = Date.parse(`${match[1]}.${(match[2] ?? "").padEnd(3, "0").slice(0, 3)}${match[3]}`);
  return Number.isNaN(ms) ? undefined : ms;
}

class Problem {
  constructor(
    readonly status: number,
    readonly detail: string,
    readonly errors?: { message: string; location: string; value: unknown }[],
  ) {}
}

export class FakeRegistry {
  /** Every request received, as its path and query (`/v0.1/servers?limit=100`), faulty answers included. */
  readonly requests: string[] = [];
  /** The `Authorization` header of each request, in the order of `requests` (null: none). */
  readonly authorizations: (string | null)[] = [];
  private readonly bearer: string | undefined;
  private readonly byName = new Map<string, Rec[]>();
  private sorted: Rec[] = [];
  private dirty = false;
  private seq = 0;
  private clock: number;
  private readonly tickMs: number;
  private readonly touchOnLatestChange: boolean;
  private generatedCount = 0;
  private malformedCount = 0;
  private listRequests = 0;
  private readonly failures: number[] = [];
  private readonly failAt = new Map<number, number>();
  private readonly delays: number[] = [];
  private readonly timers = new Set<NodeJS.Timeout>();
  private readonly server: Server;
  private closed = false;
  private port = 0;

  constructor(options: FakeRegistryOptions = {}) {
    this.clock = (options.start ?? new Date("2026-01-01T00:00:00.000Z")).getTime();
    this.tickMs = options.tickMs ?? 1000;
    this.touchOnLatestChange = options.touchOnLatestChange ?? false;
    this.bearer = options.bearer;
    if (options.examples) this.seedExamples();
    if (options.generated) this.generate(options.generated);
    this.server = createServer((req, res) => this.handle(req, res));
  }

  /** Listens on 127.0.0.1, on a port of the system's choosing. */
  async listen(): Promise<this> {
    await new Promise<void>((resolve, reject) => {
      this.server.once("error", reject);
      this.server.listen(0, "127.0.0.1", () => {
        this.server.off("error", reject);
        resolve();
      });
    });
    this.port = (this.server.address() as AddressInfo).port;
    return this;
  }

  /** `http://127.0.0.1:<port>`. */
  get url(): string {
    return `http://127.0.0.1:${this.port}`;
  }

  /** The clock: the time of the last change (or the start); the next change without `at` is `tickMs` later. */
  get now(): Date {
    return new Date(this.clock);
  }

  // ── Mutations ──────────────────────────────────────────────────────────────────────────────────

  /** A new version of a name, or a new name (a copy of `server` is kept); throws if that version exists. */
  publish(server: ServerJson, options: { at?: Date; meta?: Record<string, unknown> } = {}): Entry {
    const { name, version } = server;
    if (typeof name !== "string" || typeof version !== "string") {
      throw new TypeError("publish: server.name and server.version must be strings (see addMalformed)");
    }
    const rec = this.insert(name, version, structuredClone(server), this.tick(options.at));
    if (options.meta) rec.meta = structuredClone(options.meta);
    return this.toEntry(rec);
  }

  /**
   * Sets the status of one version, or of every version whose status or message differs ("all"), as the
   * registry's status endpoints do: `updatedAt` always, `statusChangedAt` when the status changes, the message
   * replaced (removed when not given); then `isLatest` goes to the highest version not deleted. Answers the
   * entries it changed; throws on an unknown name or version.
   */
  setStatus(name: string, version: string | "all", status: Status, message?: string, at?: Date): Entry[] {
    const versions = this.byName.get(name);
    if (!versions) throw new Error(`setStatus: no server ${name}`);
    const targets =
      version === "all"
        ? versions.filter((r) => r.status !== status || r.statusMessage !== message)
        : versions.filter((r) => r.version === version);
    if (version !== "all" && targets.length === 0) throw new Error(`setStatus: no version ${name}@${version}`);
    const t = this.tick(at);
    for (const rec of targets) {
      if (rec.status !== status) rec.statusChangedAt = t;
      rec.status = status;
      rec.statusMessage = message;
      rec.updatedAt = t;
    }
    this.recalculateLatest(versions, t);
    return targets.map((r) => this.toEntry(r));
  }

  /** `n` more generated servers (`generatedServer(k + 1 … k + n)`), one change each. */
  generate(n: number): Entry[] {
    const added: Rec[] = [];
    for (let i = 0; i < n; i++) {
      const server = generatedServer(++this.generatedCount);
      added.push(this.insert(server.name as string, server.version as string, server, this.tick()));
    }
    return added.map((r) => this.toEntry(r));
  }

  /**
   * An entry whose `server` is not a valid server.json, listed like any other: `missing-name` has no `name`
   * (it is stored, ordered and paged under `options.name`, by default `io.github.malformed/server-<k>`);
   * `description-type` has a number for `description`.
   */
  addMalformed(
    kind: MalformedKind = "missing-name",
    options: { name?: string; version?: string; at?: Date } = {},
  ): Entry {
    const name = options.name ?? `io.github.malformed/server-${++this.malformedCount}`;
    const version = options.version ?? "1.0.0";
    const server: ServerJson =
      kind === "missing-name"
        ? { $schema: SCHEMA_2025_12_11, description: "A server without a name", version }
        : { $schema: SCHEMA_2025_12_11, name, description: 42, version };
    return this.toEntry(this.insert(name, version, server, this.tick(options.at)));
  }

  // ── Faults (list requests: GET …/servers) ───────────────────────────────────────────────────────

  /** The next `n` list requests answer `status`, with a problem body. */
  failNext(n = 1, status = 500): void {
    for (let i = 0; i < n; i++) this.failures.push(status);
  }

  /** The `k`-th list request from now (1 = the next) answers `status`; e.g. 3 fails the third page of a run. */
  failAtRequest(k: number, status = 500): void {
    this.failAt.set(this.listRequests + k, status);
  }

  /** The next list request waits `ms` before it answers (a timer that `close` clears). Calls queue up. */
  slowNext(ms: number): void {
    this.delays.push(ms);
  }

  // ── Introspection ──────────────────────────────────────────────────────────────────────────────

  /** Every entry, deleted ones too, in list order (name, version); copies. */
  entries(): Entry[] {
    return this.ordered().map((r) => this.toEntry(r));
  }

  /** The entry flagged `isLatest` of each name, in list order; copies. */
  latest(): Entry[] {
    return this.ordered()
      .filter((r) => r.isLatest)
      .map((r) => this.toEntry(r));
  }

  /** Stops listening and ends every connection, keep-alive and waiting ones too; clears the `slowNext` timers. */
  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    for (const timer of this.timers) clearTimeout(timer);
    this.timers.clear();
    await new Promise<void>((resolve) => {
      this.server.close(() => resolve());
      this.server.closeAllConnections();
    });
  }

  // ── Inside ─────────────────────────────────────────────────────────────────────────────────────

  private tick(at?: Date): number {
    if (at) {
      const t = at.getTime();
      this.clock = Math.max(this.clock, t);
      return t;
    }
    this.clock += this.tickMs;
    return this.clock;
  }

  private seedExamples(): void {
    for (const file of readdirSync(EXAMPLES)
      .filter((f) => f.endsWith(".json"))
      .sort()) {
      const server = JSON.parse(readFileSync(join(EXAMPLES, file), "utf8")) as ServerJson;
      const [base, version] = [server.name as string, server.version as string];
      let name = base;
      for (let k = 2; this.byName.get(name)?.some((r) => r.version === version); k++) name = `${base}-${k}`;
      this.insert(name, version, { ...server, name }, this.tick());
    }
  }

  /** As createServerInTransaction: the new version is the latest when it is above the current latest. */
  private insert(name: string, version: string, server: ServerJson, t: number): Rec {
    const versions = this.byName.get(name) ?? [];
    if (versions.some((r) => r.version === version)) throw new Error(`publish: ${name}@${version} exists`);
    const current = versions.find((r) => r.isLatest);
    const isLatest = !current || compareVersions(version, current.version, t, current.publishedAt) > 0;
    if (isLatest && current) this.flip(current, false, t);
    const rec: Rec = {
      name,
      version,
      server,
      status: "active",
      statusMessage: undefined,
      statusChangedAt: t,
      publishedAt: t,
      updatedAt: t,
      isLatest,
      seq: this.seq++,
    };
    versions.push(rec);
    this.byName.set(name, versions);
    this.sorted.push(rec);
    this.dirty = true;
    return rec;
  }

  /** As recalculateLatest: the highest version not deleted, else the highest deleted one. */
  private recalculateLatest(versions: Rec[], t: number): void {
    const pick = (candidates: Rec[]) =>
      candidates.reduce<Rec | undefined>(
        (best, r) =>
          !best || compareVersions(r.version, best.version, r.publishedAt, best.publishedAt) > 0 ? r : best,
        undefined,
      );
    const winner = pick(versions.filter((r) => r.status !== "deleted")) ?? pick(versions);
    for (const rec of versions) this.flip(rec, rec === winner, t);
  }

  private flip(rec: Rec, isLatest: boolean, t: number): void {
    if (rec.isLatest === isLatest) return;
    rec.isLatest = isLatest;
    if (this.touchOnLatestChange) rec.updatedAt = t;
  }

  private ordered(): Rec[] {
    if (this.dirty) {
      this.sorted.sort(byKey);
      this.dirty = false;
    }
    return this.sorted;
  }

  private toEntry(rec: Rec): Entry {
    const official: Official = {
      status: rec.status,
      statusChangedAt: iso(rec.statusChangedAt),
      ...(rec.statusMessage === undefined ? {} : { statusMessage: rec.statusMessage }),
      publishedAt: iso(rec.publishedAt),
      updatedAt: iso(rec.updatedAt),
      isLatest: rec.isLatest,
    };
    return { server: structuredClone(rec.server), _meta: { ...structuredClone(rec.meta), [OFFICIAL]: official } };
  }

  // ── HTTP ───────────────────────────────────────────────────────────────────────────────────────

  private handle(req: IncomingMessage, res: ServerResponse): void {
    const raw = req.url ?? "/";
    this.requests.push(raw);
    this.authorizations.push(req.headers.authorization ?? null);
    const q = raw.indexOf("?");
    const segments = (q < 0 ? raw : raw.slice(0, q)).split("/");
    const query = new URLSearchParams(q < 0 ? "" : raw.slice(q + 1));
    const route = segments[0] === "" && (segments[1] === "v0.1" || segments[1] === "v0") && segments[2] === "servers";
    try {
      if (!route || !(segments.length === 3 || (segments[4] === "versions" && segments.length <= 6))) {
        throw new Problem(404, "Endpoint not found. See /docs for the API documentation.");
      }
      if (req.method !== "GET") throw new Problem(405, "Method not allowed");
      if (this.bearer !== undefined && req.headers.authorization !== `Bearer ${this.bearer}`) {
        throw new Problem(401, "Unauthorized");
      }
      if (segments.length === 3) {
        this.list(query, res);
        return;
      }
      const name = pathValue(segments[3] as string, "Invalid server name encoding");
      const includeDeleted = parseBool(query, "include_deleted") ?? false;
      if (segments.length === 5) {
        send(res, 200, this.versions(name, includeDeleted));
        return;
      }
      const version = pathValue(segments[5] as string, "Invalid version encoding");
      send(res, 200, this.version(name, version, includeDeleted));
    } catch (error) {
      if (!(error instanceof Problem)) throw error;
      sendProblem(res, error);
    }
  }

  /** The list, after the faults due to this request (a wait, then a failure or the answer). */
  private list(query: URLSearchParams, res: ServerResponse): void {
    const n = ++this.listRequests;
    let failure = this.failAt.get(n);
    this.failAt.delete(n);
    if (failure === undefined) failure = this.failures.shift();
    const answer = () => {
      if (res.destroyed) return;
      if (failure !== undefined) {
        const detail = failure === 500 ? "Failed to get registry list" : `Injected failure (${failure})`;
        sendProblem(res, new Problem(failure, detail));
        return;
      }
      try {
        send(res, 200, this.page(query));
      } catch (error) {
        if (!(error instanceof Problem)) throw error;
        sendProblem(res, error);
      }
    };
    const delay = this.delays.shift();
    if (delay === undefined) {
      answer();
      return;
    }
    const timer = setTimeout(() => {
      this.timers.delete(timer);
      answer();
    }, delay);
    this.timers.add(timer);
  }

  /** ListServersInput and PostgreSQL.ListServers. */
  private page(query: URLSearchParams) {
    const limitText = query.get("limit") || "";
    const limit = limitText === "" ? 30 : Number(limitText);
    if (!/^-?\d+$/.test(limitText || "30")) {
      throw new Problem(422, "validation failed", [
        { message: "invalid integer", location: "query.limit", value: limitText },
      ]);
    }
    if (limit < 1 || limit > 100) {
      const message = limit < 1 ? "expected number >= 1" : "expected number <= 100";
      throw new Problem(422, "validation failed", [{ message, location: "query.limit", value: limit }]);
    }
    const includeDeletedParam = parseBool(query, "include_deleted");
    const sinceText = query.get("updated_since") || "";
    let since: number | undefined;
    if (sinceText) {
      since = parseTime(sinceText);
      if (since === undefined) {
        throw new Problem(
          400,
          "Invalid updated_since format: expected RFC3339 timestamp (e.g., 2025-08-07T13:15:04.280Z)",
        );
      }
      if (includeDeletedParam === false) {
        throw new Problem(
          400,
          "Cannot set include_deleted=false when using updated_since (incremental sync requires deleted servers)",
        );
      }
    }
    const includeDeleted = since !== undefined || (includeDeletedParam ?? false);
    const search = (query.get("search") || "").toLowerCase();
    const version = query.get("version") || "";
    const cursor = query.get("cursor") || "";

    const all = this.ordered();
    let start = 0;
    if (cursor) {
      const colon = cursor.indexOf(":");
      const after: (r: Rec) => boolean =
        colon < 0
          ? (r) => r.name > cursor
          : (r) => byKey(r, { name: cursor.slice(0, colon), version: cursor.slice(colon + 1) } as Rec) > 0;
      let [lo, hi] = [0, all.length];
      while (lo < hi) {
        const mid = (lo + hi) >> 1;
        if (after(all[mid] as Rec)) hi = mid;
        else lo = mid + 1;
      }
      start = lo;
    }
    const servers: Entry[] = [];
    let last: Rec | undefined;
    for (let i = start; i < all.length && servers.length < limit; i++) {
      const r = all[i] as Rec;
      if (since !== undefined && !(r.updatedAt > since)) continue;
      if (search && !r.name.toLowerCase().includes(search)) continue;
      if (version === "latest" ? !r.isLatest : version !== "" && r.version !== version) continue;
      if (!includeDeleted && r.status === "deleted") continue;
      servers.push(this.toEntry(r));
      last = r;
    }
    const nextCursor = last && servers.length >= limit ? `${last.name}:${last.version}` : undefined;
    return { servers, metadata: { ...(nextCursor ? { nextCursor } : {}), count: servers.length } };
  }

  /** GetAllVersionsByServerName: newest publication first; 404 when none is left. */
  private versions(name: string, includeDeleted: boolean) {
    const servers = (this.byName.get(name) ?? [])
      .filter((r) => includeDeleted || r.status !== "deleted")
      .sort((a, b) => b.publishedAt - a.publishedAt || b.seq - a.seq)
      .map((r) => this.toEntry(r));
    if (servers.length === 0) throw new Problem(404, "Server not found");
    return { servers, metadata: { count: servers.length } };
  }

  /** GetServerByName (for `latest`) and GetServerByNameAndVersion. */
  private version(name: string, version: string, includeDeleted: boolean): Entry {
    const rec = (this.byName.get(name) ?? []).find(
      (r) => (version === "latest" ? r.isLatest : r.version === version) && (includeDeleted || r.status !== "deleted"),
    );
    if (!rec) throw new Problem(404, "Server not found");
    return this.toEntry(rec);
  }
}

/** A path segment as the registry reads it: Go's mux unescapes it, then the handler's url.PathUnescape again. */
function pathValue(segment: string, detail: string): string {
  try {
    return decodeURIComponent(decodeURIComponent(segment));
  } catch {
    throw new Problem(400, detail);
  }
}

/** A boolean query parameter as huma takes it (strconv.ParseBool); undefined when absent or empty. */
function parseBool(query: URLSearchParams, name: string): boolean | undefined {
  const text = query.get(name) || "";
  if (text === "") return undefined;
  if (["1", "t", "T", "true", "TRUE", "True"].includes(text)) return true;
  if (["0", "f", "F", "false", "FALSE", "False"].includes(text)) return false;
  throw new Problem(422, "validation failed", [{ message: "invalid boolean", location: `query.${name}`, value: text }]);
}

function send(res: ServerResponse, status: number, body: unknown, type = "application/json"): void {
  const text = JSON.stringify(body);
  res.writeHead(status, { "content-type": type, "content-length": Buffer.byteLength(text) });
  res.end(text);
}

function sendProblem(res: ServerResponse, problem: Problem): void {
  const { status, detail, errors } = problem;
  const body = { title: STATUS_CODES[status] ?? "Error", status, detail, ...(errors ? { errors } : {}) };
  send(res, status, body, "application/problem+json");
}

/** A fake registry, seeded as asked, listening on 127.0.0.1. */
export function startFakeRegistry(options: FakeRegistryOptions = {}): Promise<FakeRegistry> {
  return new FakeRegistry(options).listen();
}
