/**
 * src/web/client/api.types.ts is generated from the served OpenAPI document; when this fails, run
 * `npm run api:types` and commit the result (the pages' types then show what changed).
 */
import { readFileSync } from "node:fs";
import { describe, expect, test } from "@jest/globals";
import { API_TYPES_PATH, apiTypesSource, servedOpenApiDocument } from "../../scripts/openapi-types.ts";
import { call } from "../helpers.ts";

describe("src/web/client/api.types.ts", () => {
  test("is what `npm run api:types` generates now", async () => {
    const committed = readFileSync(new URL(`../../${API_TYPES_PATH}`, import.meta.url), "utf8");
    expect(await apiTypesSource()).toBe(committed);
  });

  test("is generated from the very document /openapi.json serves", async () => {
    const served = await call("GET", "/openapi.json");
    expect(served.status).toBe(200);
    expect(servedOpenApiDocument()).toEqual(served.body);
  });
});
