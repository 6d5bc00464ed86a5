/**
 * The bare baseline of the benchmark: `node:http` and `better-sqlite3`, nothing else,
 * serving the anonymous provider detail, list (with filters) and search answers of the service with
 * hand-written SQL and hand-built JSON — what one Node process can do on this database, the limit
 * the service is measured against. Same database, same pragmas, same statements as the service's
 * one-round-trip reads (src/providers/provider.store.ts, provider.search.store.ts), same answer fields.
 * No validation beyond what these few routes need, no logging, no limits: a yardstick, not a service.
 *
 *   DATABASE_URL=file:./data/bench/sqlite-1000.db PORT=4100 node --import tsx tests/bench/bare.server.ts
 */
import { createServer, type ServerResponse } from "node:http";
import { setFlagsFromString } from "node:v8";
import Database from "better-sqlite3";

// The service's runtime setting (src/main.ts): the yardstick runs with the same V8 as the service.
setFlagsFromString("--no-allocation-site-pretenuring");

const path = (process.env.DATABASE_URL ?? "").replace(/^file:/, "");
const db = new Database(path);
db.pragma("journal_mode = WAL");
db.pragma("cache_size = -65536");
db.pragma("busy_timeout = 5000");

const SUMMARY = `p."providerCode", p."name", p."summary", p."agentType", p."visibility", p."trustTier", p."reviewStage", p."labels", p."endpoint", p."updatedAt", p."id", p."lifecycle", p."lifecycleMessage", p."successorCode", p."publisherVerified"`;

const detail = db.prepare(`
  SELECT p."id", p."providerCode", p."name", p."summary", p."description", p."labels", p."agentType", p."visibility",
         p."trustTier", p."reviewStage", p."capabilities", p."models", p."tools", p."endpoint", p."policy", p."roles",
         p."version", p."createdAt", p."updatedAt", p."lifecycle", p."lifecycleMessage", p."successorCode",
         (SELECT json_group_array(s."providerCode" ORDER BY s."providerCode") FROM (
            SELECT "providerCode" FROM "providers" AS s0 WHERE s0."successorCode" = p."providerCode"
              AND s0."visibility" <> 'PRIVATE' AND s0."reviewStage" NOT IN ('REJECTED', 'SUSPENDED')
            ORDER BY s0."providerCode" LIMIT 100) AS s) AS "predecessors",
         (SELECT json_group_array(json_object('at', e."at", 'kind', e."kind", 'actor', e."actor") ORDER BY e."id")
            FROM "review_events" AS e WHERE e."providerId" = p."id") AS "timeline"
  FROM "providers" AS p WHERE p."providerCode" = ?`);

const LISTED = `p."visibility" = 'PUBLIC' AND p."reviewStage" = 'APPROVED' AND p."lifecycle" IN ('ACTIVE', 'DEPRECATED')`;

/** The filters of the list: the anonymous visibility rule and the given arguments. */
function filters(query: URLSearchParams): { sql: string; args: unknown[] } {
  const parts = [LISTED];
  const args: unknown[] = [];
  for (const name of ["agentType", "trustTier"]) {
    const value = query.get(name);
    if (value) {
      parts.push(`p."${name}" = ?`);
      args.push(value);
    }
  }
  for (const label of (query.get("labels") ?? "").split(",").filter(Boolean)) {
    parts.push(`EXISTS (SELECT 1 FROM "provider_labels" AS pl WHERE pl."providerId" = p."id" AND pl."label" = ?)`);
    args.push(label);
  }
  return { sql: parts.join(" AND "), args };
}

const statements = new Map<string, Database.Statement>();
function prepared(sql: string): Database.Statement {
  let statement = statements.get(sql);
  if (!statement) {
    statement = db.prepare(sql);
    statements.set(sql, statement);
  }
  return statement;
}

const WINDOW = 250;
const SCORED = [
  ["providerCode", 10],
  ["name", 10],
  ["labels", 5],
  ["summary", 2],
] as const;

function summaryJson(row: Record<string, unknown>) {
  return {
    providerCode: row.providerCode,
    name: row.name,
    summary: row.summary,
    agentType: row.agentType,
    visibility: row.visibility,
    trustTier: row.trustTier,
    reviewStage: row.reviewStage,
    labels: JSON.parse(row.labels as string),
    endpoint: { protocol: (JSON.parse(row.endpoint as string) as { protocol: string }).protocol },
    updatedAt: new Date(row.updatedAt as string).toISOString(),
    lifecycle: row.lifecycle,
    lifecycleMessage: row.lifecycleMessage,
    successorCode: row.successorCode,
    publisherVerified: row.publisherVerified === 1,
  };
}

