/**
 * POST /api/v1/providers/import and Mutation.importProvider: an intake from an A2A agent card or an
 * MCP registry server.json, with the report of where each field went and which had no home.
 */
import http from "node:http";
import https from "node:https";
import { afterEach, describe, expect, jest, test } from "@jest/globals";
import { uniqueCode } from "../builders.ts";
import { call, db, errorPaths, expectProblem, gql, intake } from "../helpers.ts";

const importDoc = (body: unknown, headers?: Record<string, string>) =>
  call("POST", "/api/v1/providers/import", { body, ...(headers ? { headers } : {}) });

afterEach(() => {
  jest.restoreAllMocks();
});

/** An A2A v1.0 agent card, as another registry or the agent itself would publish it. */
function a2aCard(name = `Card Agent ${uniqueCode("n")}`) {
  return {
    name,
    description: "Books meeting rooms.\nKnows every floor plan.",
    supportedInterfaces: [
      { url: "https://rooms.example.com/a2a", protocolBinding: "JSONRPC", protocolVersion: "1.0" },
      { url: "https://rooms.example.com/rest", protocolBinding: "HTTP+JSON", protocolVersion: "1.0" },
    ],
    provider: { organization: "Example Corp", url: "https://example.com" },
    version: "2.1.0",
    documentationUrl: "https://docs.example.com/rooms",
    iconUrl: "https://example.com/icon.png",
    capabilities: { streaming: true, pushNotifications: false },
    securitySchemes: {
      bearer: { httpAuthSecurityScheme: { scheme: "Bearer", bearerFormat: "JWT" } },
      key: { apiKeySecurityScheme: { location: "header", name: "X-Key" } },
    },
    securityRequirements: [{ schemes: { bearer: { list: [] } } }],
    defaultInputModes: ["text/plain"],
    defaultOutputModes: ["application/json"],
    skills: [
      {
        id: "book",
        name: "Book a room",
        description: "Books a free room",
        tags: ["rooms", "calendar"],
        examples: ["Book a room for 4 at 10:00"],
        outputModes: ["text/plain"],
      },
    ],
  };
}

/** An MCP registry server.json (schema 2025-12-11). */
function serverJson() {
  return {
    $schema: "https://static.modelcontextprotocol.io/schemas/2025-12-11/server.schema.json",
    name: `io.github.example/${uniqueCode("weather")}`,
    title: `Weather ${uniqueCode("w")}`,
    description: "Weather forecasts for any city",
    version: "1.0.2",
    websiteUrl: "https://weather.example.com",
    repository: { url: "https://github.com/example/weather", source: "github" },
    packages: [{ registryType: "npm", identifier: "@example/weather", version: "1.0.2", transport: { type: "stdio" } }],
    remotes: [
      {
        type: "streamable-http",
        url: "https://weather.example.com/mcp",
        headers: [{ name: "Authorization", isRequired: true, isSecret: true }],
      },
      { type: "sse", url: "https://weather.example.com/sse" },
    ],
    _meta: { "io.modelcontextprotocol.registry/publisher-provided": { tool: "publisher-cli" } },
  };
}

