/** What only REST does for errors (the shared codes and masking are tests/features/errors.test.ts): unknown routes, 405 with Allow, problem+json with one Content-Type, body limits. */
import { describe, expect, test } from "@jest/globals";
import { intakeBody, uniqueCode } from "../builders.ts";
import { app, call, expectProblem, intake } from "../helpers.ts";

/** Nothing of the machinery leaks into an error body. */
function expectNothingInternal(text: string) {
  expect(text).not.toMatch(/\bat .+:\d+:\d+/); // stack frames
  expect(text).not.toMatch(/\/work\/|node_modules|\.ts\b/); // file paths
  expect(text).not.toMatch(/SELECT|INSERT|UPDATE .+ SET|SQLITE|prisma/i);
}

describe("unknown routes", () => {
  test.each([
    "/api/v1/nothing-here",
    "/api/v1/providers/some-code/unknown",
    "/api/v1/providers/some-code/versions/1/extra",
  ])("GET %s is a 404 problem", async (path) => {
    const answer = await call("GET", path);
    expectProblem(answer, 404, "NOT_FOUND");
    expectNothingInternal(answer.text);
  });

  test.each([
    ["GET", "/api/v1/webhook"],
    ["POST", "/api/v1/webhook"],
    ["DELETE", "/api/v1/webhook/some-id"],
    ["POST", "/api/v1/webhook/some-id"],
  ])("SOFA's %s %s is a 404", async (method, path) => {
    const answer = await call(method, path, method === "POST" ? { body: { subscription: "x", url: "https://x" } } : {});
    expectProblem(answer, 404, "NOT_FOUND");
  });
});

describe("wrong methods", () => {
  test.each([
    ["DELETE", "/api/v1/providers", "GET, HEAD, POST"],
    ["PUT", "/api/v1/providers/some-code", "GET, HEAD, PATCH"],
    ["POST", "/api/v1/health", "GET, HEAD"],
    ["GET", "/api/v1/providers/some-code/tokens", "POST"],
    ["PATCH", "/api/v1/reviews/queue", "GET, HEAD"],
  ])("%s %s is a 405 with Allow: %s", async (method, path, allow) => {
    const answer = await call(method, path, { body: {} });
    expectProblem(answer, 405, "METHOD_NOT_ALLOWED");
    expect(answer.headers.get("allow")).toBe(allow);
  });
});

describe("one Content-Type", () => {
  test("errors raised inside an operation carry exactly one problem+json Content-Type", async () => {
    // A 404 from a resolver (through SOFA), a 401 from the viewer, a 400 from the guard, a 409 from a write.
    const created = await intake();
    const answers = [
      await call("GET", `/api/v1/providers/${uniqueCode("none")}`),
      await call("PATCH", `/api/v1/providers/${created.providerCode}`, { body: { summary: "x" } }),
      await call("GET", "/api/v1/providers?limit=0"),
      await call("POST", "/api/v1/providers", { body: intakeBody({ providerCode: created.providerCode }) }),
      await call("POST", "/api/v1/providers", { body: intakeBody({ contactEmail: "x" }) }),
    ];
    expect(answers.map((a) => a.status)).toEqual([404, 401, 400, 409, 400]);
    for (const answer of answers) {
      expect(answer.headers.get("content-type")).toBe("application/problem+json");
      expect(answer.headers.get("content-type")).not.toContain(",");
      expect(answer.body).toEqual(
        expect.objectContaining({
          type: expect.any(String),
          title: expect.any(String),
          status: answer.status,
          detail: expect.any(String),
          code: expect.any(String),
        }),
      );
      expectNothingInternal(answer.text);
    }
  });
});

describe("body limits on every route", () => {
  test.each([
    ["POST", "/api/v1/providers"],
    ["PATCH", "/api/v1/providers/some-code"],
    ["POST", "/api/v1/providers/some-code/tokens"],
    ["POST", "/api/v1/nothing-here"],
  ])("%s %s with a body over 64 KiB is a 413", async (method, path) => {
    const answer = await call(method, path, { body: { label: "x".repeat(65 * 1024) } });
    expectProblem(answer, 413, "PAYLOAD_TOO_LARGE");
  });

  test("a streamed body over 64 KiB without Content-Length is a 413", async () => {
    const chunk = new TextEncoder().encode(`{"description":"${"x".repeat(16 * 1024)}`);
    let sent = 0;
    const stream = new ReadableStream<Uint8Array>({
      pull(controller) {
        if (sent++ < 6) controller.enqueue(chunk);
        else controller.close();
      },
    });
    const res = await app.fetch("http://registry.test/api/v1/providers", {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: stream,
      duplex: "half",
    } as RequestInit);
    expect(res.status).toBe(413);
    expect(res.headers.get("content-type")).toBe("application/problem+json");
  });
});
