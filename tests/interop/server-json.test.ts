/**
 * server.json both ways, through the front door: `GET /api/v1/providers/{code}/server.json` (and
 * `Query.serverJson`) answers a document valid against the MCP registry's schemas (2025-12-11 and
 * the current draft, kept in ./mcp-registry), and a document imported with
 * `POST /api/v1/providers/import` comes back the same after normalization, but for exactly the
 * pointers the import reported as having no home: for every example of the MCP registry's docs,
 * and for generated documents (a property).
 *
 * Bounded for CI: seed 20261127, 25 documents (~10 s). Another run:
 *   SERVER_JSON_RUNS=200 SERVER_JSON_SEED=7 npm test -- tests/interop/server-json
 */
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, test } from "@jest/globals";
import { Ajv } from "ajv";
import addFormats from "ajv-formats";
import fc from "fast-check";
import { SERVER_SCHEMA_URL } from "../../src/interop/server.json.ts";
import { uniqueCode } from "../builders.ts";
import { approve, call, db, expectProblem, gql, intake, reviewerToken } from "../helpers.ts";

const RUNS = Number(process.env.SERVER_JSON_RUNS ?? 25);
const SEED = Number(process.env.SERVER_JSON_SEED ?? 20261127);

type Json = Record<string, unknown>;
const HERE = join(import.meta.dirname, "mcp-registry");
const read = (file: string) => JSON.parse(readFileSync(join(HERE, file), "utf8"));

// The official schemas, as the MCP registry publishes them (draft-07); `format: uri` checked too.
const ajv = new Ajv({ strict: false, allErrors: true });
addFormats.default(ajv);
const schemas = {
  "2025-12-11": ajv.compile(read("server.schema.2025-12-11.json")),
  draft: ajv.compile(read("server.schema.draft.json")),
};

/** Whether a document is valid against both official schemas; the errors when not. */
function schemaErrors(doc: unknown): unknown[] {
  return Object.entries(schemas).flatMap(([name, validate]) =>
    validate(doc) ? [] : [{ schema: name, errors: validate.errors }],
  );
}

const importDoc = (document: unknown, extra: Json = {}) =>
  call("POST", "/api/v1/providers/import", {
    body: { format: "mcp", document, contactEmail: "servers@example.com", ...extra },
  });
const exportOf = (code: string, token?: string) =>
  call("GET", `/api/v1/providers/${code}/server.json`, token ? { token } : {});

// ── Normalization ───────────────────────────────────────────────────────────────────────────────

const DEFAULTS: Json = { isRequired: false, isSecret: false, isRepeated: false, format: "string" };

/**
 * A server.json in a form that says the same with fewer words: no `$schema`, no member at its
 * schema default, no empty list or object, no title that repeats the name's part after the slash.
 */
function normalize(value: unknown, root = true): unknown {
  if (Array.isArray(value)) return value.map((v) => normalize(v, false));
  if (typeof value !== "object" || value === null) return value;
  const out: Json = {};
  for (const [key, member] of Object.entries(value)) {
    if (root && key === "$schema") continue;
    if (key in DEFAULTS && DEFAULTS[key] === member) continue;
    const normal = normalize(member, false);
    if (typeof normal === "object" && normal !== null && Object.keys(normal).length === 0) continue;
    out[key] = normal;
  }
  if (root && typeof out.name === "string" && out.title === out.name.slice(out.name.indexOf("/") + 1)) {
    delete out.title;
  }
  return out;
}

/** The document without the members at these JSON pointers (list items removed back to front). */
function without(doc: unknown, pointers: string[]): unknown {
  const copy = structuredClone(doc);
  const sorted = [...pointers].sort((a, b) => b.localeCompare(a, "en", { numeric: true }));
  for (const pointer of sorted) {
    const path = pointer
      .split("/")
      .slice(1)
      .map((s) => s.replace(/~1/g, "/").replace(/~0/g, "~"));
    const last = path.pop() as string;
    let node: unknown = copy;
    for (const key of path) node = (node as Json | undefined)?.[key];
    if (Array.isArray(node)) node.splice(Number(last), 1);
    else if (node && typeof node === "object") delete (node as Json)[last];
  }
  return copy;
}

