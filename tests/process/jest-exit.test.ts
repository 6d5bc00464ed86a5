/**
 * Jest exits on its own when a file's setup fails after opening things: what a file opens is closed
 * after it whatever happened (tests/helpers.ts, `closeAfterAll`). A real jest run of a fixture file,
 * on a SQLite template of its own; if anything stayed open, jest would never exit and this test
 * would time out.
 */
import { spawn } from "node:child_process";
import { fileURLToPath } from "node:url";
import { expect, test } from "@jest/globals";

const ROOT = fileURLToPath(new URL("../../", import.meta.url));

test("a file whose beforeAll fails after opening a server: reported, and jest exits on its own", async () => {
  const { TEST_DATABASE_URL: _own, TEST_DIALECT_ONLY: _also, ...env } = process.env;
  const child = spawn(
    process.execPath,
    [
      "node_modules/.bin/jest",
      "--runInBand",
      "--rootDir",
      ROOT,
      "--testMatch",
      "<rootDir>/tests/process/fixtures/setup-fails.fixture.ts",
    ],
    { cwd: ROOT, env: { ...env, NODE_OPTIONS: "--experimental-vm-modules" }, stdio: ["ignore", "pipe", "pipe"] },
  );
  let output = "";
  // Jest says so when something keeps it alive past its summary: that, or its exit, ends the wait.
  const stuck = new Promise<"stuck">((resolve) => {
    const read = (chunk: string) => {
      output += chunk;
      if (/did not exit one second/.test(output)) resolve("stuck");
    };
    child.stdout.setEncoding("utf8").on("data", read);
    child.stderr.setEncoding("utf8").on("data", read);
  });
  const code = await Promise.race([new Promise<number | null>((resolve) => child.once("exit", resolve)), stuck]);
  child.kill("SIGKILL");
  expect(output).toContain("setup failed on purpose");
  expect(output).toMatch(/Tests:\s+1 failed, 1 total/);
  expect(output).not.toMatch(/did not exit|failed to exit gracefully|open handle/i);
  expect(code).toBe(1);
  // A whole jest run (its global setup migrates a template) beside the suite's own workers: on a
  // machine busy beyond its cores that took over 30 s.
}, 60_000);
