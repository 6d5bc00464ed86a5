/** schema.graphql is the printed schema; when this fails, run `npm run schema:print` and commit the result. */
import { readFileSync } from "node:fs";
import { describe, expect, test } from "@jest/globals";
import { printSchema } from "graphql";
import { schema } from "../../src/schema.ts";

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
});
