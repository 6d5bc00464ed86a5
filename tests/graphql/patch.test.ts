/** What only GraphQL does for Mutation.updateProvider: a read-only field is no argument of the document at all, and the If-Match precondition is also an argument (`ifVersion`); the shared rules are in tests/features/patch.test.ts. */
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
    expect(gqlCodes(answer)).toEqual(["GRAPHQL_VALIDATION_FAILED"]);
    expect(answer.body.errors[0].message).toContain("trustTier");
    expect(await state(created.providerCode)).toEqual(before);
  });
});

describe("ifVersion: the If-Match precondition as an argument", () => {
  const UPDATE = `mutation($c: String!, $s: String, $v: Int) {
    updateProvider(providerCode: $c, summary: $s, ifVersion: $v) { version summary }
  }`;

  test("a stale ifVersion is PRECONDITION_FAILED and changes nothing; the current one writes", async () => {
    const created = await intake();
    const before = await state(created.providerCode);
    const stale = await gql(UPDATE, { c: created.providerCode, s: "stale", v: 7 }, { token: created.accessToken });
    expect(stale.body.data).toBeNull();
    expect(gqlCodes(stale)).toEqual(["PRECONDITION_FAILED"]);
    expect(await state(created.providerCode)).toEqual(before);

    const fresh = await gql(UPDATE, { c: created.providerCode, s: "fresh", v: 1 }, { token: created.accessToken });
    expect(fresh.body).toEqual({ data: { updateProvider: { version: 2, summary: "fresh" } } });
  });

  test("with If-Match too, both must hold: when they disagree nothing changes", async () => {
    const created = await intake();
    const before = await state(created.providerCode);
    for (const [ifMatch, v] of [
      ['"2"', 1],
      ['"1"', 2],
    ] as const) {
      const answer = await gql(
        UPDATE,
        { c: created.providerCode, s: "either", v },
        { token: created.accessToken, headers: { "if-match": ifMatch } },
      );
      expect({ ifMatch, v, codes: gqlCodes(answer) }).toEqual({ ifMatch, v, codes: ["PRECONDITION_FAILED"] });
    }
    expect(await state(created.providerCode)).toEqual(before);
    const agreed = await gql(
      UPDATE,
      { c: created.providerCode, s: "both", v: 1 },
      { token: created.accessToken, headers: { "if-match": '"1", "5"' } },
    );
    expect(agreed.body.data.updateProvider.version).toBe(2);
  });

  test("setProviderLifecycle takes it too", async () => {
    const created = await intake();
    const before = await state(created.providerCode);
    const stale = await gql(
      `mutation($c: String!) { setProviderLifecycle(providerCode: $c, state: RETIRED, ifVersion: 3) { lifecycle } }`,
      { c: created.providerCode },
      { token: created.accessToken },
    );
    expect(gqlCodes(stale)).toEqual(["PRECONDITION_FAILED"]);
    expect(await state(created.providerCode)).toEqual(before);
  });
});
