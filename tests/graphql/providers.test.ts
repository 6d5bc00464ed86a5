/** What only GraphQL does among the seed operations: a variable error fails the whole request, with no `data` at all; the shared operations are in tests/features/providers.test.ts. */
import { describe, expect, test } from "@jest/globals";
import { intakeBody } from "../builders.ts";
import { db, gql, gqlCodes } from "../helpers.ts";

const CREATE = `
  mutation Create(
    $providerCode: String, $name: String!, $summary: String!, $labels: [String!], $agentType: AgentType!,
    $contactEmail: String!, $endpoint: EndpointInput!
  ) {
    createProvider(
      providerCode: $providerCode, name: $name, summary: $summary, labels: $labels, agentType: $agentType,
      contactEmail: $contactEmail, endpoint: $endpoint
    ) { providerCode reviewCode accessToken }
  }`;

describe("Mutation.createProvider", () => {
  test("a missing required argument is BAD_USER_INPUT, answers no data at all, and writes nothing", async () => {
    const { summary: _dropped, ...body } = intakeBody();
    const answer = await gql(CREATE, body);
    expect(gqlCodes(answer)).toEqual(["BAD_USER_INPUT"]);
    expect(answer.body.data).toBeUndefined();
    expect(await db.provider.count({ where: { providerCode: body.providerCode as string } })).toBe(0);
  });
});
