/**
 * The lifecycle and the change-feed arguments over GraphQL: `setProviderLifecycle`,
 * `providers(includeRetired, updatedSince)` on both the list and the search path, the review queue's
 * `updatedSince`, and the error codes.
 */
import { describe, expect, test } from "@jest/globals";
import { approve, db, gql, gqlCodes, intake, reviewerToken, uniqueCode } from "../helpers.ts";

const SET = `mutation Set($code: String!, $state: Lifecycle!, $message: String, $successor: String) {
  setProviderLifecycle(providerCode: $code, state: $state, message: $message, successorCode: $successor) {
    providerCode lifecycle lifecycleMessage successorCode version predecessors
    reviewTimeline { kind }
  }
}`;

const LIST = `query List($labels: [String!], $search: String, $includeRetired: Boolean, $updatedSince: String, $cursor: String, $limit: Int) {
  providers(labels: $labels, search: $search, includeRetired: $includeRetired, updatedSince: $updatedSince, cursor: $cursor, limit: $limit) {
    items { providerCode lifecycle lifecycleMessage successorCode updatedAt }
    nextCursor
  }
}`;

describe("setProviderLifecycle", () => {
  test("deprecate with a successor; the successor's predecessors; retire; the owner cannot undo it", async () => {
    const next = await intake();
    const old = await intake();
    const deprecated = await gql(
      SET,
      { code: old.providerCode, state: "DEPRECATED", message: "use the next one", successor: next.providerCode },
      { token: old.accessToken },
    );
    expect(deprecated.body.errors).toBeUndefined();
    expect(deprecated.body.data.setProviderLifecycle).toMatchObject({
      lifecycle: "DEPRECATED",
      lifecycleMessage: "use the next one",
      successorCode: next.providerCode,
      version: 2,
    });
    expect(deprecated.body.data.setProviderLifecycle.reviewTimeline.at(-1)).toEqual({ kind: "DEPRECATED" });

    const successor = await gql(`query($code: String!) { provider(providerCode: $code) { predecessors lifecycle } }`, {
      code: next.providerCode,
    });
    expect(successor.body.data.provider).toEqual({ predecessors: [old.providerCode], lifecycle: "ACTIVE" });

    const retired = await gql(SET, { code: old.providerCode, state: "RETIRED" }, { token: old.accessToken });
    expect(retired.body.data.setProviderLifecycle).toMatchObject({ lifecycle: "RETIRED", version: 3 });
    const undo = await gql(SET, { code: old.providerCode, state: "ACTIVE" }, { token: old.accessToken });
    expect(gqlCodes(undo)).toEqual(["CONFLICT"]);

    const versions = await gql(
      `query($code: String!) { providerVersion(providerCode: $code, version: 2) { changedFields snapshot { lifecycle lifecycleMessage successorCode name } } }`,
      { code: old.providerCode },
    );
    expect(versions.body.data.providerVersion).toEqual({
      changedFields: ["lifecycle", "lifecycleMessage", "successorCode"],
      snapshot: {
        lifecycle: "DEPRECATED",
        lifecycleMessage: "use the next one",
        successorCode: next.providerCode,
        name: "Route Planner",
      },
    });
  });

  test("error codes: 401, 403, 404, 400 with the field, 409; nothing changed", async () => {
    const p = await intake();
    const other = await intake();
    expect(gqlCodes(await gql(SET, { code: p.providerCode, state: "RETIRED" }))).toEqual(["UNAUTHENTICATED"]);
    expect(gqlCodes(await gql(SET, { code: p.providerCode, state: "RETIRED" }, { token: other.accessToken }))).toEqual([
      "FORBIDDEN",
    ]);
    expect(
      gqlCodes(await gql(SET, { code: uniqueCode("none"), state: "RETIRED" }, { token: await reviewerToken() })),
    ).toEqual(["NOT_FOUND"]);
    const noMessage = await gql(SET, { code: p.providerCode, state: "DEPRECATED" }, { token: p.accessToken });
    expect(gqlCodes(noMessage)).toEqual(["BAD_USER_INPUT"]);
    expect(noMessage.body.errors[0].extensions.errors).toEqual([{ path: "message", message: expect.any(String) }]);
    expect(gqlCodes(await gql(SET, { code: p.providerCode, state: "SUNSET" }, { token: p.accessToken }))).toEqual([
      "BAD_USER_INPUT",
    ]);
    expect(gqlCodes(await gql(SET, { code: p.providerCode, state: "ACTIVE" }, { token: p.accessToken }))).toEqual([
      "CONFLICT",
    ]);
    const row = await db.provider.findUniqueOrThrow({ where: { providerCode: p.providerCode } });
    expect(row).toMatchObject({ lifecycle: "ACTIVE", version: 1 });
  });
});

describe("providers(includeRetired, updatedSince)", () => {
  test("the search path hides RETIRED unless asked and filters by updatedSince", async () => {
    const word = `lcq${uniqueCode("w").replace(/-/g, "")}`;
    const first = await intake({ description: word });
    const second = await intake({ description: word });
    for (const p of [first, second]) await approve(p.providerCode);
    await gql(SET, { code: first.providerCode, state: "RETIRED" }, { token: first.accessToken });
    const codes = (a: { body: any }) =>
      a.body.data.providers.items.map((i: { providerCode: string }) => i.providerCode);

    expect(codes(await gql(LIST, { search: word }))).toEqual([second.providerCode]);
    expect(codes(await gql(LIST, { search: word, includeRetired: true })).sort()).toEqual(
      [first.providerCode, second.providerCode].sort(),
    );
    // The retirement is the newest write: updatedSince its time leaves only it (search and list paths).
    const retiredAt = (
      await db.provider.findUniqueOrThrow({ where: { providerCode: first.providerCode }, select: { updatedAt: true } })
    ).updatedAt.toISOString();
    expect(codes(await gql(LIST, { search: word, includeRetired: true, updatedSince: retiredAt }))).toEqual([
      first.providerCode,
    ]);
    expect(codes(await gql(LIST, { search: word, updatedSince: retiredAt }))).toEqual([]);
    expect(codes(await gql(LIST, { search: word, includeRetired: true, updatedSince: "2000-01-01" })).length).toBe(2);

    const bad = await gql(LIST, { updatedSince: "not a time" });
    expect(gqlCodes(bad)).toEqual(["BAD_USER_INPUT"]);
    expect(bad.body.errors[0].extensions.errors).toEqual([{ path: "updatedSince", message: expect.any(String) }]);
  });

  test("the change feed pages oldest change first", async () => {
    const label = uniqueCode("gfeed");
    const made = [];
    for (let i = 0; i < 3; i++) {
      const p = await intake({ labels: [label] });
      await approve(p.providerCode);
      made.push(p.providerCode);
    }
    const seen: string[] = [];
    let cursor: string | null = null;
    do {
      const answer: { body: any } = await gql(LIST, {
        labels: [label],
        updatedSince: "2000-01-01T00:00:00Z",
        limit: 1,
        cursor,
      });
      seen.push(...answer.body.data.providers.items.map((i: { providerCode: string }) => i.providerCode));
      cursor = answer.body.data.providers.nextCursor;
    } while (cursor);
    expect(seen).toEqual(made);
  });
});
