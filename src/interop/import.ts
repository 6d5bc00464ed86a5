/**
 * Intake from a document another ecosystem already has: an A2A agent card (A2A v1.0, the shape
 * agent.card.ts writes) or an MCP registry `server.json` (schema 2025-12-11 and newer; server.json.ts
 * writes one back). One mapper per format turns the document into intake fields and says, by JSON
 * pointer (RFC 6901), where each field it used went, and which fields had no home. Pure: no database, and no network — a URL in a
 * document is copied as text, never fetched.
 */
import type { FieldError } from "../errors.ts";
import {
  ARGUMENT_KINDS,
  ENDPOINT_TRANSPORTS,
  INPUT_FORMATS,
  PACKAGE_REGISTRIES,
  PACKAGE_TRANSPORTS,
} from "../providers/provider.enums.ts";
import { AUTH_SCHEMES } from "../providers/provider.rules.ts";
import { fromServerJson, shortName, toServerJson } from "./server.json.ts";

export const IMPORT_FORMATS = ["a2a", "mcp"] as const;
export type ImportFormat = (typeof IMPORT_FORMATS)[number];

/** A field of the document that went into the intake: `from` a JSON pointer, `to` an intake path. */
export interface MappedField {
  from: string;
  to: string;
}

/** A problem with the intake a document maps to: the intake field, and the pointer it came from. */
export interface ImportError extends FieldError {
  /** JSON pointer into the document; null when the field came from the request body instead. */
  source: string | null;
}

export interface Mapping {
  /** Intake fields, before validation. */
  input: Record<string, unknown>;
  mapped: MappedField[];
  /** Pointers of the document's fields that went nowhere, outermost first, in document order. */
  unmapped: string[];
  /** Fields of the document that could not be read at all (wrong type, unsupported value). */
  errors: ImportError[];
}

type Json = Record<string, unknown>;
type AuthScheme = (typeof AUTH_SCHEMES)[number];

const isObject = (v: unknown): v is Json => typeof v === "object" && v !== null && !Array.isArray(v);

