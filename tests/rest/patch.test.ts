/** What only REST does for PATCH /api/v1/providers/{providerCode}: its guard on body keys, a PATCH without a body, and one problem body for every credential failure; the shared rules are in tests/features/patch.test.ts. */
import { describe, expect, test } from "@jest/globals";
import { call, db, errorPaths, expectProblem, intake, uniqueCode, versionCount } from "../helpers.ts";

const patch = (providerCode: string, body: unknown, options: { token?: string } = {}) =>
  call("PATCH", `/api/v1/providers/${providerCode}`, { body, ...options });

/** The provider row and its version count, to compare before and after a refusal. */
async function state(providerCode: string) {
  const row = await db.provider.findUniqueOrThrow({ where: { providerCode } });
  return { row, versions: await versionCount(providerCode) };
}

describe("the guard: refused bodies change nothing", () => {
  test.each(["trustTier", "reviewStage", "providerCode", "version"])(
    "%s is not patchable: 400 naming it",
    async (key) => {
      const created = await intake();
      const before = await state(created.providerCode);
      const value = key === "version" ? 9 : key === "providerCode" ? uniqueCode() : "OFFICIAL";
      const answer = await patch(
        created.providerCode,
        { summary: "Sneaky", [key]: value },
        { token: created.accessToken },
      );
      expectProblem(answer, 400, "BAD_USER_INPUT");
      expect(errorPaths(answer)).toEqual([key]);
      expect(await state(created.providerCode)).toEqual(before);
    },
  );

  test("an unknown key is a 400 naming it", async () => {
    const created = await intake();
    const before = await state(created.providerCode);
    const answer = await patch(created.providerCode, { summary: "x", colour: "blue" }, { token: created.accessToken });
    expectProblem(answer, 400, "BAD_USER_INPUT");
    expect(errorPaths(answer)).toEqual(["colour"]);
    expect(await state(created.providerCode)).toEqual(before);
  });

  test("no body at all is a 400", async () => {
    const created = await intake();
    const answer = await call("PATCH", `/api/v1/providers/${created.providerCode}`, { token: created.accessToken });
    expectProblem(answer, 400, "BAD_USER_INPUT");
  });
});

describe("who may PATCH", () => {
  test("every credential failure, none at all included, answers the same problem body", async () => {
    const created = await intake();
    const unknownToken = `${created.accessToken.slice(0, 4)}${"0".repeat(32)}`;
    // The token with its last character changed (never to itself: that would be the token).
    const altered = `${created.accessToken.slice(0, -1)}${created.accessToken.endsWith("x") ? "y" : "x"}`;
    const bodies = new Set<string>();
    for (const authorization of [
      undefined,
      "Bearer",
      "Basic dXNlcjpwYXNz",
      `Bearer ${altered}`,
      `Bearer ${unknownToken}000000`,
      "Bearer not.a.jwt",
    ]) {
      const answer = await call("PATCH", `/api/v1/providers/${created.providerCode}`, {
        body: { summary: "x" },
        headers: authorization ? { authorization } : {},
      });
      expectProblem(answer, 401, "UNAUTHENTICATED");
      expect(answer.headers.get("www-authenticate")).toMatch(/^Bearer\b/);
      bodies.add(answer.text);
    }
    expect(bodies.size).toBe(1);
  });
});
