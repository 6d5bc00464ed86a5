/**
 * The SchemaBuilder, its plugins and the types every resolver shares. Defines no GraphQL types.
 */
import SchemaBuilder from "@pothos/core";
import PrismaPlugin from "@pothos/plugin-prisma";
import RelayPlugin, { decodeGlobalID } from "@pothos/plugin-relay";
import ScopeAuthPlugin from "@pothos/plugin-scope-auth";
import { GraphQLError } from "graphql";
import { hasRole } from "./auth/roles.ts";
import type { Viewer } from "./auth/viewer.ts";
import type { Config } from "./config.ts";
import type { Db } from "./db/client.ts";
import { badInput, forbidden, notFound, unauthenticated } from "./errors.ts";
import type PrismaTypes from "./generated/pothos-prisma-types.ts";
import { getDatamodel } from "./generated/pothos-prisma-types.ts";
import type { CheckMetrics } from "./health/health.worker.ts";
import type { Outbound } from "./outbound/outbound.ts";

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
  /** The one door for requests to addresses callers gave (src/outbound/). */
  outbound: Outbound;
  /** What a check now needs (src/health/): the prober's door and where checks are counted. */
  health: { outbound: Outbound; metrics?: CheckMetrics | undefined };
  /** The mirror's door, and a wake-up of this replica's mirror worker (main.ts sets it; src/mirror/). */
  mirror: { outbound: Outbound; kick: () => void };
  /** What a resolver wants on the HTTP response (ETag, Cache-Control, a 503); applied by edge.plugin.ts. */
  response: ResponseBag;
}

/** Where the registry is reached, for the URLs and names it writes: PUBLIC_URL, else the request's origin. */
export function publicBase(ctx: Context): string {
  return ctx.config.publicUrl ?? new URL(ctx.request.url).origin;
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
    /** A verified reviewer (or admin) JWT, or an access token with the reviewer role. */
    reviewer: boolean;
    /** A credential with the admin role (roles.ts). */
    admin: boolean;
    /** Any valid agent token. */
    agent: boolean;
    /** The agent token of the provider with this code. */
    ownerOf: string;
  };
}>({
  plugins: [ScopeAuthPlugin, PrismaPlugin, RelayPlugin],
  defaultFieldNullability: false,
  // Global object identification only: `Node`, `id: ID!` on the types with an identity and
  // `Query.node(id)`. Lists stay `{ items, nextCursor }`, mutations take plain arguments; `nodes`
  // is left out, so the alias limit bounds how many look-ups one request makes.
  relay: {
    clientMutationId: "omit",
    nodesQueryOptions: false,
    nodeQueryOptions: {
      description: "Any object with a global `id`, for whoever may see it (as its own look-up decides).",
      resolve: (_root, { id }, _ctx, info, resolveNode) => {
        // A well-formed ID of a type that is not a Node names nothing.
        const type = info.schema.getType(id.typename);
        if (!type || !("getInterfaces" in type) || !type.getInterfaces().some((i) => i.name === "Node")) {
          throw notFound(`No node "${id.typename}"`);
        }
        return resolveNode(id);
      },
    },
    // An ID that does not decode is refused as bad input naming the argument, never an internal error.
    decodeGlobalID: (globalID) => {
      try {
        return decodeGlobalID(globalID);
      } catch {
        throw badInput("id is not an ID this service issued", [{ path: "id", message: "not a global ID" }]);
      }
    },
  },
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
      admin: hasRole(ctx.viewer, "admin"),
      agent: ctx.viewer.kind === "agent",
      ownerOf: (providerCode) => ctx.viewer.kind === "agent" && ctx.viewer.providerCode === providerCode,
    }),
    // Who failed decides the answer: no credentials is 401, the wrong credentials 403.
    unauthorizedError: (_parent, ctx) => (ctx.viewer.kind === "anonymous" ? unauthenticated() : forbidden()),
  },
});

/**
 * An RFC 3339 date-time: a date, a time with seconds (a fraction optional) and an offset (`Z` or
 * `±hh:mm`), e.g. 2026-11-21T12:00:00Z. Anything else — a date alone, a time without an offset, a
 * number — names no single instant, so it is refused.
 */
const DATE_TIME = /^(\d{4})-(\d{2})-(\d{2})[Tt ](\d{2}):(\d{2}):(\d{2})(?:\.\d{1,9})?(?:[Zz]|[+-]\d{2}:\d{2})$/;

/** The instant an RFC 3339 date-time names; throws, in plain words, for anything else. */
export function parseDateTime(value: unknown): Date {
  const parts = typeof value === "string" ? DATE_TIME.exec(value) : null;
  const date = parts ? new Date(value as string) : null;
  // The calendar holds (no 31 June): the parsed day is the day written, in the offset written.
  const [, year, month, day] = parts ?? [];
  const written = date && new Date(Date.UTC(Number(year), Number(month) - 1, Number(day)));
  if (!date || Number.isNaN(date.getTime()) || written?.getUTCDate() !== Number(day) || Number(month) > 12) {
    throw new GraphQLError("must be an RFC 3339 date-time with an offset, e.g. 2026-11-21T12:00:00Z");
  }
  return date;
}

builder.scalarType("DateTime", {
  description: "An instant as an RFC 3339 date-time with an offset; answered in UTC, e.g. 2026-01-31T12:00:00.000Z",
  specifiedByURL: "https://scalars.graphql.org/andimarek/date-time",
  serialize: (value) => (value instanceof Date ? value : parseDateTime(value)).toISOString(),
  parseValue: parseDateTime,
});

builder.scalarType("JSON", {
  description: "Any JSON value",
  serialize: (value) => value,
  parseValue: (value) => value,
});

builder.queryType({});
builder.mutationType({});
