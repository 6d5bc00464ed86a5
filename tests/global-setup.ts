/**
 * One migrated database for the run; each test file builds its own data in it. By default a fresh
 * SQLite file; with TEST_DATABASE_URL=postgresql://… the given (throwaway) PostgreSQL database,
 * which .ci/run creates and drops around the run.
 */
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { migrate } from "../src/db/migrate.ts";

export default async function globalSetup() {
  process.env.NODE_ENV = "test";
  process.env.DATABASE_URL =
    process.env.TEST_DATABASE_URL || `file:${join(mkdtempSync(join(tmpdir(), "agent-registry-test-")), "test.db")}`;
  // One key file for the run's apps and server processes (src/trust/signing.keys.ts): never ./data,
  // and shared, as production on PostgreSQL requires of replicas.
  process.env.SIGNING_KEYS_FILE ||= join(mkdtempSync(join(tmpdir(), "agent-registry-keys-")), "signing-keys.json");
  await migrate(process.env.DATABASE_URL);
}
