/** Intake validation through POST /api/v1/providers: every refusal is a 400 naming the field, and writes nothing. */
import { describe, expect, test } from "@jest/globals";
import { app, call, db, errorPaths, expectProblem, intake, intakeBody, uniqueCode } from "../helpers.ts";

async function providerExists(providerCode: unknown): Promise<boolean> {
  return (await db.provider.count({ where: { providerCode: String(providerCode) } })) > 0;
}

describe("required fields", () => {
  test.each(["name", "summary", "agentType", "endpoint", "contactEmail"])(
    "a missing %s is a 400 naming it",
    async (field) => {
      const body = intakeBody();
      delete body[field];
      const answer = await call("POST", "/api/v1/providers", { body });
      expectProblem(answer, 400, "BAD_USER_INPUT");
      expect(errorPaths(answer)).toContain(field);
      expect(await providerExists(body.providerCode)).toBe(false);
    },
  );

  test("an empty name is a 400 naming it", async () => {
    const body = intakeBody({ name: "   " });
    const answer = await call("POST", "/api/v1/providers", { body });
    expectProblem(answer, 400, "BAD_USER_INPUT");
    expect(errorPaths(answer)).toEqual(["name"]);
  });

  test("a field of the wrong type is a 400 naming it", async () => {
    const body = intakeBody({ name: 123 });
    const answer = await call("POST", "/api/v1/providers", { body });
    expectProblem(answer, 400, "BAD_USER_INPUT");
    expect(errorPaths(answer)).toContain("name");
    expect(await providerExists(body.providerCode)).toBe(false);
  });

  test("an unknown enumeration value is a 400", async () => {
    const body = intakeBody({ agentType: "ROBOT" });
    const answer = await call("POST", "/api/v1/providers", { body });
    expectProblem(answer, 400, "BAD_USER_INPUT");
    expect(errorPaths(answer)).toContain("agentType");
  });
});

describe("field rules", () => {
  test("a bad contact email is refused", async () => {
    const body = intakeBody({ contactEmail: "not-an-email" });
    const answer = await call("POST", "/api/v1/providers", { body });
    expectProblem(answer, 400, "BAD_USER_INPUT");
    expect(errorPaths(answer)).toEqual(["contactEmail"]);
    expect(await providerExists(body.providerCode)).toBe(false);
  });

  test("labels are trimmed, lower-cased and de-duplicated, in order", async () => {
    const created = await intake({ labels: ["  Zeta ", "alpha", "ZETA", "b.c_d-e", "Alpha"] });
    expect(created.provider.labels).toEqual(["zeta", "alpha", "b.c_d-e"]);
    const row = await db.provider.findUniqueOrThrow({
      where: { providerCode: created.providerCode },
      include: { labelIndex: true },
    });
    expect(row.labels).toEqual(["zeta", "alpha", "b.c_d-e"]);
    expect(row.labelIndex.map((l) => l.label).sort()).toEqual(["alpha", "b.c_d-e", "zeta"]);
  });

  test.each([
    ["a space", ["two words"]],
    ["a slash", ["a/b"]],
    ["nothing", ["  "]],
    ["41 characters", ["x".repeat(41)]],
  ])("a label with %s is refused, naming its index", async (_what, labels) => {
    const body = intakeBody({ labels: ["fine", ...labels] });
    const answer = await call("POST", "/api/v1/providers", { body });
    expectProblem(answer, 400, "BAD_USER_INPUT");
    expect(errorPaths(answer)).toEqual(["labels.1"]);
    expect(await providerExists(body.providerCode)).toBe(false);
  });

  test("more than 20 labels are refused", async () => {
    const body = intakeBody({ labels: Array.from({ length: 21 }, (_, i) => `l${i}`) });
    const answer = await call("POST", "/api/v1/providers", { body });
    expectProblem(answer, 400, "BAD_USER_INPUT");
    expect(errorPaths(answer)).toEqual(["labels"]);
  });

  test.each([
    "http://agent.example.com/a2a",
    "ftp://agent.example.com/",
    "/relative/path",
    "https://user:secret@agent.example.com/",
  ])("endpoint URL %s is refused", async (url) => {
    const body = intakeBody({ endpoint: { url, protocol: "A2A", authScheme: "NONE" } });
    const answer = await call("POST", "/api/v1/providers", { body });
    expectProblem(answer, 400, "BAD_USER_INPUT");
    expect(errorPaths(answer)).toEqual(["endpoint.url"]);
    expect(await providerExists(body.providerCode)).toBe(false);
  });

  test.each(["http://localhost:8080/a2a", "http://127.0.0.1:9000/", "http://[::1]:3000/mcp"])(
    "endpoint URL %s (loopback) is allowed",
    async (url) => {
      const created = await intake({ endpoint: { url, protocol: "MCP", authScheme: "NONE" } });
      expect(created.provider.endpoint.url).toBe(url);
    },
  );

  test("an http: health URL off loopback is refused too", async () => {
    const body = intakeBody({
      endpoint: {
        url: "https://a.example.com/",
        protocol: "A2A",
        authScheme: "NONE",
        healthUrl: "http://a.example.com/h",
      },
    });
    const answer = await call("POST", "/api/v1/providers", { body });
    expectProblem(answer, 400, "BAD_USER_INPUT");
    expect(errorPaths(answer)).toEqual(["endpoint.healthUrl"]);
  });

  test("a duplicate capability key is refused, naming the duplicate", async () => {
    const body = intakeBody({
      capabilities: [
        { key: "plan", name: "Plan" },
        { key: "plan", name: "Plan again" },
      ],
    });
    const answer = await call("POST", "/api/v1/providers", { body });
    expectProblem(answer, 400, "BAD_USER_INPUT");
    expect(errorPaths(answer)).toEqual(["capabilities.1.key"]);
    expect(await providerExists(body.providerCode)).toBe(false);
  });

  test("a duplicate tool name is refused, naming the duplicate", async () => {
    const body = intakeBody({
      tools: [
        { name: "search", kind: "MCP" },
        { name: "fetch", kind: "HTTP" },
        { name: "search", kind: "FUNCTION" },
      ],
    });
    const answer = await call("POST", "/api/v1/providers", { body });
    expectProblem(answer, 400, "BAD_USER_INPUT");
    expect(errorPaths(answer)).toEqual(["tools.2.name"]);
  });

  test("an unknown key inside a nested object is refused, naming it", async () => {
    const body = intakeBody({ endpoint: { url: "https://a.example.com/", protocol: "A2A", authScheme: "NONE", x: 1 } });
    const answer = await call("POST", "/api/v1/providers", { body });
    expectProblem(answer, 400, "BAD_USER_INPUT");
    expect(errorPaths(answer)).toEqual(["endpoint.x"]);
  });
});

