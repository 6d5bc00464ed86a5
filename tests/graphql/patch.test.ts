/** Mutation.updateProvider: the same rules as PATCH /api/v1/providers/{providerCode}. */
import { afterEach, describe, expect, jest, test } from "@jest/globals";
import { createApp } from "../../src/yoga.ts";
import { approve, config, db, errorPaths, gql, gqlCodes, intake, reviewerToken, versionCount } from "../helpers.ts";
import { openCountingDb } from "../perf/counting.db.ts";

const UPDATE = `
  mutation U($code: String!, $name: String, $summary: String, $description: String, $labels: [String!],
             $contactEmail: String, $visibility: Visibility) {
    updateProvider(providerCode: $code, name: $name, summary: $summary, description: $description, labels: $labels,
                   contactEmail: $contactEmail, visibility: $visibility) {
      providerCode name summary description labels visibility version
    }
  }`;

async function state(providerCode: string) {
  const row = await db.provider.findUniqueOrThrow({ where: { providerCode } });
  return { row, versions: await versionCount(providerCode) };
}

afterEach(() => {
  jest.restoreAllMocks();
});

describe("Mutation.updateProvider by the owner", () => {
  test("changes the fields, appends one version, answers the new version and ETag", async () => {
    const created = await intake();
    const answer = await gql(
      UPDATE,
      { code: created.providerCode, summary: "Updated over GraphQL", visibility: "UNLISTED" },
      { token: created.accessToken },
    );
    expect(answer.body.errors).toBeUndefined();
    expect(answer.headers.get("etag")).toBe('"2"');
    expect(answer.body.data.updateProvider).toMatchObject({
      summary: "Updated over GraphQL",
      visibility: "UNLISTED",
      version: 2,
    });
    const versions = await db.providerVersion.findMany({
      where: { provider: { providerCode: created.providerCode } },
      orderBy: { version: "asc" },
    });
    expect(versions.map((v) => v.version)).toEqual([1, 2]);
    expect(versions[1]?.changedFields).toEqual(["summary", "visibility"]);
  });

  test("null clears a nullable field", async () => {
    const created = await intake({ description: "To be cleared" });
    const answer = await gql(UPDATE, { code: created.providerCode, description: null }, { token: created.accessToken });
    expect(answer.body.errors).toBeUndefined();
    expect(answer.body.data.updateProvider.description).toBeNull();
    expect(await versionCount(created.providerCode)).toBe(2);
  });

  test("a stale If-Match is PRECONDITION_FAILED and nothing changes; a matching one passes", async () => {
    const created = await intake();
    const stale = await gql(
      UPDATE,
      { code: created.providerCode, summary: "Stale" },
      { token: created.accessToken, headers: { "if-match": '"7"' } },
    );
    expect(gqlCodes(stale)).toEqual(["PRECONDITION_FAILED"]);
    expect(stale.status).toBe(412);
    expect(await versionCount(created.providerCode)).toBe(1);
    const fresh = await gql(
      UPDATE,
      { code: created.providerCode, summary: "Fresh" },
      { token: created.accessToken, headers: { "if-match": '"1"' } },
    );
    expect(fresh.body.errors).toBeUndefined();
    expect(fresh.body.data.updateProvider.version).toBe(2);
  });
});

describe("Mutation.updateProvider refusals write nothing", () => {
  test("no field to change is BAD_USER_INPUT", async () => {
    const created = await intake();
    const before = await state(created.providerCode);
    const answer = await gql(UPDATE, { code: created.providerCode }, { token: created.accessToken });
    expect(gqlCodes(answer)).toEqual(["BAD_USER_INPUT"]);
    expect(await state(created.providerCode)).toEqual(before);
  });

  test("an invalid value is BAD_USER_INPUT naming it", async () => {
    const created = await intake();
    const before = await state(created.providerCode);
    const answer = await gql(
      UPDATE,
      { code: created.providerCode, summary: "ok", contactEmail: "broken" },
      { token: created.accessToken },
    );
    expect(gqlCodes(answer)).toEqual(["BAD_USER_INPUT"]);
    expect(errorPaths(answer)).toEqual(["contactEmail"]);
    expect(await state(created.providerCode)).toEqual(before);
  });

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

  test("anonymous: UNAUTHENTICATED with WWW-Authenticate", async () => {
    const created = await intake();
    const before = await state(created.providerCode);
    const answer = await gql(UPDATE, { code: created.providerCode, summary: "x" });
    expect(gqlCodes(answer)).toEqual(["UNAUTHENTICATED"]);
    expect(answer.headers.get("www-authenticate")).toMatch(/^Bearer\b/);
    expect(await state(created.providerCode)).toEqual(before);
  });

  test("another agent: FORBIDDEN on a visible provider, NOT_FOUND on a private one", async () => {
    const visible = await intake();
    await approve(visible.providerCode);
    const hidden = await intake({ visibility: "PRIVATE" });
    const other = await intake();
    const beforeVisible = await state(visible.providerCode);
    const beforeHidden = await state(hidden.providerCode);
    expect(
      gqlCodes(await gql(UPDATE, { code: visible.providerCode, summary: "x" }, { token: other.accessToken })),
    ).toEqual(["FORBIDDEN"]);
    expect(
      gqlCodes(await gql(UPDATE, { code: hidden.providerCode, summary: "x" }, { token: other.accessToken })),
    ).toEqual(["NOT_FOUND"]);
    expect(await state(visible.providerCode)).toEqual(beforeVisible);
    expect(await state(hidden.providerCode)).toEqual(beforeHidden);
  });

  test("a reviewer is FORBIDDEN", async () => {
    const created = await intake();
    const answer = await gql(UPDATE, { code: created.providerCode, summary: "x" }, { token: await reviewerToken() });
    expect(gqlCodes(answer)).toEqual(["FORBIDDEN"]);
    expect(await versionCount(created.providerCode)).toBe(1);
  });

  test("a token with a wrong checksum is UNAUTHENTICATED without a database look-up", async () => {
    const created = await intake();
    const chars = created.accessToken.split("");
    chars[10] = chars[10] === "a" ? "b" : "a";
    // An app on a client that records every statement it sends (tests/perf/counting.db.ts).
    const counting = await openCountingDb(config.databaseUrl);
    try {
      const app = createApp({ ...config, responseCache: false }, counting.db);
      const answer = await gql(UPDATE, { code: created.providerCode, summary: "x" }, { app, token: chars.join("") });
      expect(answer.status).toBe(401);
      expect(gqlCodes(answer)).toEqual(["UNAUTHENTICATED"]);
      expect(counting.statements).toEqual([]);
      // The same client does see the look-up for the genuine token.
      const genuine = await gql(
        UPDATE,
        { code: created.providerCode, summary: "y" },
        { app, token: created.accessToken },
      );
      expect(genuine.body.errors).toBeUndefined();
      expect(counting.statements.some((sql) => sql.includes("access_tokens"))).toBe(true);
      expect(await versionCount(created.providerCode)).toBe(2);
    } finally {
      await counting.db.$disconnect();
    }
  });
});
