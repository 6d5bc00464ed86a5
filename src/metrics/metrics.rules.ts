/**
 * The metrics' label values, each one of a set this code knows: a label never carries what a caller
 * chose (a provider code, a token, a URL), and the number of series Prometheus keeps stays bounded.
 */
import { ROUTE_PATTERNS } from "../http/request.log.ts";

/** The route label of a request whose path matched no route (or one this code does not name). */
export const OTHER_ROUTE = "other";

/** The methods of RFC 9110 and PATCH; a request with any other gets `OTHER`. */
const METHODS: ReadonlySet<string> = new Set([
  "GET",
  "HEAD",
  "POST",
  "PUT",
  "PATCH",
  "DELETE",
  "OPTIONS",
  "CONNECT",
  "TRACE",
]);

/** The outcomes of an endpoint's health check (API.md §4, `health.state`). */
export const CHECK_OUTCOMES = ["UP", "AUTH_REQUIRED", "WRONG_PROTOCOL", "DOWN", "UNKNOWN"] as const;

/** The kinds of long-lived answers counted while they are open. */
export const STREAM_KINDS = ["sse", "websocket"] as const;
export type StreamKind = (typeof STREAM_KINDS)[number];

/** A route pattern the request log names (request.log.ts), else `other`. */
export function routeLabel(route: string | null | undefined): string {
  return route != null && ROUTE_PATTERNS.has(route) ? route : OTHER_ROUTE;
}

export function methodLabel(method: string): string {
  return METHODS.has(method) ? method : "OTHER";
}

/** An HTTP status as the key of its count: a whole number 100–599, else 0 (labelled `other`). */
export function statusKey(status: number): number {
  return Number.isInteger(status) && status >= 100 && status <= 599 ? status : 0;
}

export function statusLabel(key: number): string {
  return key === 0 ? "other" : String(key);
}

/** A check's outcome; anything else is `UNKNOWN`. */
export function outcomeLabel(outcome: string): string {
  return (CHECK_OUTCOMES as readonly string[]).includes(outcome) ? outcome : "UNKNOWN";
}
