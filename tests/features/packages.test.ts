/**
 * MCP servers that ship as packages (a profile's `packages`) through both doors: an agent has an
 * endpoint, packages or both; each identifier meets its registry's naming rules; a version names one
 * release; no secret's value is ever kept; changing a package of an approved agent opens an update
 * review; and the database itself holds "at most ten" and "an endpoint or a package", raced here.
 */
import { describe, expect, test } from "@jest/globals";
import { Prisma } from "../../src/generated/prisma/client.ts";
import { intakeBody } from "../builders.ts";
import { doors, type Outcome } from "../doors.ts";
import { approve, call, db, intake, reviewerToken, versionCount } from "../helpers.ts";

const npm = {
  registryType: "NPM",
  identifier: "@modelcontextprotocol/server-brave-search",
  version: "1.0.2",
  transport: { type: "STDIO" },
  environmentVariables: [
    { name: "BRAVE_API_KEY", description: "Brave Search API key", isRequired: true, isSecret: true },
  ],
};
const oci = {
  registryType: "OCI",
  identifier: "ghcr.io/example/weather-mcp:2.1.0",
  transport: { type: "STREAMABLE_HTTP", url: "http://localhost:{port}/mcp" },
  packageArguments: [{ type: "NAMED", name: "--port", valueHint: "port", default: "8080" }],
};
/** A packages-only intake: no endpoint. */
const packagesOnly = (packages: unknown[] = [npm]) => {
  const body = intakeBody({ packages, agentType: "TOOL_SERVER" });
  delete body.endpoint;
  return body;
};

async function stateOf(providerCode: string) {
  const row = await db.provider.findUniqueOrThrow({ where: { providerCode } });
  return { row, versions: await versionCount(providerCode) };
}