describe("import from an A2A agent card", () => {
  test("registers the agent, answers the intake's answer and where each field went", async () => {
    const card = a2aCard();
    const answer = await importDoc({ format: "a2a", document: card, contactEmail: "rooms@example.com" });
    expect(answer.status).toBe(201);
    expect(answer.headers.get("cache-control")).toBe("no-store");
    expect(answer.body.reviewCode).toMatch(/^RV-[0-9A-HJKMNP-TV-Z]{8}$/);
    expect(answer.body.accessToken).toMatch(/^agr_/);
    expect(answer.body.provider).toMatchObject({
      providerCode: answer.body.providerCode,
      name: card.name,
      summary: "Books meeting rooms.",
      description: "Books meeting rooms.\nKnows every floor plan.",
      agentType: "ASSISTANT",
      contactEmail: "rooms@example.com",
      reviewStage: "SUBMITTED",
      version: 1,
      endpoint: { url: "https://rooms.example.com/a2a", protocol: "A2A", authScheme: "BEARER", healthUrl: null },
      capabilities: [
        {
          key: "book",
          name: "Book a room",
          description: "Books a free room",
          tags: ["rooms", "calendar"],
          inputModes: ["text/plain"],
          outputModes: ["text/plain"],
        },
      ],
    });
    expect(answer.body.mapped).toEqual([
      { from: "/name", to: "name" },
      { from: "/description", to: "summary" },
      { from: "/description", to: "description" },
      { from: "/supportedInterfaces/0/url", to: "endpoint.url" },
      { from: "/supportedInterfaces/0/protocolBinding", to: "endpoint.protocol" },
      { from: "/securityRequirements/0/schemes/bearer", to: "endpoint.authScheme" },
      { from: "/securitySchemes/bearer", to: "endpoint.authScheme" },
      { from: "/skills/0/id", to: "capabilities.0.key" },
      { from: "/skills/0/name", to: "capabilities.0.name" },
      { from: "/skills/0/description", to: "capabilities.0.description" },
      { from: "/skills/0/tags", to: "capabilities.0.tags" },
      { from: "/defaultInputModes", to: "capabilities.*.inputModes" },
      { from: "/skills/0/outputModes", to: "capabilities.0.outputModes" },
    ]);
    expect(answer.body.unmapped).toEqual([
      "/supportedInterfaces/0/protocolVersion",
      "/supportedInterfaces/1",
      "/provider",
      "/version",
      "/documentationUrl",
      "/iconUrl",
      "/capabilities",
      "/securitySchemes/key",
      "/defaultOutputModes",
      "/skills/0/examples",
    ]);
    // It is an intake like any other: the token works, version 1 exists, the review is open.
    const patched = await call("PATCH", `/api/v1/providers/${answer.body.providerCode}`, {
      token: answer.body.accessToken,
      body: { labels: ["rooms"] },
    });
    expect(patched.status).toBe(200);
  });

  test("a card the registry exported imports back to the same profile", async () => {
    const original = await intake({
      description: "Routes vans.\nAlso bikes.",
      capabilities: [
        {
          key: "plan",
          name: "Plan",
          description: "Plans",
          tags: ["maps"],
          inputModes: ["text/plain"],
          outputModes: [],
        },
      ],
      endpoint: { url: "https://agent.example.com/a2a", protocol: "A2A", authScheme: "MTLS" },
    });
    const card = await call("GET", `/api/v1/providers/${original.providerCode}/agent-card.json`);
    const answer = await importDoc({
      format: "a2a",
      document: card.body,
      contactEmail: "ops@example.com",
      providerCode: uniqueCode("copy"),
    });
    expect(answer.status).toBe(201);
    const pick = (p: Record<string, unknown>) => ({
      name: p.name,
      summary: p.summary,
      description: p.description,
      endpoint: p.endpoint,
      capabilities: p.capabilities,
    });
    // What a card cannot carry: the one-line summary (the card's description is the profile's, whose
    // first line becomes the summary), and a skill's empty mode list (the card's defaults fill it in).
    expect(pick(answer.body.provider)).toEqual({
      ...pick(original.provider),
      summary: "Routes vans.",
      capabilities: [{ ...original.provider.capabilities[0], outputModes: ["text/plain"] }],
    });
  });
});

