/** Writes synthetic agents into a SQLite file with better-sqlite3 prepared statements, one transaction per batch. */
import { mkdirSync } from "node:fs";
import { dirname } from "node:path";
import Database from "better-sqlite3";
import { sqlitePath } from "../../src/db/client.ts";
import type { SyntheticAgent } from "./agent.ts";
import { mcpReleaseOf, SNAPSHOT_FIELDS, TABLES, type Writer } from "./writer.ts";

const CHANGED_FIELDS = JSON.stringify(SNAPSHOT_FIELDS);

/** SQLite stores DateTime as Prisma's driver adapter writes it: ISO-8601 with `+00:00`. */
const sqliteTime = (ms: number) => new Date(ms).toISOString().replace("Z", "+00:00");

export function sqliteWriter(databaseUrl: string): Writer {
  const path = sqlitePath(databaseUrl);
  if (path !== ":memory:") mkdirSync(dirname(path), { recursive: true });
  const db = new Database(path);
  db.pragma("journal_mode = WAL");
  db.pragma("synchronous = OFF"); // this connection only: the seed can be re-run if the machine dies
  db.pragma("cache_size = -1000000");
  db.pragma("temp_store = MEMORY");
  const provider = db.prepare(
    `INSERT INTO "providers" ("id", "providerCode", "name", "summary", "description", "labels", "agentType", "visibility", "trustTier", "reviewStage", "contactEmail", "capabilities", "models", "tools", "endpoint", "policy", "roles", "version", "createdAt", "updatedAt")
     VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, 1, ?, ?)`,
  );
  const label = db.prepare(`INSERT INTO "provider_labels" ("providerId", "label") VALUES (?, ?)`);
  const version = db.prepare(
    `INSERT INTO "provider_versions" ("providerId", "version", "createdAt", "actor", "changedFields", "snapshot") VALUES (?, 1, ?, ?, ?, ?)`,
  );
  const review = db.prepare(
    `INSERT INTO "reviews" ("id", "reviewCode", "providerId", "kind", "status", "priority", "priorityRank", "assignedTo", "createdAt", "updatedAt", "decidedAt")
     VALUES (?, ?, ?, 'INTAKE', ?, ?, ?, ?, ?, ?, ?)`,
  );
  const event = db.prepare(
    `INSERT INTO "review_events" ("providerId", "reviewId", "at", "kind", "actor", "note") VALUES (?, ?, ?, ?, ?, ?)`,
  );
  const mcp = db.prepare(
    `INSERT INTO "mcp_server_versions" ("providerId", "version", "serverName", "providerCode", "profileVersion", "isLatest", "publishedAt", "updatedAt", "statusChangedAt")
     VALUES (?, ?, NULL, ?, 1, 1, ?, ?, ?)`,
  );
  const writeBatch = db.transaction((batch: SyntheticAgent[]) => {
    for (const a of batch) {
      const p = a.profile;
      const json = {
        labels: JSON.stringify(p.labels),
        capabilities: JSON.stringify(p.capabilities),
        models: JSON.stringify(p.models),
        tools: JSON.stringify(p.tools),
        endpoint: JSON.stringify(p.endpoint),
        policy: p.policy === null ? null : JSON.stringify(p.policy),
        roles: JSON.stringify(p.roles),
      };
      const created = sqliteTime(a.createdAt);
      provider.run(
        a.id,
        a.providerCode,
        p.name,
        p.summary,
        p.description,
        json.labels,
        p.agentType,
        p.visibility,
        a.trustTier,
        a.reviewStage,
        p.contactEmail,
        json.capabilities,
        json.models,
        json.tools,
        json.endpoint,
        json.policy,
        json.roles,
        created,
        sqliteTime(a.updatedAt),
      );
      for (const l of p.labels) label.run(a.id, l);
      version.run(a.id, created, `agent:${a.providerCode}`, CHANGED_FIELDS, snapshotJson(p, json));
      const release = mcpReleaseOf(a);
      if (release !== null) mcp.run(a.id, release, a.providerCode, created, created, created);
      const r = a.review;
      review.run(
        r.id,
        r.reviewCode,
        a.id,
        r.status,
        r.priority,
        r.priorityRank,
        r.assignedTo,
        sqliteTime(r.createdAt),
        sqliteTime(r.updatedAt),
        r.decidedAt === null ? null : sqliteTime(r.decidedAt),
      );
      for (const e of a.events) event.run(a.id, e.review ? r.id : null, sqliteTime(e.at), e.kind, e.actor, e.note);
    }
  });
  let dropped: string[] = [];
  return {
    dropIndexes: async () => {
      const list = db
        .prepare(
          `SELECT name, sql FROM sqlite_master WHERE type = 'index' AND sql IS NOT NULL AND sql NOT LIKE 'CREATE UNIQUE%' AND tbl_name IN (${TABLES.map(() => "?").join(", ")})`,
        )
        .all(...TABLES) as { name: string; sql: string }[];
      dropped = list.map((i) => i.sql);
      for (const i of list) db.exec(`DROP INDEX "${i.name}"`);
    },
    restoreIndexes: async () => {
      const sqls = dropped;
      dropped = [];
      for (const sql of sqls) db.exec(sql);
    },
    nextIds: async () => {
      const max = (table: string) =>
        Number((db.prepare(`SELECT coalesce(max("id"), 0) AS m FROM "${table}"`).get() as { m: number }).m);
      return { provider: max("providers") + 1, review: max("reviews") + 1 };
    },
    write: async (batch) => writeBatch(batch),
    finish: async () => {
      // The triggers grew the search index batch by batch into many FTS5 segments with merges
      // pending, a slice of which every later write would pay; a bulk load ends, as the migration
      // that rebuilt the index does, with the index merged into one segment.
      db.exec(`INSERT INTO "provider_search" ("provider_search") VALUES ('optimize')`);
      db.pragma("analysis_limit = 1000");
      db.exec("ANALYZE");
      db.pragma("wal_checkpoint(TRUNCATE)");
    },
    close: async () => {
      db.close();
    },
  };
}

/** The version snapshot: the owner fields in their fixed order, from the already serialised sections. */
function snapshotJson(p: SyntheticAgent["profile"], json: Record<string, string | null>): string {
  const parts = SNAPSHOT_FIELDS.map((f) => `${JSON.stringify(f)}:${json[f] ?? JSON.stringify(p[f] ?? null)}`);
  return `{${parts.join(",")}}`;
}