describe.each(doors)("$name", (door) => {
  const create = (body: Record<string, unknown>) => door.run("Mutation.createProvider", body);
  const update = (providerCode: string, fields: Record<string, unknown>, token: string) =>
    door.run("Mutation.updateProvider", { providerCode, ...fields }, { token });

  /** An intake that must be refused as bad input naming `path`: nothing is written. */
  async function refusedAt(body: Record<string, unknown>, path: string): Promise<Outcome> {
    const outcome = await create(body);
    expect(outcome.code).toBe("BAD_USER_INPUT");
    expect(outcome.status).toBe(400);
    expect(outcome.paths).toContain(path);
    expect(await db.provider.count({ where: { providerCode: String(body.providerCode) } })).toBe(0);
    return outcome;
  }

  describe("intake", () => {
    test("an MCP server that ships only as an npm package: no endpoint, its package normalised, how to run it", async () => {
      const outcome = await create(packagesOnly());
      expect(outcome.code).toBeUndefined();
      // Read back, as stored.
      const read = await door.run(
        "Query.provider",
        { providerCode: outcome.data.providerCode },
        { token: outcome.data.accessToken },
      );
      const provider = read.data;
      expect(provider.endpoint).toBeNull();
      expect(provider.packages).toHaveLength(1);
      expect(provider.packages[0]).toMatchObject({
        registryType: "NPM",
        identifier: "@modelcontextprotocol/server-brave-search",
        version: "1.0.2",
        registryBaseUrl: null,
        transport: { type: "STDIO", url: null, headers: [] },
        environmentVariables: [
          {
            name: "BRAVE_API_KEY",
            description: "Brave Search API key",
            isRequired: true,
            isSecret: true,
            format: "STRING",
            default: null,
            choices: [],
          },
        ],
        runtimeArguments: [],
        packageArguments: [],
        runCommand: "npx -y @modelcontextprotocol/server-brave-search@1.0.2",
      });
      const row = await db.provider.findUniqueOrThrow({ where: { providerCode: outcome.data.providerCode } });
      expect(row.endpoint).toBeNull();
      expect((row.packages as unknown[]).length).toBe(1);
    });

    test("an endpoint and packages together; the OCI command passes the environment and the arguments", async () => {
      const outcome = await create(intakeBody({ packages: [oci] }));
      expect(outcome.code).toBeUndefined();
      expect(outcome.data.provider.endpoint.protocol).toBe("A2A");
      expect(outcome.data.provider.packages[0].runCommand).toBe(
        "docker run -i --rm ghcr.io/example/weather-mcp:2.1.0 --port 8080",
      );
    });

    test("neither an endpoint nor a package is BAD_USER_INPUT naming the endpoint", async () => {
      await refusedAt(packagesOnly([]), "endpoint");
    });

    test.each([
      ["NPM", "@Scope/Upper", "1.0.0"],
      ["NPM", ".hidden", "1.0.0"],
      ["PYPI", "-weather", "1.0.0"],
      ["NUGET", "Knapcode..Sample", "1.0.0"],
      ["OCI", "ghcr.io/example/image", null],
      ["OCI", "ghcr.io/example/image:latest", null],
      ["OCI", "ghcr.io/Example/Image:1.0", null],
      ["MCPB", "http://example.com/server.mcpb", null],
    ])("a %s identifier %s is refused in its registry's words", async (registryType, identifier, version) => {
      const pkg = {
        registryType,
        identifier,
        ...(version ? { version } : {}),
        ...(registryType === "MCPB" ? { fileSha256: "a".repeat(64) } : {}),
        transport: { type: "STDIO" },
      };
      await refusedAt(packagesOnly([pkg]), "packages.0.identifier");
    });

    test.each([
      ["NPM", "@scope/server", "1.2.3"],
      ["PYPI", "mcp-server-fetch", "2025.1.17"],
      ["NUGET", "Knapcode.SampleMcpServer", "0.5.0"],
      ["OCI", "docker.io/mcp/filesystem@sha256:0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef", null],
      ["MCPB", "https://github.com/example/releases/download/v1.0.0/server.mcpb", "1.0.0"],
    ])("a %s identifier %s is taken", async (registryType, identifier, version) => {
      const pkg = {
        registryType,
        identifier,
        ...(version ? { version } : {}),
        ...(registryType === "MCPB" ? { fileSha256: "f".repeat(64) } : {}),
        transport: { type: "STDIO" },
      };
      const outcome = await create(packagesOnly([pkg]));
      expect(outcome.code).toBeUndefined();
      expect(outcome.data.provider.packages[0].identifier).toBe(identifier);
    });

    test.each(["^1.2.3", "~1.2.3", ">=1.0.0", "1.x", "latest", "1.0 || 2.0"])(
      "a version range %s is refused",
      async (version) => {
        await refusedAt(packagesOnly([{ ...npm, version }]), "packages.0.version");
      },
    );

    test("an npm package without a version, and an OCI package with one, are refused", async () => {
      const { version: _, ...noVersion } = npm;
      await refusedAt(packagesOnly([noVersion]), "packages.0.version");
      await refusedAt(packagesOnly([{ ...oci, version: "2.1.0" }]), "packages.0.version");
    });

    test("a secret takes no value: a secret's default is refused, and a variable has no `value` at all", async () => {
      const secretDefault = { ...npm, environmentVariables: [{ name: "TOKEN", isSecret: true, default: "hunter2" }] };
      await refusedAt(packagesOnly([secretDefault]), "packages.0.environmentVariables.0.default");
      const withValue = { ...npm, environmentVariables: [{ name: "TOKEN", value: "hunter2" }] };
      // GraphQL refuses the unknown input field itself and names the argument; REST names the member.
      const at = door.name === "REST" ? "packages.0.environmentVariables.0.value" : "packages";
      const outcome = await refusedAt(packagesOnly([withValue]), at);
      expect(JSON.stringify(outcome.answer.body)).not.toContain("hunter2");
    });

    test.each([
      [
        "a header's value",
        {
          transport: {
            type: "SSE",
            url: "https://mcp.example.com/sse",
            headers: [{ name: "Authorization", value: "Bearer hunter2" }],
          },
        },
        "transport.headers.0.value",
        "packages[0].transport.headers[0]",
      ],
      [
        "a value where a flag goes",
        { environmentVariables: [{ name: "TOKEN", isSecret: "hunter2" }] },
        "environmentVariables.0.isSecret",
        "packages[0].environmentVariables[0].isSecret",
      ],
      [
        "a value where text goes",
        { environmentVariables: [{ name: "TOKEN", default: 31415926 }] },
        "environmentVariables.0.default",
        "packages[0].environmentVariables[0].default",
      ],
      ["a value where a registry goes", { registryType: "hunter2" }, "registryType", "packages[0].registryType"],
    ])("a refusal never quotes the value it refused: %s", async (_, change, member, place) => {
      const outcome = await refusedAt(
        packagesOnly([{ ...npm, ...change }]),
        door.name === "REST" ? `packages.0.${member}` : "packages",
      );
      const answer = JSON.stringify(outcome.answer.body);
      expect(answer).not.toMatch(/hunter2|31415926/);
      // GraphQL still says where, in its own terms.
      if (door.name === "GraphQL") expect(outcome.answer.body.errors[0].message).toContain(`at "${place}"`);
    });

    test("a transport URL's {name} must be a variable or an argument of the package", async () => {
      const pkg = { ...oci, transport: { type: "SSE", url: "http://localhost:{nope}/sse" } };
      await refusedAt(packagesOnly([pkg]), "packages.0.transport.url");
      await refusedAt(
        packagesOnly([{ ...npm, transport: { type: "STDIO", url: "http://localhost/mcp" } }]),
        "packages.0.transport.url",
      );
    });

    test("at most ten packages", async () => {
      const many = Array.from({ length: 11 }, (_, i) => ({ ...npm, identifier: `@scope/server-${i}` }));
      await refusedAt(packagesOnly(many), "packages");
    });
  });

  describe("updates", () => {
    test("an approved agent that adds a package goes to an update review; the version records the change", async () => {
      const created = await intake();
      await approve(created.providerCode);
      const outcome = await update(created.providerCode, { packages: [npm] }, created.accessToken);
      expect(outcome.code).toBeUndefined();
      expect(outcome.data.packages.map((p: { identifier: string }) => p.identifier)).toEqual([npm.identifier]);
      const reviews = await db.review.findMany({
        where: { provider: { providerCode: created.providerCode }, kind: "UPDATE" },
      });
      expect(reviews).toHaveLength(1);
      const version = await db.providerVersion.findFirstOrThrow({
        where: { provider: { providerCode: created.providerCode } },
        orderBy: { version: "desc" },
      });
      expect(version.changedFields).toEqual(["packages"]);
      expect((version.snapshot as { packages: unknown[] }).packages).toHaveLength(1);
    });

    test("the endpoint may be cleared while a package remains, not when none does", async () => {
      const created = await intake({ packages: [npm] });
      const cleared = await update(created.providerCode, { endpoint: null }, created.accessToken);
      expect(cleared.code).toBeUndefined();
      expect(cleared.data.endpoint).toBeNull();
      const before = await stateOf(created.providerCode);
      const refused = await update(created.providerCode, { packages: [] }, created.accessToken);
      expect(refused.code).toBe("BAD_USER_INPUT");
      expect(refused.paths).toEqual(["endpoint"]);
      expect(await stateOf(created.providerCode)).toEqual(before);
    });

    test("the agent card of an agent without an endpoint is NOT_FOUND, saying why", async () => {
      const created = await intake({ packages: [npm] });
      await update(created.providerCode, { endpoint: null }, created.accessToken);
      const outcome = await door.run(
        "Query.agentCard",
        { providerCode: created.providerCode },
        { token: created.accessToken },
      );
      expect(outcome.code).toBe("NOT_FOUND");
    });
  });

  test("reviewers see a provider's packages in the queue", async () => {
    const created = await intake({ packages: [npm] });
    const outcome = await door.run(
      "Query.reviewQueue",
      { providerCode: created.providerCode },
      { token: await reviewerToken() },
    );
    expect(outcome.code).toBeUndefined();
    const item = outcome.data.items.find((r: { providerCode: string }) => r.providerCode === created.providerCode);
    expect(item.providerPackages.map((p: { identifier: string }) => p.identifier)).toEqual([npm.identifier]);
  });
});