/** The pointers of every member of a document, containers included. */
function pointersOf(value: unknown, at = ""): string[] {
  if (typeof value !== "object" || value === null) return [];
  const entries = Array.isArray(value) ? value.map((v, i) => [String(i), v] as const) : Object.entries(value);
  return entries.flatMap(([key, v]) => {
    const pointer = `${at}/${key.replace(/~/g, "~0").replace(/\//g, "~1")}`;
    return [pointer, ...pointersOf(v, pointer)];
  });
}

/** What a document may hold that a profile never keeps: what the import must report, and nothing else. */
const NO_HOME = [
  /^\/icons(\/|$)/,
  /^\/_meta(\/|$)/,
  /^\/remotes\/[1-9]\d*$/,
  /\/value$/, // a variable's value (constant or a template), or a secret argument's
  /\/variables$/, // a value's own variables (a remote's URL variables are kept: /remotes/0/variables/<name>)
  /\/default$/, // a secret's default
];

/** Imports a document, exports it again, and checks the round trip; answers what the import reported. */
async function roundTrip(doc: Json): Promise<{ unmapped: string[]; exported: Json; providerCode: string }> {
  const imported = await importDoc(doc);
  expect({ status: imported.status, body: imported.status === 201 ? null : imported.body }).toEqual({
    status: 201,
    body: null,
  });
  const { unmapped, provider } = imported.body as { unmapped: string[]; provider: { providerCode: string } };
  const exported = await exportOf(provider.providerCode);
  expect(exported.status).toBe(200);
  expect(exported.headers.get("content-type")).toMatch(/^application\/json/);
  expect(schemaErrors(exported.body)).toEqual([]);
  expect(exported.body.$schema).toBe(SERVER_SCHEMA_URL);
  // Every reported pointer is in the document, and is something a profile has no home for.
  const present = new Set(pointersOf(doc));
  for (const pointer of unmapped) {
    expect({ pointer, present: present.has(pointer) }).toEqual({ pointer, present: true });
    if (pointer !== "/$schema") {
      expect({ pointer, homeless: NO_HOME.some((r) => r.test(pointer)) }).toEqual({ pointer, homeless: true });
    }
  }
  expect(normalize(without(exported.body, unmapped))).toEqual(normalize(without(doc, unmapped)));
  return { unmapped, exported: exported.body, providerCode: provider.providerCode };
}

// ── Every example of the MCP registry's docs ────────────────────────────────────────────────────

const EXAMPLES = readdirSync(join(HERE, "examples"))
  .filter((f) => f.endsWith(".json"))
  .sort();
/** The one example with neither remotes nor packages: nothing a client could reach or start. */
const UNREACHABLE = "14-custom-install-path-no-packages.json";
const RUN = uniqueCode("x").slice(2);

/**
 * An example under a name of its own in this run: the examples share names (03 and 09 are two
 * versions of one server), and one provider holds one name. Only the part after the slash changes.
 */
function example(file: string, tag = file.slice(0, 2)): Json {
  const doc = read(join("examples", file)) as Json;
  return { ...doc, name: `${doc.name}-${RUN}-${tag}` };
}

