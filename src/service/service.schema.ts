/**
 * What the service says about itself: its description (`GET /api/v1`) and its health.
 */
import { builder, publicBase } from "../builder.ts";
import { SERVICE_NAME, SERVICE_VERSION } from "../config.ts";
import { ping } from "../db/client.ts";
import { pathTemplate, REST_ROUTES, restPath } from "../http/rest/rest.routes.ts";

const RouteRef = builder.objectRef<{ method: string; path: string; summary: string }>("RouteInfo").implement({
  fields: (t) => ({
    method: t.exposeString("method"),
    path: t.exposeString("path"),
    summary: t.exposeString("summary"),
  }),
});

const ServiceRef = builder
  .objectRef<{ name: string; version: string; specUrl: string; graphqlUrl: string; healthUrl: string }>("Service")
  .implement({
    fields: (t) => ({
      name: t.exposeString("name"),
      version: t.exposeString("version"),
      specUrl: t.exposeString("specUrl", { description: "The OpenAPI 3.1 document" }),
      graphqlUrl: t.exposeString("graphqlUrl"),
      healthUrl: t.exposeString("healthUrl"),
      routes: t.field({
        type: [RouteRef],
        resolve: () =>
          REST_ROUTES.map((r) => ({
            method: r.method,
            path: restPath(pathTemplate(r.path), r.base),
            summary: r.summary,
          })),
      }),
    }),
  });

const HealthRef = builder
  .objectRef<{ status: "ok" | "unavailable"; database: "ok" | "unavailable"; version: string }>("Health")
  .implement({
    fields: (t) => ({
      status: t.exposeString("status", { description: "ok, or unavailable (with HTTP 503)" }),
      database: t.exposeString("database"),
      version: t.exposeString("version"),
    }),
  });

builder.queryFields((t) => ({
  api: t.field({
    type: ServiceRef,
    description: "The service: its name, version, where its specification is, and its main routes.",
    resolve: (_root, _args, ctx) => {
      const base = publicBase(ctx);
      return {
        name: SERVICE_NAME,
        version: SERVICE_VERSION,
        specUrl: `${base}/openapi.yaml`,
        graphqlUrl: `${base}/graphql`,
        healthUrl: `${base}${restPath("/health")}`,
      };
    },
  }),
  health: t.field({
    type: HealthRef,
    description: "Whether the service and its database answer; HTTP 503 when the database does not.",
    resolve: async (_root, _args, ctx) => {
      // A health check must see the service as it is now, never a copy a cache kept.
      ctx.response.headers.set("Cache-Control", "no-store");
      try {
        await ping(ctx.db);
        return { status: "ok" as const, database: "ok" as const, version: SERVICE_VERSION };
      } catch {
        ctx.response.status = 503;
        return { status: "unavailable" as const, database: "unavailable" as const, version: SERVICE_VERSION };
      }
    },
  }),
}));
