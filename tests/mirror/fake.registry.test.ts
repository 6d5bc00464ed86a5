/**
 * The fake MCP registry (./fake.registry.ts) keeps its promises: its pages are `ServerList`s of the registry's
 * OpenAPI document and its servers valid server.json (but the malformed one), the cursor pages through every entry
 * once, `updated_since` and `include_deleted` and `latest` behave as the real registry's code does, the faults do
 * what they say, and `close` leaves nothing open.
 */

import { readdirSync, readFileSync } from "node:fs";
import { type Agent, Agent as HttpAgent, request as httpRequest } from "node:http";
import { join } from "node:path";
import { describe, expect, test } from "@jest/globals";
import { Ajv } from "ajv";
import { Ajv2020 } from "ajv/dist/2020.js";
import addFormats from "ajv-formats";
import { parse } from "yaml";
import {
  compareVersions,
  type Entry,
  FakeRegistry,
  generatedServer,
  OFFICIAL,
  SCHEMA_2025_12_11,
  startFakeRegistry,
} from "./fake.registry.ts";

type Json = Record<string, any>;
const HERE = join(import.meta.dirname, "..", "interop", "mcp-registry");

// The registry's OpenAPI document (2020-12) and the server.json schema (draft-07), `format` checked too.
const openapi = parse(readFileSync(join(HERE, "openapi.yaml"), "utf8"));
const ajv2020 = new Ajv2020({ strict: false, allErrors: true });
addFormats.default(ajv2020);
ajv2020.addSchema({ $id: "mcp", components: openapi.components });
const serverListSchema = ajv2020.compile({ $ref: "mcp#/components/schemas/ServerList" });
const serverResponseSchema = ajv2020.compile({ $ref: "mcp#/components/schemas/ServerResponse" });
const ajv7 = new Ajv({ strict: false, allErrors: true });
addFormats.default(ajv7);
const serverJsonSchema = ajv7.compile(JSON.parse(readFileSync(join(HERE, "server.schema.2025-12-11.json"), "utf8")));

/** "" when valid, else the errors. */
function errorsOf(validate: typeof serverListSchema, value: unknown): string {
  return validate(value) ? "" : ajv2020.errorsText(validate.errors);
}
const serverErrors = (server: unknown) =>
  serverJsonSchema(server) ? "" : ajv7.errorsText(serverJsonSchema.errors ?? []);

const official = (entry: Json) => entry._meta[OFFICIAL];
const key = (entry: Json) => `${entry.server.name}@${entry.server.version}`;
const enc = encodeURIComponent;

async function get(fake: FakeRegistry, path: string, query: Record<string, string | number> = {}) {
  const search = new URLSearchParams(Object.entries(query).map(([k, v]) => [k, String(v)])).toString();
  const response = await fetch(`${fake.url}${path}${search ? `?${search}` : ""}`);
  return { status: response.status, type: response.headers.get("content-type"), body: (await response.json()) as Json };
}

/** Every page of the list, following `metadata.nextCursor` until it is absent. */
async function allPages(fake: FakeRegistry, query: Record<string, string | number>) {
  const entries: Json[] = [];
  const pages: Json[] = [];
  let cursor: string | undefined;
  do {
    const answer = await get(fake, "/v0.1/servers", cursor ? { ...query, cursor } : query);
    expect(answer.status).toBe(200);
    pages.push(answer.body);
    entries.push(...answer.body.servers);
    cursor = answer.body.metadata.nextCursor;
  } while (cursor && pages.length < 1000);
  return { entries, pages };
}

const EXAMPLE_FILES = readdirSync(join(HERE, "examples")).filter((f) => f.endsWith(".json"));