describe("import from an MCP server.json", () => {
  test("maps name, release, repository, the first remote and the packages; reports the rest", async () => {
    const doc = serverJson();
    const answer = await importDoc({
      format: "mcp",
      document: doc,
      contactEmail: "weather@example.com",
      labels: ["weather"],
      visibility: "UNLISTED",
    });
    expect(answer.status).toBe(201);
    expect(answer.body.provider).toMatchObject({
      name: doc.title,
      summary: "Weather forecasts for any city",
      description: null,
      agentType: "TOOL_SERVER",
      visibility: "UNLISTED",
      labels: ["weather"],
      endpoint: { url: "https://weather.example.com/mcp", protocol: "MCP", authScheme: "BEARER" },
    });
    expect(answer.body.provider).toMatchObject({
      serverName: doc.name,
      releaseVersion: "1.0.2",
      homepageUrl: "https://weather.example.com",
      repository: { url: "https://github.com/example/weather", source: "github", id: null, subfolder: null },
      packages: [expect.objectContaining({ registryType: "NPM", identifier: "@example/weather", version: "1.0.2" })],
    });
    expect(answer.body.mapped).toEqual([
      { from: "/name", to: "serverName" },
      { from: "/title", to: "name" },
      { from: "/description", to: "summary" },
      { from: "/version", to: "releaseVersion" },
      { from: "/websiteUrl", to: "homepageUrl" },
      { from: "/repository/url", to: "repository.url" },
      { from: "/repository/source", to: "repository.source" },
      { from: "/remotes/0/url", to: "endpoint.url" },
      { from: "/remotes/0/type", to: "endpoint.transport" },
      { from: "/remotes/0/headers/0/name", to: "endpoint.authScheme" },
      { from: "/remotes/0/headers/0/name", to: "endpoint.headers.0.name" },
      { from: "/remotes/0/headers/0/isSecret", to: "endpoint.headers.0.isSecret" },
      { from: "/remotes/0/headers/0/isRequired", to: "endpoint.headers.0.isRequired" },
      { from: "/packages/0/registryType", to: "packages.0.registryType" },
      { from: "/packages/0/identifier", to: "packages.0.identifier" },
      { from: "/packages/0/version", to: "packages.0.version" },
      { from: "/packages/0/transport/type", to: "packages.0.transport.type" },
    ]);
    // What a profile has no home for: the publisher's _meta and the second remote.
    expect(answer.body.unmapped).toEqual(["/remotes/1", "/_meta"]);
  });

  test("without a title the name's part after the slash is the display name; no headers means no authentication", async () => {
    const { title: _title, ...doc } = serverJson();
    const answer = await importDoc({
      format: "mcp",
      document: { ...doc, remotes: [{ type: "sse", url: "https://weather.example.com/sse" }] },
      contactEmail: "weather@example.com",
      providerCode: uniqueCode("weather"),
      agentType: "WORKFLOW",
    });
    expect(answer.status).toBe(201);
    expect(answer.body.provider).toMatchObject({
      name: doc.name.split("/")[1],
      serverName: doc.name,
      agentType: "WORKFLOW",
      endpoint: { url: "https://weather.example.com/sse", protocol: "MCP", transport: "SSE", authScheme: "NONE" },
    });
  });

  test("a server that ships only as packages is imported; an older schema is refused", async () => {
    const { remotes: _remotes, ...local } = serverJson();
    const answer = await importDoc({ format: "mcp", document: local, contactEmail: "weather@example.com" });
    expect(answer.status).toBe(201);
    expect(answer.body.provider).toMatchObject({
      endpoint: null,
      packages: [expect.objectContaining({ registryType: "NPM", identifier: "@example/weather", version: "1.0.2" })],
    });
    const old = await importDoc({
      format: "mcp",
      document: {
        ...serverJson(),
        $schema: "https://static.modelcontextprotocol.io/schemas/2025-10-17/server.schema.json",
      },
      contactEmail: "weather@example.com",
    });
    expectProblem(old, 400, "BAD_USER_INPUT");
    expect(old.body.errors).toEqual([
      expect.objectContaining({
        path: "/document",
        source: "/$schema",
        message: expect.stringContaining("2025-10-17"),
      }),
    ]);
  });
});

