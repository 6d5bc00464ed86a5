/**
 * Hostile input, round two (must-hold 6), generated and sent through the front door (`yoga.fetch`,
 * real database), REST and GraphQL alike:
 * 1. NUL and lone surrogates in any string input: a REST path or query parameter (NUL only: a lone
 *    surrogate has no UTF-8 to percent-encode), a REST body field at any depth, a GraphQL variable
 *    at any depth — on every operation of the served /openapi.json that takes one;
 * 2. edited cursors: a real `nextCursor` with an element of the wrong type, a date that is no date,
 *    a number JSON.parse makes Infinity, a negative, fractional or unsafe integer, an element too few
 *    or too many, nested, or not base64url of JSON at all;
 * 3. long lists: the `labels` filter with 21…1000 labels (20 still work), body arrays over their
 *    limits;
 * 4. two Authorization headers, through `yoga.fetch` (joined into one value) and over a socket
 *    (node keeps only the first in req.headers);
 * 5. integers that JavaScript reads but that are not plain decimal (`0x1`, `+1`, `1e0`, ` 1`, `1.0`).
 * Each is answered 400 BAD_USER_INPUT naming the input (4: 401 UNAUTHENTICATED with
 * WWW-Authenticate), never a 5xx, and a refused write changes nothing.
 *
 * The operations, the world of agents and the row snapshots come from fuzz.kit.ts; FUZZ_RUNS and
 * FUZZ_SEED size and replay these properties as they do the OpenAPI fuzz.
 */
import { randomBytes } from "node:crypto";
import { createServer, type Server } from "node:http";
import { type AddressInfo, connect } from "node:net";
import { afterAll, beforeAll, describe, expect, test } from "@jest/globals";
import fc from "fast-check";
import {
  type GraphQLField,
  type GraphQLInputType,
  getNamedType,
  getNullableType,
  isCompositeType,
  isInputObjectType,
  isListType,
  isScalarType,
} from "graphql";
import { schema } from "../../src/schema.ts";
import { type Answer, app, call, db, errorPaths, gql } from "../helpers.ts";
import {
  BAD_TOKEN,
  type Credential,
  deref,
  type Json,
  loadDocument,
  type Operation,
  runsOf,
  SEED,
  setUpWorld,
  snapshot,
  spec,
  tokenOf,
  world,
} from "./fuzz.kit.ts";

type Transport = "rest" | "graphql";
type Key = string | number;

// ── Requests: one set of inputs, sent over REST or as the route's GraphQL operation ─────────────

interface Inputs {
  path: Record<string, string>;
  query: Record<string, unknown>;
  body?: Json;
}

/** The GraphQL field a route runs. */
function fieldOf(o: Operation): { kind: "query" | "mutation"; field: GraphQLField<unknown, unknown> } {
  const [type, name] = o.field.split(".") as [string, string];
  const root = type === "Query" ? schema.getQueryType() : schema.getMutationType();
  const field = root?.getFields()[name];
  if (!field) throw new Error(`no GraphQL field ${o.field}`);
  return { kind: type === "Query" ? "query" : "mutation", field };
}

/** The URL and body of the REST request; a list in the query is comma-separated, as the API takes it. */
function restRequest(o: Operation, inputs: Inputs): { url: string; body?: Json } {
  let url = o.path;
  for (const [name, value] of Object.entries(inputs.path)) url = url.replace(`{${name}}`, encodeURIComponent(value));
  const query = new URLSearchParams(
    Object.entries(inputs.query).map(([k, v]) => [k, Array.isArray(v) ? v.join(",") : String(v)]),
  ).toString();
  return { url: query ? `${url}?${query}` : url, body: inputs.body };
}

/** The route's arguments as GraphQL takes them: every input by name, integers as numbers. */
function graphqlArgs(o: Operation, inputs: Inputs): Json {
  const { field } = fieldOf(o);
  const typed = Object.entries(inputs.path).map(([name, value]) => {
    const arg = field.args.find((a) => a.name === name);
    return [name, arg && getNamedType(arg.type).name === "Int" ? Number(value) : value];
  });
  return { ...Object.fromEntries(typed), ...inputs.query, ...inputs.body };
}

/** The operation calling the route's field with each argument as a variable of the same name. */
function graphqlDocument(o: Operation, args: Json): string {
  const { kind, field } = fieldOf(o);
  const used = field.args.filter((a) => a.name in args);
  const declared = used.map((a) => `$${a.name}: ${String(a.type)}`).join(", ");
  const passed = used.map((a) => `${a.name}: $${a.name}`).join(", ");
  const selection = isCompositeType(getNamedType(field.type)) ? " { __typename }" : "";
  return `${kind}${declared ? ` (${declared})` : ""} { ${field.name}${passed ? `(${passed})` : ""}${selection} }`;
}

async function send(
  o: Operation,
  transport: Transport,
  inputs: Inputs,
  credential: Credential,
  token = tokenOf(credential),
): Promise<{ answer: Answer; where: string }> {
  if (transport === "rest") {
    const { url, body } = restRequest(o, inputs);
    const answer = await call(o.method, url, { token, body });
    const sent = body ? ` with ${JSON.stringify(body).slice(0, 300)}` : "";
    return { answer, where: `${o.method} ${JSON.stringify(url)} as ${credential}${sent} → ${describeAnswer(answer)}` };
  }
  const args = graphqlArgs(o, inputs);
  const query = graphqlDocument(o, args);
  const answer = await gql(query, args, { token });
  return {
    answer,
    where: `graphql ${o.field} ${JSON.stringify(args).slice(0, 300)} as ${credential} → ${describeAnswer(answer)}`,
  };
}

