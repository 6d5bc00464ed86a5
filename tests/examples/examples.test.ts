/**
 * The examples are real clients: with the app listening on a real socket, their types are generated
 * from what it serves (openapi-typescript from /openapi.json, graphql-codegen from /graphql's
 * introspection) into examples/generated/, they type-check on their own (examples/tsconfig.json), and
 * each runs its whole flow against the server as a separate process, as examples/README.md tells a
 * reader to. A change to the API that breaks a client breaks this test, at the line the client wrote.
 */
import { execFile } from "node:child_process";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, describe, expect, test } from "@jest/globals";
import { type Listening, listen, reviewerToken } from "../helpers.ts";

const ROOT = fileURLToPath(new URL("../../", import.meta.url));
const TIMEOUT = 180_000;

/**
 * Runs `node <args>` from the repository's root, as a reader of examples/README.md runs these commands
 * (an installed command by its node_modules/.bin path), without jest's NODE_OPTIONS. Answers its
 * stdout; fails with everything it printed, so a broken generation or a type error shows where it is.
 */
function node(args: string[], env: Record<string, string> = {}): Promise<string> {
  const { NODE_OPTIONS: _jestOnly, ...inherited } = process.env;
  return new Promise((resolve, reject) => {
    execFile(
      process.execPath,
      args,
      { cwd: ROOT, env: { ...inherited, ...env }, timeout: TIMEOUT },
      (error, stdout, stderr) => {
        if (!error) return resolve(stdout);
        reject(new Error(`node ${args.join(" ")} failed (${error.code ?? error.signal}):\n${stdout}${stderr}`));
      },
    );
  });
}

let server: Listening;
let env: Record<string, string>;

beforeAll(async () => {
  server = await listen();
  env = { REGISTRY_URL: server.url, REVIEWER_TOKEN: await reviewerToken("examples-reviewer") };
  const openapi = `${server.url}/openapi.json`;
  await Promise.all([
    node(["node_modules/.bin/openapi-typescript", openapi, "--output", "examples/generated/openapi.ts"], env),
    node(["node_modules/.bin/graphql-codegen", "--config", "examples/codegen.ts"], env),
  ]);
}, TIMEOUT);

afterAll(() => server?.close());

describe("the examples, generated from the served documents", () => {
  test(
    "type-check on their own, strict",
    async () => {
      await node(["node_modules/.bin/tsc", "-p", "examples/tsconfig.json", "--noEmit"]);
    },
    TIMEOUT,
  );

  test.each([
    ["rest.ts", ["intake", "patch", "versions", "diff", "search", "queue", "assign", "approve"]],
    ["graphql.ts", ["intake", "update", "versions", "diff", "search", "queue", "assign", "approve"]],
  ])(
    "%s runs the whole flow against the live server",
    async (file, steps) => {
      const printed = (await node(["--import", "tsx", `examples/${file}`], env)).trim().split("\n");
      expect(printed.map((line) => line.split(" ")[0])).toEqual(steps);
      expect(printed.find((line) => line.startsWith("search"))).toMatch(/: 3 pages of 1 /);
      expect(printed.at(-1)).toMatch(/APPROVED; \S+ is APPROVED, VERIFIED$/);
    },
    TIMEOUT,
  );
});
