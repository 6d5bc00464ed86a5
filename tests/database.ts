/**
 * The suite's databases. The global setup migrates one template per run; each test file that opens
 * a database gets a copy of its own (a file copy on SQLite, `CREATE DATABASE … TEMPLATE` on
 * PostgreSQL), so files run side by side in jest's workers, none sees another's rows, and none pays
 * for the migrations. The global teardown drops the copies.
 *
 * The template is TEST_DATABASE_URL when it names a PostgreSQL database (a throwaway one: .ci/run
 * creates and drops it), else a SQLite file in a folder of the run's own.
 */
import { spawn } from "node:child_process";
import { randomBytes } from "node:crypto";
import { copyFileSync, existsSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import pg from "pg";
import { dialectOf, sqlitePath } from "../src/db/client.ts";
import { migrate } from "../src/db/migrate.ts";

/** Where the global setup leaves the template's URL for the workers. */
const TEMPLATE = "TEST_TEMPLATE_URL";

/**
 * Whether the suite runs on PostgreSQL, where the scale-out setup (replicas sharing one database,
 * with Redis) is tested too; the SQLite pass needs neither server.
 */
export const ON_POSTGRES = dialectOf(process.env.TEST_DATABASE_URL || "file:") === "postgresql";

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

/** Global setup: migrates the run's template and tells the workers where it is. */
export async function createTemplate(): Promise<void> {
  const template = ON_POSTGRES
    ? (process.env.TEST_DATABASE_URL as string)
    : `file:${join(mkdtempSync(join(tmpdir(), "agent-registry-test-")), "template.db")}`;
  // Closing the migration's connection checkpoints SQLite's WAL into the file, so a copy is whole.
  await migrate(template);
  process.env[TEMPLATE] = template;
}

const pgName = (url: string) => decodeURIComponent(new URL(url).pathname.slice(1));

/**
 * A fresh copy of the run's template, for one test file (or one test that needs a database of its
 * own). Dropped with the others by the global teardown, never by the file: a drop waits for a
 * checkpoint, which on a busy machine can take longer than a hook may.
 */
export async function copyOfTemplate(): Promise<string> {
  const source = process.env[TEMPLATE];
  if (!source) throw new Error(`${TEMPLATE} is unset: the suite's global setup (tests/global-setup.ts) did not run`);
  const suffix = randomBytes(5).toString("hex");
  if (dialectOf(source) === "sqlite") {
    const from = sqlitePath(source);
    const to = join(dirname(from), `copy-${suffix}.db`);
    copyFileSync(from, to);
    if (existsSync(`${from}-wal`)) copyFileSync(`${from}-wal`, `${to}-wal`);
    return `file:${to}`;
  }
  const name = `${pgName(source)}_${suffix}`;
  const admin = pgAdmin(source);
  await admin.connect();
  try {
    await admin.query(`CREATE DATABASE "${name}" TEMPLATE "${pgName(source)}"`);
  } finally {
    await admin.end();
  }
  return withDatabase(source, name);
}

/**
 * Global teardown: drops every copy (the template itself is .ci/run's to drop on PostgreSQL), those
 * an earlier run left behind included. On PostgreSQL the drops are handed to a detached process
 * (tests/drop-databases.mjs): each waits for a checkpoint, up to a second apiece on a busy machine,
 * and jest would sit that long times a hundred copies after its summary.
 */
export async function dropCopies(): Promise<void> {
  const template = process.env[TEMPLATE];
  if (!template) return;
  if (dialectOf(template) === "sqlite") {
    rmSync(dirname(sqlitePath(template)), { recursive: true, force: true });
    return;
  }
  const admin = pgAdmin(template);
  await admin.connect();
  let copies: string[];
  try {
    const { rows } = await admin.query<{ datname: string }>("SELECT datname FROM pg_database");
    const copy = new RegExp(`^${pgName(template).replace(/\W/g, "\\$&")}_[0-9a-f]{10}$`);
    copies = rows.map((r) => r.datname).filter((name) => copy.test(name));
  } finally {
    await admin.end();
  }
  if (copies.length === 0) return;
  const dropper = fileURLToPath(new URL("./drop-databases.mjs", import.meta.url));
  spawn(process.execPath, [dropper, withDatabase(template, "postgres"), ...copies], {
    detached: true,
    stdio: "ignore",
  }).unref();
}
