/** The provider rules as pure functions: intake and PATCH validation, derived codes, changed fields. */
import { describe, expect, test } from "@jest/globals";
import {
  applyPatch,
  changedFields,
  deriveProviderCode,
  OWNER_FIELDS,
  PROVIDER_CODE_PATTERN,
  type Profile,
  snapshotOf,
  validateIntake,
  validatePatch,
} from "../../src/providers/provider.rules.ts";

const valid = () => ({
  name: "  Route Planner ",
  summary: "Plans routes",
  agentType: "ASSISTANT",
  contactEmail: "ops@example.com",
  endpoint: { url: "https://agent.example.com/a2a", protocol: "A2A", authScheme: "BEARER" },
});

function paths(result: ReturnType<typeof validateIntake> | ReturnType<typeof validatePatch>): string[] {
  if (result.ok) throw new Error("expected a refusal");
  return result.errors.map((e) => e.path);
}

describe("validateIntake", () => {
  test("normalises and fills defaults", () => {
    const result = validateIntake({ ...valid(), labels: [" A ", "b", "a"] });
    expect(result.ok).toBe(true);
    if (!result.ok) return;
    expect(result.value).toMatchObject({
      name: "Route Planner",
      description: null,
      labels: ["a", "b"],
      visibility: "PUBLIC",
      capabilities: [],
      models: [],
      tools: [],
      policy: null,
      roles: [],
      endpoint: { url: "https://agent.example.com/a2a", protocol: "A2A", authScheme: "BEARER", healthUrl: null },
    });
  });

  test.each(["name", "summary", "agentType", "contactEmail", "endpoint"])("requires %s", (field) => {
    const input: Record<string, unknown> = valid();
    delete input[field];
    expect(paths(validateIntake(input))).toEqual([field]);
  });

  test("an undefined value counts as absent", () => {
    expect(paths(validateIntake({ ...valid(), name: undefined }))).toEqual(["name"]);
    expect(validateIntake({ ...valid(), description: undefined }).ok).toBe(true);
  });

  test("refuses unknown keys", () => {
    const result = validateIntake({ ...valid(), trustTier: "OFFICIAL" });
    expect(result.ok).toBe(false);
    if (!result.ok) expect(result.errors[0]?.message).toContain("trustTier");
  });

  test("summary is one line", () => {
    expect(paths(validateIntake({ ...valid(), summary: "two\nlines" }))).toEqual(["summary"]);
  });

  test("length limits", () => {
    expect(paths(validateIntake({ ...valid(), name: "x".repeat(121) }))).toEqual(["name"]);
    expect(paths(validateIntake({ ...valid(), summary: "x".repeat(281) }))).toEqual(["summary"]);
    expect(paths(validateIntake({ ...valid(), description: "x".repeat(10_001) }))).toEqual(["description"]);
    expect(validateIntake({ ...valid(), description: "x".repeat(10_000) }).ok).toBe(true);
  });

  test("URLs: https anywhere, http on loopback only, no credentials", () => {
    const at = (url: string) => validateIntake({ ...valid(), endpoint: { ...valid().endpoint, url } });
    expect(at("https://a.example.com/").ok).toBe(true);
    expect(at("http://localhost/").ok).toBe(true);
    expect(at("http://127.0.0.2:8080/").ok).toBe(true);
    expect(at("http://[::1]/").ok).toBe(true);
    expect(paths(at("http://a.example.com/"))).toEqual(["endpoint.url"]);
    expect(paths(at("http://localhost.example.com/"))).toEqual(["endpoint.url"]);
    expect(paths(at("https://u:p@a.example.com/"))).toEqual(["endpoint.url"]);
    expect(paths(at("javascript:alert(1)"))).toEqual(["endpoint.url"]);
  });

  test("duplicate capability keys and tool names", () => {
    expect(
      paths(
        validateIntake({
          ...valid(),
          capabilities: [
            { key: "k", name: "A" },
            { key: "k", name: "B" },
          ],
        }),
      ),
    ).toEqual(["capabilities.1.key"]);
    expect(
      paths(
        validateIntake({
          ...valid(),
          tools: [
            { name: "t", kind: "MCP" },
            { name: "t", kind: "MCP" },
          ],
        }),
      ),
    ).toEqual(["tools.1.name"]);
  });

  test("roles take an email or a handle", () => {
    expect(validateIntake({ ...valid(), roles: [{ subject: "@octo-cat", role: "OWNER" }] }).ok).toBe(true);
    expect(validateIntake({ ...valid(), roles: [{ subject: "a@b.example", role: "MAINTAINER" }] }).ok).toBe(true);
    expect(paths(validateIntake({ ...valid(), roles: [{ subject: "not a handle!", role: "OWNER" }] }))).toEqual([
      "roles.0.subject",
    ]);
  });

  test("provider codes follow the pattern", () => {
    expect(validateIntake({ ...valid(), providerCode: "abc" }).ok).toBe(true);
    expect(paths(validateIntake({ ...valid(), providerCode: "Abc" }))).toEqual(["providerCode"]);
  });
});

