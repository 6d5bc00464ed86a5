/** One migrated SQLite database for the run; each test file builds its own data in it. */
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { migrate } from "../src/db.migrate.ts";

export default async function globalSetup() {
  const dir = mkdtempSync(join(tmpdir(), "agent-registry-test-"));
  process.env.DATABASE_URL = `file:${join(dir, "test.db")}`;
  process.env.NODE_ENV = "test";
  await migrate(process.env.DATABASE_URL);
}