describe("every example of the MCP registry's docs", () => {
  test("is valid against both schemas as kept here (the check itself can fail)", () => {
    expect(EXAMPLES).toHaveLength(32);
    for (const file of EXAMPLES)
      expect({ file, errors: schemaErrors(read(join("examples", file))) }).toEqual({ file, errors: [] });
    expect(schemaErrors({ name: "no-slash", description: "x", version: "1" })).not.toEqual([]);
  });

  test.each(EXAMPLES.filter((f) => f !== UNREACHABLE))("%s survives import and export", async (file) => {
    const doc = example(file);
    const { unmapped } = await roundTrip(doc);
    // What each example loses, checked by kind: the publisher's _meta, further remotes, values.
    if ("_meta" in doc) expect(unmapped).toContain("/_meta");
    const remotes = (doc.remotes as unknown[] | undefined) ?? [];
    for (let i = 1; i < remotes.length; i++) expect(unmapped).toContain(`/remotes/${i}`);
  });

  test(`${UNREACHABLE} (neither remotes nor packages) is refused, naming both, and registers nothing`, async () => {
    const doc = example(UNREACHABLE);
    const answer = await importDoc(doc);
    expectProblem(answer, 400, "BAD_USER_INPUT");
    expect(answer.body.errors).toEqual([
      expect.objectContaining({ path: "/endpoint", source: "/remotes", message: expect.stringContaining("package") }),
    ]);
    const found = await gql(`query($q: String) { providers(search: $q) { items { providerCode } } }`, {
      q: String(doc.name),
    });
    expect(found.body.data.providers.items).toEqual([]);
  });

  test("what example 11 (a remote and a package) keeps and what it reports", async () => {
    const doc = example("11-hybrid-remote-and-package.json", "kept");
    const { unmapped, exported, providerCode } = await roundTrip(doc);
    expect(unmapped).toEqual(["/remotes/1", "/_meta"]);
    const profile = await call("GET", `/api/v1/providers/${providerCode}`);
    expect(profile.body).toMatchObject({
      name: "Hybrid",
      serverName: doc.name,
      releaseVersion: "1.5.0",
      repository: { url: "https://github.com/example/hybrid-mcp", source: "github", subfolder: null },
      endpoint: {
        url: "https://mcp.anonymous.modelcontextprotocol.io/http",
        protocol: "MCP",
        transport: "STREAMABLE_HTTP",
        authScheme: "API_KEY",
        headers: [
          expect.objectContaining({ name: "X-API-Key", isRequired: true, isSecret: true }),
          expect.objectContaining({
            name: "X-Region",
            default: "us-east-1",
            choices: ["us-east-1", "eu-west-1", "ap-southeast-1"],
          }),
        ],
      },
      packages: [
        expect.objectContaining({
          identifier: "@example/hybrid-mcp-server",
          runCommand: "npx -y @example/hybrid-mcp-server@1.5.0 --mode local",
        }),
      ],
    });
    expect(exported.remotes).toHaveLength(1);
  });
});

// ── Generated documents ─────────────────────────────────────────────────────────────────────────

const pick = <T>(...values: T[]) => fc.constantFrom(...values);
const maybe = <T>(arb: fc.Arbitrary<T>) => fc.option(arb, { nil: undefined });
/** An object without its undefined members (what JSON would carry). */
const defined = (o: Json) => Object.fromEntries(Object.entries(o).filter(([, v]) => v !== undefined));

const input = fc
  .record({
    description: maybe(pick("What it is for", "A token from the dashboard")),
    isRequired: maybe(fc.boolean()),
    format: maybe(pick("string", "number", "boolean", "filepath")),
    placeholder: maybe(pick("e.g. 42")),
  })
  .map(defined);

/** An environment variable or header: some are secrets, some carry what the registry never keeps. */
const variable = (names: string[]) =>
  fc
    .record({
      name: pick(...names),
      input,
      secret: fc.boolean(),
      default: maybe(pick("info", "us-east-1")),
      choices: maybe(pick(["info", "debug"], ["us-east-1", "eu-west-1"])),
      value: maybe(pick("{token}", "fixed")),
    })
    .map(({ name, input, secret, default: d, choices, value }) =>
      defined({ name, ...input, isSecret: secret || undefined, default: d, choices, value }),
    );

const variables = (names: string[]) =>
  fc.uniqueArray(variable(names), { maxLength: 3, selector: (v) => String(v.name).toLowerCase() });

