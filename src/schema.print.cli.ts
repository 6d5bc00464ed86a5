/** `npm run schema:print` writes the printed schema to schema.graphql (a test fails when it drifts). */
import { writeFileSync } from "node:fs";
import { printSchema } from "graphql";
import { schema } from "./schema.ts";

writeFileSync(new URL("../schema.graphql", import.meta.url), `${printSchema(schema)}\n`);
console.log("schema.graphql written");