const describeAnswer = (answer: Answer) => `${answer.status} ${answer.text.slice(0, 400)}`;

/** Gives a generated object a short name in fast-check's counterexamples (instead of all it holds). */
function named<T extends object>(value: T, name: string): T {
  return Object.defineProperty(value, fc.toStringMethod, { value: () => name, enumerable: false });
}

// ── Expectations ────────────────────────────────────────────────────────────────────────────────

/** Status and code of an answer, with whether a REST one is a problem document. */
function outcome(answer: Answer, transport: Transport) {
  return transport === "rest"
    ? {
        status: answer.status,
        code: answer.body?.code,
        problemJson: answer.headers.get("content-type") === "application/problem+json",
      }
    : { status: answer.status, code: answer.body?.errors?.[0]?.extensions?.code, problemJson: false };
}

/**
 * A 400 BAD_USER_INPUT whose `errors[]` names `name` (or, `loose`, an element of it: `labels.3`).
 * `mayBe401`: no credential on a protected route, where the credential is checked before the input.
 */
function expectBadInput(
  where: string,
  answer: Answer,
  transport: Transport,
  name: string,
  options: { loose?: boolean; mayBe401?: boolean } = {},
): void {
  const got = outcome(answer, transport);
  const problemJson = transport === "rest";
  if (options.mayBe401 && answer.status === 401) {
    expect({ where, ...got }).toEqual({ where, status: 401, code: "UNAUTHENTICATED", problemJson });
    return;
  }
  // GraphQL over HTTP, as application/json: a request refused for its GraphQL is 200 with the error.
  const status = transport === "rest" ? 400 : 200;
  expect({ where, ...got }).toEqual({ where, status, code: "BAD_USER_INPUT", problemJson });
  const paths = errorPaths(answer);
  // `name` is dotted, as GraphQL names it; REST names its JSON Pointer.
  const rest = transport === "rest";
  const want = rest ? (name === "(body)" ? "" : name.replace(/^|\./g, "/")) : name;
  const named = paths.some((p) => p === want || (options.loose === true && p.startsWith(`${want}${rest ? "/" : "."}`)));
  expect({ where, paths, named }).toEqual({ where, paths, named: true });
}

/** Providers an intake or import carrying this marker (in its code, name or summary) created. */
function markedProviders(marker: string): Promise<number> {
  return db.provider.count({
    where: {
      OR: [{ providerCode: { contains: marker } }, { name: { contains: marker } }, { summary: { contains: marker } }],
    },
  });
}

/**
 * Remembers the world's providers before a refused request; the answer checks afterwards that they
 * are as they were and that no provider carrying the marker was created.
 */
async function watchRows(marker: string): Promise<(where: string) => Promise<void>> {
  const codes = [world.p1.code, world.p2.code];
  const before = await snapshot(codes);
  return async (where) => {
    expect({ where, changed: (await snapshot(codes)) !== before }).toEqual({ where, changed: false });
    expect({ where, created: await markedProviders(marker) }).toEqual({ where, created: 0 });
  };
}

const marker = () => randomBytes(5).toString("hex");

// ── Valid inputs the hostile ones are made from ─────────────────────────────────────────────────

/** Every owner-settable field, so a string can be put at each depth of a profile. */
function profile(id: string): Json {
  return {
    name: `Hostile ${id}`,
    summary: `Summary ${id}`,
    description: "Plans **routes** across a city.",
    labels: ["maps", "routing"],
    agentType: "ASSISTANT",
    visibility: "PUBLIC",
    contactEmail: "ops@example.com",
    capabilities: [
      {
        key: "plan",
        name: "Plan routes",
        description: "Plans a route",
        tags: ["maps"],
        inputModes: ["text/plain"],
        outputModes: ["application/json"],
      },
    ],
    models: [{ vendor: "acme", model: "planner-1", role: "PRIMARY", contextWindow: 128_000 }],
    tools: [{ name: "geocode", kind: "FUNCTION", description: "Finds coordinates", scopes: ["READ_ONLY"] }],
    endpoint: {
      url: "https://agent.example.com/a2a",
      protocol: "A2A",
      authScheme: "BEARER",
      healthUrl: "https://agent.example.com/health",
    },
    policy: {
      dataRetentionDays: 30,
      humanOversight: "ON_REQUEST",
      allowedUseCases: ["routing"],
      prohibitedUseCases: ["surveillance"],
      termsUrl: "https://agent.example.com/terms",
      privacyUrl: "https://agent.example.com/privacy",
    },
    roles: [{ subject: "owner@example.com", role: "OWNER" }],
  };
}

