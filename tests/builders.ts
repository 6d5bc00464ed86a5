/**
 * Builders of test data that need nothing but themselves: files that only talk to server processes
 * import these without loading the app or opening a database (tests/helpers.ts does both).
 */
import { randomBytes } from "node:crypto";

/** A unique provider code for this test. */
export function uniqueCode(prefix = "agent"): string {
  return `${prefix}-${randomBytes(5).toString("hex")}`;
}

/** A valid intake body; override any field. */
export function intakeBody(overrides: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    providerCode: uniqueCode(),
    name: "Route Planner",
    summary: "Plans delivery routes across a city",
    agentType: "ASSISTANT",
    contactEmail: "ops@example.com",
    endpoint: { url: "https://agent.example.com/a2a", protocol: "A2A", authScheme: "BEARER" },
    labels: ["Maps", "routing"],
    ...overrides,
  };
}
