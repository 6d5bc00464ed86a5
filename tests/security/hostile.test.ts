/**
 * Hostile input, through both doors where both take it: text that is not valid Unicode, edited
 * cursors, long label filters, integers that are not plain decimal, If-Match lists and weak tags,
 * URLs without an authority, GraphQL requests that Yoga's parsers refuse, who sees a reviewer's name
 * on a version, two Authorization headers, and CORS. Each refusal is a 400 (or the code the contract
 * names) in the door's shape, and changes nothing.
 */
import { createServer, type Server } from "node:http";
import { connect } from "node:net";
import { afterAll, beforeAll, describe, expect, test } from "@jest/globals";
import { loadConfig } from "../../src/config.ts";
import { createApp } from "../../src/yoga.ts";
import { intakeBody, uniqueCode } from "../builders.ts";
import {
  type Answer,
  app,
  approve,
  call,
  db,
  errorPaths,
  expectProblem,
  gql,
  gqlCodes,
  intake,
  reviewerToken,
  versionCount,
} from "../helpers.ts";

/** A refusal with this status and code, in the door's shape, naming `path` when given (dotted; REST names its JSON Pointer). */
function expectRefused(door: "rest" | "graphql", answer: Answer, status: number, code: string, path?: string) {
  if (door === "rest") expectProblem(answer, status, code);
  else {
    // GraphQL over HTTP, as application/json: a request refused for its GraphQL (a document, its
    // variables or arguments) is 200 with the error; a body that cannot be read is no GraphQL
    // request at all, and it and the transport's other refusals keep their status.
    const ran = answer.body !== null && typeof answer.body === "object" && "data" in answer.body;
    const forItsGraphql = code === "BAD_USER_INPUT" && path !== "(body)";
    expect(answer.status).toBe(ran || forItsGraphql ? 200 : status);
    expect(gqlCodes(answer)).toEqual([code]);
  }
  const pointer = (dotted: string) => (dotted === "(body)" ? "" : dotted.replace(/^|\./g, "/"));
  const named = door === "rest" && path !== undefined ? pointer(path) : path;
  if (named !== undefined) expect(errorPaths(answer)).toEqual([named]);
}

const bad = {
  nul: "Route\u0000Planner",
  loneHigh: "Route Planner \ud800",
  loneLow: "\udc00 Route Planner",
};