/** A small A2A agent card, for the import's free-form `document`. */
function card(id: string): Json {
  return {
    name: `Hostile ${id}`,
    description: "Books meeting rooms.",
    version: "1.0.0",
    supportedInterfaces: [{ url: "https://rooms.example.com/a2a", protocolBinding: "JSONRPC", protocolVersion: "1.0" }],
    provider: { organization: "Example Corp", url: "https://example.com" },
    capabilities: { streaming: false },
    defaultInputModes: ["text/plain"],
    defaultOutputModes: ["application/json"],
    skills: [{ id: "book", name: "Book a room", description: "Books a free room", tags: ["rooms"] }],
  };
}

/** A valid body for each operation that takes one (by operationId); `id` marks what an intake would create. */
const BODIES: Record<string, (id: string) => Json> = {
  createProvider: (id) => ({ providerCode: `fz-${id}`, ...profile(id) }),
  updateProvider: (id) => profile(id),
  importProvider: (id) => ({
    format: "a2a",
    providerCode: `fz-${id}`,
    contactEmail: "ops@example.com",
    document: card(id),
  }),
  issueToken: () => ({ label: "hostile" }),
  suspendProvider: () => ({ note: "Suspended while we look into it" }),
  reinstateProvider: () => ({ note: "Looked into it" }),
  setProviderLifecycle: () => ({ state: "DEPRECATED", message: "Use the other one", successorCode: world.p2.code }),
  updateReview: () => ({ priority: "HIGH" }),
  assignReview: () => ({ assignee: "fuzz-reviewer" }),
  decideReview: () => ({ decision: "REQUEST_CHANGES", note: "Add a policy" }),
  commentOnReview: () => ({ note: "Looks fine" }),
  requestDomainChallenge: () => ({ domain: "example.com" }),
  createWebhook: () => ({ url: "https://hooks.example.com/fuzz" }),
};

/** Real cursors of the lists, a page of one in (beforeAll). */
const cursors = { providers: "", providersSearch: "", reviewQueue: "", providerVersions: "" };

function pathValue(name: string): string {
  const real: Record<string, string> = {
    providerCode: world.p1.code,
    reviewCode: world.p1.review,
    tokenId: world.p1.spareTokenId,
    version: "1",
    from: "1",
    to: "2",
  };
  return real[name] ?? "x";
}

/** A valid value of a query parameter, typed as GraphQL takes it. */
function queryValue(o: Operation, name: string, schemaOf: Json): unknown {
  const real: Record<string, unknown> = {
    search: "route",
    labels: ["maps", "routing"],
    cursor: (cursors as Record<string, string>)[o.id] ?? "x",
    assignedTo: "fuzz-reviewer",
    providerCode: world.p1.code,
    updatedSince: "2026-01-01T00:00:00Z",
    limit: 5,
  };
  if (name in real) return real[name];
  const s = deref(schemaOf);
  if (s.enum) return s.enum[0];
  return { integer: 5, boolean: true, array: ["x"] }[s.type as string] ?? "x";
}

function inputsOf(o: Operation, query: string | undefined, id: string): Inputs {
  const parameters: Json[] = o.op.parameters ?? [];
  const path = parameters.filter((p) => p.in === "path").map((p) => [p.name, pathValue(p.name)]);
  const param = parameters.find((p) => p.in === "query" && p.name === query);
  return {
    path: Object.fromEntries(path),
    query: param ? { [param.name]: queryValue(o, param.name, param.schema) } : {},
    body: BODIES[o.id]?.(id),
  };
}

// ── 1. NUL and lone surrogates ──────────────────────────────────────────────────────────────────

const NUL = "\u0000";
/** NUL, lone high and low surrogates, and a low-then-high pair (two lone halves, not a character). */
const HOSTILE_CHARS = [NUL, "\ud800", "\udbff", "\udc00", "\udfff", "\udc00\ud800"];
type Spot = "start" | "middle" | "end";

function inject(value: string, char: string, spot: Spot): string {
  const i = spot === "start" ? 0 : spot === "end" ? value.length : Math.floor(value.length / 2);
  return value.slice(0, i) + char + value.slice(i);
}

/** The paths of the text leaves of a value of a GraphQL input type (String and ID, and any text inside JSON). */
function textLeaves(value: unknown, type: GraphQLInputType | "json", at: Key[]): Key[][] {
  if (value === null || value === undefined) return [];
  if (type === "json" || (isScalarType(getNullableType(type)) && getNamedType(type).name === "JSON")) {
    if (typeof value === "string") return [at];
    if (typeof value !== "object") return [];
    return Object.entries(value).flatMap(([k, v]) =>
      textLeaves(v, "json", [...at, Array.isArray(value) ? Number(k) : k]),
    );
  }
  const t = getNullableType(type);
  if (isListType(t)) return Array.isArray(value) ? value.flatMap((v, i) => textLeaves(v, t.ofType, [...at, i])) : [];
  if (isInputObjectType(t)) {
    const fields = t.getFields();
    return Object.entries(value as Json).flatMap(([k, v]) =>
      fields[k] ? textLeaves(v, fields[k].type, [...at, k]) : [],
    );
  }
  return isScalarType(t) && ["String", "ID"].includes(t.name) && typeof value === "string" ? [at] : [];
}

function argLeaves(o: Operation, args: Json): Key[][] {
  const { field } = fieldOf(o);
  return Object.entries(args).flatMap(([name, value]) => {
    const arg = field.args.find((a) => a.name === name);
    return arg ? textLeaves(value, arg.type, [name]) : [];
  });
}

