/**
 * The MCP registry's read API under /v0.1, driven as an MCP client or a subregistry tool would: each
 * request is built from the MCP registry's own OpenAPI document (./mcp-registry/openapi.yaml: its
 * paths, its parameter names, path values URL-encoded as it says), and each answer is validated
 * against that document's response schemas. Paging with the cursor sees every entry once;
 * `updated_since` sees what changed after it, deletions included; what is not an approved, visible
 * MCP server never shows. Beside the official `_meta`, each entry carries this registry's own
 * (`<its namespace>/registry`: trust, review, publisher, health), read back as a subregistry would.
 */
import { randomBytes } from "node:crypto";
import { readFileSync } from "node:fs";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, test } from "@jest/globals";
import { Ajv2020 } from "ajv/dist/2020.js";
import addFormats from "ajv-formats";
import { parse } from "yaml";
import { type Answer, type App, approve, appWith, call, expectProblem, gql, intake } from "../helpers.ts";

type Json = Record<string, any>;

// ── The MCP registry's OpenAPI document ─────────────────────────────────────────────────────────

const mcp = parse(readFileSync(join(import.meta.dirname, "mcp-registry", "openapi.yaml"), "utf8"));
const ajv = new Ajv2020({ strict: false, allErrors: true });
addFormats.default(ajv);
ajv.addSchema({ $id: "mcp", components: mcp.components });

const LIST = "/v0.1/servers";
const VERSIONS = "/v0.1/servers/{serverName}/versions";
const VERSION = "/v0.1/servers/{serverName}/versions/{version}";

/**
 * A GET of one of the document's read operations: every parameter must be one it declares, in the
 * place it declares it; path values are URL-encoded, as its descriptions say (`com.example%2Fmy-server`).
 */
async function get(
  template: typeof LIST | typeof VERSIONS | typeof VERSION,
  path: Record<string, string> = {},
  query: Record<string, string | number | boolean> = {},
): Promise<Answer> {
  const declared = mcp.paths[template].get.parameters as { name: string; in: string }[];
  for (const [name, where] of [
    ...Object.keys(path).map((n) => [n, "path"]),
    ...Object.keys(query).map((n) => [n, "query"]),
  ]) {
    expect({ name, in: where, declared: declared.some((p) => p.name === name && p.in === where) }).toEqual({
      name,
      in: where,
      declared: true,
    });
  }
  const url = template.replace(/\{(\w+)\}/g, (_, name: string) => encodeURIComponent(path[name] as string));
  const search = new URLSearchParams(Object.entries(query).map(([k, v]) => [k, String(v)])).toString();
  return conforming(template, await call("GET", search ? `${url}?${search}` : url));
}

/** The answer, once checked against the document's schema of its status (and as a problem when an error). */
function conforming(template: string, answer: Answer): Answer {
  const responses = mcp.paths[template].get.responses as Json;
  const declared = responses[String(answer.status)];
  if (answer.status >= 400) {
    expectProblem(answer, answer.status, answer.status === 404 ? "NOT_FOUND" : "BAD_USER_INPUT");
  }
  if (!declared) return answer; // the list declares no errors, like the official registry's 400s
  const schema = declared.content["application/json"].schema;
  const validate = ajv.compile(JSON.parse(JSON.stringify(schema).replaceAll('"#/components/', '"mcp#/components/')));
  const valid = validate(answer.body);
  expect([template, answer.status, valid ? "" : ajv.errorsText(validate.errors)]).toEqual([
    template,
    answer.status,
    "",
  ]);
  return answer;
}

const OFFICIAL = "io.modelcontextprotocol.registry/official";
/** This registry's own `_meta` key: its namespace (registry.test reversed, as the derived names) and `/registry`. */
const OURS = "test.registry/registry";
const official = (entry: Json) => entry._meta[OFFICIAL];
const ours = (entry: Json) => entry._meta[OURS];
/** The annotation of an approved server of tier `trustTier`, its publisher not verified, its health not known. */
const approvedAs = (trustTier: string): Json => ({ trustTier, reviewStage: "APPROVED", publisherVerified: false });
const key = (entry: Json) => `${entry.server.name}@${entry.server.version}`;