const argument = fc.oneof(
  fc
    .record({
      name: pick("--mode", "--port", "--verbose"),
      input,
      value: maybe(pick("fast")),
      isRepeated: maybe(fc.boolean()),
    })
    .map(({ input, ...a }) => defined({ type: "named", ...a, ...input })),
  fc
    .record({ valueHint: pick("path", "target_dir"), input, value: maybe(pick("mcp", "start")) })
    .map(({ input, ...a }) => defined({ type: "positional", ...a, ...input })),
);

const SHA = "fe333e598595000ae021bd27117db32ec69af6987f507ba7a63c90638ff633ce";
const packageOf = fc.oneof(
  fc.record({
    registryType: pick("npm"),
    identifier: pick("@example/srv", "plain-srv"),
    version: pick("1.0.0", "2.1.0-beta"),
  }),
  fc.record({ registryType: pick("pypi"), identifier: pick("weather-mcp"), version: pick("0.5.0") }),
  fc.record({ registryType: pick("oci"), identifier: pick("ghcr.io/example/srv:1.0.0", "docker.io/example/srv:2") }),
  fc.record({ registryType: pick("nuget"), identifier: pick("Example.Srv"), version: pick("0.4.0-beta") }),
  fc.record({ registryType: pick("mcpb"), identifier: pick("https://example.com/srv.mcpb"), fileSha256: pick(SHA) }),
  fc.record({ registryType: pick("cargo"), identifier: pick("widget-mcp"), version: pick("0.3.0") }),
);
const fullPackage = fc
  .record({
    base: packageOf,
    runtimeHint: maybe(pick("npx", "uvx", "docker")),
    http: fc.boolean(),
    environmentVariables: variables(["API_KEY", "LOG_LEVEL", "port"]),
    packageArguments: fc.array(argument, { maxLength: 2 }),
  })
  .map(({ base, runtimeHint, http, environmentVariables, packageArguments }) => {
    // An HTTP transport's {port} is one of the package's own variables.
    const served = http && environmentVariables.some((v) => v.name === "port");
    return defined({
      ...base,
      runtimeHint,
      transport: served ? { type: "streamable-http", url: "http://localhost:{port}/mcp" } : { type: "stdio" },
      environmentVariables: environmentVariables.length ? environmentVariables : undefined,
      packageArguments: packageArguments.length ? packageArguments : undefined,
    });
  });

const remote = fc
  .record({
    type: pick("streamable-http", "sse"),
    tenant: fc.boolean(),
    headers: variables(["Authorization", "X-API-Key", "X-Region"]),
  })
  .map(({ type, tenant, headers }) =>
    defined({
      type,
      url: tenant ? "https://{tenant}.mcp.example.com/mcp" : "https://mcp.example.com/mcp",
      headers: headers.length ? headers : undefined,
      variables: tenant ? { tenant: { description: "Your tenant", isRequired: true } } : undefined,
    }),
  );

let generated = 0;
const serverDocument = fc
  .record({
    title: maybe(pick("Weather", "Files")),
    description: pick("Weather forecasts for any city", "Reads files.\nWrites them too."),
    version: pick("1.0.2", "0.4.0-beta", "2026.11.27"),
    websiteUrl: maybe(pick("https://example.com/srv")),
    repository: maybe(
      fc
        .record({ id: maybe(pick("b94b5f7e")), subfolder: maybe(pick("src/everything")) })
        .map((r) => defined({ url: "https://github.com/example/srv", source: "github", ...r })),
    ),
    icons: maybe(pick([{ src: "https://example.com/icon.png", sizes: ["48x48"] }])),
    _meta: maybe(pick({ "io.modelcontextprotocol.registry/publisher-provided": { tool: "gen" } })),
    remotes: fc.array(remote, { maxLength: 2 }),
    packages: fc.uniqueArray(fullPackage, {
      maxLength: 3,
      selector: (p) => `${p.registryType} ${p.identifier} ${p.version ?? ""}`,
    }),
  })
  .filter((d) => d.remotes.length + d.packages.length > 0)
  .map((d) =>
    defined({
      $schema: SERVER_SCHEMA_URL,
      name: `io.github.gen/srv-${RUN}-${generated++}`,
      ...d,
      remotes: d.remotes.length ? d.remotes : undefined,
      packages: d.packages.length ? d.packages : undefined,
    }),
  );

