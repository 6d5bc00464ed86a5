/** schema.graphql is the printed schema; when this fails, run `npm run schema:print` and commit the result. */
import { readFileSync } from "node:fs";
import { describe, expect, test } from "@jest/globals";
import { GraphQLObjectType, printSchema } from "graphql";
import { schema } from "../../src/schema.ts";
import { gql } from "../helpers.ts";

describe("schema.graphql", () => {
  test("matches the schema the code builds (run `npm run schema:print` after changing it)", () => {
    const committed = readFileSync(new URL("../../schema.graphql", import.meta.url), "utf8");
    expect(`${printSchema(schema)}\n`).toBe(committed);
  });

  test("carries the operation names of API.md §4", () => {
    const query = schema.getQueryType()?.getFields() ?? {};
    const mutation = schema.getMutationType()?.getFields() ?? {};
    for (const name of [
      "api",
      "health",
      "providers",
      "provider",
      "providerVersions",
      "providerVersion",
      "reviewQueue",
      "review",
    ]) {
      expect(Object.keys(query)).toContain(name);
    }
    for (const name of ["createProvider", "updateProvider", "issueToken", "revokeToken"]) {
      expect(Object.keys(mutation)).toContain(name);
    }
  });

  test("DateTime is specified by URL (introspection says so), and every timestamp argument is one", async () => {
    const answer = await gql('{ __type(name: "DateTime") { kind specifiedByURL } }');
    expect(answer.body).toEqual({
      data: { __type: { kind: "SCALAR", specifiedByURL: "https://scalars.graphql.org/andimarek/date-time" } },
    });
    const timestampArgs = Object.values(schema.getTypeMap())
      .filter((type) => type instanceof GraphQLObjectType && !type.name.startsWith("__"))
      .flatMap((type) => Object.values((type as GraphQLObjectType).getFields()))
      .flatMap((field) => field.args.map((arg) => [`${field.name}.${arg.name}`, String(arg.type)]))
      .filter(([name]) => /(?:At|Since|Before|After|_since)$/.test(name as string));
    expect(timestampArgs).toEqual([
      ["providers.updatedSince", "DateTime"],
      ["providerFacets.updatedSince", "DateTime"],
      ["reviewQueue.updatedSince", "DateTime"],
      // The MCP registry's parameter, by its own name.
      ["mcpServers.updated_since", "DateTime"],
      ["createApiKey.expiresAt", "DateTime"],
    ]);
  });

  test("a DateTime argument that is not an RFC 3339 date-time is BAD_USER_INPUT naming it", async () => {
    const query = "query($t: DateTime) { providers(updatedSince: $t) { nextCursor } }";
    for (const t of ["2000-01-01", "2026-11-21T10:00:00", "2026-02-30T00:00:00Z", "1700000000"]) {
      const answer = await gql(query, { t });
      expect({ t, codes: answer.body.errors?.map((e: { extensions: { code: string } }) => e.extensions.code) }).toEqual(
        {
          t,
          codes: ["BAD_USER_INPUT"],
        },
      );
      expect(answer.body.errors[0].message).toContain('Variable "$t"');
      expect(answer.body.errors[0].message).toContain("RFC 3339");
    }
    const ok = await gql(query, { t: "2000-01-01T00:00:00+01:00" });
    expect(ok.body.errors).toBeUndefined();
  });
});