/** Every page of a list, following `metadata.nextCursor` until it is absent. */
async function allPages(query: Record<string, string | number | boolean>): Promise<{ entries: Json[]; pages: number }> {
  const entries: Json[] = [];
  let cursor: string | undefined;
  let pages = 0;
  do {
    const answer = await get(LIST, {}, cursor ? { ...query, cursor } : query);
    expect(answer.status).toBe(200);
    expect(answer.body.metadata.count).toBe(answer.body.servers.length);
    entries.push(...answer.body.servers);
    cursor = answer.body.metadata.nextCursor;
    pages++;
  } while (cursor && pages < 1000);
  return { entries, pages };
}

// ── The servers of this file ────────────────────────────────────────────────────────────────────

/** This run's namespace: its servers' names, and a search that finds them alone. */
const NS = `io.test-${randomBytes(4).toString("hex")}`;
const since = () => new Date().toISOString();
const pause = () => new Promise((resolve) => setTimeout(resolve, 15));

function serverJson(name: string, version: string, extra: Json = {}): Json {
  return {
    $schema: "https://static.modelcontextprotocol.io/schemas/2025-12-11/server.schema.json",
    name: `${NS}/${name}`,
    description: `The ${name} server`,
    version,
    remotes: [{ type: "streamable-http", url: `https://${name}.example.com/mcp` }],
    ...extra,
  };
}

/** Imports a server.json (optionally approved); answers its code and token. */
async function server(document: Json, options: { approved?: boolean; visibility?: string } = {}) {
  const answer = await call("POST", "/api/v1/providers/import", {
    body: {
      format: "mcp",
      document,
      contactEmail: "servers@example.com",
      ...(options.visibility ? { visibility: options.visibility } : {}),
    },
  });
  expect(answer.status).toBe(201);
  const { providerCode, accessToken } = answer.body as { providerCode: string; accessToken: string };
  if (options.approved !== false) await approve(providerCode);
  return { code: providerCode, token: accessToken };
}

const patch = (who: { code: string; token: string }, body: Json) =>
  call("PATCH", `/api/v1/providers/${who.code}`, { token: who.token, body });
const lifecycle = (who: { code: string; token: string }, body: Json) =>
  call("POST", `/api/v1/providers/${who.code}/lifecycle`, { token: who.token, body });

let weather: { code: string; token: string };
let files: { code: string; token: string };
let old: { code: string; token: string };
let derivedCode: string;

beforeAll(async () => {
  weather = await server(serverJson("weather", "1.0.0"));
  // A new release, then a change within it: two entries, the second updated twice.
  expect((await patch(weather, { releaseVersion: "1.1.0", description: "Forecasts, release 1.1" })).status).toBe(200);
  expect((await patch(weather, { summary: "Forecasts for any city, hourly" })).status).toBe(200);
  files = await server(
    serverJson("files", "2.0.0", {
      remotes: undefined,
      packages: [{ registryType: "npm", identifier: "@acme/files", version: "2.0.0", transport: { type: "stdio" } }],
    }),
  );
  expect((await lifecycle(files, { state: "DEPRECATED", message: "Use the files-v3 server" })).status).toBe(200);
  old = await server(serverJson("old", "0.9.0"));
  expect((await lifecycle(old, { state: "RETIRED", message: "Gone" })).status).toBe(200);
  // Never shown in a list: private, not approved, an A2A agent that is no MCP server.
  await server(serverJson("private", "1.0.0"), { visibility: "PRIVATE" });
  await server(serverJson("pending", "1.0.0"), { approved: false });
  const a2a = await intake();
  await approve(a2a.providerCode);
  // A server without a declared name: the registry names it `<its host reversed>/<code>`.
  const derived = await intake({
    endpoint: { url: "https://derived.example.com/mcp", protocol: "MCP", authScheme: "NONE" },
  });
  derivedCode = derived.providerCode;
  await approve(derivedCode);
});

// ── Tests ───────────────────────────────────────────────────────────────────────────────────────

