/**
 * The response cache in a real server process, where hits are answered before Yoga
 * (src/cache/response.cache.ts, `serveNode`, reading a GraphQL POST's body itself): a repeated
 * anonymous GraphQL POST whose body is not ASCII is a hit with the same answer, a body one
 * character apart is not served another's answer, and a write empties the cache.
 */
import { join } from "node:path";
import { afterAll, describe, expect, test } from "@jest/globals";
import { intakeBody } from "../helpers.ts";
import { cleanUp, request, startServer, tempDir } from "../process/server.process.ts";

afterAll(cleanUp, 30_000);

const search = (words: string) => ({
  query: "query ($s: String) { providers(search: $s, limit: 5) { items { providerCode name } } }",
  variables: { s: words },
});

describe("the cache in front of Yoga", () => {
  test("a repeated GraphQL POST is a hit, byte for byte; another body is not; a write empties it", async () => {
    const server = await startServer(`file:${join(tempDir(), "node-cache.db")}`, { RESPONSE_CACHE: "on" });
    const first = await request(server, "POST", "/graphql", { body: search("Zürich ✓ routes") });
    expect(first.status).toBe(200);
    expect(first.headers.get("x-cache")).toBeNull();
    const again = await request(server, "POST", "/graphql", { body: search("Zürich ✓ routes") });
    expect(again.headers.get("x-cache")).toBe("HIT");
    expect(again.text).toBe(first.text);
    // One character apart (both outside ASCII): its own answer, not the cached one.
    const other = await request(server, "POST", "/graphql", { body: search("Zürich ✗ routes") });
    expect(other.status).toBe(200);
    expect(other.headers.get("x-cache")).toBeNull();

    const created = await request(server, "POST", "/api/v1/providers", { body: intakeBody() });
    expect(created.status).toBe(201);
    const afterWrite = await request(server, "POST", "/graphql", { body: search("Zürich ✓ routes") });
    expect(afterWrite.headers.get("x-cache")).toBeNull();
  });
});