describe("provider codes", () => {
  test("a code already taken is a 409 CONFLICT and changes nothing", async () => {
    const first = await intake();
    const before = await db.provider.findUniqueOrThrow({ where: { providerCode: first.providerCode } });
    const answer = await call("POST", "/api/v1/providers", {
      body: intakeBody({ providerCode: first.providerCode, name: "Impostor" }),
    });
    expectProblem(answer, 409, "CONFLICT");
    expect(answer.body.detail).toContain(first.providerCode);
    const after = await db.provider.findUniqueOrThrow({ where: { providerCode: first.providerCode } });
    expect(after).toEqual(before);
  });

  test("without a code, one is derived from the name", async () => {
    const word = uniqueCode("derived");
    const name = `Ünïcode Çafé ${word}`;
    const first = await intake({ providerCode: undefined, name });
    expect(first.providerCode).toBe(`unicode-cafe-${word}`);
    const second = await intake({ providerCode: undefined, name });
    expect(second.providerCode).toBe(`unicode-cafe-${word}-2`);
  });

  test.each(["A-Upper", "ab", "-leading", "trailing-", "has space", "x".repeat(64)])(
    "the code %s is refused",
    async (providerCode) => {
      const answer = await call("POST", "/api/v1/providers", { body: intakeBody({ providerCode }) });
      expectProblem(answer, 400, "BAD_USER_INPUT");
      expect(errorPaths(answer)).toEqual(["providerCode"]);
    },
  );
});

describe("the body", () => {
  test.each(["trustTier", "reviewStage", "version", "tokens"])("a read-only key %s is a 400 naming it", async (key) => {
    const body = intakeBody({ [key]: key === "version" ? 7 : "OFFICIAL" });
    const answer = await call("POST", "/api/v1/providers", { body });
    expectProblem(answer, 400, "BAD_USER_INPUT");
    expect(errorPaths(answer)).toEqual([key]);
    expect(await providerExists(body.providerCode)).toBe(false);
  });

  test("an unknown key is a 400 naming it", async () => {
    const body = intakeBody({ homepage: "https://example.com" });
    const answer = await call("POST", "/api/v1/providers", { body });
    expectProblem(answer, 400, "BAD_USER_INPUT");
    expect(errorPaths(answer)).toEqual(["homepage"]);
    expect(await providerExists(body.providerCode)).toBe(false);
  });

  test("fields in the query string are refused", async () => {
    const body = intakeBody();
    const answer = await call("POST", "/api/v1/providers?visibility=PRIVATE", { body });
    expectProblem(answer, 400, "BAD_USER_INPUT");
    expect(errorPaths(answer)).toEqual(["visibility"]);
  });

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

  test("a body over 64 KiB is a 413 and writes nothing", async () => {
    const body = intakeBody({ description: "x".repeat(70 * 1024) });
    const answer = await call("POST", "/api/v1/providers", { body });
    expectProblem(answer, 413, "PAYLOAD_TOO_LARGE");
    expect(await providerExists(body.providerCode)).toBe(false);
  });

  test("a body just under 64 KiB is read (and judged on its content)", async () => {
    const body = intakeBody({ description: "x".repeat(10_001) });
    const answer = await call("POST", "/api/v1/providers", { body });
    expectProblem(answer, 400, "BAD_USER_INPUT");
    expect(errorPaths(answer)).toEqual(["description"]);
  });
});