describe("GET /v0.1/servers", () => {
  test("pages through every approved server version exactly once, in (name, version) order", async () => {
    const { entries, pages } = await allPages({ search: NS, limit: 1 });
    expect(entries.map(key)).toEqual([`${NS}/files@2.0.0`, `${NS}/weather@1.0.0`, `${NS}/weather@1.1.0`]);
    // A cursor whenever a page is full, so the last page (after three full ones) is empty.
    expect(pages).toBe(4);
    const [files2, weather1, weather11] = entries as [Json, Json, Json];
    expect(official(files2)).toMatchObject({
      status: "deprecated",
      statusMessage: "Use the files-v3 server",
      isLatest: true,
    });
    expect(official(weather1)).toMatchObject({ status: "active", isLatest: false });
    expect(official(weather11)).toMatchObject({ status: "active", isLatest: true });
    expect(official(weather1).statusMessage).toBeUndefined();
    // Beside the official block, this registry's, and nothing else; the official one as it was.
    for (const entry of entries) {
      expect(Object.keys(entry._meta)).toEqual([OFFICIAL, OURS]);
      expect(Object.keys(official(entry)).filter((k) => k !== "statusMessage")).toEqual([
        "status",
        "statusChangedAt",
        "publishedAt",
        "updatedAt",
        "isLatest",
      ]);
      expect(ours(entry)).toEqual(approvedAs("UNVERIFIED"));
    }
    // Each version's own document, under the server's current name.
    expect(weather1.server.description).toBe("The weather server");
    expect(weather11.server.description).toBe("Forecasts, release 1.1");
    expect(files2.server.packages[0]).toMatchObject({ registryType: "npm", identifier: "@acme/files" });
  });

  test("the whole list, page by page, repeats nothing and keeps its order", async () => {
    const { entries } = await allPages({ limit: 100 });
    const keys = entries.map((e) => [e.server.name as string, e.server.version as string] as const);
    const bytes = (s: string) => Buffer.from(s, "utf8");
    for (let i = 1; i < keys.length; i++) {
      const [a, b] = [keys[i - 1] as readonly [string, string], keys[i] as readonly [string, string]];
      const order = Buffer.compare(bytes(a[0]), bytes(b[0])) || Buffer.compare(bytes(a[1]), bytes(b[1]));
      expect([a, b, order]).toEqual([a, b, -1]);
    }
    expect(entries.filter((e) => e.server.name.startsWith(`${NS}/`)).map(key)).toHaveLength(3);
  });

  test("version=latest and an exact version", async () => {
    const latest = await get(LIST, {}, { search: NS, version: "latest" });
    expect(latest.body.servers.map(key)).toEqual([`${NS}/files@2.0.0`, `${NS}/weather@1.1.0`]);
    const exact = await get(LIST, {}, { search: NS, version: "1.0.0" });
    expect(exact.body.servers.map(key)).toEqual([`${NS}/weather@1.0.0`]);
  });

  test("search is a case-insensitive part of the name; deleted servers only when asked", async () => {
    const upper = await get(LIST, {}, { search: `${NS}/WEATH` });
    expect(upper.body.servers.map(key)).toEqual([`${NS}/weather@1.0.0`, `${NS}/weather@1.1.0`]);
    expect((await get(LIST, {}, { search: `${NS}/old` })).body.servers).toEqual([]);
    const deleted = await get(LIST, {}, { search: `${NS}/old`, include_deleted: true });
    expect(deleted.body.servers.map(key)).toEqual([`${NS}/old@0.9.0`]);
    expect(official(deleted.body.servers[0])).toMatchObject({ status: "deleted", statusMessage: "Gone" });
  });

  test("never shows a private, unapproved or non-MCP agent", async () => {
    const { entries } = await allPages({ search: NS, include_deleted: true, limit: 100 });
    expect(entries.map((e) => e.server.name).sort()).toEqual(
      [`${NS}/files`, `${NS}/old`, `${NS}/weather`, `${NS}/weather`].sort(),
    );
    for (const name of ["private", "pending"]) {
      expectProblem(await get(VERSIONS, { serverName: `${NS}/${name}` }), 404, "NOT_FOUND");
    }
  });

  test("a server without a declared name is listed under the registry's namespace, version N.0.0", async () => {
    const listed = await get(LIST, {}, { search: derivedCode });
    expect(listed.body.servers.map(key)).toEqual([`test.registry/${derivedCode}@1.0.0`]);
    const one = await get(VERSION, { serverName: `test.registry/${derivedCode}`, version: "latest" });
    expect(one.status).toBe(200);
    // This registry's `_meta` key is of the namespace its derived names are.
    expect(Object.keys(one.body._meta)).toEqual([OFFICIAL, `${one.body.server.name.split("/")[0]}/registry`]);
    expect(ours(one.body)).toEqual(approvedAs("UNVERIFIED"));
    expect(one.body.server.remotes).toEqual([{ type: "streamable-http", url: "https://derived.example.com/mcp" }]);
  });

  test("refuses a cursor it did not issue and a limit out of 1–100, naming them", async () => {
    for (const [query, at] of [
      [{ cursor: "not-a-cursor" }, "/cursor"],
      [{ limit: 0 }, "/limit"],
      [{ limit: 101 }, "/limit"],
      [{ updated_since: "yesterday" }, "/updated_since"],
    ] as const) {
      const answer = await get(LIST, {}, query);
      expectProblem(answer, 400, "BAD_USER_INPUT");
      expect(answer.body.errors.map((e: Json) => e.path)).toEqual([at]);
    }
  });

  test("ignores query parameters it does not take, as the official registry does", async () => {
    const answer = await call("GET", `${LIST}?search=${NS}/weather&page=2`);
    expect(answer.status).toBe(200);
    expect(answer.body.servers).toHaveLength(2);
  });
});

