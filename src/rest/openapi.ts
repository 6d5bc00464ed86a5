/**
 * The OpenAPI 3.1 document of the REST routes, produced from SOFA's generated document.
 */
import type { GraphQLSchema } from "graphql";
import { useSofa } from "sofa-api";
import { sofaConfig } from "./rest.plugin.ts";

type Doc = Record<string, unknown> & { openapi: string };

export function openApiDocument(schema: GraphQLSchema): Doc {
  const router = useSofa({
    ...sofaConfig(schema),
    openAPI: { info: { title: "Agent Registry", version: "1" } },
  } as never);
  const doc = structuredClone(router.openAPIDocument) as Doc;
  doc.openapi = "3.1.0";
  return doc;
}