describe("seeding", () => {
  test("the 32 examples: a shared name is two versions when they differ, else the later one is <name>-2, -3…", () => {
    const fake = new FakeRegistry({ examples: true });
    const entries = fake.entries();
    expect(EXAMPLE_FILES).toHaveLength(32);
    expect(entries).toHaveLength(32);
    expect(new Set(entries.map(key)).size).toBe(32);
    // Each file's document is there, under its name or a suffixed one.
    for (const file of EXAMPLE_FILES) {
      const doc = JSON.parse(readFileSync(join(HERE, "examples", file), "utf8"));
      const match = entries.find(
        (e) =>
          JSON.stringify({ ...e.server, name: doc.name }) === JSON.stringify(doc) &&
          (e.server.name === doc.name || (e.server.name as string).startsWith(`${doc.name}-`)),
      );
      expect([file, match ? "found" : "missing"]).toEqual([file, "found"]);
    }
    const named = (prefix: string) =>
      entries
        .filter((e) => (e.server.name as string).startsWith(prefix))
        .map((e) => [e.server.name, e.server.version, official(e).isLatest]);
    expect(named("io.github.joelverhagen/knapcode")).toEqual([
      ["io.github.joelverhagen/knapcode-samplemcpserver", "0.4.0-beta", false],
      ["io.github.joelverhagen/knapcode-samplemcpserver", "0.5.0", true],
    ]);
    expect(named("com.example/acme-analytics").map(([name]) => name)).toEqual(
      ["", "-2", "-3", "-4"].map((s) => `com.example/acme-analytics${s}`),
    );
    expect(named("io.github.username/email-integration-mcp").map(([name]) => name)).toEqual(
      ["", "-2", "-3", "-4"].map((s) => `io.github.username/email-integration-mcp${s}`),
    );
    expect(fake.latest()).toHaveLength(31);
  });

  test("generated servers: deterministic, valid, a mix of remotes and packages, 20,000 distinct", () => {
    const fake = new FakeRegistry({ generated: 20_000 });
    const entries = fake.entries();
    expect(entries).toHaveLength(20_000);
    expect(new Set(entries.map((e) => e.server.name)).size).toBe(20_000);
    const sample = entries.filter((_, i) => i % 40 === 0);
    for (const entry of sample) {
      expect([key(entry), serverErrors(entry.server)]).toEqual([key(entry), ""]);
      expect(entry.server.$schema).toBe(SCHEMA_2025_12_11);
      expect((entry.server.description as string).length).toBeLessThanOrEqual(100);
      expect(entry.server.version).toMatch(/^1\.0\.\d$/);
    }
    const kinds = new Set(
      entries
        .slice(0, 100)
        .flatMap((e) => [
          ...((e.server.remotes as Json[] | undefined) ?? []).map((r) => `${r.type} ${new URL(r.url).protocol}`),
          ...((e.server.packages as Json[] | undefined) ?? []).map((p) => p.registryType),
        ]),
    );
    expect([...kinds].sort()).toEqual(["npm", "oci", "pypi", "sse https:", "streamable-http https:"]);
    const seven = entries.find((e) => e.server.name === "io.github.gen-7/server-7");
    expect(seven?.server).toEqual(generatedServer(7));
    // A second registry generates the same servers.
    expect(new FakeRegistry({ generated: 50 }).entries().map((e) => e.server)).toEqual(
      new FakeRegistry({ generated: 50 }).entries().map((e) => e.server),
    );
  });
});

