/**
 * What the request log line (edge.plugin.ts) says about a request besides its status and latency:
 * the route as a pattern and the GraphQL operation, never the raw URL, a header or a body. Paths
 * carry ids (and a careless client's token, `/providers/agr_…`); patterns and schema field names
 * come from this code, so nothing a client types reaches the log through them.
 */
import { type DocumentNode, getOperationAST, Kind, type SelectionSetNode } from "graphql";
import {
  matchPath,
  pathTemplate,
  REST_ROUTES,
  type RestRoute,
  restBaseOf,
  restPath,
  routesOf,
} from "./rest/rest.routes.ts";

/**
 * Writes a JSON log line to stdout. The lines of one turn of the event loop leave in one write once
 * the turn's I/O is done (`setImmediate`): a write per request through the stdout stream's machinery
 * was ~6% of the CPU of an uncached profile read (measured side by side). Lines still
 * waiting when the process exits are written by its `exit` event, so an exit (the drain's included)
 * loses none.
 */
export function writeLogLine(line: Record<string, unknown>): void {
  if (waiting.length === 0) setImmediate(flushLogLines);
  waiting.push(`${JSON.stringify(line)}\n`);
}
let waiting: string[] = [];
function flushLogLines(): void {
  if (waiting.length === 0) return;
  const text = waiting.join("");
  waiting = [];
  process.stdout.write(text);
}
process.on("exit", flushLogLines);

/** Fixed paths served outside REST: GraphQL, the transport routes and the web pages. */
const FIXED = new Set([
  "/graphql",
  "/health",
  "/ready",
  "/metrics",
  "/openapi.json",
  "/openapi.yaml",
  "/",
  "/intake",
  "/reviews",
  "/webhooks",
]);
/** Web pages with a parameter (API.md §4), and the pages' assets (src/web). */
const PAGES = ["/providers/:providerCode", "/assets/:asset"];

/** Each REST route's pattern, as in the OpenAPI document, written once. */
const REST_PATTERNS = new Map(REST_ROUTES.map((route) => [route, pathTemplate(restPath(route.path, route.base))]));

/**
 * Every pattern a request's route can be named by (here or by the REST guard): the metrics' route
 * label is one of these or `other`, so no label carries what a client typed.
 */
export const ROUTE_PATTERNS: ReadonlySet<string> = new Set([
  ...FIXED,
  ...REST_PATTERNS.values(),
  ...PAGES.map((page) => pathTemplate(page)),
]);

/** A REST route's pattern (`/api/v1/providers/{providerCode}`): the REST guard names the route it matched. */
export function routePattern(route: RestRoute): string {
  return REST_PATTERNS.get(route) as string;
}

/**
 * The route pattern a path matched, as in the OpenAPI document (`/api/v1/providers/{providerCode}`),
 * or null when it matched none.
 */
export function routeOf(pathname: string): string | null {
  const path = pathname.length > 1 ? pathname.replace(/\/+$/, "") : pathname;
  if (FIXED.has(path)) return path;
  const base = restBaseOf(path);
  if (base) {
    // A fixed segment wins over a parameter (`/reviews/queue` is not `/reviews/{reviewCode}`).
    const [best] = routesOf(path.slice(base.length) || "/", base);
    return best ? routePattern(best.route) : null;
  }
  const page = PAGES.find((p) => matchPath(p, path) !== null);
  return page ? pathTemplate(page) : null;
}

/** The root fields of a selection set, fragments followed (the document has been validated). */
function rootFields(document: DocumentNode, set: SelectionSetNode, seen = new Set<string>()): string[] {
  return set.selections.flatMap((selection) => {
    if (selection.kind === Kind.FIELD) return [selection.name.value];
    if (selection.kind === Kind.INLINE_FRAGMENT) return rootFields(document, selection.selectionSet, seen);
    const name = selection.name.value;
    if (seen.has(name)) return [];
    seen.add(name);
    const fragment = document.definitions.find((d) => d.kind === Kind.FRAGMENT_DEFINITION && d.name.value === name);
    return fragment && fragment.kind === Kind.FRAGMENT_DEFINITION
      ? rootFields(document, fragment.selectionSet, seen)
      : [];
  });
}

/** Operation names by document and operation name (only names the document has reach execution). */
const operationNames = new WeakMap<DocumentNode, Map<string, string | undefined>>();

/**
 * The operation as `<type> <root fields>`, e.g. `mutation createProvider`: the schema's names, the
 * same for a REST route and its GraphQL twin. The client's operation name is not used: it is free text.
 */
export function operationOf(document: DocumentNode, operationName?: string | null): string | undefined {
  // A document is parsed once per query text (Yoga's parse cache; each REST route runs one), so
  // its operations are named once, not on every request.
  let named = operationNames.get(document);
  if (!named) {
    named = new Map();
    operationNames.set(document, named);
  }
  const key = operationName ?? "";
  if (named.has(key)) return named.get(key);
  const operation = getOperationAST(document, operationName);
  const name = operation
    ? `${operation.operation} ${[...new Set(rootFields(document, operation.selectionSet))].join(",")}`
    : undefined;
  named.set(key, name);
  return name;
}

/**
 * Whether a client-chosen value (an `X-Request-Id`) looks like a credential: an agent token or a
 * JWT. Such a value is not echoed into the log.
 */
export function looksLikeCredential(value: string): boolean {
  return /agr_[0-9A-Za-z]{8,}/.test(value) || /eyJ[\w-]+\.[\w-]+/.test(value);
}