describe("refusals change nothing", () => {
  /** Providers registered with this contact: every refusal below uses a fresh one (the database is shared). */
  const providers = (email: string) => db.provider.count({ where: { contactEmail: email } });
  const freshEmail = () => `${uniqueCode("refused")}@example.com`;

  test("a document that maps to an invalid intake is a 400 naming the intake field and the source pointer", async () => {
    const email = freshEmail();
    const card = a2aCard("x".repeat(121));
    card.supportedInterfaces[0] = {
      url: "http://rooms.example.com/a2a",
      protocolBinding: "JSONRPC",
      protocolVersion: "1.0",
    };
    card.skills[0] = { ...card.skills[0], id: "not a key!" } as never;
    const answer = await importDoc({ format: "a2a", document: card, contactEmail: email });
    expectProblem(answer, 400, "BAD_USER_INPUT");
    const errors = answer.body.errors as { path: string; source: string | null; message: string }[];
    expect(errors.map((e) => [e.path, e.source])).toEqual([
      ["/name", "/name"],
      ["/capabilities/0/key", "/skills/0/id"],
      ["/endpoint/url", "/supportedInterfaces/0/url"],
    ]);
    expect(errors[0]?.message).toContain("(from /name)");
    expect(await providers(email)).toBe(0);
  });

  test("fields of the wrong type, a scheme without a home, an MCP server without remotes or packages", async () => {
    const email = freshEmail();
    const card = { ...a2aCard(), name: 42, securityRequirements: [{ schemes: { basic: { list: [] } } }] };
    const wrong = await importDoc({
      format: "a2a",
      document: { ...card, securitySchemes: { basic: { httpAuthSecurityScheme: { scheme: "Basic" } } } },
      contactEmail: email,
    });
    expectProblem(wrong, 400, "BAD_USER_INPUT");
    expect(wrong.body.errors.map((e: { path: string; source: string }) => [e.path, e.source])).toEqual([
      ["/name", "/name"],
      ["/endpoint/authScheme", "/securitySchemes/basic"],
    ]);

    const { remotes: _remotes, packages: _packages, ...local } = serverJson();
    const noRemote = await importDoc({ format: "mcp", document: local, contactEmail: email });
    expectProblem(noRemote, 400, "BAD_USER_INPUT");
    expect(noRemote.body.errors).toEqual([expect.objectContaining({ path: "/endpoint", source: "/remotes" })]);

    const template = serverJson();
    template.remotes[0] = { type: "streamable-http", url: "{baseUrl}/mcp", headers: [] };
    const templated = await importDoc({ format: "mcp", document: template, contactEmail: email });
    expectProblem(templated, 400, "BAD_USER_INPUT");
    expect(templated.body.errors).toEqual([
      expect.objectContaining({ path: "/endpoint/url", source: "/remotes/0/url" }),
    ]);
    expect(await providers(email)).toBe(0);
  });

  test("the body's own fields are named as such (no source); a bad format, a missing field, a non-object", async () => {
    const email = freshEmail();
    const badEmail = await importDoc({ format: "mcp", document: serverJson(), contactEmail: "nope" });
    expectProblem(badEmail, 400, "BAD_USER_INPUT");
    expect(badEmail.body.errors).toEqual([expect.objectContaining({ path: "/contactEmail", source: null })]);

    const format = await importDoc({ format: "OPENAPI", document: serverJson(), contactEmail: email });
    expectProblem(format, 400, "BAD_USER_INPUT");
    expect(errorPaths(format)).toEqual(["/format"]);

    const missing = await importDoc({ format: "mcp", document: serverJson() });
    expectProblem(missing, 400, "BAD_USER_INPUT");
    expect(errorPaths(missing)).toEqual(["/contactEmail"]);

    const unknown = await importDoc({
      format: "mcp",
      document: serverJson(),
      contactEmail: email,
      trustTier: "OFFICIAL",
    });
    expectProblem(unknown, 400, "BAD_USER_INPUT");
    expect(errorPaths(unknown)).toEqual(["/trustTier"]);

    const list = await importDoc({ format: "a2a", document: [a2aCard()], contactEmail: email });
    expectProblem(list, 400, "BAD_USER_INPUT");
    expect(list.body.errors).toEqual([expect.objectContaining({ path: "/document", source: "" })]);
    expect(await providers(email)).toBe(0);
  });

  test("a document without the required fields names the pointers they would come from", async () => {
    const email = freshEmail();
    const card = await importDoc({
      format: "a2a",
      document: { version: "1" },
      contactEmail: email,
    });
    expectProblem(card, 400, "BAD_USER_INPUT");
    expect(card.body.errors.map((e: { path: string; source: string }) => [e.path, e.source])).toEqual([
      ["/name", "/name"],
      ["/summary", "/description"],
      ["/endpoint", "/supportedInterfaces"],
    ]);
    expect(card.body.errors[0].message).toBe("is required (from /name)");
    const { title: _t, ...untitled } = serverJson();
    const mcp = await importDoc({
      format: "mcp",
      document: { ...untitled, name: "io.github.x/".padEnd(140, "y") },
      contactEmail: email,
    });
    expect(mcp.body.errors.map((e: { path: string; source: string }) => [e.path, e.source])).toEqual([
      ["/name", "/name"],
    ]);
    const titled = await importDoc({
      format: "mcp",
      document: { ...serverJson(), title: "t".repeat(130) },
      contactEmail: email,
    });
    expect(titled.body.errors.map((e: { path: string; source: string }) => [e.path, e.source])).toEqual([
      ["/name", "/title"],
    ]);
    expect(await providers(email)).toBe(0);
  });

  test("a document nested thousands deep is a 400, with or without an Idempotency-Key", async () => {
    const email = freshEmail();
    const deep = "[".repeat(30000) + "]".repeat(30000);
    const text = `{"format":"a2a","contactEmail":"${email}","document":{"name":"x","extra":${deep}}}`;
    const variants: Record<string, string>[] = [{}, { "Idempotency-Key": `deep-${uniqueCode()}` }];
    for (const headers of variants) {
      const answer = await call("POST", "/api/v1/providers/import", { body: text, headers });
      expectProblem(answer, 400, "BAD_USER_INPUT");
    }
    const plain = await call("POST", "/api/v1/providers/import", { body: text });
    expect(plain.body.errors).toEqual([
      expect.objectContaining({ path: "/document", source: expect.stringMatching(/^\/extra(\/0)+$/) }),
    ]);
    expect(await providers(email)).toBe(0);
  });

  test("a body over 64 KiB is a 413", async () => {
    const email = freshEmail();
    const card = { ...a2aCard(), padding: "x".repeat(70 * 1024) };
    const answer = await importDoc({ format: "a2a", document: card, contactEmail: email });
    expectProblem(answer, 413, "PAYLOAD_TOO_LARGE");
    expect(await providers(email)).toBe(0);
  });

  test("the code `import` is reserved: it is the route's own name", async () => {
    const email = freshEmail();
    const answer = await call("POST", "/api/v1/providers", {
      body: {
        providerCode: "import",
        name: "Import",
        summary: "s",
        agentType: "ASSISTANT",
        contactEmail: email,
        endpoint: { url: "https://a.example.com", protocol: "A2A", authScheme: "NONE" },
      },
    });
    expectProblem(answer, 400, "BAD_USER_INPUT");
    expect(errorPaths(answer)).toEqual(["/providerCode"]);
    const derived = await importDoc({
      format: "mcp",
      document: { ...serverJson(), title: "Import" },
      contactEmail: email,
    });
    expect(derived.status === 201 ? derived.body.providerCode : derived.status).toMatch(/^import-agent/);
  });
});