describe("GET /v0.1/servers", () => {
  test("every page is a ServerList, every server a server.json; the cursor yields each entry once, in order", async () => {
    const fake = await startFakeRegistry({ examples: true, generated: 150 });
    try {
      const { entries, pages } = await allPages(fake, { limit: 7 });
      for (const [i, page] of pages.entries()) {
        expect([i, errorsOf(serverListSchema, page)]).toEqual([i, ""]);
        expect(page.metadata.count).toBe(page.servers.length);
        const last = page.servers.at(-1);
        // A cursor exactly when the page is full: the last item's name:version.
        expect(page.metadata.nextCursor).toBe(
          page.servers.length === 7 ? `${last.server.name}:${last.server.version}` : undefined,
        );
      }
      for (const entry of entries) expect([key(entry), serverErrors(entry.server)]).toEqual([key(entry), ""]);
      // 182 entries, 26 full pages, then an empty one.
      expect(entries).toHaveLength(182);
      expect(pages).toHaveLength(27);
      expect(pages.at(-1)?.servers).toEqual([]);
      expect(entries.map(key)).toEqual(fake.entries().map(key));
      expect(new Set(entries.map(key)).size).toBe(182);
      // Ordered by name, then version, as plain strings (not semver).
      const keys = entries.map((e) => [e.server.name as string, e.server.version as string] as const);
      for (let i = 1; i < keys.length; i++) {
        const [[a, av], [b, bv]] = [keys[i - 1], keys[i]] as [readonly [string, string], readonly [string, string]];
        expect([a, av, b, bv, a < b || (a === b && av < bv)]).toEqual([a, av, b, bv, true]);
      }
    } finally {
      await fake.close();
    }
  });

  test("limit: 30 by default, 100 at most, else 422 with a problem body", async () => {
    const fake = await startFakeRegistry({ generated: 120 });
    try {
      const first = await get(fake, "/v0.1/servers");
      expect(first.body.servers).toHaveLength(30);
      const thirtieth = fake.entries()[29] as Entry;
      expect(first.body.metadata).toEqual({
        nextCursor: `${thirtieth.server.name}:${thirtieth.server.version}`,
        count: 30,
      });
      expect((await get(fake, "/v0.1/servers", { limit: 100 })).body.servers).toHaveLength(100);
      for (const limit of ["101", "0", "-1", "abc"]) {
        const answer = await get(fake, "/v0.1/servers", { limit });
        expect([limit, answer.status, answer.type, answer.body.detail]).toEqual([
          limit,
          422,
          "application/problem+json",
          "validation failed",
        ]);
      }
      // The same handlers under /v0, as the real registry registers them.
      expect((await get(fake, "/v0/servers", { limit: 5 })).body.servers).toHaveLength(5);
    } finally {
      await fake.close();
    }
  });

  test("search (name substring, any case) and version (exact, or latest)", async () => {
    const fake = await startFakeRegistry({ generated: 30 });
    try {
      fake.publish(generatedServer(12, "2.0.0"));
      const names = async (query: Record<string, string>) =>
        (await allPages(fake, { limit: 100, ...query })).entries.map(key);
      expect(await names({ search: "GEN-12/" })).toEqual([
        "io.github.gen-12/server-12@1.0.2",
        "io.github.gen-12/server-12@2.0.0",
      ]);
      expect(await names({ search: "gen-12/", version: "latest" })).toEqual(["io.github.gen-12/server-12@2.0.0"]);
      expect(await names({ version: "2.0.0" })).toEqual(["io.github.gen-12/server-12@2.0.0"]);
      expect(await names({ version: "latest" })).toHaveLength(30);
    } finally {
      await fake.close();
    }
  });

  test("updated_since: exactly the entries changed strictly after it, deletions included", async () => {
    const fake = await startFakeRegistry({ generated: 20 });
    try {
      const mark = fake.now.toISOString();
      fake.publish(generatedServer(3, "2.0.0")); // demotes 1.0.3
      fake.setStatus("io.github.gen-5/server-5", "all", "deprecated", "Use gen-6");
      fake.setStatus("io.github.gen-7/server-7", "1.0.7", "deleted");
      fake.publish(generatedServer(21));
      const changed = await allPages(fake, { updated_since: mark, limit: 2 });
      expect(changed.entries.map((e) => [key(e), official(e).status, official(e).isLatest])).toEqual([
        ["io.github.gen-21/server-21@1.0.1", "active", true],
        ["io.github.gen-3/server-3@2.0.0", "active", true],
        ["io.github.gen-5/server-5@1.0.5", "deprecated", true],
        ["io.github.gen-7/server-7@1.0.7", "deleted", true],
      ]);
      expect(official(changed.entries[2] as Json).statusMessage).toBe("Use gen-6");
      for (const page of changed.pages) expect(errorsOf(serverListSchema, page)).toBe("");
      // The version it demoted is no longer the latest, but (as in the real registry) not updated either.
      const demoted = fake.entries().find((e) => key(e) === "io.github.gen-3/server-3@1.0.3") as Entry;
      expect(official(demoted).isLatest).toBe(false);
      expect(official(demoted).updatedAt < mark).toBe(true);
      // Strictly after: at the deletion's own time, only what came later.
      const deletedAt = official(changed.entries[3] as Json).updatedAt;
      expect((await allPages(fake, { updated_since: deletedAt })).entries.map(key)).toEqual([
        "io.github.gen-21/server-21@1.0.1",
      ]);
      // The same instant written with an offset and microseconds.
      const offset = `${new Date(Date.parse(deletedAt) + 3_600_000).toISOString().slice(0, 19)}.000000+01:00`;
      expect((await allPages(fake, { updated_since: offset })).entries.map(key)).toEqual([
        "io.github.gen-21/server-21@1.0.1",
      ]);
      const conflict = await get(fake, "/v0.1/servers", { updated_since: mark, include_deleted: "false" });
      expect([conflict.status, conflict.body.detail]).toEqual([
        400,
        "Cannot set include_deleted=false when using updated_since (incremental sync requires deleted servers)",
      ]);
      expect((await get(fake, "/v0.1/servers", { updated_since: "yesterday" })).status).toBe(400);
    } finally {
      await fake.close();
    }
  });

  test("touchOnLatestChange: the demoted version shows in updated_since too", async () => {
    const fake = await startFakeRegistry({ generated: 5, touchOnLatestChange: true });
    try {
      const mark = fake.now.toISOString();
      fake.publish(generatedServer(3, "2.0.0"));
      expect(
        (await allPages(fake, { updated_since: mark })).entries.map((e) => [key(e), official(e).isLatest]),
      ).toEqual([
        ["io.github.gen-3/server-3@1.0.3", false],
        ["io.github.gen-3/server-3@2.0.0", true],
      ]);
    } finally {
      await fake.close();
    }
  });

  test("an explicit `at` sets the time of a change", async () => {
    const fake = await startFakeRegistry({ generated: 2 });
    try {
      const at = new Date("2027-03-04T05:06:07.089Z");
      const entry = fake.publish(generatedServer(9), { at });
      expect(official(entry)).toMatchObject({ publishedAt: at.toISOString(), updatedAt: at.toISOString() });
      expect(fake.now.toISOString()).toBe(at.toISOString());
      expect((await allPages(fake, { updated_since: "2027-03-04T05:06:07.088Z" })).entries.map(key)).toEqual([
        "io.github.gen-9/server-9@1.0.9",
      ]);
    } finally {
      await fake.close();
    }
  });

  test("include_deleted: deleted entries hidden by default, deprecated ones shown", async () => {
    const fake = await startFakeRegistry({ generated: 5 });
    try {
      fake.setStatus("io.github.gen-2/server-2", "all", "deleted", "Spam");
      fake.setStatus("io.github.gen-4/server-4", "1.0.4", "deprecated");
      const shown = (await allPages(fake, {})).entries;
      expect(shown.map((e) => [e.server.name, official(e).status])).toEqual([
        ["io.github.gen-1/server-1", "active"],
        ["io.github.gen-3/server-3", "active"],
        ["io.github.gen-4/server-4", "deprecated"],
        ["io.github.gen-5/server-5", "active"],
      ]);
      const all = (await allPages(fake, { include_deleted: "true" })).entries;
      expect(all.map((e) => e.server.name)).toContain("io.github.gen-2/server-2");
      expect(all).toHaveLength(5);
      const name = enc("io.github.gen-2/server-2");
      expect((await get(fake, `/v0.1/servers/${name}/versions`)).status).toBe(404);
      expect((await get(fake, `/v0.1/servers/${name}/versions/latest`)).status).toBe(404);
      const versions = await get(fake, `/v0.1/servers/${name}/versions`, { include_deleted: "true" });
      expect([versions.status, versions.body.metadata]).toEqual([200, { count: 1 }]);
      const latest = await get(fake, `/v0.1/servers/${name}/versions/latest`, { include_deleted: "true" });
      expect([latest.status, official(latest.body).status, official(latest.body).statusMessage]).toEqual([
        200,
        "deleted",
        "Spam",
      ]);
      expect((await get(fake, "/v0.1/servers", { include_deleted: "maybe" })).status).toBe(422);
    } finally {
      await fake.close();
    }
  });
});

