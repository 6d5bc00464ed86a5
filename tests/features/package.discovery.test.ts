/**
 * Finding MCP servers by how they ship, through both doors: the list's `packageRegistry` and
 * `transport` filters (one package holding both when both are given), kept in step by intake and
 * PATCH, and a search that matches package identifiers.
 */
import { describe, expect, test } from "@jest/globals";
import { uniqueCode } from "../builders.ts";
import { doors, type Outcome } from "../doors.ts";
import { call, db, intake, reviewerToken } from "../helpers.ts";

const npmStdio = {
  registryType: "NPM",
  identifier: "@acme-tools/route-finder-mcp",
  version: "1.4.0",
  transport: { type: "STDIO" },
};
const pypiStdio = {
  registryType: "PYPI",
  identifier: "weather-mcp-server",
  version: "0.3.1",
  transport: { type: "STDIO" },
};
const ociHttp = {
  registryType: "OCI",
  identifier: "ghcr.io/acme/ledger-sync:2.0.0",
  transport: { type: "STREAMABLE_HTTP", url: "http://localhost:8080/mcp" },
};
const npmSse = {
  registryType: "NPM",
  identifier: "@acme-tools/event-relay",
  version: "3.0.0",
  transport: { type: "SSE", url: "http://localhost:9000/sse" },
};

const codes = (outcome: Outcome): string[] =>
  (outcome.data.items as { providerCode: string }[]).map((i) => i.providerCode).sort();

describe.each(doors)("$name", (door) => {
  async function list(args: Record<string, unknown>, token: string): Promise<string[]> {
    const outcome = await door.run("Query.providers", args, { token });
    expect([args, outcome.code]).toEqual([args, undefined]);
    return codes(outcome);
  }

  test("packageRegistry and transport narrow the list, each alone and together on one package", async () => {
    const label = uniqueCode("ships");
    const npmOnly = await intake({ labels: [label], packages: [npmStdio] });
    const pypiAndOci = await intake({ labels: [label], packages: [pypiStdio, ociHttp] });
    const npmOverSse = await intake({ labels: [label], packages: [npmSse] });
    const endpointOnly = await intake({ labels: [label] });
    const token = await reviewerToken();
    const only = (args: Record<string, unknown>) => list({ labels: [label], limit: 100, ...args }, token);

    expect(await only({})).toEqual([npmOnly, pypiAndOci, npmOverSse, endpointOnly].map((p) => p.providerCode).sort());
    expect(await only({ packageRegistry: "NPM" })).toEqual([npmOnly.providerCode, npmOverSse.providerCode].sort());
    expect(await only({ packageRegistry: "OCI" })).toEqual([pypiAndOci.providerCode]);
    expect(await only({ packageRegistry: "NUGET" })).toEqual([]);
    expect(await only({ transport: "STDIO" })).toEqual([npmOnly.providerCode, pypiAndOci.providerCode].sort());
    expect(await only({ transport: "SSE" })).toEqual([npmOverSse.providerCode]);
    // Both: one package from that registry over that transport — PyPI is stdio, OCI is HTTP.
    expect(await only({ packageRegistry: "NPM", transport: "STDIO" })).toEqual([npmOnly.providerCode]);
    expect(await only({ packageRegistry: "PYPI", transport: "STDIO" })).toEqual([pypiAndOci.providerCode]);
    expect(await only({ packageRegistry: "OCI", transport: "STDIO" })).toEqual([]);
    // With a search, the same filters apply before the page is cut.
    expect(await only({ search: "route planner", packageRegistry: "NPM" })).toEqual(
      [npmOnly.providerCode, npmOverSse.providerCode].sort(),
    );
  });

  test("a value outside the enum is refused as bad input naming the argument", async () => {
    const outcome = await door.run("Query.providers", { packageRegistry: "RUBYGEMS" });
    expect(outcome.code).toBe("BAD_USER_INPUT");
    expect(outcome.status).toBe(400);
    expect(outcome.data).toBeNull();
  });

  test("a PATCH of the packages moves the provider between the filters; other PATCHes leave the index be", async () => {
    const label = uniqueCode("moves");
    const created = await intake({ labels: [label], packages: [npmStdio] });
    const token = await reviewerToken();
    const only = (args: Record<string, unknown>) => list({ labels: [label], ...args }, token);
    expect(await only({ packageRegistry: "NPM" })).toEqual([created.providerCode]);

    const patched = await call("PATCH", `/api/v1/providers/${created.providerCode}`, {
      body: { packages: [ociHttp] },
      token: created.accessToken,
    });
    expect(patched.status).toBe(200);
    expect(await only({ packageRegistry: "NPM" })).toEqual([]);
    expect(await only({ packageRegistry: "OCI", transport: "STREAMABLE_HTTP" })).toEqual([created.providerCode]);

    const renamed = await call("PATCH", `/api/v1/providers/${created.providerCode}`, {
      body: { summary: "Plans delivery routes, now over HTTP" },
      token: created.accessToken,
    });
    expect(renamed.status).toBe(200);
    const rows = await db.providerPackage.findMany({
      where: { provider: { providerCode: created.providerCode } },
      select: { registryType: true, transport: true },
    });
    expect(rows).toEqual([{ registryType: "OCI", transport: "STREAMABLE_HTTP" }]);
  });

  test("a search matches package identifiers, word by word and by prefix", async () => {
    const word = uniqueCode("zq").replace("-", "");
    const shipped = await intake({
      packages: [
        { ...npmStdio, identifier: `@${word}/route-finder` },
        { ...pypiStdio, identifier: `${word}-weather` },
      ],
    });
    const other = await intake({ summary: "Nothing to do with it" });
    const token = await reviewerToken();
    expect(await list({ search: word }, token)).toEqual([shipped.providerCode]);
    expect(await list({ search: word.slice(0, 6) }, token)).toContain(shipped.providerCode);
    expect(await list({ search: `${word} weather` }, token)).toEqual([shipped.providerCode]);
    expect(await list({ search: word }, token)).not.toContain(other.providerCode);

    // The index follows a PATCH of the packages: the old identifier no longer finds it.
    const patched = await call("PATCH", `/api/v1/providers/${shipped.providerCode}`, {
      body: { packages: [ociHttp] },
      token: shipped.accessToken,
    });
    expect(patched.status).toBe(200);
    expect(await list({ search: word }, token)).toEqual([]);
    expect(await list({ search: `${shipped.providerCode} ledger sync` }, token)).toEqual([shipped.providerCode]);
  });
});