/** One string input of one operation: a REST path or query parameter, or a text leaf of the body / GraphQL arguments. */
interface TextTarget {
  o: Operation;
  transport: Transport;
  kind: "path" | "query" | "leaf";
  /** The query parameter the request carries (only the targeted one). */
  query?: string;
  at: Key[];
}

/** Every string input of every operation of the document, over both transports. */
function textTargets(): TextTarget[] {
  return spec.operations.flatMap((o) => {
    const parameters: Json[] = o.op.parameters ?? [];
    const queryNames = parameters.filter((p) => p.in === "query").map((p) => p.name as string);
    const rest: TextTarget[] = [
      ...parameters
        .filter((p) => p.in === "path" || p.in === "query")
        .map((p) => ({
          o,
          transport: "rest" as const,
          kind: p.in as "path" | "query",
          query: p.in === "query" ? (p.name as string) : undefined,
          at: [p.name as string],
        })),
      ...argLeaves(o, inputsOf(o, undefined, "x").body ?? {}).map((at) => ({
        o,
        transport: "rest" as const,
        kind: "leaf" as const,
        at,
      })),
    ];
    // Over GraphQL a query parameter is an argument too: each is targeted in a request carrying only it.
    const graphql: TextTarget[] = [undefined, ...queryNames].flatMap((query) =>
      argLeaves(o, graphqlArgs(o, inputsOf(o, query, "x")))
        .filter((at) => (query === undefined ? !queryNames.includes(String(at[0])) : at[0] === query))
        .map((at) => ({ o, transport: "graphql" as const, kind: "leaf" as const, query, at })),
    );
    return [...rest, ...graphql].map((t) => named(t, `${t.transport} ${t.o.id} ${t.kind} ${t.at.join(".")}`));
  });
}

function setAt(target: Json, at: Key[], change: (value: string) => string): void {
  const parent = at.slice(0, -1).reduce((node: Json, key) => node[key], target);
  const last = at[at.length - 1] as Key;
  parent[last] = change(parent[last]);
}

/** The valid inputs of the target's operation with the targeted string changed. */
function hostileInputs(t: TextTarget, id: string, change: (value: string) => string): Inputs {
  const inputs = inputsOf(t.o, t.query, id);
  const name = t.at[0] as string;
  if (t.kind === "path") inputs.path[name] = change(inputs.path[name] ?? "");
  if (t.kind === "query") {
    const value = inputs.query[name];
    inputs.query[name] = change(Array.isArray(value) ? value.join(",") : String(value));
  }
  if (t.kind === "leaf" && t.transport === "rest") setAt(inputs.body as Json, t.at, change);
  if (t.kind === "leaf" && t.transport === "graphql") {
    // GraphQL arguments are the path, query and body inputs together: change the one targeted.
    const args = graphqlArgs(t.o, inputs);
    setAt(args, t.at, change);
    return { path: {}, query: {}, body: args };
  }
  return inputs;
}

/** Credentials valid for a route, and none (which a protected route may refuse with 401 first). */
const CREDENTIALS: Record<string, Credential[]> = {
  none: ["none", "reviewer"],
  optional: ["none", "agent", "reviewer"],
  agent: ["agent", "none"],
  reviewer: ["reviewer", "none"],
  agentOrReviewer: ["agent", "reviewer", "none"],
};

// ── 2. Edited cursors ───────────────────────────────────────────────────────────────────────────

interface List {
  name: keyof typeof cursors;
  credential: Credential;
  /** The first page's URL; a cursor is appended. */
  rest: () => string;
  graphql: string;
  variables: () => Json;
}

// Each list is read one item a page so that a real cursor exists; `search` keeps its fingerprint.
const LISTS: List[] = (
  [
    {
      name: "providers",
      credential: "reviewer",
      rest: () => "/api/v1/providers?limit=1",
      graphql: "query ($cursor: String) { providers(limit: 1, cursor: $cursor) { nextCursor } }",
      variables: () => ({}),
    },
    {
      name: "providersSearch",
      credential: "reviewer",
      rest: () => "/api/v1/providers?search=route&limit=1",
      graphql: 'query ($cursor: String) { providers(search: "route", limit: 1, cursor: $cursor) { nextCursor } }',
      variables: () => ({}),
    },
    {
      name: "reviewQueue",
      credential: "reviewer",
      rest: () => "/api/v1/reviews/queue?limit=1",
      graphql: "query ($cursor: String) { reviewQueue(limit: 1, cursor: $cursor) { nextCursor } }",
      variables: () => ({}),
    },
    {
      name: "providerVersions",
      credential: "none",
      rest: () => `/api/v1/providers/${world.p1.code}/versions?limit=1`,
      graphql:
        "query ($code: String!, $cursor: String) { providerVersions(providerCode: $code, limit: 1, cursor: $cursor) { nextCursor } }",
      variables: () => ({ code: world.p1.code }),
    },
  ] as List[]
).map((list) => named(list, list.name));

