/**
 * graphql-codegen's configuration for the GraphQL example: the schema is read by introspection from
 * the server at REGISTRY_URL (or from GRAPHQL_SCHEMA, a file or URL, where introspection is off), the
 * documents are the `graphql(…)` calls in examples/*.ts, and the client preset writes their types to
 * examples/generated/gql/ (not committed). Run from the repository's root:
 * `REGISTRY_URL=http://localhost:4000 npx graphql-codegen --config examples/codegen.ts`.
 */
import type { CodegenConfig } from "@graphql-codegen/cli";

const registry = process.env.REGISTRY_URL ?? "http://localhost:4000";

const config: CodegenConfig = {
  schema: process.env.GRAPHQL_SCHEMA ?? `${registry}/graphql`,
  documents: ["examples/*.ts"],
  generates: {
    "examples/generated/gql/": {
      preset: "client",
      presetConfig: { fragmentMasking: false },
      config: {
        // Documents as strings that carry their types: plain fetch sends them as they are.
        documentMode: "string",
        enumsAsTypes: true,
        useTypeImports: true,
        // Timestamps arrive as RFC 3339 strings; any other custom scalar is whatever JSON holds.
        scalars: { DateTime: "string" },
        defaultScalarType: "unknown",
      },
    },
  },
  // ESM: the generated files import each other with `.js`, as Node's module resolution requires.
  emitLegacyCommonJSImports: false,
  errorsOnly: true,
};

export default config;