describe.each(["rest", "graphql"] as const)("text that is not valid Unicode (%s)", (door) => {
  const intakeVia = (body: Record<string, unknown>) =>
    door === "rest"
      ? call("POST", "/api/v1/providers", { body })
      : gql(
          `mutation($name: String!, $summary: String!, $agentType: AgentType!, $contactEmail: String!, $endpoint: EndpointInput!, $providerCode: String, $labels: [String!]) {
            createProvider(name: $name, summary: $summary, agentType: $agentType, contactEmail: $contactEmail, endpoint: $endpoint, providerCode: $providerCode, labels: $labels) { providerCode }
          }`,
          body,
        );

  test.each(Object.entries(bad))(
    "%s in a top-level field, a nested one and a list item is a 400 naming it; nothing is stored",
    async (_kind, text) => {
      const cases: [Record<string, unknown>, string][] = [
        [{ name: text }, "name"],
        [
          { endpoint: { url: `https://agent.example.com/${text}`, protocol: "A2A", authScheme: "NONE" } },
          "endpoint.url",
        ],
        [{ labels: ["maps", text] }, "labels.1"],
      ];
      for (const [fields, path] of cases) {
        const body = intakeBody(fields);
        const answer = await intakeVia(body);
        expectRefused(door, answer, 400, "BAD_USER_INPUT", path);
        expect(await db.provider.count({ where: { providerCode: body.providerCode as string } })).toBe(0);
      }
    },
  );

  test("in a PATCH: a 400, and the profile and its versions unchanged", async () => {
    const created = await intake();
    for (const text of Object.values(bad)) {
      const answer =
        door === "rest"
          ? await call("PATCH", `/api/v1/providers/${created.providerCode}`, {
              body: { summary: text },
              token: created.accessToken,
            })
          : await gql(
              "mutation($c: String!, $s: String) { updateProvider(providerCode: $c, summary: $s) { version } }",
              { c: created.providerCode, s: text },
              { token: created.accessToken },
            );
      expectRefused(door, answer, 400, "BAD_USER_INPUT", door === "rest" ? "summary" : "s");
    }
    expect(await versionCount(created.providerCode)).toBe(1);
    const row = await db.provider.findUniqueOrThrow({ where: { providerCode: created.providerCode } });
    expect(row.summary).toBe("Plans delivery routes across a city");
  });

  test("in a lookup's code, a list filter, a search, a comment and an assignee", async () => {
    const created = await intake();
    const reviewer = await reviewerToken();
    const answers =
      door === "rest"
        ? [
            [await call("GET", "/api/v1/providers/route%00planner"), "providerCode"],
            [await call("GET", "/api/v1/providers?search=route%00"), "search"],
            [await call("GET", "/api/v1/providers?labels=maps,a%00"), "labels.0"],
            [await call("GET", "/api/v1/reviews/queue?assignedTo=a%00", { token: reviewer }), "assignedTo"],
            [
              await call("POST", `/api/v1/reviews/${created.reviewCode}/comments`, {
                body: { note: "looks\u0000fine" },
                token: reviewer,
              }),
              "note",
            ],
            [
              await call("POST", `/api/v1/reviews/${created.reviewCode}/assign`, {
                body: { assignee: "\ud800" },
                token: reviewer,
              }),
              "assignee",
            ],
          ]
        : [
            [await gql("query($c: String!) { provider(providerCode: $c) { name } }", { c: "a\u0000" }), "c"],
            // A literal in the document: `\u0000` is a valid GraphQL escape, still not storable.
            [await gql('{ providers(search: "route\\u0000") { nextCursor } }'), "search"],
            [await gql("query($l: [String!]) { providers(labels: $l) { nextCursor } }", { l: ["\udc00"] }), "l.0"],
            [
              await gql(
                "mutation($r: String!, $n: String!) { commentOnReview(reviewCode: $r, note: $n) { at } }",
                { r: created.reviewCode, n: "x\u0000" },
                { token: reviewer },
              ),
              "n",
            ],
          ];
    for (const [answer, path] of answers as [Answer, string][])
      expectRefused(door, answer, 400, "BAD_USER_INPUT", path);
    expect(await db.reviewEvent.count({ where: { provider: { providerCode: created.providerCode } } })).toBe(2);
    const review = await db.review.findUniqueOrThrow({ where: { reviewCode: created.reviewCode } });
    expect([review.status, review.assignedTo]).toEqual(["OPEN", null]);
  });

  test("a body that is not UTF-8 is a 400, never stored with U+FFFD in its place", async () => {
    const body = intakeBody({ name: "Route Planner" });
    const json =
      door === "rest"
        ? JSON.stringify(body)
        : JSON.stringify({
            query:
              'mutation($n: String!) { createProvider(name: $n, summary: "s", agentType: ASSISTANT, contactEmail: "a@example.com", endpoint: { url: "https://a.example.com", protocol: A2A, authScheme: NONE }) { providerCode } }',
            variables: { n: "Route Planner" },
          });
    // "Route Planner" with its space replaced by a byte that begins no UTF-8 sequence.
    const bytes = Buffer.from(json.replace("Route Planner", "Route\u0001Planner"));
    bytes[bytes.indexOf(1)] = 0xff;
    const res = await app.fetch(`http://registry.test${door === "rest" ? "/api/v1/providers" : "/graphql"}`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: bytes,
    });
    const answer: Answer = { status: res.status, headers: res.headers, text: "", body: await res.json() };
    expectRefused(door, answer, 400, "BAD_USER_INPUT", "(body)");
    expect(await db.provider.count({ where: { name: { contains: "\ufffd" } } })).toBe(0);
  });

  test("lengths count characters as stored: 80 emoji are an 80-character token label, 81 too many; likewise a name", async () => {
    const created = await intake();
    const issue = (label: string) =>
      door === "rest"
        ? call("POST", `/api/v1/providers/${created.providerCode}/tokens`, {
            body: { label },
            token: created.accessToken,
          })
        : gql(
            "mutation($c: String!, $l: String) { issueToken(providerCode: $c, label: $l) { accessToken } }",
            { c: created.providerCode, l: label },
            { token: created.accessToken },
          );
    expect((await issue("🛰".repeat(80))).status).toBe(door === "rest" ? 201 : 200);
    expectRefused(door, await issue("🛰".repeat(81)), 400, "BAD_USER_INPUT", "label");
    expect((await intakeVia(intakeBody({ name: "🛰".repeat(120) }))).status).toBe(door === "rest" ? 201 : 200);
    expectRefused(door, await intakeVia(intakeBody({ name: "🛰".repeat(121) })), 400, "BAD_USER_INPUT", "name");
  });
});

