/**
 * The SchemaBuilder, its plugins and the types every resolver shares. Defines no GraphQL types.
 */
import SchemaBuilder from "@pothos/core";
import PrismaPlugin from "@pothos/plugin-prisma";
import ScopeAuthPlugin from "@pothos/plugin-scope-auth";
import type { Viewer } from "./auth/viewer.ts";
import type { Config } from "./config.ts";
import type { Db } from "./db/client.ts";
import { forbidden, unauthenticated } from "./errors.ts";
import type PrismaTypes from "./generated/pothos-prisma-types.ts";
import { getDatamodel } from "./generated/pothos-prisma-types.ts";

/**
 * What a resolver asks of its answer: headers (one value per name) and a status. A Map, not a
 * fetch `Headers`: Node's Headers cost ~13 µs per request to build and read back, and
 * resolvers only ever set a header.
 */
export interface ResponseBag {
  headers: Map<string, string>;
  status?: number;
}

export interface Context {
  request: Request;
  viewer: Viewer;
  db: Db;
  config: Config;
  /** What a resolver wants on the HTTP response (ETag, Cache-Control, a 503); applied by edge.plugin.ts. */
  response: ResponseBag;
}

export const builder = new SchemaBuilder<{
  PrismaTypes: PrismaTypes;
  Context: Context;
  DefaultInputFieldRequiredness: false;
  // Fields are non-null unless they say otherwise: what the contract calls nullable is marked.
  DefaultFieldNullability: false;
  Scalars: {
    DateTime: { Input: Date; Output: Date };
    JSON: { Input: unknown; Output: unknown };
  };
  AuthScopes: {
    /** A verified reviewer (or admin) JWT. */
    reviewer: boolean;
    /** Any valid agent token. */
    agent: boolean;
    /** The agent token of the provider with this code. */
    ownerOf: string;
  };
}>({
  plugins: [ScopeAuthPlugin, PrismaPlugin],
  defaultFieldNullability: false,
  prisma: {
    client: (ctx) => ctx.db,
    dmmf: getDatamodel(),
    exposeDescriptions: false,
    filterConnectionTotalCount: true,
    onUnusedQuery: null,
  },
  scopeAuth: {
    authScopes: (ctx) => ({
      reviewer: ctx.viewer.kind === "reviewer",
      agent: ctx.viewer.kind === "agent",
      ownerOf: (providerCode) => ctx.viewer.kind === "agent" && ctx.viewer.providerCode === providerCode,
    }),
    // Who failed decides the answer: no credentials is 401, the wrong credentials 403.
    unauthorizedError: (_parent, ctx) => (ctx.viewer.kind === "anonymous" ? unauthenticated() : forbidden()),
  },
});

builder.scalarType("DateTime", {
  description: "An ISO-8601 instant in UTC, e.g. 2026-01-31T12:00:00.000Z",
  serialize: (value) => (value instanceof Date ? value : new Date(String(value))).toISOString(),
  parseValue: (value) => {
    const date = new Date(String(value));
    if (Number.isNaN(date.getTime())) throw new TypeError("DateTime must be an ISO-8601 instant");
    return date;
  },
});

builder.scalarType("JSON", {
  description: "Any JSON value",
  serialize: (value) => value,
  parseValue: (value) => value,
});

builder.queryType({});
builder.mutationType({});
