/**
 * The served OpenAPI document lints clean: Redocly's recommended rules (redocly.yaml) and Spectral's
 * OpenAPI rules (.spectral.yaml) report no error and no warning. Both run offline, as installed, on
 * the document /openapi.json serves.
 */
import { execFile } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, test } from "@jest/globals";
import { call } from "../helpers.ts";

const run = promisify(execFile);
const ROOT = process.cwd();
const bin = (name: string) => join(ROOT, "node_modules", ".bin", name);
// No telemetry, no update check: the lint must not reach the network.
const env = { ...process.env, REDOCLY_TELEMETRY: "off", REDOCLY_SUPPRESS_UPDATE_NOTICE: "true", NO_COLOR: "1" };

/** A problem as both tools report it, for a readable failure. */
interface Problem {
  rule: string;
  severity: "error" | "warning";
  at: string;
  message: string;
}

let dir: string;
let file: string;

beforeAll(async () => {
  const served = await call("GET", "/openapi.json");
  expect(served.status).toBe(200);
  dir = mkdtempSync(join(tmpdir(), "registry-openapi-lint-"));
  file = join(dir, "openapi.json");
  writeFileSync(file, served.text);
});

afterAll(() => {
  if (dir) rmSync(dir, { recursive: true, force: true });
});

/** Runs a linter and answers what it printed; it exits non-zero when it finds errors, which its report shows. */
async function lint(command: string, args: string[]): Promise<string> {
  const options = { cwd: dir, env, maxBuffer: 64 * 1024 * 1024 };
  const { stdout } = await run(command, args, options).catch((error: { code?: unknown; stdout?: string }) => {
    if (typeof error.code !== "number") throw error;
    return { stdout: error.stdout ?? "" };
  });
  return stdout;
}

describe("the served OpenAPI document", () => {
  test("Redocly (recommended) reports 0 errors and 0 warnings", async () => {
    const stdout = await lint(bin("redocly"), [
      "lint",
      file,
      `--config=${join(ROOT, "redocly.yaml")}`,
      "--format=json",
    ]);
    const report = JSON.parse(stdout) as {
      totals: { errors: number; warnings: number };
      problems: { ruleId: string; severity: string; message: string; location: { pointer: string }[] }[];
    };
    const problems: Problem[] = report.problems.map((p) => ({
      rule: p.ruleId,
      severity: p.severity === "error" ? "error" : "warning",
      at: p.location[0]?.pointer ?? "",
      message: p.message,
    }));
    expect(problems).toEqual([]);
    expect(report.totals).toMatchObject({ errors: 0, warnings: 0 });
  });

  test("Spectral (spectral:oas) reports 0 errors and 0 warnings", async () => {
    const out = join(dir, "spectral.json");
    await lint(bin("spectral"), [
      "lint",
      file,
      `--ruleset=${join(ROOT, ".spectral.yaml")}`,
      "--format=json",
      `--output=${out}`,
    ]);
    // Severities: 0 error, 1 warning, 2 information, 3 hint.
    const report = JSON.parse(readFileSync(out, "utf8")) as {
      code: string;
      severity: number;
      path: string[];
      message: string;
    }[];
    const problems: Problem[] = report
      .filter((p) => p.severity <= 1)
      .map((p) => ({
        rule: p.code,
        severity: p.severity === 0 ? "error" : "warning",
        at: `#/${p.path.join("/")}`,
        message: p.message,
      }));
    expect(problems).toEqual([]);
  });
});