describe.each(["rest", "graphql"] as const)("list arguments and cursors (%s)", (door) => {
  let owner: Awaited<ReturnType<typeof intake>>;
  let reviewer: string;
  beforeAll(async () => {
    // Two approved providers that a search for "route" finds: every list has a second page.
    owner = await intake();
    await approve(owner.providerCode);
    await approve((await intake()).providerCode);
    for (const summary of ["one", "two", "three"]) {
      await call("PATCH", `/api/v1/providers/${owner.providerCode}`, { body: { summary }, token: owner.accessToken });
    }
    reviewer = await reviewerToken();
  });

  const list = (name: "providers" | "search" | "changes" | "queue" | "versions", args: Record<string, unknown>) => {
    const base =
      name === "search"
        ? { search: "route" }
        : name === "changes"
          ? { updatedSince: "2020-01-01T00:00:00Z" }
          : name === "versions"
            ? { providerCode: owner.providerCode }
            : {};
    const all = { ...base, ...args };
    const token = name === "queue" ? reviewer : undefined;
    if (door === "rest") {
      const path =
        name === "queue"
          ? "/api/v1/reviews/queue"
          : name === "versions"
            ? `/api/v1/providers/${owner.providerCode}/versions`
            : "/api/v1/providers";
      const query = new URLSearchParams(
        Object.entries(all)
          .filter(([k]) => !(name === "versions" && k === "providerCode"))
          .map(([k, v]) => [k, Array.isArray(v) ? v.join(",") : String(v)]),
      );
      return call("GET", `${path}?${query}`, { token });
    }
    const field = name === "queue" ? "reviewQueue" : name === "versions" ? "providerVersions" : "providers";
    const types: Record<string, string> = {
      search: "String",
      updatedSince: "DateTime",
      providerCode: "String!",
      labels: "[String!]",
      cursor: "String",
      limit: "Int",
    };
    const keys = Object.keys(all);
    const decl = keys.map((k) => `$${k}: ${types[k]}`).join(", ");
    const pass = keys.map((k) => `${k}: $${k}`).join(", ");
    return gql(`query(${decl}) { ${field}(${pass}) { nextCursor } }`, all, { token });
  };

  /** Each list's cursor as JSON text with `$d` (a timestamp), `$i` (an id or offset), `$s` (a text). */
  const shapes = {
    providers: ["$d", "$i"],
    search: ["$i", "$s"],
    changes: ["$d", "$i", "$i"],
    queue: ["$i", "$d", "$i"],
    versions: ["$i"],
  } as const;
  const BAD = {
    $d: ['"yesterday"', '"2026-13-45T00:00:00.000Z"', '"-271821-04-20T00:00:00.000Z"', '"2026-11-25"', "5"],
    $i: ["1e309", "-1", "1.5", '"1"', "9007199254740993", "null"],
    $s: ["1", '"x"'.replace("x", "y".repeat(100))],
  };
  const GOOD = { $d: '"2026-11-25T00:00:00.000Z"', $i: "1", $s: '"fingerprint"' };
  /** Cursors of the list's own shape with one element edited, of other shapes, and not cursors at all. */
  function edited(name: keyof typeof shapes): string[] {
    const shape = shapes[name];
    const base64 = (json: string) => Buffer.from(json).toString("base64url");
    const ofShape = shape.flatMap((slot, at) =>
      BAD[slot].map((value) => base64(`[${shape.map((s, i) => (i === at ? value : GOOD[s])).join(",")}]`)),
    );
    const shapeless = [`[${shape.map((s) => GOOD[s]).join(",")},1]`, "[]", '{"a":1}', "[[1]]"].map(base64);
    return [...ofShape, ...shapeless, "not a cursor!", "A".repeat(2000)];
  }

  test.each(["providers", "search", "changes", "queue", "versions"] as const)(
    "an edited cursor on %s is a 400 naming cursor; the cursor the list issued works",
    async (name) => {
      for (const cursor of edited(name)) {
        const answer = await list(name, { cursor });
        expectRefused(door, answer, 400, "BAD_USER_INPUT", "cursor");
      }
      const first = await list(name, { limit: 1 });
      expect(first.status).toBe(200);
      const page = door === "rest" ? first.body : Object.values(first.body.data)[0];
      const next = (page as { nextCursor: string | null }).nextCursor;
      expect(next).toEqual(expect.any(String));
      const second = await list(name, { limit: 1, cursor: next });
      expect(second.status).toBe(200);
    },
  );

  test("the labels filter: 20 labels pass, 21 or 1,000 are a 400 naming labels, as is a label that is not one", async () => {
    const labels = (n: number) => Array.from({ length: n }, (_, i) => `l${i}`);
    expect((await list("providers", { labels: labels(20) })).status).toBe(200);
    for (const value of [labels(21), labels(1000), ["maps", "not a label!"]]) {
      expectRefused(door, await list("providers", { labels: value }), 400, "BAD_USER_INPUT", "labels");
    }
  });
});

