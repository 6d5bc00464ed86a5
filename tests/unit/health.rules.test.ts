/**
 * The prober's pure rules: the state machine, the schedule (confirmation, backoff, jitter), uptime,
 * the list filter, what is probed, and drift.
 */
import { describe, expect, test } from "@jest/globals";
import { afterResult, driftOf, healthFilter, nextCheckAt, targetOf, uptime } from "../../src/health/health.rules.ts";

const at = new Date("2026-11-28T12:00:00Z");
const config = { intervalSeconds: 300, maxBackoffSeconds: 3600 };
const seconds = (d: Date) => (d.getTime() - at.getTime()) / 1000;

describe("the state machine", () => {
  test("a state changes after `confirmations` results in a row agree, not before", () => {
    const up = { state: "UP" as const, pendingState: null, pendingCount: 0 };
    const once = afterResult(up, "DOWN", 2);
    expect(once).toEqual({ state: "UP", pendingState: "DOWN", pendingCount: 1 });
    expect(afterResult(once, "DOWN", 2)).toEqual({ state: "DOWN", pendingState: null, pendingCount: 0 });
    // A result that agrees with the state clears what was pending; another disagreeing one starts over.
    expect(afterResult(once, "UP", 2)).toEqual(up);
    expect(afterResult(once, "UNKNOWN", 2)).toEqual({ state: "UP", pendingState: "UNKNOWN", pendingCount: 1 });
    expect(afterResult(up, "DOWN", 1)).toEqual({ state: "DOWN", pendingState: null, pendingCount: 0 });
    expect(afterResult(afterResult(afterResult(up, "DOWN", 3), "DOWN", 3), "DOWN", 3).state).toBe("DOWN");
  });
});

describe("the schedule", () => {
  const steady = { state: "UP" as const, pendingState: null, pendingCount: 0 };
  test("the interval less at most 10% of jitter", () => {
    expect(seconds(nextCheckAt(steady, 0, at, config, () => 0))).toBe(270);
    expect(seconds(nextCheckAt(steady, 0, at, config, () => 0.999999))).toBeCloseTo(300, 2);
  });
  test("a result awaiting confirmation is checked again within 30 s", () => {
    const pending = { state: "UP" as const, pendingState: "DOWN", pendingCount: 1 };
    expect(seconds(nextCheckAt(pending, 1, at, config, () => 1))).toBe(30);
    expect(seconds(nextCheckAt(pending, 1, at, { ...config, intervalSeconds: 10 }, () => 1))).toBe(10);
  });
  test("DOWN backs off, doubling up to the cap, never below the interval", () => {
    const down = { state: "DOWN" as const, pendingState: null, pendingCount: 0 };
    const gaps = [1, 2, 3, 4, 5, 30].map((streak) => seconds(nextCheckAt(down, streak, at, config, () => 1)));
    expect(gaps).toEqual([300, 600, 1200, 2400, 3600, 3600]);
  });
});

test("uptime is the share of checks answering; null without checks", () => {
  expect(uptime([])).toBeNull();
  expect(
    uptime([
      { checks: 3, up: 3 },
      { checks: 1, up: 0 },
    ]),
  ).toBe(0.75);
  expect(uptime([{ checks: 3, up: 1 }])).toBe(0.3333);
});

test("the health filter takes states listed or comma-separated, and names a wrong one", () => {
  expect(healthFilter(["up,AUTH_REQUIRED", "up"])).toEqual({ ok: true, value: ["UP", "AUTH_REQUIRED"] });
  expect(healthFilter(undefined)).toEqual({ ok: true, value: [] });
  const bad = healthFilter(["UP,SLEEPY"]);
  expect(bad.ok).toBe(false);
  expect(!bad.ok && bad.errors[0]?.message).toMatch(/"SLEEPY" is not a health state/);
});

test("what is probed: MCP and A2A endpoints, other protocols by their health URL, nothing with URL variables", () => {
  const endpoint = { authScheme: "NONE" as const, headers: [], variables: [], healthUrl: null, transport: null };
  expect(targetOf({ ...endpoint, url: "https://a.example/mcp", protocol: "MCP" })).toEqual({
    protocol: "MCP",
    url: "https://a.example/mcp",
    transport: "STREAMABLE_HTTP",
  });
  expect(targetOf({ ...endpoint, url: "https://a.example/mcp", protocol: "MCP", transport: "SSE" })?.transport).toBe(
    "SSE",
  );
  expect(targetOf({ ...endpoint, url: "https://a.example/api", protocol: "HTTP_JSON" })).toBeNull();
  expect(
    targetOf({ ...endpoint, url: "https://a.example/api", protocol: "OTHER", healthUrl: "https://a.example/health" }),
  ).toMatchObject({ protocol: "HTTP", url: "https://a.example/health" });
  expect(targetOf({ ...endpoint, url: "https://{tenant}.example/mcp", protocol: "MCP" })).toBeNull();
  expect(targetOf(null)).toBeNull();
});

describe("drift", () => {
  const tools = (...names: string[]) => ({
    kind: "MCP_TOOLS" as const,
    tools: names.map((name) => ({ name, inputSchema: { type: "object" } })),
  });
  test("MCP: none while the live tools match what was seen and declared", () => {
    expect(driftOf(tools("a", "b"), tools("a", "b"), { tools: [{ name: "a" }, { name: "b" }], card: null })).toBeNull();
  });
  test("MCP: a changed tool, an undeclared one and a missing one are each named", () => {
    const live = {
      kind: "MCP_TOOLS" as const,
      tools: [
        { name: "a", inputSchema: { type: "string" } },
        { name: "c", inputSchema: {} },
      ],
    };
    const drift = driftOf(live, tools("a", "b"), { tools: [{ name: "a" }, { name: "b" }], card: null });
    expect(drift).toMatchObject({ kind: "MCP_TOOLS", undeclaredTools: ["c"], missingTools: ["b"], fromDeclared: null });
    expect(drift?.sinceLastCheck).toEqual(
      expect.arrayContaining([
        { op: "replace", path: "/a/inputSchema/type", value: "string" },
        { op: "remove", path: "/b" },
        { op: "add", path: "/c", value: { inputSchema: {} } },
      ]),
    );
    expect(drift?.summary).toMatch(/^The live tools changed since the last check; /);
  });
  test("A2A: the live card against the registry's card", () => {
    const card = { skills: [], supportedInterfaces: [], securitySchemes: {}, securityRequirements: [] };
    const live = { kind: "A2A_CARD" as const, card: { ...card, skills: [{ id: "x" }] as never } };
    expect(driftOf({ kind: "A2A_CARD", card }, null, { tools: [], card })).toBeNull();
    expect(driftOf(live, null, { tools: [], card })?.fromDeclared).toEqual([
      { op: "add", path: "/skills/-", value: { id: "x" } },
    ]);
  });
});
