/**
 * The transport-level routes that are not GraphQL operations: liveness, readiness, the OpenAPI
 * document, the registry's public signing keys and its OAuth protected resource metadata (API.md §4,
 * marked "transport"), for GET and HEAD. Public whatever READ_ACCESS says.
 */
import type { GraphQLSchema } from "graphql";
import type { Plugin } from "graphql-yoga";
import { stringify } from "yaml";
import type { AppState } from "../app.state.ts";
import { PROTECTED_RESOURCE_PATH, protectedResourceMetadata } from "../auth/protected.resource.ts";
import type { Config } from "../config.ts";
import { type Db, ping } from "../db/client.ts";
import { signingKeys } from "../trust/signing.keys.ts";
import { openApiDocument } from "./rest/openapi.ts";

/** A probe's answer: never kept by any cache, since a probe must see the process as it is now. */
function probe(fetchAPI: { Response: typeof Response }, status: string, code = 200): Response {
  return fetchAPI.Response.json({ status }, { status: code, headers: { "Cache-Control": "no-store" } });
}

/** The OpenAPI document of a schema as served, made when first asked for and shared by every app of that schema. */
const served = new WeakMap<GraphQLSchema, { json: string; yaml: string }>();
function openApiOf(schema: GraphQLSchema): { json: string; yaml: string } {
  let texts = served.get(schema);
  if (!texts) {
    const doc = openApiDocument(schema);
    texts = { json: JSON.stringify(doc, null, 2), yaml: stringify(doc, { aliasDuplicateObjects: false }) };
    served.set(schema, texts);
  }
  return texts;
}

export function useTransportRoutes(options: { db: Db; state: AppState; config: Config }): Plugin {
  // Loaded (or generated) now, so keys that cannot be used stop the app from starting.
  const keys = signingKeys(options.config);
  let schema: GraphQLSchema | undefined;
  return {
    onSchemaChange({ schema: next }) {
      schema = next;
    },
    async onRequest({ request, url, endResponse, fetchAPI }) {
      if (request.method !== "GET" && request.method !== "HEAD") return;
      // The edge answers HEAD from these answers without their bodies, and tags and caches the
      // OpenAPI document as any API read (conditional.ts).
      switch (url.pathname) {
        case "/health":
          return endResponse(probe(fetchAPI, "ok"));
        case "/ready": {
          let ready = !options.state.draining;
          if (ready)
            ready = await ping(options.db).then(
              () => true,
              () => false,
            );
          return endResponse(ready ? probe(fetchAPI, "ready") : probe(fetchAPI, "unavailable", 503));
        }
        case "/openapi.json":
          return endResponse(
            new fetchAPI.Response(schema && openApiOf(schema).json, {
              headers: { "Content-Type": "application/json" },
            }),
          );
        case "/openapi.yaml":
          return endResponse(
            new fetchAPI.Response(schema && openApiOf(schema).yaml, {
              headers: { "Content-Type": "application/yaml" },
            }),
          );
        case PROTECTED_RESOURCE_PATH:
          return endResponse(
            fetchAPI.Response.json(protectedResourceMetadata(options.config, options.config.publicUrl ?? url.origin), {
              headers: { "Cache-Control": "public, max-age=300" },
            }),
          );
        // Verifiers fetch it rarely and a rotation keeps the old key published for days: minutes of caching are safe.
        case "/.well-known/jwks.json":
          return endResponse(
            new fetchAPI.Response(JSON.stringify(keys.jwks()), {
              headers: { "Content-Type": "application/jwk-set+json", "Cache-Control": "public, max-age=300" },
            }),
          );
      }
    },
  };
}