describe("GET /v0.1/servers/{serverName}/versions", () => {
  test("every version, newest first, by the %2F-encoded name (or encoded twice)", async () => {
    const answer = await get(VERSIONS, { serverName: `${NS}/weather` });
    expect(answer.status).toBe(200);
    expect(answer.body.servers.map(key)).toEqual([`${NS}/weather@1.1.0`, `${NS}/weather@1.0.0`]);
    expect(answer.body.metadata).toEqual({ count: 2 });
    const [newest, first] = answer.body.servers as [Json, Json];
    // What the registry knows of the provider, on each of its versions alike.
    expect([ours(newest), ours(first)]).toEqual([approvedAs("UNVERIFIED"), approvedAs("UNVERIFIED")]);
    expect(official(first).publishedAt <= official(newest).publishedAt).toBe(true);
    expect(official(newest).publishedAt < official(newest).updatedAt).toBe(true);
    const twice = await call(
      "GET",
      `/v0.1/servers/${encodeURIComponent(encodeURIComponent(`${NS}/weather`))}/versions`,
    );
    expect(twice.body).toEqual(answer.body);
  });

  test("a deleted server only with include_deleted; unknown or unencoded names are 404 problems", async () => {
    expectProblem(await get(VERSIONS, { serverName: `${NS}/old` }), 404, "NOT_FOUND");
    const deleted = await get(VERSIONS, { serverName: `${NS}/old` }, { include_deleted: true });
    expect(deleted.body.servers.map(key)).toEqual([`${NS}/old@0.9.0`]);
    expectProblem(await get(VERSIONS, { serverName: `${NS}/nothing` }), 404, "NOT_FOUND");
    expectProblem(await call("GET", `/v0.1/servers/${NS}/weather/versions`), 404, "NOT_FOUND");
  });
});

describe("GET /v0.1/servers/{serverName}/versions/{version}", () => {
  test("one version, or the latest", async () => {
    const one = await get(VERSION, { serverName: `${NS}/weather`, version: "1.0.0" });
    expect(one.status).toBe(200);
    expect(key(one.body)).toBe(`${NS}/weather@1.0.0`);
    expect(official(one.body).isLatest).toBe(false);
    const latest = await get(VERSION, { serverName: `${NS}/weather`, version: "latest" });
    expect(key(latest.body)).toBe(`${NS}/weather@1.1.0`);
    expect(official(latest.body).isLatest).toBe(true);
    // Over GraphQL, the same operation answers the same document.
    const graphql = await gql(`query($name: String!) { mcpServerVersion(serverName: $name, version: "latest") }`, {
      name: `${NS}/weather`,
    });
    expect(graphql.body.data.mcpServerVersion).toEqual(latest.body);
  });

  test("an unknown version is a 404 problem; a private server's too", async () => {
    expectProblem(await get(VERSION, { serverName: `${NS}/weather`, version: "9.9.9" }), 404, "NOT_FOUND");
    expectProblem(await get(VERSION, { serverName: `${NS}/private`, version: "latest" }), 404, "NOT_FOUND");
  });
});

