/**
 * The benchmarks' PostgreSQL databases: `agent_registry_bench_<size>` on the server of a URL, seeded
 * by scripts/synthetic/seed.ts (seed 1) and reused while it holds exactly `size` agents, vacuumed
 * and analyzed as autovacuum would have left it (a fresh copy has no visibility map: an index-only
 * scan would read every row, and no statistics for the planner). Shared by bench.ts and
 * search.bench.ts.
 */
import pg from "pg";
import { seedSynthetic } from "../../scripts/synthetic/seed.ts";
import { migrate } from "../../src/db/migrate.ts";

const log = (line: string) => process.stderr.write(`${line}\n`);

/** The URL of a size's database on the server of `serverUrl`. */
export function pgBenchUrl(serverUrl: string, size: number): string {
  const url = new URL(serverUrl);
  url.pathname = `/agent_registry_bench_${size}`;
  return url.toString();
}

/** Runs `work` with a client of `url`, then closes it. */
export async function withPg<T>(url: string, work: (client: pg.Client) => Promise<T>): Promise<T> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    return await work(client);
  } finally {
    await client.end();
  }
}

/** The size's database, seeded unless it holds exactly `size` agents; migrated, vacuumed and analyzed. */
export async function ensurePgSeeded(
  serverUrl: string,
  size: number,
): Promise<{ url: string; seededMs: number | null }> {
  const url = pgBenchUrl(serverUrl, size);
  const name = new URL(url).pathname.slice(1);
  const exists = await withPg(serverUrl, async (admin) => {
    if ((await admin.query("SELECT 1 FROM pg_database WHERE datname = $1", [name])).rowCount !== 1) {
      await admin.query(`CREATE DATABASE "${name}"`);
      return false;
    }
    return true;
  });
  let seededMs: number | null = null;
  if (exists) await migrate(url);
  const n = exists
    ? await withPg(url, async (db) => Number((await db.query(`SELECT count(*) AS n FROM "providers"`)).rows[0].n))
    : -1;
  if (n !== size) {
    if (exists) {
      log(`bench: database ${name} holds ${n} agents, not ${size}: seeding it again`);
      await withPg(serverUrl, async (admin) => {
        await admin.query(`DROP DATABASE "${name}" WITH (FORCE)`);
        await admin.query(`CREATE DATABASE "${name}"`);
      });
    }
    seededMs = (await seedSynthetic({ databaseUrl: url, count: size, log })).ms;
  }
  await withPg(url, (db) => db.query("VACUUM ANALYZE"));
  return { url, seededMs };
}
