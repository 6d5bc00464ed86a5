/** An import is an intake: it counts against the same per-address intake limit as POST /api/v1/providers. */
import { randomBytes } from "node:crypto";
import { afterAll, expect, test } from "@jest/globals";
import { loadConfig } from "../../src/config.ts";
import { createApp } from "../../src/yoga.ts";
import { intakeBody } from "../builders.ts";
import { call, db, expectProblem } from "../helpers.ts";

const app = createApp(
  loadConfig({
    ...process.env,
    NODE_ENV: "test",
    RATE_LIMITS: "on",
    REDIS_URL: "",
    TRUST_PROXY: "1",
    RATE_LIMIT_INTAKE_PER_HOUR: "2",
  }),
  db,
);
afterAll(async () => {
  await app.dispose();
});

test("intakes and imports share one limit; over it, an import is a 429 and registers nothing", async () => {
  const headers = { "x-forwarded-for": `198.51.100.${1 + (randomBytes(1)[0] as number)}` };
  const document = {
    name: "io.github.example/limited",
    description: "Counted like any intake",
    version: "1.0.0",
    remotes: [{ type: "streamable-http", url: "https://limited.example.com/mcp" }],
  };
  const email = `limited-${randomBytes(5).toString("hex")}@example.com`;
  const body = { format: "mcp", document, contactEmail: email };
  expect((await call("POST", "/api/v1/providers", { app, headers, body: intakeBody() })).status).toBe(201);
  expect((await call("POST", "/api/v1/providers/import", { app, headers, body })).status).toBe(201);
  const refused = await call("POST", "/api/v1/providers/import", { app, headers, body });
  expectProblem(refused, 429, "RATE_LIMITED");
  expect(Number(refused.headers.get("retry-after"))).toBeGreaterThanOrEqual(1);
  expect(await db.provider.count({ where: { contactEmail: email } })).toBe(1);
});