describe("generated documents", () => {
  test("the generator makes valid server.json documents (else the property proves little)", () => {
    for (const doc of fc.sample(serverDocument, { numRuns: 50, seed: SEED })) {
      expect(schemaErrors(doc)).toEqual([]);
    }
  });

  test("survive import and export but for exactly what the import reported", async () => {
    await fc.assert(
      fc.asyncProperty(serverDocument, async (doc) => {
        await roundTrip(doc);
      }),
      { numRuns: RUNS, seed: SEED },
    );
  }, 120_000);
});

// ── The export of profiles made otherwise ───────────────────────────────────────────────────────

describe("GET /api/v1/providers/{code}/server.json", () => {
  test("a profile made by intake: the registry's namespace, its profile version, a bearer header", async () => {
    const { providerCode } = await intake({
      name: "Route Planner",
      summary: "Plans routes; ".repeat(10).trim(),
      endpoint: { url: "https://routes.example.com/mcp", protocol: "MCP", authScheme: "BEARER" },
      packages: [{ registryType: "PYPI", identifier: "route-planner", version: "1.2.0", transport: { type: "STDIO" } }],
    });
    const answer = await exportOf(providerCode);
    expect(answer.status).toBe(200);
    expect(schemaErrors(answer.body)).toEqual([]);
    expect(answer.body).toEqual({
      $schema: SERVER_SCHEMA_URL,
      name: `test.registry/${providerCode}`, // the requests go to http://registry.test
      title: "Route Planner",
      description: expect.stringMatching(/^Plans routes; .{80,}…$/),
      version: "1.0.0",
      remotes: [
        {
          type: "streamable-http",
          url: "https://routes.example.com/mcp",
          headers: [{ name: "Authorization", description: "Bearer token", isRequired: true, isSecret: true }],
        },
      ],
      packages: [{ registryType: "pypi", identifier: "route-planner", version: "1.2.0", transport: { type: "stdio" } }],
    });
    expect(answer.body.description.length).toBe(100);
  });

  test("the derived release follows the profile version; a declared one stays put", async () => {
    const { providerCode, accessToken } = await intake({
      endpoint: { url: "https://routes.example.com/mcp", protocol: "MCP", authScheme: "NONE" },
    });
    const patch = (body: Json) => call("PATCH", `/api/v1/providers/${providerCode}`, { token: accessToken, body });
    expect((await patch({ summary: "Plans routes for vans" })).status).toBe(200);
    expect((await exportOf(providerCode)).body.version).toBe("2.0.0");
    expect((await patch({ releaseVersion: "4.1.0", summary: "Plans routes for bikes" })).status).toBe(200);
    expect((await patch({ summary: "Plans routes for anyone" })).status).toBe(200);
    expect((await exportOf(providerCode)).body.version).toBe("4.1.0");
    expectProblem(await patch({ releaseVersion: "^4.1.0" }), 400, "BAD_USER_INPUT");
  });

  test("GraphQL's serverJson is the same document as REST's", async () => {
    const { providerCode, exported } = await roundTrip(example("07-pypi-weather.json", "gql"));
    const answer = await gql(`query($c: String!) { serverJson(providerCode: $c) }`, { c: providerCode });
    expect(answer.body.data.serverJson).toEqual(exported);
  });

  test("an agent that is no MCP server, an unknown code, a private provider: 404", async () => {
    const a2a = await intake({ endpoint: { url: "https://a2a.example.com/", protocol: "A2A", authScheme: "NONE" } });
    expectProblem(await exportOf(a2a.providerCode), 404, "NOT_FOUND");
    expectProblem(await exportOf(uniqueCode("missing")), 404, "NOT_FOUND");
    const hidden = await intake({
      visibility: "PRIVATE",
      endpoint: { url: "https://hidden.example.com/mcp", protocol: "MCP", authScheme: "NONE" },
    });
    expectProblem(await exportOf(hidden.providerCode), 404, "NOT_FOUND");
    const reviewer = await reviewerToken();
    const seen = await exportOf(hidden.providerCode, reviewer);
    expect(seen.status).toBe(200);
    expect(seen.body.remotes).toEqual([{ type: "streamable-http", url: "https://hidden.example.com/mcp" }]);
  });

  test("an approved server's document is what the directory serves to anyone", async () => {
    const { providerCode, exported } = await roundTrip(example("01-npm-brave-search.json", "approved"));
    await approve(providerCode);
    expect((await exportOf(providerCode)).body).toEqual(exported);
  });
});

