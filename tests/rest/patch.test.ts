/** What only REST does for PATCH /api/v1/providers/{providerCode}: JSON Merge Patch and its media type, its guard on body keys and types, a PATCH without a body, and one problem body for every credential failure; the shared rules are in tests/features/patch.test.ts. */
import { describe, expect, test } from "@jest/globals";
import { uniqueCode } from "../builders.ts";
import { expectPlainWords } from "../doors.ts";
import { call, db, errorPaths, expectProblem, intake, versionCount } from "../helpers.ts";

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
      expect(errorPaths(answer)).toEqual([`/${key}`]);
      expect(await state(created.providerCode)).toEqual(before);
    },
  );

  test("an unknown key is a 400 naming it", async () => {
    const created = await intake();
    const before = await state(created.providerCode);
    const answer = await patch(created.providerCode, { summary: "x", colour: "blue" }, { token: created.accessToken });
    expectProblem(answer, 400, "BAD_USER_INPUT");
    expect(errorPaths(answer)).toEqual(["/colour"]);
    expect(await state(created.providerCode)).toEqual(before);
  });

  test("no body at all is a 400", async () => {
    const created = await intake();
    const answer = await call("PATCH", `/api/v1/providers/${created.providerCode}`, { token: created.accessToken });
    expectProblem(answer, 400, "BAD_USER_INPUT");
  });
});

describe("JSON Merge Patch (RFC 7396)", () => {
  const mergePatch = (providerCode: string, body: unknown, token: string, type = "application/merge-patch+json") =>
    call("PATCH", `/api/v1/providers/${providerCode}`, { body, token, headers: { "content-type": type } });

  test("application/merge-patch+json is accepted: present keys change, null clears, absent keys stay", async () => {
    const created = await intake({ description: "Something", homepageUrl: "https://home.example.com/" });
    const answer = await mergePatch(
      created.providerCode,
      { summary: "Merged", description: null, policy: null },
      created.accessToken,
    );
    expect(answer.status).toBe(200);
    expect(answer.headers.get("etag")).toBe('"2"');
    expect(answer.body).toMatchObject({
      summary: "Merged",
      description: null,
      policy: null,
      homepageUrl: "https://home.example.com/",
      labels: ["maps", "routing"],
      version: 2,
    });
  });

  test("application/merge-patch+json with a charset parameter is accepted too", async () => {
    const created = await intake();
    const answer = await mergePatch(
      created.providerCode,
      { homepageUrl: null },
      created.accessToken,
      "application/merge-patch+json; charset=utf-8",
    );
    expect(answer.status).toBe(200);
    expect(answer.body.homepageUrl).toBeNull();
  });

  test("another patch format (JSON Patch) is a 415 that names the accepted ones in Accept-Patch", async () => {
    const created = await intake();
    const before = await state(created.providerCode);
    const answer = await mergePatch(
      created.providerCode,
      [{ op: "replace", path: "/summary", value: "Patched" }],
      created.accessToken,
      "application/json-patch+json",
    );
    expectProblem(answer, 415, "UNSUPPORTED_MEDIA_TYPE");
    expect(answer.headers.get("accept-patch")).toBe("application/merge-patch+json, application/json");
    expect(await state(created.providerCode)).toEqual(before);
  });

  test("merge-patch+json is a PATCH body's type only: an intake sent as one is a 415", async () => {
    const answer = await call("POST", "/api/v1/providers", {
      body: { name: "x" },
      headers: { "content-type": "application/merge-patch+json" },
    });
    expectProblem(answer, 415, "UNSUPPORTED_MEDIA_TYPE");
    expect(answer.headers.get("accept-patch")).toBeNull();
  });

  test.each([
    ["summary", "must not be null"],
    ["name", "must not be null"],
    ["labels", "must not be null"],
    // Clearable only while a package remains: this profile has none.
    ["endpoint", "is required unless the agent ships as at least one package"],
    ["agentType", "must not be null"],
  ])("null for %s, which this profile must have, is a 400 naming it; nothing changes", async (key, message) => {
    const created = await intake();
    const before = await state(created.providerCode);
    const answer = await mergePatch(created.providerCode, { [key]: null }, created.accessToken);
    expectProblem(answer, 400, "BAD_USER_INPUT");
    expectPlainWords(answer);
    expect(answer.body.errors).toEqual([{ path: `/${key}`, message }]);
    expect(await state(created.providerCode)).toEqual(before);
  });

  test('"labels": "weather" is a 400 (not a list of one), and the profile keeps its labels and version', async () => {
    const created = await intake();
    const answer = await mergePatch(created.providerCode, { labels: "weather" }, created.accessToken);
    expectProblem(answer, 400, "BAD_USER_INPUT");
    expectPlainWords(answer);
    expect(answer.body.errors).toEqual([{ path: "/labels", message: "must be a list" }]);
    const read = await call("GET", `/api/v1/providers/${created.providerCode}`, { token: created.accessToken });
    expect([read.body.labels, read.body.version]).toEqual([["maps", "routing"], 1]);
  });

  test("a section's members merge onto the current ones: a partial endpoint keeps the rest", async () => {
    const created = await intake();
    const answer = await mergePatch(
      created.providerCode,
      { endpoint: { url: "https://b.example.com", healthUrl: "https://b.example.com/health" } },
      created.accessToken,
    );
    expect(answer.status).toBe(200);
    expect(answer.headers.get("etag")).toBe('"2"');
    const endpoint = {
      url: "https://b.example.com",
      protocol: "A2A",
      authScheme: "BEARER",
      healthUrl: "https://b.example.com/health",
      transport: null,
      headers: [],
      variables: [],
    };
    expect(answer.body.endpoint).toEqual(endpoint);
    const read = await call("GET", `/api/v1/providers/${created.providerCode}`, { token: created.accessToken });
    expect([read.body.endpoint, read.body.version]).toEqual([endpoint, 2]);
  });

  test("a merged section that is incomplete is a 400 naming the member by its pointer; nothing changes", async () => {
    const created = await intake();
    const before = await state(created.providerCode);
    const answer = await mergePatch(
      created.providerCode,
      { policy: { termsUrl: "https://b.example.com/terms" } },
      created.accessToken,
    );
    expectProblem(answer, 400, "BAD_USER_INPUT");
    expectPlainWords(answer);
    expect(answer.body.errors).toEqual([{ path: "/policy/humanOversight", message: "is required" }]);
    expect(await state(created.providerCode)).toEqual(before);
  });

  test("a member of a section that is not known is a 400 naming it", async () => {
    const created = await intake();
    const before = await state(created.providerCode);
    const answer = await mergePatch(created.providerCode, { endpoint: { port: 443 } }, created.accessToken);
    expectProblem(answer, 400, "BAD_USER_INPUT");
    expectPlainWords(answer);
    expect(errorPaths(answer)).toEqual(["/endpoint/port"]);
    expect(await state(created.providerCode)).toEqual(before);
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
