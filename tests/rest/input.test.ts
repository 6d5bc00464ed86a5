/**
 * How the REST guard reads what a client sends (src/http/rest/rest.plugin.ts): each value must fit its
 * argument's type as sent, with no GraphQL coercion showing through (a single value is not a one-item
 * list, a number is not a string), and every 400 names what is at fault by its JSON Pointer in plain
 * words, never in GraphQL's. What the rules refuse later is named by pointer too.
 */
import { describe, expect, test } from "@jest/globals";
import { intakeBody } from "../builders.ts";
import { expectPlainWords } from "../doors.ts";
import { type Answer, call, db, expectProblem, intake } from "../helpers.ts";

const AGENT_TYPES = "must be one of: ASSISTANT, AUTONOMOUS, WORKFLOW, TOOL_SERVER, MULTI_AGENT";

/** A 400 problem in plain words: its `errors` as `[path, message]` pairs. */
function refusal(answer: Answer): [string, string][] {
  expectProblem(answer, 400, "BAD_USER_INPUT");
  expectPlainWords(answer);
  return (answer.body.errors as { path: string; message: string }[]).map((e) => [e.path, e.message]);
}

async function exists(providerCode: unknown): Promise<boolean> {
  return (await db.provider.count({ where: { providerCode: String(providerCode) } })) > 0;
}

const submit = (body: unknown) => call("POST", "/api/v1/providers", { body });

describe("a body that does not fit the operation's types: 400, the value's pointer, plain words, nothing stored", () => {
  // biome-ignore format: a table reads best one case a line
  const cases: [string, Record<string, unknown>, [string, string][]][] = [
    ["a string where a list is expected", { labels: "weather" }, [["/labels", "must be a list"]]],
    ["a list where an object is expected", { endpoint: [{ url: "https://a.example.com", protocol: "A2A", authScheme: "NONE" }] }, [["/endpoint", "must be an object"]]],
    ["a string where an object is expected", { endpoint: '{"url":"https://a.example.com","protocol":"A2A","authScheme":"NONE"}' }, [["/endpoint", "must be an object"]]],
    ["a nested required field left out", { endpoint: { url: "https://a.example.com", authScheme: "NONE" } }, [["/endpoint/protocol", "is required"]]],
    ["a nested required field sent as null", { endpoint: { url: "https://a.example.com", protocol: null, authScheme: "NONE" } }, [["/endpoint/protocol", "must not be null"]]],
    ["an unknown enumeration value", { agentType: "ROBOT" }, [["/agentType", AGENT_TYPES]]],
    ["an enumeration value in another case", { agentType: "assistant" }, [["/agentType", AGENT_TYPES]]],
    ["a nested unknown enumeration value", { endpoint: { url: "https://a.example.com", protocol: "SMTP", authScheme: "NONE" } }, [["/endpoint/protocol", "must be one of: A2A, MCP, HTTP_JSON, OPENAI_COMPATIBLE, OTHER"]]],
    ["a number where a string is expected", { summary: 123 }, [["/summary", "must be a string"]]],
    ["a list item of the wrong type", { labels: ["maps", 2, "ok"] }, [["/labels/1", "must be a string"]]],
    ["a null list item", { labels: ["maps", null] }, [["/labels/1", "must not be null"]]],
    ["a fraction where a whole number is expected", { models: [{ vendor: "v", model: "m", role: "PRIMARY", contextWindow: 1.5 }] }, [["/models/0/contextWindow", "must be a whole number"]]],
    ["a whole number too large for one", { models: [{ vendor: "v", model: "m", role: "PRIMARY", contextWindow: 2 ** 31 }] }, [["/models/0/contextWindow", "must be a whole number from -2147483648 to 2147483647"]]],
    ["a string where a whole number is expected", { policy: { humanOversight: "ALWAYS", dataRetentionDays: "30" } }, [["/policy/dataRetentionDays", "must be a whole number"]]],
    ["an unknown key inside a list item", { tools: [{ name: "t", kind: "FUNCTION", colour: "red" }] }, [["/tools/0/colour", "unknown field"]]],
    ["a required field left out", { name: undefined }, [["/name", "is required"]]],
    ["a required field sent as null", { name: null }, [["/name", "must not be null"]]],
  ];

  test.each(cases)("%s", async (_what, fields, errors) => {
    const body = intakeBody(fields);
    const answer = await submit(body);
    expect(refusal(answer)).toEqual(errors);
    expect(await exists(body.providerCode)).toBe(false);
  });

  test("every problem is named, in the body's order, and the detail says them in words", async () => {
    const body = intakeBody({ labels: "weather", agentType: "ROBOT", endpoint: { url: "https://a.example.com" } });
    const answer = await submit(body);
    expect(refusal(answer)).toEqual([
      ["/agentType", AGENT_TYPES],
      ["/endpoint/protocol", "is required"],
      ["/endpoint/authScheme", "is required"],
      ["/labels", "must be a list"],
    ]);
    expect(answer.body.detail).toBe(
      `The body is not valid: /agentType ${AGENT_TYPES}; /endpoint/protocol is required; /endpoint/authScheme is required; /labels must be a list`,
    );
  });

  test("keys are escaped as RFC 6901 says: ~ as ~0, / as ~1", async () => {
    const body = intakeBody({
      "a/b~c": 1,
      endpoint: { url: "https://a.example.com", protocol: "A2A", authScheme: "NONE", "x/y": 1 },
    });
    expect(refusal(await submit(body))).toEqual([
      ["/endpoint/x~1y", "unknown field"],
      ["/a~1b~0c", "unknown field"],
    ]);
  });

  test("a body of thousands of wrong items names at most 50 of them", async () => {
    const answer = await submit(intakeBody({ labels: Array.from({ length: 5000 }, (_, i) => i) }));
    const errors = refusal(answer);
    expect(errors).toHaveLength(50);
    expect(errors[49]).toEqual(["/labels/49", "must be a string"]);
  });

  test("the whole body is the empty pointer: malformed JSON, or JSON that is not an object", async () => {
    expect(refusal(await submit('{"name": "x",'))).toEqual([["", "is not valid JSON"]]);
    expect(refusal(await submit("[]"))).toEqual([["", "must be a JSON object"]]);
    expect(refusal(await submit('"hello"'))).toEqual([["", "must be a JSON object"]]);
  });
});