describe("validatePatch", () => {
  test("only the keys present, normalised", () => {
    const result = validatePatch({ summary: " New ", labels: ["X", "x"], name: undefined });
    expect(result).toEqual({ ok: true, value: { summary: "New", labels: ["x"] } });
  });

  test("an empty patch is refused", () => {
    expect(paths(validatePatch({}))).toEqual(["(body)"]);
    expect(paths(validatePatch({ name: undefined }))).toEqual(["(body)"]);
  });

  test("null clears nullable fields and is refused for required ones", () => {
    expect(validatePatch({ description: null })).toEqual({ ok: true, value: { description: null } });
    expect(validatePatch({ policy: null })).toEqual({ ok: true, value: { policy: null } });
    expect(paths(validatePatch({ name: null }))).toEqual(["name"]);
  });

  test("null for the endpoint is refused once merged onto a profile without a package, taken onto one with", () => {
    const intake = (extra: Record<string, unknown>) => {
      const result = validateIntake({ ...valid(), ...extra });
      if (!result.ok) throw new Error("expected a valid intake");
      return result.value as Profile;
    };
    const patch = validatePatch({ endpoint: null });
    if (!patch.ok) throw new Error("expected a valid patch");
    expect(applyPatch(intake({}), patch.value)).toEqual({
      ok: false,
      errors: [{ path: "endpoint", message: "is required unless the agent ships as at least one package" }],
    });
    const pkg = {
      registryType: "PYPI",
      identifier: "mcp-server-fetch",
      version: "2025.1.17",
      transport: { type: "STDIO" },
    };
    const merged = applyPatch(intake({ packages: [pkg] }), patch.value);
    expect(merged.ok && merged.value.endpoint).toBeNull();
  });

  test("an intake with neither an endpoint nor a package names the endpoint, beside the other problems", () => {
    const { endpoint: _, ...none } = valid();
    expect(paths(validateIntake({ ...none, name: "" }))).toEqual(["name", "endpoint"]);
    expect(paths(validateIntake({ ...none, endpoint: null, packages: [] }))).toEqual(["endpoint"]);
  });

  test.each(["trustTier", "reviewStage", "providerCode", "version", "colour"])("refuses %s", (key) => {
    const result = validatePatch({ summary: "x", [key]: "y" });
    expect(result.ok).toBe(false);
    if (!result.ok) expect(result.errors.map((e) => e.message).join(" ")).toContain(key);
  });
});

describe("deriveProviderCode", () => {
  test.each([
    ["Route Planner", "route-planner"],
    ["  Crème Brûlée  Bot!! ", "creme-brulee-bot"],
    ["A", "agent-a"],
    ["!!!", "agent-x"],
    ["Ab", "agent-ab"],
    ["x".repeat(100), "x".repeat(56)],
    [`${"a".repeat(55)} b`, "a".repeat(55)],
  ])("%s → %s", (name, code) => {
    expect(deriveProviderCode(name)).toBe(code);
    expect(code).toMatch(PROVIDER_CODE_PATTERN);
  });
});

describe("changedFields and snapshotOf", () => {
  const profile = (): Profile => {
    const result = validateIntake(valid());
    if (!result.ok) throw new Error("invalid fixture");
    const { providerCode: _code, ...rest } = result.value;
    return rest as Profile;
  };

  test("names exactly the owner fields that differ, in snapshot order", () => {
    const before = profile();
    expect(changedFields(before, { ...before })).toEqual([]);
    expect(changedFields(before, { ...before, labels: ["new"], name: "Other" })).toEqual(["name", "labels"]);
    expect(
      changedFields(before, { ...before, endpoint: { ...before.endpoint, protocol: "MCP" } as Profile["endpoint"] }),
    ).toEqual(["endpoint"]);
  });

  test("a snapshot holds the owner fields only, in a fixed order", () => {
    const snapshot = snapshotOf({ ...profile(), trustTier: "OFFICIAL", id: 7 } as unknown as Profile);
    expect(Object.keys(snapshot)).toEqual([...OWNER_FIELDS]);
  });
});
