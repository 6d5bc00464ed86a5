/** What only GraphQL does for Query.providers (the rest is tests/features/lists.test.ts): a document naming an unknown argument is refused. */
import { describe, expect, test } from "@jest/globals";
import { gql, gqlCodes } from "../helpers.ts";

describe("Query.providers arguments", () => {
  test("an unknown argument does not validate: GRAPHQL_VALIDATION_FAILED", async () => {
    const answer = await gql("{ providers(orderBy: NAME) { items { providerCode } } }");
    expect(gqlCodes(answer)).toEqual(["GRAPHQL_VALIDATION_FAILED"]);
  });
});