describe("the registry's OpenAPI document", () => {
  test("serves the three read operations with the MCP document's paths and parameters", async () => {
    const ours = (await call("GET", "/openapi.json")).body;
    for (const template of [LIST, VERSIONS, VERSION]) {
      const theirs = (mcp.paths[template].get.parameters as { name: string; in: string }[]).map(
        (p) => `${p.in} ${p.name}`,
      );
      const served = (ours.paths[template]?.get?.parameters ?? []) as { name: string; in: string }[];
      expect([template, served.filter((p) => p.in !== "header").map((p) => `${p.in} ${p.name}`)]).toEqual([
        template,
        theirs,
      ]);
    }
  });
});

describe("this registry's own `_meta`, for the subregistries that read it", () => {
  /**
   * The well-known files served, by path; every other path answers HTML (to an MCP client,
   * WRONG_PROTOCOL), or 503 while `busy` (UNKNOWN: the check could not tell).
   */
  const files = new Map<string, string>();
  let busy = false;
  let web: Server;
  /** An app whose outbound door sends example.test and mcp.example.test to `web`. */
  let door: App;

  beforeAll(async () => {
    web = createServer((req, res) => {
      const body = files.get(req.url ?? "/");
      if (body !== undefined) res.writeHead(200, { "content-type": "text/plain" }).end(body);
      else if (busy) res.writeHead(503).end();
      else res.writeHead(200, { "content-type": "text/html; charset=utf-8" }).end("<html>hello</html>");
    });
    await new Promise<void>((resolve) => web.listen(0, "127.0.0.1", resolve));
    const at = `127.0.0.1:${(web.address() as AddressInfo).port}`;
    door = appWith({
      OUTBOUND_TEST_HOSTS: `example.test=${at},mcp.example.test=${at}`,
      HEALTH_CHECK_NOW_SECONDS: "0",
      // Each result is the state at once, so one check now changes it.
      HEALTH_CONFIRMATIONS: "1",
    });
  });

  afterAll(async () => {
    web.closeAllConnections();
    await new Promise((resolve) => web.close(resolve));
  });

  test("trust tier and review stage as approved, the publisher once verified, health once checked", async () => {
    // A namespace of its own, so the lists of the tests above and below do not see it.
    const name = `io.annotated-${randomBytes(4).toString("hex")}/tools`;
    const imported = await call("POST", "/api/v1/providers/import", {
      body: {
        format: "mcp",
        document: {
          $schema: "https://static.modelcontextprotocol.io/schemas/2025-12-11/server.schema.json",
          name,
          description: "Annotated tools",
          version: "1.0.0",
          remotes: [{ type: "streamable-http", url: "https://mcp.example.test/mcp" }],
        },
        contactEmail: "servers@example.com",
      },
    });
    expect(imported.status).toBe(201);
    const { providerCode: code, accessToken: token } = imported.body as { providerCode: string; accessToken: string };
    await approve(code, "VERIFIED");

    /** The annotation on each of the three routes, which must agree; each answer validated by `get`. */
    const annotations = async (): Promise<Json> => {
      const listed = await get(LIST, {}, { search: name });
      const versions = await get(VERSIONS, { serverName: name });
      const one = await get(VERSION, { serverName: name, version: "latest" });
      expect([listed.body.servers.length, versions.body.servers.length]).toEqual([1, 1]);
      const all = [listed.body.servers[0], versions.body.servers[0], one.body].map((entry: Json) => ours(entry));
      expect(all).toEqual([all[0], all[0], all[0]]);
      // The official block is untouched by it.
      expect(Object.keys(one.body._meta)).toEqual([OFFICIAL, OURS]);
      expect(official(one.body)).toMatchObject({ status: "active", isLatest: true });
      return all[0];
    };

    // Approved as VERIFIED; no domain verified; never probed, so no healthState member at all.
    const before = await annotations();
    expect(before).toEqual({ trustTier: "VERIFIED", reviewStage: "APPROVED", publisherVerified: false });
    expect("healthState" in before).toBe(false);

    // The publisher proves control of example.test by its well-known file.
    const asked = await call("POST", `/api/v1/providers/${code}/domains`, {
      app: door,
      token,
      body: { domain: "example.test" },
    });
    expect(asked.status).toBe(201);
    files.set(`/.well-known/agent-registry/${code}.txt`, `${asked.body.token}\n`);
    const checked = await call("POST", `/api/v1/providers/${code}/domains/example.test/check`, { app: door, token });
    expect(checked.body).toMatchObject({ verified: true, method: "HTTP" });
    expect(await annotations()).toEqual({ trustTier: "VERIFIED", reviewStage: "APPROVED", publisherVerified: true });

    // Checked now: while the endpoint fails with a 503 the state is UNKNOWN, which says nothing, so still no
    // healthState; once it answers HTML the state is WRONG_PROTOCOL, as the profile says, and shown.
    const checkNow = async () => {
      const health = await call("POST", `/api/v1/providers/${code}/health/check`, { app: door, token });
      expect(health.status).toBe(200);
      expect((await call("GET", `/api/v1/providers/${code}`)).body.health.state).toBe(health.body.state);
      return health.body.state as string;
    };
    busy = true;
    expect(await checkNow()).toBe("UNKNOWN");
    expect(await annotations()).toEqual({ trustTier: "VERIFIED", reviewStage: "APPROVED", publisherVerified: true });
    busy = false;
    expect(await checkNow()).toBe("WRONG_PROTOCOL");
    expect(await annotations()).toEqual({
      trustTier: "VERIFIED",
      reviewStage: "APPROVED",
      publisherVerified: true,
      healthState: "WRONG_PROTOCOL",
    });

    // With probing off, health is shown nowhere, here neither.
    const off = appWith({ HEALTH: "off" });
    const unprobed = conforming(
      VERSION,
      await call("GET", `/v0.1/servers/${encodeURIComponent(name)}/versions/latest`, { app: off }),
    );
    expect(ours(unprobed.body)).toEqual({ trustTier: "VERIFIED", reviewStage: "APPROVED", publisherVerified: true });
  });
});