describe("the service never fetches what a document points at", () => {
  test("a document full of URLs is mapped without one outgoing request", async () => {
    const fetchSpy = jest.spyOn(globalThis, "fetch");
    const spies = [
      jest.spyOn(http, "request"),
      jest.spyOn(http, "get"),
      jest.spyOn(https, "request"),
      jest.spyOn(https, "get"),
    ];
    const card = {
      ...a2aCard(),
      iconUrl: "https://evil.example/icon.png",
      documentationUrl: "https://evil.example/docs",
      provider: { organization: "Evil", url: "http://169.254.169.254/latest/meta-data" },
      supportedInterfaces: [{ url: "https://evil.example/a2a", protocolBinding: "JSONRPC", protocolVersion: "1.0" }],
      securitySchemes: {
        bearer: { oauth2SecurityScheme: { flows: {}, oauth2MetadataUrl: "https://evil.example/.well-known" } },
      },
      // A signature by a key the registry does not know, pointing at where to fetch it: never fetched.
      signatures: [
        {
          protected: Buffer.from(
            JSON.stringify({ alg: "ES256", kid: "unknown", jku: "https://evil.example/jwks" }),
          ).toString("base64url"),
          signature: "x",
          header: { jku: "https://evil.example/jwks" },
        },
      ],
    };
    const answer = await importDoc({ format: "a2a", document: card, contactEmail: "w@example.com" });
    expect(answer.status).toBe(201);
    expect(answer.body.provider.cardSignature).toEqual({ status: "UNTRUSTED_KEY", domain: null, kid: "unknown" });
    expect(answer.body.provider.endpoint.authScheme).toBe("OAUTH2");
    const mcp = await importDoc({ format: "mcp", document: serverJson(), contactEmail: "w@example.com" });
    expect(mcp.status).toBe(201);
    // The requests of the test itself go through app.fetch, not globalThis.fetch.
    expect(fetchSpy).not.toHaveBeenCalled();
    for (const spy of spies) expect(spy).not.toHaveBeenCalled();
  });
});