function list(query: URLSearchParams): unknown {
  const limit = Math.min(100, Math.max(1, Number(query.get("limit") ?? 20)));
  const where = filters(query);
  const words = (query.get("search") ?? "")
    .toLowerCase()
    .split(/[^\p{L}\p{N}]+/u)
    .filter(Boolean);
  let rows: Record<string, unknown>[];
  if (words.length === 0) {
    rows = prepared(
      `SELECT ${SUMMARY} FROM "providers" AS p WHERE ${where.sql} ORDER BY p."updatedAt" DESC, p."id" DESC LIMIT ?`,
    ).all(...where.args, limit + 1) as Record<string, unknown>[];
  } else {
    // The service's ranked search (first page): blocks of the newest 250 matches, best first.
    const score = words
      .flatMap(() => SCORED.map(([field, weight]) => `${weight} * ((' ' || lower(p."${field}")) GLOB ?)`))
      .join(" + ");
    const match = words.map((w) => `"${w}"*`).join(" AND ");
    rows = prepared(`
      WITH "c" AS MATERIALIZED (
        SELECT "provider_search"."rowid" AS "id", ${score} AS "score"
        FROM "provider_search" JOIN "providers" AS p ON p."id" = "provider_search"."rowid"
        WHERE "provider_search" MATCH ? AND ${where.sql}
        ORDER BY "provider_search"."rowid" DESC LIMIT ${WINDOW * 2}
      )
      SELECT ${SUMMARY} FROM (
        SELECT "id", "score", (row_number() OVER (ORDER BY "id" DESC) - 1) / ${WINDOW} AS "block" FROM "c"
        ORDER BY "block" ASC, "score" DESC, "id" DESC LIMIT ?
      ) AS "top" JOIN "providers" AS p ON p."id" = "top"."id"
      ORDER BY "top"."block" ASC, "top"."score" DESC, "top"."id" DESC`).all(
      ...words.flatMap((w) => SCORED.map(() => `*[^a-z0-9]${w}*`)),
      match,
      ...where.args,
      limit + 1,
    ) as Record<string, unknown>[];
  }
  const items = rows.slice(0, limit).map(summaryJson);
  const last = rows[limit - 1];
  const nextCursor =
    rows.length > limit && last
      ? Buffer.from(JSON.stringify([new Date(last.updatedAt as string).toISOString(), last.id])).toString("base64url")
      : null;
  return { items, nextCursor };
}

function profile(code: string): unknown | null {
  const row = detail.get(code) as Record<string, unknown> | undefined;
  if (!row || row.reviewStage === "REJECTED" || row.reviewStage === "SUSPENDED") return null;
  const timeline = JSON.parse(row.timeline as string) as { at: string; kind: string; actor: string }[];
  return {
    providerCode: row.providerCode,
    name: row.name,
    summary: row.summary,
    description: row.description,
    labels: JSON.parse(row.labels as string),
    agentType: row.agentType,
    visibility: row.visibility,
    trustTier: row.trustTier,
    reviewStage: row.reviewStage,
    contactEmail: null,
    capabilities: JSON.parse(row.capabilities as string),
    models: JSON.parse(row.models as string),
    tools: JSON.parse(row.tools as string),
    endpoint: JSON.parse(row.endpoint as string),
    policy: row.policy === null ? null : JSON.parse(row.policy as string),
    roles: JSON.parse(row.roles as string),
    tokens: null,
    reviewTimeline: timeline.map((e) => ({
      at: new Date(e.at).toISOString(),
      kind: e.kind,
      actor: e.actor.startsWith("reviewer:") ? "reviewer" : e.actor,
      note: null,
    })),
    lifecycle: row.lifecycle,
    lifecycleMessage: row.lifecycleMessage,
    successorCode: row.successorCode,
    predecessors: JSON.parse(row.predecessors as string),
    version: row.version,
    createdAt: new Date(row.createdAt as string).toISOString(),
    updatedAt: new Date(row.updatedAt as string).toISOString(),
  };
}

function send(res: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}): void {
  const text = JSON.stringify(body);
  res.writeHead(status, { "Content-Type": "application/json", "Content-Length": Buffer.byteLength(text), ...headers });
  res.end(text);
}

const server = createServer((req, res) => {
  const url = new URL(req.url ?? "/", "http://bare");
  const match = /^\/api\/v1\/providers(?:\/([a-z0-9-]+))?$/.exec(url.pathname);
  if (req.method !== "GET" || !match) return send(res, 404, { code: "NOT_FOUND" });
  try {
    if (match[1] === undefined) return send(res, 200, list(url.searchParams));
    const answer = profile(match[1]);
    if (!answer) return send(res, 404, { code: "NOT_FOUND" });
    return send(res, 200, answer, { ETag: `"${(answer as { version: number }).version}"` });
  } catch (error) {
    process.stderr.write(`${(error as Error).stack}\n`);
    return send(res, 500, { code: "INTERNAL" });
  }
});

server.listen(Number(process.env.PORT ?? 4100), process.env.HOST ?? "127.0.0.1", () => {
  process.stdout.write(`${JSON.stringify({ msg: "listening", port: (server.address() as { port: number }).port })}\n`);
});
process.on("SIGTERM", () => {
  server.close();
  server.closeAllConnections();
  db.close();
  process.exit(0);
});
