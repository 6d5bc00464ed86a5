/**
 * The response cache in a real server process, where hits are answered before Yoga
 * (src/http/cache/node.front.ts, reading a GraphQL POST's body itself): a repeated
 * anonymous GraphQL POST whose body is not ASCII is a hit with the same answer, a body one
 * character apart is not served another's answer, and a write empties the cache. A body that comes
 * after its headers, in pieces, is read as it comes and answered alike, and the connection goes on.
 */
import { Agent, request as httpRequest } from "node:http";
import { join } from "node:path";
import { afterAll, describe, expect, test } from "@jest/globals";
import { intakeBody } from "../builders.ts";
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

  test("a body that comes after its headers, in pieces, is read whole; hits and misses go on over one connection", async () => {
    const server = await startServer(`file:${join(tempDir(), "node-cache-split.db")}`, { RESPONSE_CACHE: "on" });
    const agent = new Agent({ keepAlive: true, maxSockets: 1 });
    /** A GraphQL POST on the one kept-alive connection; `split`: its headers first, then its body in two pieces. */
    const post = (body: unknown, split: boolean) =>
      new Promise<{ status?: number; cache?: string; text: string; reused: boolean }>((resolve, reject) => {
        const bytes = Buffer.from(JSON.stringify(body));
        const req = httpRequest(
          {
            host: "127.0.0.1",
            port: server.port,
            path: "/graphql",
            method: "POST",
            agent,
            headers: { "content-type": "application/json", "content-length": bytes.byteLength },
          },
          (res) => {
            let text = "";
            res.setEncoding("utf8");
            res.on("data", (chunk: string) => {
              text += chunk;
            });
            res.on("end", () =>
              resolve({
                status: res.statusCode,
                cache: res.headers["x-cache"] as string,
                text,
                reused: req.reusedSocket,
              }),
            );
          },
        );
        req.on("error", reject);
        if (!split) return void req.end(bytes);
        req.flushHeaders();
        setTimeout(() => {
          req.write(bytes.subarray(0, 10));
          setTimeout(() => req.end(bytes.subarray(10)), 30);
        }, 30);
      });
    try {
      const first = await post(search("split ünïcode"), true);
      expect(first.status).toBe(200);
      expect(first.cache).toBeUndefined();
      expect(JSON.parse(first.text)).toEqual({ data: { providers: { items: [] } } });
      const whole = await post(search("split ünïcode"), false);
      expect(whole).toMatchObject({ status: 200, cache: "HIT", text: first.text, reused: true });
      const splitAgain = await post(search("split ünïcode"), true);
      expect(splitAgain).toMatchObject({ status: 200, cache: "HIT", text: first.text, reused: true });
      const other = await post(search("another"), true);
      expect(other).toMatchObject({ status: 200, reused: true });
      expect(other.cache).toBeUndefined();
    } finally {
      agent.destroy();
    }
  });
});
