/**
 * Writes synthetic agents into PostgreSQL as multi-row `INSERT … SELECT FROM jsonb_to_recordset($1)`
 * batches, one transaction each, the next batch generated while the last one is sent.
 */
import pg from "pg";
import { mcpReleaseOf, SNAPSHOT_FIELDS, TABLES, type Writer } from "./writer.ts";

export async function postgresWriter(databaseUrl: string): Promise<Writer> {
  const client = new pg.Client({ connectionString: databaseUrl });
  await client.connect();
  await client.query("SET synchronous_commit = off");
  // Batches are sent while the next one is generated; at most two are in flight.
  let inFlight: Promise<unknown>[] = [];
  const send = (sql: string, rows: unknown[]) => client.query(sql, [JSON.stringify(rows)]);
  const insert = (table: string, columns: Record<string, string>) => {
    const names = Object.keys(columns)
      .map((c) => `"${c}"`)
      .join(", ");
    const types = Object.entries(columns)
      .map(([c, t]) => `"${c}" ${t}`)
      .join(", ");
    return `INSERT INTO "${table}" (${names}) SELECT ${names} FROM jsonb_to_recordset($1::jsonb) AS x(${types})`;
  };
  const PROVIDERS = insert("providers", {
    id: "int",
    providerCode: "text",
    name: "text",
    summary: "text",
    description: "text",
    labels: "jsonb",
    agentType: "text",
    visibility: "text",
    trustTier: "text",
    reviewStage: "text",
    contactEmail: "text",
    capabilities: "jsonb",
    models: "jsonb",
    tools: "jsonb",
    endpoint: "jsonb",
    policy: "jsonb",
    roles: "jsonb",
    createdAt: "timestamp(3)",
    updatedAt: "timestamp(3)",
  });
  const LABELS_SQL = insert("provider_labels", { providerId: "int", label: "text" });
  const VERSIONS = insert("provider_versions", {
    providerId: "int",
    version: "int",
    createdAt: "timestamp(3)",
    actor: "text",
    changedFields: "jsonb",
    snapshot: "jsonb",
  });
  const REVIEWS = insert("reviews", {
    id: "int",
    reviewCode: "text",
    providerId: "int",
    kind: "text",
    status: "text",
    priority: "text",
    priorityRank: "int",
    assignedTo: "text",
    createdAt: "timestamp(3)",
    updatedAt: "timestamp(3)",
    decidedAt: "timestamp(3)",
  });
  const EVENTS = insert("review_events", {
    providerId: "int",
    reviewId: "int",
    at: "timestamp(3)",
    kind: "text",
    actor: "text",
    note: "text",
  });
  const MCP = insert("mcp_server_versions", {
    providerId: "int",
    version: "text",
    providerCode: "text",
    profileVersion: "int",
    isLatest: "boolean",
    publishedAt: "timestamp(3)",
    updatedAt: "timestamp(3)",
    statusChangedAt: "timestamp(3)",
  });
  const iso = (ms: number) => new Date(ms).toISOString();
  let dropped: string[] = [];
  return {
    dropIndexes: async () => {
      const { rows } = await client.query(
        `SELECT i.indexname AS name, i.indexdef AS sql FROM pg_indexes i
          JOIN pg_class c ON c.relname = i.indexname AND c.relnamespace = to_regnamespace(i.schemaname)
          JOIN pg_index x ON x.indexrelid = c.oid
         WHERE i.schemaname = current_schema() AND i.tablename = ANY($1) AND NOT x.indisunique AND NOT x.indisprimary`,
        [TABLES],
      );
      dropped = rows.map((r) => String(r.sql));
      for (const r of rows) await client.query(`DROP INDEX "${r.name}"`);
    },
    restoreIndexes: async () => {
      const settled = await Promise.allSettled(inFlight);
      inFlight = [];
      await client.query("ROLLBACK"); // only a warning when no batch failed
      const sqls = dropped;
      dropped = [];
      await client.query("SET maintenance_work_mem = '512MB'");
      for (const sql of sqls) await client.query(sql);
      const failed = settled.find((r) => r.status === "rejected");
      if (failed) throw failed.reason;
    },
    nextIds: async () => {
      const { rows } = await client.query(
        `SELECT (SELECT coalesce(max("id"), 0) FROM "providers") AS p, (SELECT coalesce(max("id"), 0) FROM "reviews") AS r`,
      );
      return { provider: Number(rows[0].p) + 1, review: Number(rows[0].r) + 1 };
    },
    write: async (batch) => {
      const providers = batch.map((a) => ({
        id: a.id,
        providerCode: a.providerCode,
        ...a.profile,
        trustTier: a.trustTier,
        reviewStage: a.reviewStage,
        createdAt: iso(a.createdAt),
        updatedAt: iso(a.updatedAt),
      }));
      const labels = batch.flatMap((a) => a.profile.labels.map((label) => ({ providerId: a.id, label })));
      const versions = batch.map((a) => ({
        providerId: a.id,
        version: 1,
        createdAt: iso(a.createdAt),
        actor: `agent:${a.providerCode}`,
        changedFields: SNAPSHOT_FIELDS,
        snapshot: Object.fromEntries(SNAPSHOT_FIELDS.map((f) => [f, a.profile[f] ?? null])),
      }));
      const reviews = batch.map(({ id, review: r }) => ({
        id: r.id,
        reviewCode: r.reviewCode,
        providerId: id,
        kind: "INTAKE",
        status: r.status,
        priority: r.priority,
        priorityRank: r.priorityRank,
        assignedTo: r.assignedTo,
        createdAt: iso(r.createdAt),
        updatedAt: iso(r.updatedAt),
        decidedAt: r.decidedAt === null ? null : iso(r.decidedAt),
      }));
      const events = batch.flatMap((a) =>
        a.events.map((e) => ({
          providerId: a.id,
          reviewId: e.review ? a.review.id : null,
          at: iso(e.at),
          kind: e.kind,
          actor: e.actor,
          note: e.note,
        })),
      );
      const releases = batch.flatMap((a) => {
        const version = mcpReleaseOf(a);
        const at = iso(a.createdAt);
        return version === null
          ? []
          : [
              {
                providerId: a.id,
                version,
                providerCode: a.providerCode,
                profileVersion: 1,
                isLatest: true,
                publishedAt: at,
                updatedAt: at,
                statusChangedAt: at,
              },
            ];
      });
      // One after the other on the connection; the caller generates the next batch meanwhile.
      const previous = inFlight[inFlight.length - 1] ?? Promise.resolve();
      const done = previous.then(async () => {
        await client.query("BEGIN");
        await send(PROVIDERS, providers);
        await send(LABELS_SQL, labels);
        await send(VERSIONS, versions);
        await send(REVIEWS, reviews);
        await send(EVENTS, events);
        await send(MCP, releases);
        await client.query("COMMIT");
      });
      done.catch(() => {}); // awaited below or in finish(); a failure there rejects the seed
      inFlight.push(done);
      if (inFlight.length >= 2) await inFlight.shift();
    },
    finish: async () => {
      await Promise.all(inFlight);
      inFlight = [];
      for (const table of ["providers", "reviews"]) {
        await client.query(
          `SELECT setval(pg_get_serial_sequence('"${table}"', 'id'), (SELECT coalesce(max("id"), 1) FROM "${table}"))`,
        );
      }
      await client.query(
        `ANALYZE "providers", "provider_labels", "provider_versions", "reviews", "review_events", "mcp_server_versions"`,
      );
    },
    close: async () => {
      await Promise.allSettled(inFlight);
      await client.query("ROLLBACK").catch(() => {});
      await client.end();
    },
  };
}