describe("Idempotency-Key and GraphQL", () => {
  test("a retry with the same key replays the answer without the token and registers nothing more", async () => {
    const email = `${uniqueCode("idem")}@example.com`;
    const body = { format: "mcp", document: serverJson(), contactEmail: email };
    const key = `key-${uniqueCode()}`;
    const first = await importDoc(body, { "Idempotency-Key": key });
    expect(first.status).toBe(201);
    const again = await importDoc(body, { "Idempotency-Key": key });
    expect(again.status).toBe(201);
    expect(again.headers.get("idempotent-replayed")).toBe("true");
    expect(again.body).toMatchObject({
      providerCode: first.body.providerCode,
      reviewCode: first.body.reviewCode,
      accessToken: null,
      mapped: first.body.mapped,
      unmapped: first.body.unmapped,
    });
    expect(typeof again.body.notice).toBe("string");
    expect(await db.provider.count({ where: { contactEmail: email } })).toBe(1);
    const other = await importDoc({ ...body, contactEmail: "x@example.com" }, { "Idempotency-Key": key });
    expectProblem(other, 422, "UNPROCESSABLE_CONTENT");
  });

  test("Mutation.importProvider answers the same", async () => {
    const answer = await gql(
      `mutation($document: JSON!) {
        importProvider(format: a2a, document: $document, contactEmail: "g@example.com") {
          providerCode accessToken provider { name endpoint { url } } mapped { from to } unmapped } }`,
      { document: a2aCard("GraphQL Card Agent") },
    );
    expect(answer.body.errors).toBeUndefined();
    expect(answer.body.data.importProvider).toMatchObject({
      accessToken: expect.stringMatching(/^agr_/),
      provider: { name: "GraphQL Card Agent", endpoint: { url: "https://rooms.example.com/a2a" } },
      mapped: expect.arrayContaining([{ from: "/skills/0/id", to: "capabilities.0.key" }]),
      unmapped: expect.arrayContaining(["/version", "/skills/0/examples"]),
    });
    const refused = await gql(
      `mutation($document: JSON!) {
        importProvider(format: mcp, document: $document, contactEmail: "g@example.com") { providerCode } }`,
      { document: { name: "io.github.x/y", description: "d", version: "1" } },
    );
    expect(refused.body.errors?.[0]?.extensions?.code).toBe("BAD_USER_INPUT");
    expect(refused.body.errors?.[0]?.extensions?.errors).toEqual([
      expect.objectContaining({ path: "endpoint", source: "/remotes" }),
    ]);
  });
});