async function readList(list: List, transport: Transport, cursor: string): Promise<{ answer: Answer; where: string }> {
  const token = tokenOf(list.credential);
  const answer =
    transport === "rest"
      ? await call("GET", `${list.rest()}&cursor=${encodeURIComponent(cursor)}`, { token })
      : await gql(list.graphql, { ...list.variables(), cursor }, { token });
  return { answer, where: `${transport} ${list.name} cursor ${JSON.stringify(cursor)} → ${describeAnswer(answer)}` };
}

/** JSON texts no cursor holds in any place: text that is no date (or no fingerprint), numbers out of any range, other types. */
const ALIEN = [
  '"2026-13-45T00:00:00Z"',
  '"yesterday"',
  '""',
  "1e309",
  "-1",
  "1.5",
  String(2 ** 60),
  "[1,[2]]",
  "[]",
  "{}",
  "null",
  "true",
];

const base64url = (text: string) => Buffer.from(text, "utf8").toString("base64url");

/** A cursor edited from a real one (base64url of a JSON array or object), or garbage. */
function editedCursor(real: string): fc.Arbitrary<string> {
  const key = JSON.parse(Buffer.from(real, "base64url").toString("utf8")) as unknown;
  const isArray = Array.isArray(key);
  const slots = Object.entries(key as Json).map(([k, v]) => [k, JSON.stringify(v)] as [string, string]);
  const render = (list: [string, string][]) =>
    isArray
      ? `[${list.map(([, t]) => t).join(",")}]`
      : `{${list.map(([k, t]) => `${JSON.stringify(k)}:${t}`).join(",")}}`;
  const index = fc.nat({ max: Math.max(0, slots.length - 1) });
  const edits: fc.Arbitrary<string>[] = [
    fc
      .tuple(index, fc.constantFrom(...ALIEN))
      .map(([i, alien]) => render(slots.map(([k, t], j) => [k, j === i ? alien : t]))),
    index.map((i) => render(slots.filter((_, j) => j !== i))),
    fc.constantFrom(...ALIEN, '"x"', "7").map((extra) => render([...slots, [isArray ? "" : "zz", extra]])),
    fc.constantFrom(`[${JSON.stringify(key)}]`, "{}", "[]", '"cursor"', "1", "null", "1e309"),
  ];
  const json = fc.oneof(...edits).map(base64url);
  // Not base64url at all: characters outside its alphabet, alone or spliced into the real cursor.
  const outside = fc.constantFrom("!", "*", "~", ".", "%", "$", "€", " ", "/+");
  const garbage = fc.oneof(
    fc.constantFrom("!!!", "not a cursor", "%00", "....", "\\x00", "ÿÿÿÿ"),
    fc.tuple(fc.nat({ max: real.length }), outside).map(([i, c]) => real.slice(0, i) + c + real.slice(i)),
    fc.string({ minLength: 1, maxLength: 24 }).filter((s) => /[^A-Za-z0-9_-]/.test(s) && s.trim() !== ""),
  );
  return fc.oneof({ weight: 3, arbitrary: json }, { weight: 1, arbitrary: garbage });
}

// ── 3. Long lists ───────────────────────────────────────────────────────────────────────────────

/** Limits of the profile's lists (API.md §1), each with distinct valid items so only the count is wrong. */
const BODY_LISTS: Record<string, { max: number; cap: number; item: (i: number) => unknown }> = {
  labels: { max: 20, cap: 1000, item: (i) => `l${i}` },
  capabilities: { max: 50, cap: 400, item: (i) => ({ key: `cap-${i}`, name: `Capability ${i}` }) },
  tools: { max: 100, cap: 800, item: (i) => ({ name: `tool-${i}`, kind: "FUNCTION" }) },
  models: { max: 20, cap: 400, item: (i) => ({ vendor: "acme", model: `m-${i}`, role: "FALLBACK" }) },
  roles: { max: 20, cap: 400, item: (i) => ({ subject: `user${i}@example.com`, role: "MAINTAINER" }) },
};

/** A count over `max`, often right past it. */
const countOver = (max: number, cap: number) =>
  fc.oneof(fc.constant(max + 1), fc.integer({ min: max + 1, max: max + 5 }), fc.integer({ min: max + 1, max: cap }));

// ── 4. Two Authorization headers ────────────────────────────────────────────────────────────────

/** The credentials a pair of headers is made of: the owner's own token among them, or not. */
const HEADER_VALUES: Record<string, () => string> = {
  owner: () => `Bearer ${world.p1.token}`,
  bad: () => `Bearer ${BAD_TOKEN}`,
  otherAgent: () => `Bearer ${world.p2.token}`,
  reviewer: () => `Bearer ${world.reviewer}`,
};

/** What `fetch` makes of a header appended twice: one value, joined by ", ". */
function twice(first: string, second: string): string {
  const headers = new Headers();
  headers.append("authorization", first);
  headers.append("authorization", second);
  return headers.get("authorization") ?? "";
}

/**
 * A raw HTTP/1.1 exchange with the served app; answers what came back until the server closed, or
 * 3 s after its answer began (the clock starts at the answer: a busy machine answers late, not never).
 */
