/**
 * GET /api/v1/providers/{providerCode}/versions/{from}/diff/{to} and Query.versionDiff: the RFC 6902
 * JSON Patch between two versions' snapshots, for whoever may see the provider's versions.
 */
import { describe, expect, test } from "@jest/globals";
import { applyPatch } from "rfc6902";
import { uniqueCode } from "../builders.ts";
import { call, expectProblem, gql, intake, reviewerToken } from "../helpers.ts";

const diff = (providerCode: string, from: number | string, to: number | string, token?: string) =>
  call("GET", `/api/v1/providers/${providerCode}/versions/${from}/diff/${to}`, token ? { token } : {});
const snapshot = async (providerCode: string, version: number, token?: string) => {
  const answer = await call("GET", `/api/v1/providers/${providerCode}/versions/${version}`, token ? { token } : {});
  expect(answer.status).toBe(200);
  return answer.body.snapshot as Record<string, unknown>;
};
const patch = async (providerCode: string, token: string, body: Record<string, unknown>) => {
  const answer = await call("PATCH", `/api/v1/providers/${providerCode}`, { token, body });
  expect(answer.status).toBe(200);
};

/** A patch as RFC 6902 defines it: members an operation does not use are dropped. */
function strict(ops: { op: string; path: string; from: string | null; value: unknown }[]) {
  return ops.map(({ op, path, from, value }) =>
    op === "remove" ? { op, path } : op === "move" || op === "copy" ? { op, path, from } : { op, path, value },
  ) as never[];
}

describe("the diff between two versions", () => {
  test("is the minimal JSON Patch, forwards, backwards and empty", async () => {
    const p = await intake({ labels: ["maps", "routing"] });
    await patch(p.providerCode, p.accessToken, {
      summary: "Plans routes for vans and bikes",
      labels: ["maps", "bikes"],
    });
    const forward = await diff(p.providerCode, 1, 2);
    expect(forward.status).toBe(200);
    expect(forward.headers.get("content-type")).toMatch(/^application\/json/);
    expect(forward.body).toEqual([
      { op: "replace", path: "/summary", from: null, value: "Plans routes for vans and bikes" },
      { op: "replace", path: "/labels/1", from: null, value: "bikes" },
    ]);
    const backward = await diff(p.providerCode, 2, 1);
    expect(backward.body).toEqual([
      { op: "replace", path: "/summary", from: null, value: "Plans delivery routes across a city" },
      { op: "replace", path: "/labels/1", from: null, value: "routing" },
    ]);
    expect((await diff(p.providerCode, 2, 2)).body).toEqual([]);

    // Applying it to one snapshot gives the other, both ways.
    for (const [from, to, ops] of [
      [1, 2, forward.body],
      [2, 1, backward.body],
    ] as const) {
      const document = await snapshot(p.providerCode, from);
      expect(applyPatch(document, strict(ops)).every((r) => r === null)).toBe(true);
      expect(document).toEqual(await snapshot(p.providerCode, to));
    }
  });

  test("a missing version or provider is a 404; a version that is not a number a 400", async () => {
    const p = await intake();
    expectProblem(await diff(p.providerCode, 1, 2), 404, "NOT_FOUND");
    expectProblem(await diff(p.providerCode, 0, 1), 404, "NOT_FOUND");
    expectProblem(await diff(uniqueCode("missing"), 1, 1), 404, "NOT_FOUND");
    expectProblem(await diff(p.providerCode, "one", 1), 400, "BAD_USER_INPUT");
  });

  test("follows the versions' visibility, and shows contactEmail only to the owner and reviewers", async () => {
    const p = await intake({ visibility: "PRIVATE" });
    await patch(p.providerCode, p.accessToken, { contactEmail: "new@example.com" });
    const other = await intake();
    expectProblem(await diff(p.providerCode, 1, 2), 404, "NOT_FOUND");
    expectProblem(await diff(p.providerCode, 1, 2, other.accessToken), 404, "NOT_FOUND");
    const owner = await diff(p.providerCode, 1, 2, p.accessToken);
    expect(owner.body).toEqual([{ op: "replace", path: "/contactEmail", from: null, value: "new@example.com" }]);
    expect((await diff(p.providerCode, 1, 2, await reviewerToken())).body).toEqual(owner.body);

    // An UNLISTED provider's versions are public, its contact is not: the change is invisible.
    const q = await intake({ visibility: "UNLISTED" });
    await patch(q.providerCode, q.accessToken, { contactEmail: "new@example.com" });
    const visitor = await diff(q.providerCode, 1, 2);
    expect(visitor.status).toBe(200);
    expect(visitor.body).toEqual([]);
    expect(visitor.text).not.toContain("example.com");
  });

  test("a lifecycle change (kept in the snapshot while not ACTIVE) is in the patch, and applies", async () => {
    const p = await intake();
    const deprecated = await call("POST", `/api/v1/providers/${p.providerCode}/lifecycle`, {
      token: p.accessToken,
      body: { state: "DEPRECATED", message: "Use the next one" },
    });
    expect(deprecated.status).toBe(200);
    const answer = await diff(p.providerCode, 1, 2);
    expect(answer.body).toEqual([
      { op: "replace", path: "/lifecycle", from: null, value: "DEPRECATED" },
      { op: "replace", path: "/lifecycleMessage", from: null, value: "Use the next one" },
    ]);
    const document = await snapshot(p.providerCode, 1);
    expect(applyPatch(document, strict(answer.body)).every((r) => r === null)).toBe(true);
    expect(document).toEqual(await snapshot(p.providerCode, 2));
  });

  test("GraphQL versionDiff answers the same operations", async () => {
    const p = await intake({ capabilities: [{ key: "plan", name: "Plan" }] });
    await patch(p.providerCode, p.accessToken, { capabilities: [], description: "Now described" });
    const answer = await gql(
      `query($code: String!) { versionDiff(providerCode: $code, from: 1, to: 2) { op path from value } }`,
      { code: p.providerCode },
    );
    expect(answer.body.errors).toBeUndefined();
    expect(answer.body.data.versionDiff).toEqual((await diff(p.providerCode, 1, 2)).body);
    expect(answer.body.data.versionDiff).toEqual([
      { op: "replace", path: "/description", from: null, value: "Now described" },
      { op: "remove", path: "/capabilities/0", from: null, value: null },
    ]);
    const missing = await gql(`query($code: String!) { versionDiff(providerCode: $code, from: 1, to: 9) { op } }`, {
      code: p.providerCode,
    });
    expect(missing.body.errors?.[0]?.extensions?.code).toBe("NOT_FOUND");
  });
});
