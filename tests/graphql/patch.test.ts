/** What only GraphQL does for Mutation.updateProvider: a read-only field is no argument of the document at all; the shared rules are in tests/features/patch.test.ts. */
import { describe, expect, test } from "@jest/globals";
import { db, gql, gqlCodes, intake, versionCount } from "../helpers.ts";

async function state(providerCode: string) {
  const row = await db.provider.findUniqueOrThrow({ where: { providerCode } });
  return { row, versions: await versionCount(providerCode) };
}

describe("Mutation.updateProvider refusals write nothing", () => {
  test("a read-only field is not an argument at all", async () => {
    const created = await intake();
    const before = await state(created.providerCode);
    const answer = await gql(
      `mutation { updateProvider(providerCode: "${created.providerCode}", trustTier: OFFICIAL) { version } }`,
      {},
      { token: created.accessToken },
    );
    expect(gqlCodes(answer)).toEqual(["BAD_USER_INPUT"]);
    expect(answer.body.errors[0].message).toContain("trustTier");
    expect(await state(created.providerCode)).toEqual(before);
  });
});