describe("versions and the latest one", () => {
  test("latest as the real registry picks it: a higher version only; then the highest not deleted", async () => {
    const fake = await startFakeRegistry();
    const name = "com.example/latest-test";
    const doc = (version: string) => ({ $schema: SCHEMA_2025_12_11, name, description: "Latest", version });
    try {
      expect(official(fake.publish(doc("1.0.0"))).isLatest).toBe(true);
      expect(official(fake.publish(doc("2.0.0"))).isLatest).toBe(true);
      expect(official(fake.publish(doc("1.5.0"))).isLatest).toBe(false);
      expect(official(fake.publish(doc("2.0.0-rc.1"))).isLatest).toBe(false);
      expect(official(fake.publish(doc("nightly"))).isLatest).toBe(false); // a semver is above any non-semver
      expect(() => fake.publish(doc("1.0.0"))).toThrow(/exists/);
      expect(fake.latest().map(key)).toEqual([`${name}@2.0.0`]);
      fake.setStatus(name, "2.0.0", "deleted");
      expect(fake.latest().map(key)).toEqual([`${name}@2.0.0-rc.1`]); // 2.0.0-rc.1 > 1.5.0
      const latest = await get(fake, `/v0.1/servers/${enc(name)}/versions/latest`);
      expect([latest.status, errorsOf(serverResponseSchema, latest.body), latest.body.server.version]).toEqual([
        200,
        "",
        "2.0.0-rc.1",
      ]);
      // Newest publication first, the deleted one left out.
      const versions = await get(fake, `/v0.1/servers/${enc(name)}/versions`);
      expect(errorsOf(serverListSchema, versions.body)).toBe("");
      expect(versions.body.servers.map((e: Json) => e.server.version)).toEqual([
        "nightly",
        "2.0.0-rc.1",
        "1.5.0",
        "1.0.0",
      ]);
      expect((await get(fake, `/v0.1/servers/${enc(name)}/versions/1.5.0`)).body.server.version).toBe("1.5.0");
      fake.setStatus(name, "2.0.0", "active");
      expect(fake.latest().map(key)).toEqual([`${name}@2.0.0`]);
      // A version with build metadata, its `+` sent encoded.
      fake.publish(doc("3.0.0+build.7"));
      expect((await get(fake, `/v0.1/servers/${enc(name)}/versions/${enc("3.0.0+build.7")}`)).status).toBe(200);
    } finally {
      await fake.close();
    }
  });

  test("an unknown name or version is a 404 problem, as huma writes it", async () => {
    const fake = await startFakeRegistry({ generated: 1 });
    try {
      for (const path of [
        `/v0.1/servers/${enc("com.example/nothing")}/versions`,
        `/v0.1/servers/${enc("com.example/nothing")}/versions/latest`,
        `/v0.1/servers/${enc("io.github.gen-1/server-1")}/versions/9.9.9`,
      ]) {
        const answer = await get(fake, path);
        expect([path, answer.status, answer.type, answer.body]).toEqual([
          path,
          404,
          "application/problem+json",
          { title: "Not Found", status: 404, detail: "Server not found" },
        ]);
      }
      // Found when encoded, once or twice; an unencoded slash is another route.
      expect((await get(fake, `/v0.1/servers/${enc("io.github.gen-1/server-1")}/versions/1.0.1`)).status).toBe(200);
      expect((await get(fake, `/v0.1/servers/${enc(enc("io.github.gen-1/server-1"))}/versions`)).status).toBe(200);
      expect((await get(fake, "/v0.1/servers/io.github.gen-1/server-1/versions")).body.detail).toMatch(
        /Endpoint not found/,
      );
    } finally {
      await fake.close();
    }
  });

  test("compareVersions follows versioning.go", () => {
    const at = (a: string, b: string, ta = 0, tb = 0) => compareVersions(a, b, ta, tb);
    expect([at("1.10.0", "1.9.0"), at("1.0.0", "1.0.0-rc.1"), at("1.0.0-rc.10", "1.0.0-rc.9")]).toEqual([1, 1, 1]);
    expect([at("1.0.0-alpha", "1.0.0-1"), at("1.0.0+a", "1.0.0+b"), at("v2.0.0", "1.0.0")]).toEqual([1, 0, 1]);
    expect([at("1.0", "0.0.1"), at("nightly", "weekly", 2, 1), at("01.0.0", "1.0.0")]).toEqual([-1, 1, -1]);
  });
});

