/**
 * A generated client works: TypeScript types generated from the served OpenAPI document with
 * openapi-typescript type-check a small openapi-fetch program (intake → PATCH → read), and the same
 * program, run against the app, does what its types say.
 */
import { mkdtempSync, rmSync, symlinkSync, unlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { afterAll, beforeAll, describe, expect, test } from "@jest/globals";
import createClient from "openapi-fetch";
import openapiTS, { astToString } from "openapi-typescript";
import ts from "typescript";
import { intakeBody } from "../builders.ts";
import { app, call } from "../helpers.ts";

/** The client program: only type imports, so it runs without resolving a package. */
const CLIENT_PROGRAM = `
import type { Client } from "openapi-fetch";
import type { paths } from "./registry.ts";

export type IntakeBody = paths["/api/v1/providers"]["post"]["requestBody"]["content"]["application/json"];
type PatchBody = paths["/api/v1/providers/{providerCode}"]["patch"]["requestBody"]["content"]["application/json"];

export async function flow(client: Client<paths>, intake: IntakeBody, summary: string) {
  const created = await client.POST("/api/v1/providers", { body: intake });
  if (!created.data) throw new Error(\`intake failed: \${created.response.status} \${JSON.stringify(created.error)}\`);
  const { providerCode, accessToken } = created.data;
  if (!providerCode || !accessToken) throw new Error("intake answered no code or token");

  const updated = await client.PATCH("/api/v1/providers/{providerCode}", {
    params: { path: { providerCode }, header: { "If-Match": '"1"' } },
    headers: { Authorization: \`Bearer \${accessToken}\` },
    body: { summary },
  });
  const version: number | null | undefined = updated.data?.version;
  const problem: string | undefined = updated.error?.code;

  const read = await client.GET("/api/v1/providers/{providerCode}", { params: { path: { providerCode } } });
  const readSummary: string | null | undefined = read.data?.summary;

  return {
    created: { status: created.response.status, providerCode, accessToken },
    updated: { status: updated.response.status, version, etag: updated.response.headers.get("etag"), problem },
    read: { status: read.response.status, summary: readSummary },
  };
}

/** Never run: the generated types refuse what the API refuses. */
export function refused(client: Client<paths>, intake: IntakeBody) {
  const { name: _name, ...withoutName } = intake;
  // @ts-expect-error name is required at intake
  void client.POST("/api/v1/providers", { body: withoutName });
  // @ts-expect-error a mutation takes no query parameters
  void client.POST("/api/v1/providers", { body: intake, params: { query: { name: "x" } } });
  // (openapi-fetch infers its init argument, so an excess key is caught on the body type itself.)
  // @ts-expect-error trustTier is not owner-settable
  const patch: PatchBody = { summary: "s", trustTier: "OFFICIAL" };
  void client.PATCH("/api/v1/providers/{providerCode}", { params: { path: { providerCode: "x" } }, body: patch });
  // @ts-expect-error the path parameter is required
  void client.PATCH("/api/v1/providers/{providerCode}", { body: { summary: "s" } });
  // @ts-expect-error DELETE takes no body
  void client.DELETE("/api/v1/providers/{providerCode}/tokens/{tokenId}", { params: { path: { providerCode: "x", tokenId: "y" } }, body: {} });
  // @ts-expect-error there is no webhook route
  void client.POST("/api/v1/webhook", {});
}
`;

let dir: string;
let registryFile: string;
let clientFile: string;

beforeAll(async () => {
  const spec = await call("GET", "/openapi.json");
  expect(spec.status).toBe(200);
  dir = mkdtempSync(join(tmpdir(), "registry-client-"));
  // The program resolves openapi-fetch's types from the project's node_modules.
  symlinkSync(join(process.cwd(), "node_modules"), join(dir, "node_modules"), "dir");
  writeFileSync(join(dir, "package.json"), JSON.stringify({ type: "module" }));
  registryFile = join(dir, "registry.ts");
  clientFile = join(dir, "client.ts");
  writeFileSync(registryFile, astToString(await openapiTS(spec.body)));
  writeFileSync(clientFile, CLIENT_PROGRAM);
});

afterAll(() => {
  if (!dir) return;
  unlinkSync(join(dir, "node_modules"));
  rmSync(dir, { recursive: true, force: true });
});

describe("generated client", () => {
  test("the generated types type-check the client program", () => {
    const program = ts.createProgram([registryFile, clientFile], {
      strict: true,
      noEmit: true,
      skipLibCheck: true,
      target: ts.ScriptTarget.ES2022,
      module: ts.ModuleKind.NodeNext,
      moduleResolution: ts.ModuleResolutionKind.NodeNext,
      allowImportingTsExtensions: true,
      lib: ["lib.es2022.d.ts", "lib.dom.d.ts"],
      types: [],
    });
    const diagnostics = ts.getPreEmitDiagnostics(program);
    const text = ts.formatDiagnostics(diagnostics, {
      getCanonicalFileName: (f) => f,
      getCurrentDirectory: () => dir,
      getNewLine: () => "\n",
    });
    expect(text).toBe("");
  });

  test("the same program runs against the app: intake → PATCH → read", async () => {
    const client = createClient<any>({
      baseUrl: "http://registry.test",
      fetch: async (request: Request) => app.fetch(request),
    });
    const { flow } = await import(pathToFileURL(clientFile).href);
    const result = await flow(client, intakeBody(), "Plans routes, now with traffic");

    expect(result.created.status).toBe(201);
    expect(result.created.accessToken).toMatch(/^agr_/);
    expect(result.updated).toEqual({ status: 200, version: 2, etag: '"2"', problem: undefined });
    expect(result.read).toEqual({ status: 200, summary: "Plans routes, now with traffic" });
  });
});