function rawExchange(port: number, request: string): Promise<string> {
  return new Promise((resolve) => {
    const socket = connect(port, "127.0.0.1");
    let text = "";
    let timer: NodeJS.Timeout | undefined;
    socket.setEncoding("utf8");
    socket.on("data", (d: string) => {
      text += d;
      timer ??= setTimeout(() => socket.destroy(), 3000);
    });
    socket.on("error", () => {});
    socket.on("close", () => {
      clearTimeout(timer);
      resolve(text);
    });
    socket.write(request);
  });
}

// ── 5. Integers that are not plain decimal ──────────────────────────────────────────────────────

/** Spellings of `n` that Number() or a lenient parser reads as n, none of them plain decimal. */
const LENIENT: Record<string, (n: number) => string> = {
  hex: (n) => `0x${n.toString(16)}`,
  plus: (n) => `+${n}`,
  exponent: (n) => (n % 10 === 0 ? `${n / 10}e1` : `${n}e0`),
  leadingSpace: (n) => ` ${n}`,
  trailingSpace: (n) => `${n} `,
  decimalPoint: (n) => `${n}.0`,
  octal: (n) => `0o${n.toString(8)}`,
  binary: (n) => `0b${n.toString(2)}`,
};

interface IntSlot {
  param: string;
  credential: Credential;
  /** Versions are 1 and 2 (the world's first provider is patched once); a page size 1–100. */
  range: [number, number];
  /** `{code}` is the world's first provider, `{n}` the spelled integer. */
  route: string;
}

// biome-ignore format: a table reads best one slot a line
const INT_SLOTS: IntSlot[] = [
  { param: "version", credential: "none", range: [1, 2], route: "/api/v1/providers/{code}/versions/{n}" },
  { param: "from", credential: "none", range: [1, 2], route: "/api/v1/providers/{code}/versions/{n}/diff/2" },
  { param: "to", credential: "none", range: [1, 2], route: "/api/v1/providers/{code}/versions/1/diff/{n}" },
  { param: "limit", credential: "none", range: [1, 100], route: "/api/v1/providers?limit={n}" },
  { param: "limit", credential: "none", range: [1, 100], route: "/api/v1/providers/{code}/versions?limit={n}" },
  { param: "limit", credential: "reviewer", range: [1, 100], route: "/api/v1/reviews/queue?limit={n}" },
].map((slot) => named(slot as IntSlot, slot.route));

// ── Setup ───────────────────────────────────────────────────────────────────────────────────────

beforeAll(async () => {
  await loadDocument();
  await setUpWorld();
  // A second version of the first provider: a versions cursor, and versions 1 and 2 to read.
  const patched = await call("PATCH", `/api/v1/providers/${world.p1.code}`, {
    token: world.p1.token,
    body: { summary: "Patched once for its versions" },
  });
  expect(patched.status).toBe(200);
  for (const list of LISTS) {
    const page = await call("GET", list.rest(), { token: tokenOf(list.credential) });
    expect({ list: list.name, status: page.status, hasNext: typeof page.body?.nextCursor === "string" }).toEqual({
      list: list.name,
      status: 200,
      hasNext: true,
    });
    cursors[list.name] = page.body.nextCursor;
  }
});

// ── The properties ──────────────────────────────────────────────────────────────────────────────

describe("NUL and lone surrogates in any string input", () => {
  test("the valid inputs they are put into are accepted as they are", async () => {
    // So that a 400 below is the hostile string's doing: intake, import and PATCH with the templates.
    const byId = (id: string) => spec.operations.find((o) => o.id === id) as Operation;
    const fresh = await call("POST", "/api/v1/providers", { body: BODIES.createProvider?.(marker()) });
    expect([fresh.status, fresh.status === 201 ? "" : fresh.text]).toEqual([201, ""]);
    const answers = [];
    for (const transport of ["rest", "graphql"] as const) {
      for (const id of ["createProvider", "importProvider"]) {
        answers.push(await send(byId(id), transport, inputsOf(byId(id), undefined, marker()), "none"));
      }
      const update = inputsOf(byId("updateProvider"), undefined, marker());
      update.path.providerCode = fresh.body.providerCode;
      answers.push(await send(byId("updateProvider"), transport, update, "agent", fresh.body.accessToken));
    }
    for (const { answer, where } of answers) {
      expect({ where, ok: answer.status < 300 && !answer.body?.errors }).toEqual({ where, ok: true });
    }
  });

  test("answer 400 BAD_USER_INPUT naming the input, and change nothing (REST and GraphQL)", async () => {
    // Path and query parameters are few beside the leaves of the bodies: each kind gets an equal share.
    const groups = new Map<string, TextTarget[]>();
    for (const t of textTargets())
      groups.set(`${t.transport} ${t.kind}`, [...(groups.get(`${t.transport} ${t.kind}`) ?? []), t]);
    const target = fc.oneof(...[...groups.values()].map((targets) => fc.constantFrom(...targets)));
    await fc.assert(
      fc.asyncProperty(
        target.chain((t) =>
          fc.record({
            target: fc.constant(t),
            // A lone surrogate has no UTF-8 to percent-encode: in a URL only NUL.
            char: t.transport === "rest" && t.kind !== "leaf" ? fc.constant(NUL) : fc.constantFrom(...HOSTILE_CHARS),
            spot: fc.constantFrom<Spot>("start", "middle", "end"),
            who: fc.nat(),
          }),
        ),
        async ({ target: t, char, spot, who }) => {
          const id = marker();
          const inputs = hostileInputs(t, id, (value) => inject(value, char, spot));
          const choices = CREDENTIALS[t.o.auth] ?? ["none"];
          const credential = choices[who % choices.length] as Credential;
          const mayBe401 = credential === "none" && !["none", "optional"].includes(t.o.auth);
          const unchanged = await watchRows(id);
          const sent = await send(t.o, t.transport, inputs, credential);
          const where = `${t.at.join(".")} ← ${JSON.stringify(char)} at its ${spot}: ${sent.where}`;
          expectBadInput(where, sent.answer, t.transport, t.at.join("."), { loose: t.kind === "query", mayBe401 });
          await unchanged(where);
        },
      ),
      { numRuns: runsOf(0.5), seed: SEED, endOnFailure: true },
    );
  }, 600_000);
});

