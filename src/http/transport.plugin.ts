/**
 * The transport-level routes that are not GraphQL operations: liveness, readiness and the
 * OpenAPI document (API.md §4, marked "transport").
 */
import type { Plugin } from "graphql-yoga";
import { stringify } from "yaml";
import type { AppState } from "../app.state.ts";
import { type Db, ping } from "../db/client.ts";
import { openApiDocument } from "./rest/openapi.ts";

export function useTransportRoutes(options: { db: Db; state: AppState }): Plugin {
  let json: string | undefined;
  let yaml: string | undefined;
  return {
    onSchemaChange({ schema }) {
      const doc = openApiDocument(schema);
      json = JSON.stringify(doc, null, 2);
      yaml = stringify(doc, { aliasDuplicateObjects: false });
    },
    async onRequest({ request, url, endResponse }) {
      if (request.method !== "GET" && request.method !== "HEAD") return;
      switch (url.pathname) {
        case "/health":
          return endResponse(Response.json({ status: "ok" }));
        case "/ready": {
          let ready = !options.state.draining;
          if (ready)
            ready = await ping(options.db).then(
              () => true,
              () => false,
            );
          return endResponse(Response.json({ status: ready ? "ready" : "unavailable" }, { status: ready ? 200 : 503 }));
        }
        case "/openapi.json":
          return endResponse(new Response(json, { headers: { "Content-Type": "application/json" } }));
        case "/openapi.yaml":
          return endResponse(new Response(yaml, { headers: { "Content-Type": "application/yaml" } }));
      }
    },
  };
}
