/**
 * The suite's databases. The global setup migrates one template per run; each test file that opens
 * a database gets a copy of its own (a file copy on SQLite, `CREATE DATABASE … TEMPLATE` on
 * PostgreSQL), so files run side by side in jest's workers, none sees another's rows, and none pays
 * for the migrations. The global teardown drops the copies.
 *
 * The template is TEST_DATABASE_URL when it names a PostgreSQL database (a throwaway one: .ci/run
 * creates and drops it), else a SQLite file in a folder of the run's own. Files that need PostgreSQL
 * whatever the dialect copy a PostgreSQL template: the same one on PostgreSQL, else one the setup
 * makes on the local server (PG_ADMIN_URL) and the teardown drops.
 */
import { randomBytes } from "node:crypto";
import { copyFileSync, existsSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import pg from "pg";
import { dialectOf, sqlitePath } from "../src/db/client.ts";
import { migrate } from "../src/db/migrate.ts";

/** Where the global setup leaves the templates' URLs for the workers. */
const TEMPLATE = "TEST_TEMPLATE_URL";
const PG_TEMPLATE = "TEST_PG_TEMPLATE_URL";
/** Why there is no PostgreSQL template, when the server could not be reached. */
const PG_UNAVAILABLE = "TEST_PG_UNAVAILABLE";

/** The local PostgreSQL server (ARCHITECTURE.md: every development and CI machine runs one). */
const PG_SERVER_URL = process.env.PG_ADMIN_URL || "postgresql://postgres@127.0.0.1:5432/postgres";

/** A PostgreSQL URL with another database name. */
function withDatabase(url: string, name: string): string {
  const other = new URL(url);
  other.pathname = `/${name}`;
  return other.toString();
}

/**
 * A client of the maintenance database of `url`'s server: databases are created and dropped from
 * there, never from a template, which must have no one connected while it is copied.
 */
function pgAdmin(url: string): pg.Client {
  return new pg.Client({ connectionString: withDatabase(url, "postgres"), connectionTimeoutMillis: 3000 });
}

/** Runs one statement on the maintenance database of `url`'s server. */
async function pgAdminQuery(sql: string, url: string): Promise<void> {
  const admin = pgAdmin(url);
  try {
    await admin.connect();
  } catch (error) {
    throw new Error(`PostgreSQL must run at ${url} for this test (ARCHITECTURE.md): ${(error as Error).message}`);
  }
  try {
    await admin.query(sql);
  } finally {
    await admin.end();
  }
}

/**
 * Global setup: migrates the run's templates and tells the workers where they are — the dialect's
 * (what most files run on), and a PostgreSQL one for the files that need PostgreSQL whatever the
 * dialect (replicas sharing a database, the pool's own checks). On PostgreSQL they are one.
 */
export async function createTemplates(): Promise<void> {
  const given = process.env.TEST_DATABASE_URL;
  if (given && dialectOf(given) === "postgresql") {
    await migrate(given);
    process.env[TEMPLATE] = process.env[PG_TEMPLATE] = given;
    return;
  }
  const sqlite = `file:${join(mkdtempSync(join(tmpdir(), "agent-registry-test-")), "template.db")}`;
  const postgres = withDatabase(PG_SERVER_URL, `registry_test_${process.pid}_${Date.now()}`);
  // Closing the migration's connection checkpoints SQLite's WAL into the file, so a copy is whole.
  const [migrated, made] = await Promise.allSettled([
    migrate(sqlite),
    pgAdminQuery(`CREATE DATABASE "${pgName(postgres)}"`, postgres).then(() => migrate(postgres)),
  ]);
  if (migrated.status === "rejected") throw migrated.reason;
  process.env[TEMPLATE] = sqlite;
  // Without PostgreSQL the rest of the suite still runs; the files that need it fail, saying why.
  if (made.status === "fulfilled") process.env[PG_TEMPLATE] = postgres;
  else process.env[PG_UNAVAILABLE] = String((made.reason as Error).message ?? made.reason);
}

function templateOf(variable: string): string {
  const url = process.env[variable];
  if (url) return url;
  if (variable === PG_TEMPLATE && process.env[PG_UNAVAILABLE]) throw new Error(process.env[PG_UNAVAILABLE]);
  throw new Error(`${variable} is unset: the suite's global setup (tests/global-setup.ts) did not run`);
}

const pgName = (url: string) => decodeURIComponent(new URL(url).pathname.slice(1));

/** A fresh copy of the dialect's template, for one test file (or one test that needs a database of its own). */
export function copyOfTemplate(): Promise<string> {
  return copyOf(templateOf(TEMPLATE));
}

/**
 * A fresh, migrated PostgreSQL database whatever the suite's dialect: for replicas that share one,
 * and for checks of PostgreSQL itself. Dropped with the others by the global teardown, never by the
 * file: a drop waits for a checkpoint, which on a busy machine can take longer than a hook may.
 */
export function copyOfPgTemplate(): Promise<string> {
  return copyOf(templateOf(PG_TEMPLATE));
}

async function copyOf(source: string): Promise<string> {
  const suffix = randomBytes(5).toString("hex");
  if (dialectOf(source) === "sqlite") {
    const from = sqlitePath(source);
    const to = join(dirname(from), `copy-${suffix}.db`);
    copyFileSync(from, to);
    if (existsSync(`${from}-wal`)) copyFileSync(`${from}-wal`, `${to}-wal`);
    return `file:${to}`;
  }
  const name = `${pgName(source)}_${suffix}`;
  await pgAdminQuery(`CREATE DATABASE "${name}" TEMPLATE "${pgName(source)}"`, source);
  return withDatabase(source, name);
}

/** Global teardown: drops every copy, and the templates the setup made (a given one is .ci/run's to drop). */
export async function dropCopies(): Promise<void> {
  const sqlite = process.env[TEMPLATE];
  if (sqlite && dialectOf(sqlite) === "sqlite") rmSync(dirname(sqlitePath(sqlite)), { recursive: true, force: true });
  const postgres = process.env[PG_TEMPLATE];
  if (!postgres) return;
  const admin = pgAdmin(postgres);
  await admin.connect();
  try {
    const { rows } = await admin.query<{ datname: string }>("SELECT datname FROM pg_database");
    const name = pgName(postgres);
    const copy = new RegExp(`^${name.replace(/\W/g, "\\$&")}_[0-9a-f]{10}$`);
    const made = postgres !== process.env.TEST_DATABASE_URL;
    for (const { datname } of rows.filter((r) => copy.test(r.datname) || (made && r.datname === name)))
      await admin.query(`DROP DATABASE IF EXISTS "${datname}" WITH (FORCE)`);
  } finally {
    await admin.end();
  }
}
