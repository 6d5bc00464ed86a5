/**
 * What a newcomer uses on a fresh install: GraphiQL served without any CDN, and the documented
 * `npm run reviewer-token` command giving a token the review queue accepts.
 */
import { execFileSync } from "node:child_process";
import { describe, expect, test } from "@jest/globals";
import { call } from "../helpers.ts";

describe("GraphiQL", () => {
  test("is served at /graphql to a browser with every asset served locally (no external script or stylesheet)", async () => {
    const page = await call("GET", "/graphql", { headers: { accept: "text/html" } });
    expect(page.status).toBe(200);
    expect(page.headers.get("content-type")).toMatch(/text\/html/);
    expect(page.text).toMatch(/graphiql/i);
    const external = [...page.text.matchAll(/<(?:script|link)\b[^>]*(?:src|href)=["'](https?:)?\/\/[^"']+["']/gi)];
    expect(external.map((m) => m[0])).toEqual([]);
  });
});

describe("npm run reviewer-token", () => {
  test("prints a reviewer JWT that the review queue accepts", async () => {
    const out = execFileSync("npm", ["run", "-s", "reviewer-token", "--", "--sub", "cli-reviewer"], {
      encoding: "utf8",
      env: { ...process.env, NODE_OPTIONS: "" },
    });
    const token = out.trim().split("\n").pop() as string;
    expect(token).toMatch(/^[\w-]+\.[\w-]+\.[\w-]+$/);
    const queue = await call("GET", "/api/v1/reviews/queue", { token });
    expect(queue.status).toBe(200);
    expect(Array.isArray(queue.body.items)).toBe(true);
    const anonymous = await call("GET", "/api/v1/reviews/queue");
    expect(anonymous.status).toBe(401);
  });

  test("refuses to run without --sub", () => {
    expect(() =>
      execFileSync("npm", ["run", "-s", "reviewer-token"], {
        encoding: "utf8",
        stdio: "pipe",
        env: { ...process.env, NODE_OPTIONS: "" },
      }),
    ).toThrow(/usage/);
  });
});