// ── One provider per server name ────────────────────────────────────────────────────────────────

describe("a server name is one provider's", () => {
  test("two imports of one name at once: one registers, the other is a 409 naming it", async () => {
    const doc = { ...example("18-guide-package-types-npm.json"), name: `io.github.race/srv-${RUN}` };
    const answers = await Promise.all([importDoc(doc), importDoc(doc), importDoc(doc)]);
    expect(answers.map((a) => a.status).sort()).toEqual([201, 409, 409]);
    for (const refused of answers.filter((a) => a.status === 409)) {
      expectProblem(refused, 409, "CONFLICT");
      expect(refused.body.detail).toContain(`serverName "${doc.name}"`);
    }
  });

  test("a PATCH to a name another provider holds is a 409 and changes nothing", async () => {
    const first = await intake({ serverName: `com.example/first-${RUN}` });
    const second = await intake({ serverName: `com.example/second-${RUN}` });
    const answer = await call("PATCH", `/api/v1/providers/${second.providerCode}`, {
      token: second.accessToken,
      body: { serverName: `com.example/first-${RUN}` },
    });
    expectProblem(answer, 409, "CONFLICT");
    const after = await call("GET", `/api/v1/providers/${second.providerCode}`);
    expect(after.body).toMatchObject({ serverName: `com.example/second-${RUN}`, version: 1 });
    expect(first.providerCode).not.toBe(second.providerCode);
  });

  test("a new name or source of an approved server opens an update review; a new release does not", async () => {
    const { providerCode, accessToken } = await intake({ serverName: `com.example/reviewed-${RUN}` });
    await approve(providerCode);
    const patch = (body: Json) => call("PATCH", `/api/v1/providers/${providerCode}`, { token: accessToken, body });
    const updateReviews = () => db.review.count({ where: { provider: { providerCode }, kind: "UPDATE" } });
    expect((await patch({ releaseVersion: "1.1.0" })).status).toBe(200);
    expect(await updateReviews()).toBe(0);
    expect(
      (await patch({ repository: { url: "https://github.com/example/elsewhere", source: "github" } })).status,
    ).toBe(200);
    expect(await updateReviews()).toBe(1);
    const version = await db.providerVersion.findFirstOrThrow({
      where: { provider: { providerCode } },
      orderBy: { version: "desc" },
    });
    expect(version.changedFields).toEqual(["repository"]);
  });

  test("a name that is not reverse-DNS with one slash is a 400", async () => {
    const answer = await call("POST", "/api/v1/providers", {
      body: {
        name: "Bad name",
        summary: "x",
        agentType: "TOOL_SERVER",
        contactEmail: "a@example.com",
        serverName: "no slash here",
        endpoint: { url: "https://x.example.com/mcp", protocol: "MCP", authScheme: "NONE" },
      },
    });
    expectProblem(answer, 400, "BAD_USER_INPUT");
    expect(answer.body.errors).toEqual([expect.objectContaining({ path: "/serverName" })]);
  });
});