describe("faults", () => {
  test("a malformed entry is listed and paged like any other, and is not a valid server.json", async () => {
    const fake = await startFakeRegistry({ generated: 3 });
    try {
      fake.addMalformed("missing-name");
      fake.addMalformed("description-type", { name: "io.github.gen-2/server-2b" });
      const { entries, pages } = await allPages(fake, { limit: 1 });
      expect(entries).toHaveLength(5);
      expect(entries.map((e) => [e.server.name ?? null, serverErrors(e.server) === ""])).toEqual([
        ["io.github.gen-1/server-1", true],
        ["io.github.gen-2/server-2", true],
        ["io.github.gen-2/server-2b", false],
        ["io.github.gen-3/server-3", true],
        [null, false], // stored as io.github.malformed/server-1
      ]);
      expect(pages.map((p) => errorsOf(serverListSchema, p) === "")).toEqual([true, true, false, true, false, true]);
    } finally {
      await fake.close();
    }
  });

  test("failNext: the next n list requests answer that status, with a JSON body; then it recovers", async () => {
    const fake = await startFakeRegistry({ generated: 3 });
    try {
      fake.failNext(2, 503);
      // Not a list request: not counted.
      expect((await get(fake, `/v0.1/servers/${enc("io.github.gen-1/server-1")}/versions/latest`)).status).toBe(200);
      for (const _ of [1, 2]) {
        const answer = await get(fake, "/v0.1/servers");
        expect([answer.status, answer.type, answer.body.status]).toEqual([503, "application/problem+json", 503]);
      }
      expect((await get(fake, "/v0.1/servers")).status).toBe(200);
      fake.failNext();
      const failed = await get(fake, "/v0.1/servers");
      expect([failed.status, failed.body.detail]).toEqual([500, "Failed to get registry list"]);
      expect((await get(fake, "/v0.1/servers")).status).toBe(200);
    } finally {
      await fake.close();
    }
  });

  test("failAtRequest: a 500 in the middle of a page run; the same cursor then goes on", async () => {
    const fake = await startFakeRegistry({ generated: 10 });
    try {
      fake.failAtRequest(3);
      const statuses: number[] = [];
      const entries: Json[] = [];
      let cursor: string | undefined;
      do {
        const answer = await get(fake, "/v0.1/servers", cursor ? { limit: 3, cursor } : { limit: 3 });
        statuses.push(answer.status);
        if (answer.status !== 200) continue; // again, with the same cursor
        entries.push(...answer.body.servers);
        cursor = answer.body.metadata.nextCursor;
      } while (cursor && statuses.length < 20);
      expect(statuses).toEqual([200, 200, 500, 200, 200]);
      expect(entries.map(key)).toEqual(fake.entries().map(key));
      expect(fake.requests[3]).toBe(fake.requests[2]);
      // Page 3, after gen-1, gen-10, gen-2, gen-3, gen-4 and gen-5 (name order).
      const sixth = fake.entries()[5] as Entry;
      expect(sixth.server.name).toBe("io.github.gen-5/server-5");
      expect(fake.requests[2]).toBe(
        `/v0.1/servers?limit=3&cursor=${enc(`${sixth.server.name}:${sixth.server.version}`)}`,
      );
    } finally {
      await fake.close();
    }
  });

  test("slowNext: the next list request waits that long, the one after it does not", async () => {
    const fake = await startFakeRegistry({ generated: 3 });
    try {
      fake.slowNext(300);
      let started = performance.now();
      expect((await get(fake, "/v0.1/servers")).status).toBe(200);
      expect(performance.now() - started).toBeGreaterThanOrEqual(290);
      started = performance.now();
      expect((await get(fake, "/v0.1/servers")).status).toBe(200);
      expect(performance.now() - started).toBeLessThan(200);
    } finally {
      await fake.close();
    }
  });
});