describe("edited cursors", () => {
  test("the real cursors they are edited from are accepted", async () => {
    for (const list of LISTS) {
      for (const transport of ["rest", "graphql"] as const) {
        const { answer, where } = await readList(list, transport, cursors[list.name]);
        expect({ where, status: answer.status, errors: answer.body?.errors }).toEqual({
          where,
          status: 200,
          errors: undefined,
        });
      }
    }
  });

  test("answer 400 BAD_USER_INPUT naming `cursor` on every list (REST and GraphQL)", async () => {
    const cases = fc
      .tuple(fc.constantFrom(...LISTS), fc.constantFrom<Transport>("rest", "graphql"))
      .chain(([list, transport]) => editedCursor(cursors[list.name]).map((cursor) => ({ list, transport, cursor })));
    await fc.assert(
      fc.asyncProperty(cases, async ({ list, transport, cursor }) => {
        const { answer, where } = await readList(list, transport, cursor);
        expectBadInput(where, answer, transport, "cursor");
      }),
      { numRuns: runsOf(0.3), seed: SEED, endOnFailure: true },
    );
  }, 600_000);
});

describe("long lists", () => {
  /** Reads the provider list filtered by these labels. */
  const byLabels = (transport: Transport, labels: string[], credential: Credential) =>
    transport === "rest"
      ? call("GET", `/api/v1/providers?labels=${labels.join(",")}`, { token: tokenOf(credential) })
      : gql(
          "query ($labels: [String!]) { providers(labels: $labels) { nextCursor } }",
          { labels },
          {
            token: tokenOf(credential),
          },
        );
  const distinct = (n: number) => Array.from({ length: n }, (_, i) => `l${i}`);

  test("the labels filter with exactly 20 distinct labels works", async () => {
    for (const transport of ["rest", "graphql"] as const) {
      const answer = await byLabels(transport, distinct(20), "none");
      const where = `${transport} 20 labels → ${describeAnswer(answer)}`;
      expect({ where, status: answer.status, errors: answer.body?.errors }).toEqual({
        where,
        status: 200,
        errors: undefined,
      });
    }
  });

  // Over 20 only: a filtered read costs the database a condition a label (a 20-label read takes
  // a few tenths of a second on PostgreSQL), so the reads that work are not repeated.
  test("the labels filter with 21 to 1000 labels is a 400 naming `labels`", async () => {
    await fc.assert(
      fc.asyncProperty(
        countOver(20, 1000),
        fc.constantFrom<Transport>("rest", "graphql"),
        fc.constantFrom<Credential>("none", "reviewer"),
        async (n, transport, credential) => {
          const answer = await byLabels(transport, distinct(n), credential);
          const where = `${transport} ${n} labels as ${credential} → ${describeAnswer(answer)}`;
          expectBadInput(where, answer, transport, "labels", { loose: true });
        },
      ),
      // 21 first: while long filters reach the database, a few hundred labels keep PostgreSQL busy for minutes.
      { numRuns: runsOf(0.15), seed: SEED, endOnFailure: true, examples: [[21, "rest", "none"]] },
    );
  }, 600_000);

  test("each profile list at its limit is accepted", async () => {
    for (const [field, { max, item }] of Object.entries(BODY_LISTS)) {
      const body = { ...BODIES.createProvider?.(marker()), [field]: Array.from({ length: max }, (_, i) => item(i)) };
      const answer = await call("POST", "/api/v1/providers", { body });
      expect({ field, status: answer.status, text: answer.status === 201 ? "" : answer.text }).toEqual({
        field,
        status: 201,
        text: "",
      });
    }
  });

  test("body arrays over their limits (intake and PATCH) are a 400 naming the list, and change nothing", async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.constantFrom(...Object.keys(BODY_LISTS)).chain((field) =>
          fc.record({
            field: fc.constant(field),
            n: countOver(BODY_LISTS[field]?.max ?? 0, BODY_LISTS[field]?.cap ?? 0),
            op: fc.constantFrom("createProvider", "updateProvider"),
            transport: fc.constantFrom<Transport>("rest", "graphql"),
          }),
        ),
        async ({ field, n, op: opId, transport }) => {
          const o = spec.operations.find((x) => x.id === opId) as Operation;
          const id = marker();
          const list = BODY_LISTS[field] as (typeof BODY_LISTS)[string];
          const inputs = inputsOf(o, undefined, id);
          inputs.body = { ...inputs.body, [field]: Array.from({ length: n }, (_, i) => list.item(i)) };
          const unchanged = await watchRows(id);
          const sent = await send(o, transport, inputs, opId === "createProvider" ? "none" : "agent");
          const where = `${n} ${field}: ${sent.where}`;
          expectBadInput(where, sent.answer, transport, field, { loose: true });
          await unchanged(where);
        },
      ),
      { numRuns: runsOf(0.15), seed: SEED, endOnFailure: true },
    );
  }, 600_000);
});

