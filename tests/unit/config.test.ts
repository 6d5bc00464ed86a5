/**
 * The configuration's switches. GRAPHIQL: GraphiQL on by default, off in production; `on` in
 * production opens schema introspection with it; anything but on/off stops the service at start.
 * DATABASE_POOL_SIZE: the PostgreSQL pools' size.
 */
import { describe, expect, test } from "@jest/globals";
import { loadConfig } from "../../src/config.ts";

const PRODUCTION = { NODE_ENV: "production", REVIEWER_JWT_SECRET: "s".repeat(40) };

function switches(env: Record<string, string>) {
  const config = loadConfig(env);
  return { graphiql: config.graphiql, introspection: config.graphqlLimits.introspection };
}

describe("GRAPHIQL", () => {
  test("is on by default outside production, with introspection", () => {
    expect(switches({})).toEqual({ graphiql: true, introspection: true });
    expect(switches({ NODE_ENV: "test" })).toEqual({ graphiql: true, introspection: true });
  });

  test("is off by default in production, and introspection with it", () => {
    expect(switches(PRODUCTION)).toEqual({ graphiql: false, introspection: false });
    expect(switches({ ...PRODUCTION, GRAPHIQL: "" })).toEqual({ graphiql: false, introspection: false });
  });

  test("on in production turns on the page and introspection", () => {
    expect(switches({ ...PRODUCTION, GRAPHIQL: "on" })).toEqual({ graphiql: true, introspection: true });
  });

  test("off outside production turns off the page only", () => {
    expect(switches({ GRAPHIQL: "off" })).toEqual({ graphiql: false, introspection: true });
  });

  test("any other value is an error at start", () => {
    expect(() => loadConfig({ GRAPHIQL: "yes" })).toThrow('GRAPHIQL must be "on" or "off", got "yes"');
    expect(() => loadConfig({ ...PRODUCTION, GRAPHIQL: "enabled" })).toThrow(/GRAPHIQL must be "on" or "off"/);
  });
});

describe("DATABASE_POOL_SIZE", () => {
  test("is 10 unless set, and must be a positive whole number", () => {
    expect(loadConfig({}).databasePoolSize).toBe(10);
    expect(loadConfig({ DATABASE_POOL_SIZE: "4" }).databasePoolSize).toBe(4);
    expect(() => loadConfig({ DATABASE_POOL_SIZE: "0" })).toThrow(/DATABASE_POOL_SIZE/);
    expect(() => loadConfig({ DATABASE_POOL_SIZE: "many" })).toThrow(/DATABASE_POOL_SIZE/);
  });
});