describe("integers in paths and query strings are plain decimal (REST)", () => {
  test.each(["0x1", "+1", "1e0", "1.0", "01", " 1", "1 "])("version %j is a 400 naming version", async (version) => {
    const created = await intake();
    const answer = await call(
      "GET",
      `/api/v1/providers/${created.providerCode}/versions/${encodeURIComponent(version)}`,
    );
    expectProblem(answer, 400, "BAD_USER_INPUT");
    expect(errorPaths(answer)).toEqual(["/version"]);
  });

  test("limit and the diff's bounds likewise; plain decimal works", async () => {
    const created = await intake();
    for (const limit of ["0x10", "1e1", "+5", "5.0"]) {
      const answer = await call("GET", `/api/v1/providers?limit=${encodeURIComponent(limit)}`);
      expectProblem(answer, 400, "BAD_USER_INPUT");
      expect(errorPaths(answer)).toEqual(["/limit"]);
    }
    const diff = await call("GET", `/api/v1/providers/${created.providerCode}/versions/0x1/diff/1`);
    expect(errorPaths(diff)).toEqual(["/from"]);
    expect((await call("GET", "/api/v1/providers?limit=5")).status).toBe(200);
    expect((await call("GET", `/api/v1/providers/${created.providerCode}/versions/1`)).status).toBe(200);
  });
});

