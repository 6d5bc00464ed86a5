/**
 * The run's migrated template (tests/database.ts), which each test file copies: by default a SQLite
 * file; with TEST_DATABASE_URL=postgresql://… the given (throwaway) PostgreSQL database, which
 * .ci/run creates and drops around the run.
 */
import { execFileSync } from "node:child_process";
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { browserPath } from "./browser/browser.path.ts";
import { createTemplate } from "./database.ts";

const ROOT = fileURLToPath(new URL("..", import.meta.url));

export default async function globalSetup() {
  process.env.NODE_ENV = "test";
  // One key file for the run's apps and server processes (src/trust/signing.keys.ts): never ./data,
  // and shared, as production on PostgreSQL requires of replicas.
  process.env.SIGNING_KEYS_FILE ||= join(mkdtempSync(join(tmpdir(), "agent-registry-keys-")), "signing-keys.json");
  process.env.CHROMIUM_PATH = await browserPath();
  // The service as `npm start` runs it, for the files that start server processes (tests/process/server.process.ts).
  // Once per run: a jest that a test starts (tests/process/jest-exit.test.ts) inherits the flag, and
  // must not rebuild dist/ while other files start servers from it.
  if (process.env.TEST_DIST_BUILT !== "1") {
    execFileSync(process.execPath, ["scripts/build.mjs"], { cwd: ROOT, stdio: "ignore" });
    process.env.TEST_DIST_BUILT = "1";
  }
  await createTemplate();
}
