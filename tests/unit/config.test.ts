/**
 * The configuration's switches. GRAPHIQL: GraphiQL on by default, off in production; `on` in
 * production opens schema introspection with it; anything but on/off stops the service at start.
 * DATABASE_POOL_SIZE: the PostgreSQL pools' size. OIDC_CLIENT_ID and the session settings: people
 * signing in, all or nothing.
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

describe("people signing in (OIDC_CLIENT_ID)", () => {
  const issuer = { OIDC_ISSUER: "https://idp.example", OIDC_AUDIENCE: "https://registry.example" };

  test("is off without OIDC_CLIENT_ID; its defaults otherwise", () => {
    expect(loadConfig(issuer).signIn).toBeUndefined();
    expect(loadConfig({ ...issuer, OIDC_CLIENT_ID: "registry" }).signIn).toEqual({
      issuer: "https://idp.example",
      clientId: "registry",
      clientSecret: undefined,
      scopes: "openid profile email",
      idleMinutes: 60,
      maxHours: 12,
    });
    const set = loadConfig({
      ...issuer,
      OIDC_CLIENT_ID: "registry",
      OIDC_CLIENT_SECRET: "s3cret",
      OIDC_SCOPES: " openid  groups ",
      SESSION_IDLE_MINUTES: "15",
      SESSION_MAX_HOURS: "8",
    }).signIn;
    expect(set).toMatchObject({ clientSecret: "s3cret", scopes: "openid groups", idleMinutes: 15, maxHours: 8 });
  });

  test("half a configuration is an error at start", () => {
    expect(() => loadConfig({ OIDC_CLIENT_ID: "registry" })).toThrow("OIDC_CLIENT_ID is set but OIDC_ISSUER is not");
    for (const name of ["OIDC_CLIENT_SECRET", "OIDC_SCOPES", "SESSION_IDLE_MINUTES", "SESSION_MAX_HOURS"]) {
      expect(() => loadConfig({ ...issuer, [name]: "1" })).toThrow(`${name} is set but OIDC_CLIENT_ID is not`);
    }
    expect(() => loadConfig({ ...issuer, OIDC_CLIENT_ID: "registry", OIDC_SCOPES: "profile email" })).toThrow(
      /OIDC_SCOPES must include openid/,
    );
    expect(() => loadConfig({ ...issuer, OIDC_CLIENT_ID: "https://registry.example" })).toThrow(
      /OIDC_AUDIENCE must not be OIDC_CLIENT_ID/,
    );
    expect(() => loadConfig({ ...issuer, OIDC_CLIENT_ID: "registry", SESSION_MAX_HOURS: "0" })).toThrow(
      /SESSION_MAX_HOURS must be at least 1/,
    );
  });

  test("production needs an https PUBLIC_URL, so the cookie is Secure and the Origin known", () => {
    const people = { ...PRODUCTION, ...issuer, OIDC_CLIENT_ID: "registry" };
    expect(() => loadConfig(people)).toThrow(/needs PUBLIC_URL, an https: URL/);
    expect(() => loadConfig({ ...people, PUBLIC_URL: "http://registry.example" })).toThrow(/needs PUBLIC_URL/);
    expect(loadConfig({ ...people, PUBLIC_URL: "https://registry.example" }).signIn?.clientId).toBe("registry");
  });
});