describe.each(["rest", "graphql"] as const)("If-Match as RFC 9110 reads it (%s)", (door) => {
  const patch = (code: string, token: string, summary: string, ifMatch: string) =>
    door === "rest"
      ? call("PATCH", `/api/v1/providers/${code}`, { body: { summary }, token, headers: { "if-match": ifMatch } })
      : gql(
          "mutation($c: String!, $s: String) { updateProvider(providerCode: $c, summary: $s) { version } }",
          { c: code, s: summary },
          { token, headers: { "if-match": ifMatch } },
        );

  test("a list matches when any of its strong tags does; a weak tag, an unquoted one or a bad list never", async () => {
    const created = await intake();
    for (const ifMatch of ['W/"1"', "1", '"7", W/"1"', '"1" "2"', '"01"']) {
      expectRefused(
        door,
        await patch(created.providerCode, created.accessToken, "refused", ifMatch),
        412,
        "PRECONDITION_FAILED",
      );
    }
    expect(await versionCount(created.providerCode)).toBe(1);
    const listed = await patch(created.providerCode, created.accessToken, "listed", '"7", "1"');
    expect(listed.status).toBe(200);
    expect((await patch(created.providerCode, created.accessToken, "any", "*")).status).toBe(200);
    expect(await versionCount(created.providerCode)).toBe(3);
  });
});

describe.each(["rest", "graphql"] as const)("URLs need // and an authority (%s)", (door) => {
  test.each([
    "https:evil.example.com",
    "https:/evil.example.com",
    "https:\\\\evil.example.com",
    "https://a.example.com/\tx",
  ])("%j is refused, naming endpoint.url", async (url) => {
    const body = intakeBody({ endpoint: { url, protocol: "A2A", authScheme: "NONE" } });
    const answer =
      door === "rest"
        ? await call("POST", "/api/v1/providers", { body })
        : await gql(
            'mutation($e: EndpointInput!) { createProvider(name: "n", summary: "s", agentType: ASSISTANT, contactEmail: "a@example.com", endpoint: $e) { providerCode } }',
            { e: body.endpoint },
          );
    expectRefused(door, answer, 400, "BAD_USER_INPUT", door === "rest" ? "endpoint.url" : undefined);
  });
});

describe("GraphQL over HTTP refusals", () => {
  test("GET with variables or extensions that are not JSON objects is a 400, not a 500", async () => {
    for (const [key, value] of [
      ["variables", "{bad"],
      ["extensions", "{bad"],
      ["variables", "[1]"],
      ["extensions", '"x"'],
    ]) {
      const answer = await call(
        "GET",
        `/graphql?query=${encodeURIComponent("{ __typename }")}&${key}=${encodeURIComponent(value as string)}`,
      );
      expect(answer.status).toBe(400);
      expect(gqlCodes(answer)).toEqual(["BAD_USER_INPUT"]);
      expect(errorPaths(answer)).toEqual([key]);
    }
    expect((await call("GET", `/graphql?query=${encodeURIComponent("{ __typename }")}&variables=%7B%7D`)).status).toBe(
      200,
    );
  });

  test("a POST body that is not JSON is a 400 that does not echo the parser's words", async () => {
    const answer = await call("POST", "/graphql", { body: "{bad json" });
    expect(answer.status).toBe(400);
    expect(gqlCodes(answer)).toEqual(["BAD_USER_INPUT"]);
    expect(answer.body.errors[0].extensions.originalError).toBeUndefined();
    expect(answer.text).not.toMatch(/position|SyntaxError|Expected/);
  });

  test("a method GraphQL does not take is a 405 METHOD_NOT_ALLOWED, a mutation over GET too", async () => {
    const put = await call("PUT", "/graphql", { body: { query: "{ __typename }" } });
    expect([put.status, gqlCodes(put)]).toEqual([405, ["METHOD_NOT_ALLOWED"]]);
    const mutation = await call("GET", `/graphql?query=${encodeURIComponent("mutation { __typename }")}`, {
      headers: { accept: "application/json" },
    });
    expect([mutation.status, gqlCodes(mutation)]).toEqual([405, ["METHOD_NOT_ALLOWED"]]);
  });
});