describe("two Authorization headers", () => {
  const pairs = fc
    .tuple(fc.constantFrom(...Object.keys(HEADER_VALUES)), fc.constantFrom(...Object.keys(HEADER_VALUES)))
    .filter(([a, b]) => a === "owner" || b === "owner");

  test("through fetch (one joined value): 401 UNAUTHENTICATED with WWW-Authenticate, nothing changed", async () => {
    await fc.assert(
      fc.asyncProperty(pairs, fc.constantFrom("PATCH", "GraphQL", "GET"), async ([first, second], how) => {
        const authorization = twice(HEADER_VALUES[first]?.() ?? "", HEADER_VALUES[second]?.() ?? "");
        const id = marker();
        const summary = `Two headers ${id}`;
        const headers = { authorization };
        const unchanged = await watchRows(id);
        const answer =
          how === "PATCH"
            ? await call("PATCH", `/api/v1/providers/${world.p1.code}`, { headers, body: { summary } })
            : how === "GET"
              ? await call("GET", `/api/v1/providers/${world.p1.code}`, { headers })
              : await gql(
                  "mutation ($code: String!, $summary: String) { updateProvider(providerCode: $code, summary: $summary) { version } }",
                  { code: world.p1.code, summary },
                  { headers },
                );
        const where = `${how} with Authorization ${first}, ${second} → ${describeAnswer(answer)}`;
        const transport = how === "GraphQL" ? "graphql" : "rest";
        expect({ where, ...outcome(answer, transport) }).toEqual({
          where,
          status: 401,
          code: "UNAUTHENTICATED",
          problemJson: transport === "rest",
        });
        expect({ where, challenge: answer.headers.get("www-authenticate") }).toEqual({
          where,
          challenge: expect.stringMatching(/^Bearer\b/),
        });
        await unchanged(where);
      }),
      { numRuns: runsOf(0.1), seed: SEED, endOnFailure: true },
    );
  }, 600_000);

  describe("over a socket (node keeps the first in req.headers)", () => {
    let server: Server;
    let port = 0;
    beforeAll(async () => {
      server = createServer(app);
      await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
      port = (server.address() as AddressInfo).port;
    });
    afterAll(async () => {
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    });

    test.each([
      ["the owner's token", "a bad one", "owner", "bad"],
      ["a bad token", "the owner's", "bad", "owner"],
      ["the owner's token", "another agent's", "owner", "otherAgent"],
    ])("a PATCH with %s first and %s second: 401, the summary unchanged", async (_a, _b, first, second) => {
      const id = marker();
      const summary = `Socket ${id}`;
      const body = JSON.stringify({ summary });
      const request =
        `PATCH /api/v1/providers/${world.p1.code} HTTP/1.1\r\nHost: registry.test\r\n` +
        `Authorization: ${HEADER_VALUES[first]?.()}\r\nAuthorization: ${HEADER_VALUES[second]?.()}\r\n` +
        `Content-Type: application/json\r\nContent-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`;
      const unchanged = await watchRows(id);
      const text = await rawExchange(port, request);
      expect({ text, status: text.match(/^HTTP\/1\.1 (\d{3}) /)?.[1] }).toEqual({ text, status: "401" });
      expect(text).toMatch(/\r\nwww-authenticate: Bearer\b/i);
      expect(text).toContain('"code":"UNAUTHENTICATED"');
      const row = await db.provider.findUniqueOrThrow({ where: { providerCode: world.p1.code } });
      expect(row.summary).not.toBe(summary);
      await unchanged(text);
    });
  });
});

describe("integers that are not plain decimal", () => {
  test("in paths and queries are a 400 naming the parameter; plain decimal works", async () => {
    await fc.assert(
      fc.asyncProperty(
        fc
          .constantFrom(...INT_SLOTS)
          .chain((slot) =>
            fc.tuple(
              fc.constant(slot),
              fc.integer({ min: slot.range[0], max: slot.range[1] }),
              fc.constantFrom("plain", ...Object.keys(LENIENT)),
            ),
          ),
        async ([slot, n, spelling]) => {
          const value = spelling === "plain" ? String(n) : (LENIENT[spelling] as (n: number) => string)(n);
          const url = slot.route.replace("{code}", world.p1.code).replace("{n}", encodeURIComponent(value));
          const answer = await call("GET", url, { token: tokenOf(slot.credential) });
          const where = `GET ${url} (${spelling}) → ${describeAnswer(answer)}`;
          if (spelling === "plain") expect({ where, status: answer.status }).toEqual({ where, status: 200 });
          else expectBadInput(where, answer, "rest", slot.param);
        },
      ),
      { numRuns: runsOf(0.2), seed: SEED, endOnFailure: true },
    );
  }, 600_000);
});