describe("the database holds the rules", () => {
  test("more than ten packages, or no endpoint and no package, are refused by the database itself", async () => {
    const created = await intake({ packages: [npm] });
    const where = { providerCode: created.providerCode };
    await expect(
      db.provider.update({ where, data: { packages: Array.from({ length: 11 }, () => npm) } }),
    ).rejects.toThrow();
    await expect(db.provider.update({ where, data: { endpoint: Prisma.JsonNull, packages: [] } })).rejects.toThrow();
    const row = await db.provider.findUniqueOrThrow({ where });
    expect((row.packages as unknown[]).length).toBe(1);
    expect(row.endpoint).not.toBeNull();
  });

  test("racing updates that each leave a way to reach the agent cannot together leave none", async () => {
    for (let round = 0; round < 5; round++) {
      const created = await intake({ packages: [npm] });
      const patch = (body: Record<string, unknown>) =>
        call("PATCH", `/api/v1/providers/${created.providerCode}`, { body, token: created.accessToken });
      const answers = await Promise.all([patch({ endpoint: null }), patch({ packages: [] })]);
      expect(answers.map((a) => a.status).sort()).toEqual([200, 400]);
      const row = await db.provider.findUniqueOrThrow({ where: { providerCode: created.providerCode } });
      expect(row.endpoint !== null || (row.packages as unknown[]).length > 0).toBe(true);
    }
  });
});