describe.each(["rest", "graphql"] as const)("a reviewer's name on a version (%s)", (door) => {
  test("anonymous callers and other agents see `reviewer`; the owner and reviewers see who", async () => {
    const created = await intake();
    const other = await intake();
    const reviewer = await reviewerToken("alice@reviewers.example");
    const retired = await call("POST", `/api/v1/providers/${created.providerCode}/lifecycle`, {
      body: { state: "DEPRECATED", message: "Use the next one" },
      token: reviewer,
    });
    expect(retired.status).toBe(200);
    const actors = async (token?: string) => {
      if (door === "rest") {
        const list = await call("GET", `/api/v1/providers/${created.providerCode}/versions`, { token });
        const one = await call("GET", `/api/v1/providers/${created.providerCode}/versions/2`, { token });
        return [list.body.items[0].actor, one.body.actor];
      }
      const answer = await gql(
        "query($c: String!) { providerVersions(providerCode: $c) { items { actor } } providerVersion(providerCode: $c, version: 2) { actor } }",
        { c: created.providerCode },
        { token },
      );
      return [answer.body.data.providerVersions.items[0].actor, answer.body.data.providerVersion.actor];
    };
    expect(await actors()).toEqual(["reviewer", "reviewer"]);
    expect(await actors(other.accessToken)).toEqual(["reviewer", "reviewer"]);
    expect(await actors(created.accessToken)).toEqual([
      "reviewer:alice@reviewers.example",
      "reviewer:alice@reviewers.example",
    ]);
    expect(await actors(reviewer)).toEqual(["reviewer:alice@reviewers.example", "reviewer:alice@reviewers.example"]);
  });
});

test("a reviewer JWT whose subject is not storable text, or longer than an assignee, is refused (401)", async () => {
  for (const subject of ["alice\u0000", "\ud800alice", "a".repeat(201)]) {
    const answer = await call("GET", "/api/v1/reviews/queue", { token: await reviewerToken(subject) });
    expectProblem(answer, 401, "UNAUTHENTICATED");
  }
  expect((await call("GET", "/api/v1/reviews/queue", { token: await reviewerToken("a".repeat(200)) })).status).toBe(
    200,
  );
});

describe("two Authorization headers", () => {
  let server: Server;
  let port: number;
  beforeAll(async () => {
    server = createServer(app);
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    port = (server.address() as { port: number }).port;
  });
  afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

  /** A PATCH over a real socket with these Authorization lines; answers the status line's code. */
  function rawPatch(code: string, authorizations: string[]): Promise<number> {
    const body = JSON.stringify({ summary: "changed by a request with two credentials" });
    const head = [
      `PATCH /api/v1/providers/${code} HTTP/1.1`,
      "Host: 127.0.0.1",
      "Content-Type: application/json",
      `Content-Length: ${Buffer.byteLength(body)}`,
      ...authorizations.map((a) => `Authorization: ${a}`),
      "Connection: close",
    ];
    return new Promise((resolve, reject) => {
      const socket = connect(port, "127.0.0.1", () => socket.write(`${head.join("\r\n")}\r\n\r\n${body}`));
      let text = "";
      socket.on("data", (chunk) => {
        text += chunk.toString("latin1");
      });
      socket.on("end", () => resolve(Number(/^HTTP\/1\.1 (\d{3})/.exec(text)?.[1])));
      socket.on("error", reject);
    });
  }

  test("over a socket, valid then invalid or invalid then valid, is a 401 and changes nothing", async () => {
    const created = await intake();
    const valid = `Bearer ${created.accessToken}`;
    expect(await rawPatch(created.providerCode, [valid, "Bearer agr_not-a-token"])).toBe(401);
    expect(await rawPatch(created.providerCode, ["Bearer agr_not-a-token", valid])).toBe(401);
    expect(await rawPatch(created.providerCode, [valid, valid])).toBe(401);
    expect(await versionCount(created.providerCode)).toBe(1);
    expect(await rawPatch(created.providerCode, [valid])).toBe(200);
  });

  test("through fetch, where the two become one list, likewise", async () => {
    const created = await intake();
    const headers = new Headers({ "content-type": "application/json" });
    headers.append("authorization", `Bearer ${created.accessToken}`);
    headers.append("authorization", "Bearer agr_not-a-token");
    const res = await app.fetch(`http://registry.test/api/v1/providers/${created.providerCode}`, {
      method: "PATCH",
      headers,
      body: JSON.stringify({ summary: "changed" }),
    });
    expect(res.status).toBe(401);
    expect(res.headers.get("www-authenticate")).toMatch(/^Bearer/);
    expect(await versionCount(created.providerCode)).toBe(1);
  });
});