describe("what the rules refuse is named by pointer too", () => {
  test("an invalid label, an invalid URL and an invalid email", async () => {
    const body = intakeBody({
      labels: ["ok", "not ok"],
      endpoint: { url: "ftp://a.example.com", protocol: "A2A", authScheme: "NONE" },
      contactEmail: "nope",
    });
    const errors = refusal(await submit(body));
    expect(errors.map(([path]) => path).sort()).toEqual(["/contactEmail", "/endpoint/url", "/labels/1"]);
    expect(await exists(body.providerCode)).toBe(false);
  });

  test("bounds the rules set on numbers and lengths, in words", async () => {
    const body = intakeBody({
      models: [{ vendor: "v", model: "m", role: "PRIMARY", contextWindow: 0 }],
      policy: { humanOversight: "ALWAYS", dataRetentionDays: 40_000 },
      roles: [{ subject: `${"a".repeat(250)}@example.com`, role: "OWNER" }],
    });
    const errors = refusal(await submit(body));
    expect(errors).toEqual(
      expect.arrayContaining([
        ["/models/0/contextWindow", "must be more than 0"],
        ["/policy/dataRetentionDays", "must be at most 36500"],
        ["/roles/0/subject", "must be at most 254 characters"],
      ]),
    );
  });
});

describe("GraphQL's `ifVersion` is the If-Match header over REST", () => {
  test("a PATCH body naming ifVersion is refused, pointing at the header, and changes nothing", async () => {
    const { providerCode, accessToken } = await intake();
    const path = `/api/v1/providers/${providerCode}`;
    const answer = await call("PATCH", path, { token: accessToken, body: { summary: "Changed", ifVersion: 1 } });
    expect(refusal(answer)).toEqual([["/ifVersion", "send it as the If-Match header"]]);
    const after = await call("GET", path, { token: accessToken });
    expect([after.body.version, after.body.summary]).toEqual([1, intakeBody().summary]);
  });
});

describe("query and path parameters are named `/<name>`", () => {
  test("an unknown enumeration value in the query string lists the allowed ones", async () => {
    const errors = refusal(await call("GET", "/api/v1/providers?agentType=ROBOT"));
    expect(errors).toEqual([["/agentType", AGENT_TYPES]]);
  });

  test("a word where a number or a boolean is expected", async () => {
    expect(refusal(await call("GET", "/api/v1/providers?limit=many"))).toEqual([
      ["/limit", "must be a whole number in plain decimal digits"],
    ]);
    expect(refusal(await call("GET", "/api/v1/providers?includeRetired=yes"))).toEqual([
      ["/includeRetired", "must be true or false"],
    ]);
    expect(refusal(await call("GET", "/api/v1/providers?limit=99999999999"))).toEqual([
      ["/limit", "must be a whole number from -2147483648 to 2147483647"],
    ]);
  });

  test("an unknown query parameter, and a body field sent in the query string", async () => {
    const unknown = await call("GET", "/api/v1/providers?orderBy=name");
    expect(refusal(unknown)).toEqual([["/orderBy", "unknown query parameter"]]);
    expect(unknown.body.detail).toBe("The query string is not valid: /orderBy unknown query parameter");
    const body = intakeBody();
    const answer = await call("POST", "/api/v1/providers?visibility=PRIVATE", { body });
    expect(refusal(answer)).toEqual([["/visibility", "send fields in the JSON body, not the query string"]]);
  });

  test("a path parameter that is not a whole number", async () => {
    const created = await intake();
    const answer = await call("GET", `/api/v1/providers/${created.providerCode}/versions/first`);
    expect(refusal(answer)).toEqual([["/version", "must be a whole number in plain decimal digits"]]);
    expect(answer.body.detail).toBe(
      "The URL path is not valid: /version must be a whole number in plain decimal digits",
    );
  });
});