describe("close", () => {
  const handles = () =>
    process
      .getActiveResourcesInfo()
      .filter((kind) => ["TCPServerWrap", "TCPSocketWrap", "Timeout"].includes(kind))
      .sort();

  /** The handles once the ones already closing are gone. */
  const settled = async () => {
    for (let i = 0; i < 3; i++) await new Promise((resolve) => setTimeout(resolve, 10));
    return handles();
  };

  /** A GET through a keep-alive agent (node:http, so the sockets are this test's to see). */
  const getWith = (agent: Agent, url: string) =>
    new Promise<number>((resolve, reject) => {
      const req = httpRequest(url, { agent }, (res) => {
        res.resume();
        res.on("end", () => resolve(res.statusCode ?? 0));
      });
      req.on("error", reject);
      req.end();
    });

  test("ends keep-alive and waiting connections at once, clears the slowNext timer, leaves no handle", async () => {
    const before = await settled();
    const fake = await startFakeRegistry({ generated: 3 });
    const agent = new HttpAgent({ keepAlive: true });
    try {
      expect(await getWith(agent, `${fake.url}/v0.1/servers`)).toBe(200); // its socket stays open, idle
      fake.slowNext(60_000);
      const waiting = getWith(agent, `${fake.url}/v0.1/servers`);
      const failure = expect(waiting).rejects.toThrow("socket hang up");
      while (fake.requests.length < 2) await new Promise((resolve) => setTimeout(resolve, 5));
      const count = (kinds: string[], kind: string) => kinds.filter((k) => k === kind).length;
      const open = handles();
      expect(count(open, "TCPServerWrap")).toBe(count(before, "TCPServerWrap") + 1);
      expect(count(open, "Timeout")).toBeGreaterThan(count(before, "Timeout"));
      const started = performance.now();
      await fake.close();
      expect(performance.now() - started).toBeLessThan(500);
      await failure;
      // Closed handles leave on the loop's next turns.
      for (let i = 0; i < 20 && handles().join() !== before.join(); i++) {
        await new Promise((resolve) => setTimeout(resolve, 5));
      }
      expect(handles()).toEqual(before);
    } finally {
      agent.destroy();
      await fake.close(); // a second time is fine
    }
  });
});