/** One segment of a JSON pointer, escaped (RFC 6901 §3). */
export function escapePointer(key: string | number): string {
  return String(key).replace(/~/g, "~0").replace(/\//g, "~1");
}

function unescapePointer(segment: string): string {
  return segment.replace(/~1/g, "/").replace(/~0/g, "~");
}

/** Reads a document by pointer, recording what each value it hands out maps to. */
class Reader {
  readonly mapped: MappedField[] = [];
  readonly errors: ImportError[] = [];
  /** Where each intake path came from, containers included: how a validation error finds its source. */
  readonly origins: MappedField[] = [];
  private readonly used = new Set<string>();
  private readonly keys = new Set<string>();

  constructor(readonly document: Json) {}

  at(pointer: string): unknown {
    let node: unknown = this.document;
    for (const segment of pointer.split("/").slice(1).map(unescapePointer)) {
      if (Array.isArray(node)) node = node[Number(segment)];
      else if (isObject(node)) node = Object.hasOwn(node, segment) ? node[segment] : undefined;
      else return undefined;
    }
    return node;
  }

  /** Records that the value at `from` went to the intake path `to`. */
  map(from: string, to: string): void {
    this.used.add(from);
    if (this.mapped.some((m) => m.from === from && m.to === to)) return;
    this.mapped.push({ from, to });
    this.origins.push({ from, to });
  }

  /** Records that the key of the member at `from` (not its value) went to `to`. */
  mapKey(from: string, to: string): void {
    this.keys.add(from);
    this.mapped.push({ from, to });
    this.origins.push({ from, to });
  }

  /** Records where an intake path comes from without reporting a mapping (a container). */
  origin(from: string, to: string): void {
    this.origins.push({ from, to });
  }

  fail(to: string, from: string | null, message: string): void {
    this.errors.push({ path: to, source: from, message: from === null ? message : `${message} (from ${from})` });
  }

  /** A value of one JSON type at `from`, mapped to `to`; undefined when absent; an error when of another type. */
  private scalar<T>(from: string, to: string, type: "string" | "boolean", expected: string): T | undefined {
    const value = this.at(from);
    if (value === undefined || value === null) return undefined;
    if (typeof value !== type) return void this.fail(to, from, expected);
    this.map(from, to);
    return value as T;
  }

  string(from: string, to: string): string | undefined {
    return this.scalar(from, to, "string", "expected a string");
  }

  boolean(from: string, to: string): boolean | undefined {
    return this.scalar(from, to, "boolean", "expected true or false");
  }

  /** Marks a field as read without it going anywhere: not reported as unmapped. */
  consume(from: string): void {
    if (this.at(from) !== undefined) this.used.add(from);
  }

  /** A list of strings at `from`, mapped to `to`. */
  strings(from: string, to: string): string[] | undefined {
    const value = this.at(from);
    if (value === undefined || value === null) return undefined;
    if (!Array.isArray(value) || value.some((v) => typeof v !== "string")) {
      return void this.fail(to, from, "expected a list of strings");
    }
    this.map(from, to);
    return value as string[];
  }

  /** A list at `from` whose items the caller maps one by one. */
  list(from: string, to: string): unknown[] | undefined {
    const value = this.at(from);
    if (value === undefined || value === null) return undefined;
    if (!Array.isArray(value)) return void this.fail(to, from, "expected a list");
    this.origin(from, to);
    return value;
  }

  /** The pointers of every field of the document that nothing was mapped from. */
  unmapped(): string[] {
    // A member whose key went somewhere is walked into, even when none of its value did.
    const marks = [...this.used, ...this.keys];
    const walk = (value: unknown, pointer: string): string[] => {
      if (this.used.has(pointer)) return [];
      const inside = marks.some((u) => u === pointer || u.startsWith(`${pointer}/`));
      if (pointer !== "" && (!inside || typeof value !== "object" || value === null)) return [pointer];
      const entries: [string, unknown][] = Array.isArray(value)
        ? value.map((v, i) => [String(i), v])
        : Object.entries(value as Json);
      return entries.flatMap(([key, v]) => walk(v, `${pointer}/${escapePointer(key)}`));
    };
    return walk(this.document, "");
  }
}

/** A one-line summary of a longer text: its first line, cut to 280 characters. */
function summaryOf(text: string): string {
  const line = text.trim().split(/\r?\n/)[0]?.trim() ?? "";
  return line.length > 280 ? `${line.slice(0, 279).trimEnd()}…` : line;
}

/** `summary` (and `description` when the text is longer than one line) from one text. */
function describe(r: Reader, from: string, input: Json): void {
  const text = r.string(from, "summary");
  if (text === undefined) return;
  input.summary = summaryOf(text);
  if (text.trim() !== input.summary) {
    input.description = text.trim();
    r.map(from, "description");
  }
}

// ── A2A agent card ──────────────────────────────────────────────────────────────────────────────

/** The kind of an A2A `SecurityScheme` (a one-member object naming it) as an `authScheme`. */
function authSchemeOfA2A(scheme: unknown): AuthScheme | string {
  if (!isObject(scheme)) return "an object naming one security scheme";
  if (isObject(scheme.httpAuthSecurityScheme)) {
    const name = String(scheme.httpAuthSecurityScheme.scheme ?? "");
    return name.toLowerCase() === "bearer"
      ? "BEARER"
      : `HTTP "${name}" authentication, which the registry has no value for (only Bearer)`;
  }
  if (isObject(scheme.apiKeySecurityScheme)) return "API_KEY";
  if (isObject(scheme.oauth2SecurityScheme) || isObject(scheme.openIdConnectSecurityScheme)) return "OAUTH2";
  if (isObject(scheme.mtlsSecurityScheme)) return "MTLS";
  return "a known security scheme (httpAuth, apiKey, oauth2, openIdConnect or mtls)";
}

function fromA2A(r: Reader): Json {
  const input: Json = { agentType: "ASSISTANT" };
  // Where each required field would come from, so that a missing one is named by its pointer.
  r.origin("/name", "name");
  r.origin("/description", "summary");
  r.origin("/skills", "capabilities");
  const name = r.string("/name", "name");
  if (name !== undefined) input.name = name;
  describe(r, "/description", input);

  // The first (preferred) interface is the endpoint; the others have no home.
  r.origin("/supportedInterfaces", "endpoint");
  const interfaces = r.list("/supportedInterfaces", "endpoint");
  const endpoint: Json = { protocol: "A2A", authScheme: "NONE" };
  if (interfaces?.length) {
    const url = r.string("/supportedInterfaces/0/url", "endpoint.url");
    if (url !== undefined) endpoint.url = url;
    if (typeof r.at("/supportedInterfaces/0/protocolBinding") === "string") {
      r.map("/supportedInterfaces/0/protocolBinding", "endpoint.protocol");
    }
  }
  // The scheme the first security requirement names decides authScheme; none means NONE.
  const requirements = r.list("/securityRequirements", "endpoint.authScheme");
  const first = requirements?.[0];
  if (first !== undefined) {
    const schemes = isObject(first) && isObject(first.schemes) ? Object.keys(first.schemes) : [];
    const chosen = schemes[0];
    if (chosen === undefined) {
      r.fail("endpoint.authScheme", "/securityRequirements/0", "expected { schemes: { <name>: { list: [] } } }");
    } else {
      const at = `/securitySchemes/${escapePointer(chosen)}`;
      const kind = authSchemeOfA2A(r.at(at));
      if ((AUTH_SCHEMES as readonly string[]).includes(kind)) {
        endpoint.authScheme = kind;
        r.map(`/securityRequirements/0/schemes/${escapePointer(chosen)}`, "endpoint.authScheme");
        r.map(at, "endpoint.authScheme");
      } else {
        r.fail("endpoint.authScheme", at, `expected ${kind}`);
      }
    }
  }
  if (interfaces?.length) input.endpoint = endpoint;

  // Skills are capabilities; the card's default modes fill in a skill's own when it has none.
  const skills = r.list("/skills", "capabilities");
  if (skills) {
    const defaults = { inputModes: "/defaultInputModes", outputModes: "/defaultOutputModes" } as const;
    input.capabilities = skills.map((skill, i) => {
      const from = `/skills/${i}`;
      const to = `capabilities.${i}`;
      r.origin(from, to);
      if (!isObject(skill)) return void r.fail(to, from, "expected an object");
      const capability: Json = {};
      const key = r.string(`${from}/id`, `${to}.key`);
      if (key !== undefined) capability.key = key;
      const skillName = r.string(`${from}/name`, `${to}.name`);
      if (skillName !== undefined) capability.name = skillName;
      const description = r.string(`${from}/description`, `${to}.description`);
      if (description !== undefined) capability.description = description;
      const tags = r.strings(`${from}/tags`, `${to}.tags`);
      if (tags !== undefined) capability.tags = tags;
      for (const modes of ["inputModes", "outputModes"] as const) {
        const own = r.strings(`${from}/${modes}`, `${to}.${modes}`);
        const fallback = own?.length ? undefined : r.strings(defaults[modes], `capabilities.*.${modes}`);
        const value = own?.length ? own : fallback;
        if (value !== undefined) capability[modes] = value;
      }
      return capability;
    });
  }
  return input;
}

// ── MCP registry server.json ────────────────────────────────────────────────────────────────────

/** The `authScheme` a remote's headers imply: Authorization → BEARER, an API-key header → API_KEY. */
function authSchemeOfHeaders(r: Reader, from: string): AuthScheme {
  const headers = r.list(from, "endpoint.headers") ?? [];
  for (const [i, header] of headers.entries()) {
    const name = isObject(header) && typeof header.name === "string" ? header.name.toLowerCase() : "";
    const scheme: AuthScheme | null =
      name === "authorization" ? "BEARER" : /(^|[-_])(api[-_]?key|key)$/.test(name) ? "API_KEY" : null;
    if (scheme) {
      r.map(`${from}/${i}/name`, "endpoint.authScheme");
      return scheme;
    }
  }
  return "NONE";
}

/** A server.json enumeration (`streamable-http`) as the profile's (`STREAMABLE_HTTP`), if it is one of `values`. */
function choice<T extends string>(r: Reader, from: string, to: string, values: readonly T[]): T | undefined {
  const value = r.at(from);
  if (value === undefined || value === null) return undefined;
  const upper = typeof value === "string" ? fromServerJson(value) : "";
  if (!(values as readonly string[]).includes(upper)) {
    return void r.fail(to, from, `expected one of ${values.map(toServerJson).join(", ")}`);
  }
  r.map(from, to);
  return upper as T;
}

/**
 * What server.json's `Input` says that the profile keeps. A secret's default or value is never
 * kept, nor nested `variables`: they stay unmapped, and so are reported.
 */
function readInput(r: Reader, from: string, to: string, out: Json): Json {
  const isSecret = r.boolean(`${from}/isSecret`, `${to}.isSecret`);
  if (isSecret !== undefined) out.isSecret = isSecret;
  const isRequired = r.boolean(`${from}/isRequired`, `${to}.isRequired`);
  if (isRequired !== undefined) out.isRequired = isRequired;
  const format = choice(r, `${from}/format`, `${to}.format`, INPUT_FORMATS);
  if (format !== undefined) out.format = format;
  texts(r, from, to, isSecret ? ["description", "placeholder"] : ["description", "placeholder", "default"], out);
  const choices = r.strings(`${from}/choices`, `${to}.choices`);
  if (choices !== undefined) out.choices = choices;
  return out;
}

/** The string members `keys` of the object at `from`, each into `out` and mapped to `<to>.<key>`. */
function texts(r: Reader, from: string, to: string, keys: readonly string[], out: Json): Json {
  for (const key of keys) {
    const text = r.string(`${from}/${key}`, `${to}.${key}`);
    if (text !== undefined) out[key] = text;
  }
  return out;
}

/** Each object of a list, read by `item`; an item of another type is an error. */
function objects(r: Reader, from: string, to: string, item: (from: string, to: string) => Json): Json[] | undefined {
  return r.list(from, to)?.map((value, i) => {
    r.origin(`${from}/${i}`, `${to}.${i}`);
    if (!isObject(value)) {
      r.fail(`${to}.${i}`, `${from}/${i}`, "expected an object");
      return {};
    }
    return item(`${from}/${i}`, `${to}.${i}`);
  });
}

/** An environment variable or a header (server.json's `KeyValueInput`): its `value` is never kept. */
function readVariable(r: Reader, from: string, to: string): Json {
  return readInput(r, from, to, texts(r, from, to, ["name"], {}));
}

function readArgument(r: Reader, from: string, to: string): Json {
  const out: Json = {};
  const type = choice(r, `${from}/type`, `${to}.type`, ARGUMENT_KINDS);
  if (type !== undefined) out.type = type;
  const secret = r.at(`${from}/isSecret`) === true;
  texts(r, from, to, secret ? ["name", "valueHint"] : ["name", "valueHint", "value"], out);
  const isRepeated = r.boolean(`${from}/isRepeated`, `${to}.isRepeated`);
  if (isRepeated !== undefined) out.isRepeated = isRepeated;
  return readInput(r, from, to, out);
}

function readPackage(r: Reader, from: string, to: string): Json {
  const out: Json = {};
  const registryType = choice(r, `${from}/registryType`, `${to}.registryType`, PACKAGE_REGISTRIES);
  if (registryType !== undefined) out.registryType = registryType;
  texts(r, from, to, ["registryBaseUrl", "identifier", "version", "fileSha256", "runtimeHint"], out);
  r.origin(`${from}/transport`, `${to}.transport`);
  if (r.at(`${from}/transport`) !== undefined) {
    const transport: Json = {};
    const type = choice(r, `${from}/transport/type`, `${to}.transport.type`, PACKAGE_TRANSPORTS);
    if (type !== undefined) transport.type = type;
    const url = r.string(`${from}/transport/url`, `${to}.transport.url`);
    if (url !== undefined) transport.url = url;
    const headers = objects(r, `${from}/transport/headers`, `${to}.transport.headers`, (f, t) => readVariable(r, f, t));
    if (headers !== undefined) transport.headers = headers;
    out.transport = transport;
  }
  for (const key of ["runtimeArguments", "packageArguments"]) {
    const list = objects(r, `${from}/${key}`, `${to}.${key}`, (f, t) => readArgument(r, f, t));
    if (list !== undefined) out[key] = list;
  }
  const variables = objects(r, `${from}/environmentVariables`, `${to}.environmentVariables`, (f, t) =>
    readVariable(r, f, t),
  );
  if (variables !== undefined) out.environmentVariables = variables;
  return out;
}

/** The first remote is the endpoint (the profile has one); further remotes have no home. */
function readRemote(r: Reader): Json {
  const endpoint: Json = { protocol: "MCP" };
  const url = r.string("/remotes/0/url", "endpoint.url");
  if (url !== undefined) endpoint.url = url;
  const transport = choice(r, "/remotes/0/type", "endpoint.transport", ENDPOINT_TRANSPORTS);
  if (transport !== undefined) endpoint.transport = transport;
  endpoint.authScheme = authSchemeOfHeaders(r, "/remotes/0/headers");
  const headers = objects(r, "/remotes/0/headers", "endpoint.headers", (f, t) => readVariable(r, f, t));
  if (headers !== undefined) endpoint.headers = headers;
  const variables = r.at("/remotes/0/variables");
  if (isObject(variables)) {
    endpoint.variables = Object.entries(variables).map(([name, value], i) => {
      const from = `/remotes/0/variables/${escapePointer(name)}`;
      r.mapKey(from, `endpoint.variables.${i}.name`);
      return isObject(value) ? readInput(r, from, `endpoint.variables.${i}`, { name }) : { name };
    });
  } else if (variables !== undefined) {
    r.fail("endpoint.variables", "/remotes/0/variables", "expected an object of variables by name");
  }
  return endpoint;
}

/** The `$schema` dates this import reads: 2025-12-11 and the drafts after it. */
const OLDEST_SCHEMA = "2025-12-11";

function fromMcp(r: Reader): Json {
  const input: Json = { agentType: "TOOL_SERVER" };
  const schema = r.at("/$schema");
  const dated = typeof schema === "string" ? /\/schemas\/(\d{4}-\d{2}-\d{2})\//.exec(schema)?.[1] : undefined;
  if (dated !== undefined && dated < OLDEST_SCHEMA) {
    r.fail("document", "/$schema", `is server.json schema ${dated}; the registry reads ${OLDEST_SCHEMA} and newer`);
  }
  r.consume("/$schema");

  r.origin("/name", "name");
  r.origin("/description", "summary");
  const serverName = r.string("/name", "serverName");
  if (serverName !== undefined) input.serverName = serverName;
  // `title` is the display name; without one, the name's part after its namespace is.
  const title = r.string("/title", "name");
  if (title !== undefined) input.name = title;
  else if (serverName !== undefined) {
    input.name = shortName(serverName);
    r.map("/name", "name");
  }
  describe(r, "/description", input);
  const version = r.string("/version", "releaseVersion");
  if (version !== undefined) input.releaseVersion = version;
  const website = r.string("/websiteUrl", "homepageUrl");
  if (website !== undefined) input.homepageUrl = website;
  if (r.at("/repository") !== undefined) {
    r.origin("/repository", "repository");
    input.repository = texts(r, "/repository", "repository", ["url", "source", "id", "subfolder"], {});
  }

  r.origin("/remotes", "endpoint");
  r.origin("/packages", "packages");
  if (r.list("/remotes", "endpoint")?.length) input.endpoint = readRemote(r);
  const packages = objects(r, "/packages", "packages", (f, t) => readPackage(r, f, t));
  if (packages !== undefined) input.packages = packages;
  return input;
}

/** How deep a document may nest: real cards and server.json files stay under 10 levels. */
export const MAX_DEPTH = 32;

/** The pointer of the first value nested deeper than MAX_DEPTH, walked without recursion; null if none. */
function tooDeep(document: Json): string | null {
  const stack: [unknown, string, number][] = [[document, "", 0]];
  for (let next = stack.pop(); next; next = stack.pop()) {
    const [value, pointer, depth] = next;
    if (value === null || typeof value !== "object") continue;
    if (depth >= MAX_DEPTH) return pointer;
    const entries = Array.isArray(value) ? value.entries() : Object.entries(value as Json);
    for (const [key, child] of entries) stack.push([child, `${pointer}/${escapePointer(key)}`, depth + 1]);
  }
  return null;
}

const MAPPERS: Record<ImportFormat, (r: Reader) => Json> = {
  a2a: fromA2A,
  mcp: fromMcp,
};

/** Maps a document of the given format to intake fields, with the report of what went where. */
export function mapDocument(
  format: ImportFormat,
  document: unknown,
): Mapping & { sourceOf(path: string): string | null } {
  const deep = isObject(document) ? tooDeep(document) : null;
  if (!isObject(document) || deep !== null) {
    const message = deep === null ? "expected a JSON object" : `nested deeper than ${MAX_DEPTH} levels (at ${deep})`;
    return {
      input: {},
      mapped: [],
      unmapped: [],
      errors: [{ path: "document", source: deep ?? "", message }],
      sourceOf: () => null,
    };
  }
  const reader = new Reader(document);
  const input = MAPPERS[format](reader);
  return {
    input,
    mapped: reader.mapped,
    unmapped: reader.unmapped(),
    errors: reader.errors,
    /** The pointer an intake path (`capabilities.0.key`) was read from: its nearest mapped ancestor. */
    sourceOf(path: string) {
      let best: MappedField | undefined;
      for (const o of reader.origins) {
        const covers = path === o.to || path.startsWith(`${o.to}.`);
        if (covers && (!best || o.to.length >= best.to.length)) best = o; // later (mapped) wins a tie
      }
      return best?.from ?? null;
    },
  };
}
