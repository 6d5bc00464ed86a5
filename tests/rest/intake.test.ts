/** What only REST does for intake (POST /api/v1/providers): its guard on body keys, the query string and the body's media type and JSON; the shared rules are in tests/features/intake.test.ts. */
import { describe, expect, test } from "@jest/globals";
import { intakeBody } from "../builders.ts";
import { app, call, db, errorPaths, expectProblem } from "../helpers.ts";

async function providerExists(providerCode: unknown): Promise<boolean> {
  return (await db.provider.count({ where: { providerCode: String(providerCode) } })) > 0;
}

describe("the guard: body keys and the query string", () => {
  test("an unknown key inside a nested object is refused, naming its full path", async () => {
    const body = intakeBody({ endpoint: { url: "https://a.example.com/", protocol: "A2A", authScheme: "NONE", x: 1 } });
    const answer = await call("POST", "/api/v1/providers", { body });
    expectProblem(answer, 400, "BAD_USER_INPUT");
    expect(errorPaths(answer)).toEqual(["/endpoint/x"]);
    expect(await providerExists(body.providerCode)).toBe(false);
  });

  test.each(["trustTier", "reviewStage", "version", "tokens"])("a read-only key %s is a 400 naming it", async (key) => {
    const body = intakeBody({ [key]: key === "version" ? 7 : "OFFICIAL" });
    const answer = await call("POST", "/api/v1/providers", { body });
    expectProblem(answer, 400, "BAD_USER_INPUT");
    expect(errorPaths(answer)).toEqual([`/${key}`]);
    expect(await providerExists(body.providerCode)).toBe(false);
  });

  test("an unknown key is a 400 naming it", async () => {
    const body = intakeBody({ homepage: "https://example.com" });
    const answer = await call("POST", "/api/v1/providers", { body });
    expectProblem(answer, 400, "BAD_USER_INPUT");
    expect(errorPaths(answer)).toEqual(["/homepage"]);
    expect(await providerExists(body.providerCode)).toBe(false);
  });

  test("fields in the query string are refused", async () => {
    const body = intakeBody();
    const answer = await call("POST", "/api/v1/providers?visibility=PRIVATE", { body });
    expectProblem(answer, 400, "BAD_USER_INPUT");
    expect(errorPaths(answer)).toEqual(["/visibility"]);
  });
});

describe("the body", () => {
  test("a body that is not JSON is a 415", async () => {
    const body = intakeBody();
    const answer = await call("POST", "/api/v1/providers", {
      body: new URLSearchParams(body as Record<string, string>).toString(),
      headers: { "content-type": "application/x-www-form-urlencoded" },
    });
    expectProblem(answer, 415, "UNSUPPORTED_MEDIA_TYPE");
    expect(await providerExists(body.providerCode)).toBe(false);
  });

  test("a JSON body without a content type is a 415", async () => {
    const res = await app.fetch("http://registry.test/api/v1/providers", {
      method: "POST",
      body: new TextEncoder().encode(JSON.stringify(intakeBody())),
    });
    expect(res.status).toBe(415);
    expect(res.headers.get("content-type")).toBe("application/problem+json");
    expect(await res.json()).toMatchObject({ code: "UNSUPPORTED_MEDIA_TYPE", status: 415 });
  });

  test("malformed JSON is a 400", async () => {
    const answer = await call("POST", "/api/v1/providers", { body: '{"name": "x",' });
    expectProblem(answer, 400, "BAD_USER_INPUT");
  });

  test.each([
    ["an array", "[]"],
    ["a string", '"hello"'],
    ["null", "null"],
  ])("a JSON body that is %s is a 400", async (_what, text) => {
    const answer = await call("POST", "/api/v1/providers", { body: text });
    expectProblem(answer, 400, "BAD_USER_INPUT");
  });
});