// Last: it adds servers of its own to the namespace the tests above list.
describe("updated_since", () => {
  test("updated_since sees what changed after it: an update, a retirement (as deleted), an approval", async () => {
    const t0 = since();
    await pause();
    expect((await patch(weather, { summary: "Forecasts for any city, every hour" })).status).toBe(200);
    const gone = await server(serverJson("gone", "3.0.0"));
    const fresh = await server(serverJson("fresh", "0.1.0"), { approved: false });
    const t1 = since();
    await pause();
    expect((await lifecycle(gone, { state: "RETIRED" })).status).toBe(200);
    await approve(fresh.code);

    const after0 = await allPages({ search: NS, updated_since: t0 });
    expect(after0.entries.map(key)).toEqual([`${NS}/fresh@0.1.0`, `${NS}/gone@3.0.0`, `${NS}/weather@1.1.0`]);
    for (const entry of after0.entries) expect(official(entry).updatedAt > t0).toBe(true);
    const after1 = await allPages({ search: NS, updated_since: t1 });
    expect(after1.entries.map(key)).toEqual([`${NS}/fresh@0.1.0`, `${NS}/gone@3.0.0`]);
    expect(official(after1.entries[1] as Json).status).toBe("deleted");
    // A sync must see deletions: include_deleted=false cannot go with updated_since.
    const refused = await get(LIST, {}, { updated_since: t0, include_deleted: false });
    expectProblem(refused, 400, "BAD_USER_INPUT");
    expect(refused.body.errors.map((e: Json) => e.path)).toEqual(["/include_deleted"]);
  });
});
