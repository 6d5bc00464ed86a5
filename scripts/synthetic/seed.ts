/**
 * Migrates a database and fills it with N synthetic agents, through the writer of its dialect.
 *
 * The writers go past Prisma, which would need hours for a million agents, and never write the
 * search indexes, which the database's triggers and generated columns keep. Per agent: the provider
 * row, its `provider_labels`, version 1 with its snapshot, one INTAKE review and its timeline; no
 * access tokens, so the agents cannot write while a reviewer token still reads everything.
 */
import { dialectOf } from "../../src/db/client.ts";
import { migrate } from "../../src/db/migrate.ts";
import { DAY, type SyntheticAgent, syntheticAgent } from "./agent.ts";
import { postgresWriter } from "./writer.postgresql.ts";
import { sqliteWriter } from "./writer.sqlite.ts";

export interface SeedOptions {
  databaseUrl: string;
  count: number;
  /** The PRNG seed (default 1). */
  seed?: number;
  /** The end of the two years the dates spread over (default: today, 00:00 UTC). */
  now?: Date;
  /** Agents per transaction (default 10 000 on SQLite, 5 000 on PostgreSQL). */
  batchSize?: number;
  /** Progress lines (default: none); the CLI passes stderr. */
  log?: (line: string) => void;
  /**
   * Rebuild the plain indexes after the load instead of maintaining them row by row (default: when
   * `count` ≥ 50 000). They are rebuilt even when the load fails.
   */
  rebuildIndexes?: boolean;
}

export interface SeedResult {
  dialect: "sqlite" | "postgresql";
  count: number;
  /** Rows written per table. */
  rows: Record<string, number>;
  /** The first and last provider id given to the agents. */
  ids: [number, number];
  ms: number;
}

/** Migrates the database, then adds `count` synthetic agents. */
export async function seedSynthetic(options: SeedOptions): Promise<SeedResult> {
  const { databaseUrl, count } = options;
  if (!Number.isInteger(count) || count < 0) throw new Error(`count must be a whole number, got ${count}`);
  const seed = options.seed ?? 1;
  const now = (options.now ?? new Date(Math.floor(Date.now() / DAY) * DAY)).getTime();
  const log = options.log ?? (() => {});
  const dialect = dialectOf(databaseUrl);
  await migrate(databaseUrl);
  const started = performance.now();
  const writer = dialect === "postgresql" ? await postgresWriter(databaseUrl) : sqliteWriter(databaseUrl);
  const rows = { providers: 0, provider_labels: 0, provider_versions: 0, reviews: 0, review_events: 0 };
  const batchSize = options.batchSize ?? (dialect === "postgresql" ? 5_000 : 10_000);
  let lastLog = started;
  const rebuild = options.rebuildIndexes ?? count >= 50_000;
  try {
    const base = await writer.nextIds();
    if (rebuild) await writer.dropIndexes();
    for (let from = 0; from < count; from += batchSize) {
      const batch: SyntheticAgent[] = [];
      for (let i = from; i < Math.min(count, from + batchSize); i++) {
        batch.push(syntheticAgent(seed, i, count, { provider: base.provider + i, review: base.review + i }, now));
      }
      await writer.write(batch);
      rows.providers += batch.length;
      rows.reviews += batch.length;
      rows.provider_versions += batch.length;
      for (const a of batch) {
        rows.provider_labels += a.profile.labels.length;
        rows.review_events += a.events.length;
      }
      const t = performance.now();
      if (t - lastLog > 2000 || from + batchSize >= count) {
        lastLog = t;
        log(
          `seed:synthetic ${rows.providers}/${count} agents, ${Math.round(rows.providers / ((t - started) / 1000))} agents/s`,
        );
      }
    }
    if (rebuild) {
      log("seed:synthetic building indexes");
      await writer.restoreIndexes();
    }
    await writer.finish();
    const ms = performance.now() - started;
    const total = Object.values(rows).reduce((a, b) => a + b, 0);
    log(
      `seed:synthetic done: ${count} agents (${total} rows) into ${dialect} in ${(ms / 1000).toFixed(1)} s — ` +
        `${Math.round(count / (ms / 1000))} agents/s, ${Math.round(total / (ms / 1000))} rows/s`,
    );
    return { dialect, count, rows, ids: [base.provider, base.provider + count - 1], ms };
  } finally {
    if (rebuild) await writer.restoreIndexes().catch(() => {});
    await writer.close();
  }
}