describe("CORS", () => {
  const origin = "https://dashboard.example.com";
  const preflight = (target: typeof app, from: string) =>
    call("OPTIONS", "/api/v1/providers", {
      app: target,
      headers: {
        origin: from,
        "access-control-request-method": "PATCH",
        "access-control-request-headers": "authorization",
      },
    });

  test("off by default: no grant to any origin, credentials never", async () => {
    const answer = await call("GET", "/api/v1/providers", { headers: { origin } });
    expect(answer.status).toBe(200);
    expect(answer.headers.get("access-control-allow-origin")).toBeNull();
    expect(answer.headers.get("access-control-allow-credentials")).toBeNull();
    expect((await preflight(app, origin)).headers.get("access-control-allow-origin")).toBeNull();
  });

  test("CORS_ORIGINS lists the origins granted, each by its own name, never with credentials", async () => {
    const config = loadConfig({
      ...process.env,
      NODE_ENV: "test",
      CORS_ORIGINS: `${origin}, https://other.example.com`,
    });
    const listed = createApp(config, db);
    const granted = await call("GET", "/api/v1/providers", { app: listed, headers: { origin } });
    expect(granted.headers.get("access-control-allow-origin")).toBe(origin);
    expect(granted.headers.get("access-control-expose-headers")).toMatch(/ETag/);
    expect(granted.headers.get("vary")).toMatch(/Origin/);
    expect(granted.headers.get("access-control-allow-credentials")).toBeNull();
    const refused = await call("GET", "/api/v1/providers", {
      app: listed,
      headers: { origin: "https://evil.example" },
    });
    expect(refused.headers.get("access-control-allow-origin")).toBeNull();
    const ok = await preflight(listed, origin);
    expect(ok.status).toBe(204);
    expect(ok.headers.get("access-control-allow-origin")).toBe(origin);
    expect(ok.headers.get("access-control-allow-methods")).toMatch(/PATCH/);
    expect(ok.headers.get("access-control-allow-headers")).toMatch(/Authorization/);
    expect((await preflight(listed, "https://evil.example")).headers.get("access-control-allow-origin")).toBeNull();
    await listed.dispose();
  });

  test("`*` grants any origin as `*`, never with credentials", async () => {
    const any = createApp(loadConfig({ ...process.env, NODE_ENV: "test", CORS_ORIGINS: "*" }), db);
    const answer = await call("GET", "/graphql?query=%7B__typename%7D", {
      app: any,
      headers: { origin: "https://x.example" },
    });
    expect(answer.headers.get("access-control-allow-origin")).toBe("*");
    expect(answer.headers.get("access-control-allow-credentials")).toBeNull();
    await any.dispose();
  });

  test("a CORS_ORIGINS entry that is not an origin stops the configuration", () => {
    for (const value of ["https://a.example.com/path", "a.example.com", "https://a.example.com,ftp://b.example"]) {
      expect(() => loadConfig({ NODE_ENV: "test", CORS_ORIGINS: value })).toThrow(/CORS_ORIGINS/);
    }
  });
});

test("the database holds one active review per provider, whatever writes it", async () => {
  const created = await intake();
  const provider = await db.provider.findUniqueOrThrow({ where: { providerCode: created.providerCode } });
  await expect(
    db.review.create({
      data: { reviewCode: `RV-${uniqueCode().slice(-8).toUpperCase()}`, providerId: provider.id, kind: "UPDATE" },
    }),
  ).rejects.toThrow();
  expect(await db.review.count({ where: { providerId: provider.id } })).toBe(1);
});
