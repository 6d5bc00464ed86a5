/**
 * API.md §6's rate limits hold whichever door a request uses: the gaps the main rate-limit suite
 * leaves — failed authentications made over /graphql count against the address for REST too.
 */
import { randomBytes } from "node:crypto";
import { afterAll, expect, test } from "@jest/globals";
import { loadConfig } from "../../src/config.ts";
import { createApp } from "../../src/yoga.ts";
import { call, db, expectProblem, gqlCodes, intake } from "../helpers.ts";

const app = createApp(
  loadConfig({
    ...process.env,
    NODE_ENV: "test",
    RATE_LIMITS: "on",
    REDIS_URL: "",
    TRUST_PROXY: "1",
    RATE_LIMIT_AUTH_FAILURES_PER_15MIN: "3",
  }),
  db,
);
afterAll(async () => {
  await app.dispose();
});

test("401s over GraphQL count; then REST and GraphQL with credentials answer 429 + Retry-After", async () => {
  const from = `203.0.113.${1 + (randomBytes(1)[0] as number)}`;
  const headers = (token: string) => ({ authorization: `Bearer ${token}`, "x-forwarded-for": from });
  const owner = await intake();
  for (let i = 0; i < 3; i++) {
    const bad = await call("POST", "/graphql", {
      app,
      body: { query: "{ health { status } }" },
      headers: headers(`agr_bad${i}`),
    });
    expect([bad.status, gqlCodes(bad)]).toEqual([401, ["UNAUTHENTICATED"]]);
    expect(bad.headers.get("www-authenticate")).toMatch(/^Bearer/);
  }
  const rest = await call("GET", `/api/v1/providers/${owner.providerCode}`, {
    app,
    headers: headers(owner.accessToken),
  });
  expectProblem(rest, 429, "RATE_LIMITED");
  expect(Number(rest.headers.get("retry-after"))).toBeGreaterThanOrEqual(1);
  expect(Number(rest.headers.get("retry-after"))).toBeLessThanOrEqual(900);
  const graphql = await call("POST", "/graphql", {
    app,
    body: { query: "{ health { status } }" },
    headers: headers(owner.accessToken),
  });
  expect([graphql.status, gqlCodes(graphql)]).toEqual([429, ["RATE_LIMITED"]]);
  expect(Number(graphql.headers.get("retry-after"))).toBeGreaterThanOrEqual(1);
});
