/** Intake (Mutation.createProvider, POST /api/v1/providers) through both doors: the same rules, codes and field paths, and a refusal writes nothing. */
import { describe, expect, test } from "@jest/globals";
import { intakeBody, uniqueCode } from "../builders.ts";
import { doors, type Outcome } from "../doors.ts";
import { call, db, intake } from "../helpers.ts";

async function providerExists(providerCode: unknown): Promise<boolean> {
  return (await db.provider.count({ where: { providerCode: String(providerCode) } })) > 0;
}

/** What the error says: the problem's `detail` on REST, the error's `message` on GraphQL (the same text). */
const detailOf = (outcome: Outcome): string =>
  outcome.answer.body?.detail ?? outcome.answer.body?.errors?.[0]?.message ?? "";

describe.each(doors)("$name", (door) => {
  const create = (body: Record<string, unknown>) => door.run("Mutation.createProvider", body);

  /** Runs an intake that must be refused as bad input: no data, and no provider written. */
  async function refused(body: Record<string, unknown>): Promise<Outcome> {
    const outcome = await create(body);
    expect(outcome.code).toBe("BAD_USER_INPUT");
    expect(outcome.status).toBe(400);
    expect(outcome.data).toBeNull();
    expect(await providerExists(body.providerCode)).toBe(false);
    return outcome;
  }

  describe("required fields", () => {
    test.each(["name", "summary", "agentType", "endpoint", "contactEmail"])(
      "a missing %s is BAD_USER_INPUT naming it",
      async (field) => {
        const body = intakeBody();
        delete body[field];
        const outcome = await refused(body);
        expect(outcome.paths).toEqual([field]);
      },
    );

    test("an empty name is BAD_USER_INPUT naming it", async () => {
      const outcome = await refused(intakeBody({ name: "   " }));
      expect(outcome.paths).toEqual(["name"]);
    });

    test("a field of the wrong type is BAD_USER_INPUT naming it", async () => {
      const outcome = await refused(intakeBody({ name: 123 }));
      expect(outcome.paths).toContain("name");
    });

    test("an unknown enumeration value is BAD_USER_INPUT naming it", async () => {
      const outcome = await refused(intakeBody({ agentType: "ROBOT" }));
      expect(outcome.paths).toContain("agentType");
    });
  });

  describe("field rules", () => {
    test.each(["not-an-email", "ops-at-example.com"])("a bad contact email (%s) is refused", async (contactEmail) => {
      const outcome = await refused(intakeBody({ contactEmail }));
      expect(outcome.paths).toEqual(["contactEmail"]);
    });

    test.each([
      [
        ["  Zeta ", "alpha", "ZETA", "b.c_d-e", "Alpha"],
        ["zeta", "alpha", "b.c_d-e"],
      ],
      [
        [" B ", "a", "b", "A", "c"],
        ["b", "a", "c"],
      ],
    ])("labels %j are trimmed, lower-cased and de-duplicated, in order", async (labels, normalised) => {
      const outcome = await create(intakeBody({ labels }));
      expect(outcome.code).toBeUndefined();
      expect(outcome.data.provider.labels).toEqual(normalised);
      const row = await db.provider.findUniqueOrThrow({
        where: { providerCode: outcome.data.providerCode },
        include: { labelIndex: true },
      });
      expect(row.labels).toEqual(normalised);
      expect(row.labelIndex.map((l) => l.label).sort()).toEqual([...normalised].sort());
    });

    test.each([
      ["a space", ["two words"]],
      ["a slash", ["a/b"]],
      ["an exclamation mark", ["not ok!"]],
      ["nothing", ["  "]],
      ["41 characters", ["x".repeat(41)]],
    ])("a label with %s is refused, naming its index", async (_what, labels) => {
      const outcome = await refused(intakeBody({ labels: ["fine", ...labels] }));
      expect(outcome.paths).toEqual(["labels.1"]);
    });

    test("more than 20 labels are refused", async () => {
      const outcome = await refused(intakeBody({ labels: Array.from({ length: 21 }, (_, i) => `l${i}`) }));
      expect(outcome.paths).toEqual(["labels"]);
    });

    test.each([
      "http://agent.example.com/a2a",
      "ftp://agent.example.com/",
      "/relative/path",
      "https://user:secret@agent.example.com/",
    ])("endpoint URL %s is refused", async (url) => {
      const outcome = await refused(intakeBody({ endpoint: { url, protocol: "A2A", authScheme: "NONE" } }));
      expect(outcome.paths).toEqual(["endpoint.url"]);
    });

    test.each([
      "http://localhost:8080/a2a",
      "http://localhost:7000/",
      "http://127.0.0.1:9000/",
      "http://[::1]:3000/mcp",
    ])("endpoint URL %s (loopback) is allowed", async (url) => {
      const outcome = await create(intakeBody({ endpoint: { url, protocol: "MCP", authScheme: "NONE" } }));
      expect(outcome.code).toBeUndefined();
      expect(outcome.data.provider.endpoint.url).toBe(url);
    });

    test("an http: health URL off loopback is refused too", async () => {
      const outcome = await refused(
        intakeBody({
          endpoint: {
            url: "https://a.example.com/",
            protocol: "A2A",
            authScheme: "NONE",
            healthUrl: "http://a.example.com/h",
          },
        }),
      );
      expect(outcome.paths).toEqual(["endpoint.healthUrl"]);
    });

    test("a duplicate capability key is refused, naming the duplicate", async () => {
      const outcome = await refused(
        intakeBody({
          capabilities: [
            { key: "plan", name: "Plan" },
            { key: "plan", name: "Plan again" },
          ],
        }),
      );
      expect(outcome.paths).toEqual(["capabilities.1.key"]);
    });

    test.each([
      [
        [
          { name: "search", kind: "MCP" },
          { name: "fetch", kind: "HTTP" },
          { name: "search", kind: "FUNCTION" },
        ],
        "tools.2.name",
      ],
      [
        [
          { name: "t", kind: "MCP" },
          { name: "t", kind: "HTTP" },
        ],
        "tools.1.name",
      ],
    ])("a duplicate tool name is refused, naming the duplicate (%#)", async (tools, path) => {
      const outcome = await refused(intakeBody({ tools }));
      expect(outcome.paths).toEqual([path]);
    });

    test("an unknown key inside a nested object is refused, naming the object", async () => {
      // How precisely differs by door: REST names `endpoint.x`, GraphQL the variable `endpoint`
      // (tests/rest/intake.test.ts and tests/graphql/intake.test.ts check each).
      const outcome = await refused(
        intakeBody({ endpoint: { url: "https://a.example.com/", protocol: "A2A", authScheme: "NONE", x: 1 } }),
      );
      expect(outcome.paths).toHaveLength(1);
      expect(outcome.paths[0]).toMatch(/^endpoint\b/);
    });
  });

  describe("provider codes", () => {
    test("a code already taken is a CONFLICT naming it, and changes nothing", async () => {
      const first = await intake();
      const before = await db.provider.findUniqueOrThrow({ where: { providerCode: first.providerCode } });
      const outcome = await create(intakeBody({ providerCode: first.providerCode, name: "Impostor" }));
      expect(outcome.code).toBe("CONFLICT");
      expect(outcome.status).toBe(409);
      expect(outcome.data).toBeNull();
      expect(detailOf(outcome)).toContain(first.providerCode);
      expect(await db.provider.count({ where: { providerCode: first.providerCode } })).toBe(1);
      const after = await db.provider.findUniqueOrThrow({ where: { providerCode: first.providerCode } });
      expect(after).toEqual(before);
    });

    test("without a code, one is derived from the name (and made unique)", async () => {
      const word = uniqueCode("derived");
      const name = `Ünïcode Çafé ${word}`;
      const first = await create(intakeBody({ providerCode: undefined, name }));
      expect(first.code).toBeUndefined();
      expect(first.data.providerCode).toBe(`unicode-cafe-${word}`);
      const second = await create(intakeBody({ providerCode: undefined, name }));
      expect(second.data.providerCode).toBe(`unicode-cafe-${word}-2`);
      const plain = uniqueCode("gderived");
      const third = await create(intakeBody({ providerCode: undefined, name: `Weather Bot ${plain}` }));
      expect(third.data.providerCode).toBe(`weather-bot-${plain}`);
    });

    test.each(["A-Upper", "ab", "-leading", "trailing-", "has space", "x".repeat(64)])(
      "the code %s is refused",
      async (providerCode) => {
        const outcome = await refused(intakeBody({ providerCode }));
        expect(outcome.paths).toEqual(["providerCode"]);
      },
    );
  });

  describe("the answer", () => {
    test("is not cached, and its token authenticates as the new agent", async () => {
      const outcome = await create(intakeBody({ visibility: undefined }));
      expect(outcome.code).toBeUndefined();
      expect(outcome.answer.headers.get("cache-control")).toBe("no-store");
      const { providerCode, accessToken, reviewCode } = outcome.data;
      expect(reviewCode).toMatch(/^RV-[0-9A-HJKMNP-TV-Z]{8}$/);
      const review = await call("GET", `/api/v1/reviews/${reviewCode}`, { token: accessToken });
      expect(review.status).toBe(200);
      expect(review.body.providerCode).toBe(providerCode);
    });
  });

  describe("the size of the request", () => {
    test.each(["description", "name"])(
      "a request over 64 KiB (a long %s) is PAYLOAD_TOO_LARGE and writes nothing",
      async (field) => {
        const body = intakeBody({ [field]: "x".repeat(70 * 1024) });
        const outcome = await create(body);
        expect(outcome.code).toBe("PAYLOAD_TOO_LARGE");
        expect(outcome.status).toBe(413);
        expect(outcome.answer.status).toBe(413);
        expect(await providerExists(body.providerCode)).toBe(false);
      },
    );

    test("a request just under 64 KiB is read (and judged on its content)", async () => {
      const outcome = await refused(intakeBody({ description: "x".repeat(10_001) }));
      expect(outcome.paths).toEqual(["description"]);
    });
  });
});
