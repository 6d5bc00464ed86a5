/**
 * The pages' only way to the server: fetch against /api/v1, like any other client. Errors come
 * back as `ApiError` carrying the RFC 9457 problem (or a network/timeout problem made up here),
 * so every page can show what went wrong.
 */
import type { Schemas } from "./types.ts";

export const API_BASE = "/api/v1";
const DEFAULT_TIMEOUT_MS = 20_000;

/** A field at fault: an item of a problem's `errors`, or one the intake form's own validation names. */
export type FieldError = Pick<NonNullable<Schemas["Problem"]["errors"]>[number], "path" | "message">;

/**
 * The API's problem document, or one made up here for an answer that is not one: no network
 * (`NETWORK`), no answer in time (`TIMEOUT`), an error status without a problem (`ERROR`).
 */
export type Problem = Omit<Schemas["Problem"], "type" | "code"> &
  Partial<Pick<Schemas["Problem"], "type">> & { code: Schemas["Problem"]["code"] | "NETWORK" | "TIMEOUT" | "ERROR" };

export class ApiError extends Error {
  readonly problem: Problem;
  /** How long the server asks the caller to wait before trying again (a 429's or 503's Retry-After), if it said. */
  readonly retryAfterSeconds: number | null;
  constructor(problem: Problem, retryAfterSeconds: number | null = null) {
    super(problem.detail);
    this.name = "ApiError";
    this.problem = problem;
    this.retryAfterSeconds = retryAfterSeconds;
  }
  get status(): number {
    return this.problem.status;
  }
  get code(): Problem["code"] {
    return this.problem.code;
  }
}

export interface RequestOptions {
  body?: unknown;
  /** A bearer token (reviewer JWT or agent token). */
  token?: string | null;
  /** Further request headers (a precondition such as `If-Match`). */
  headers?: Record<string, string>;
  /** Aborting it rejects with an AbortError (not an ApiError): a superseded request. */
  signal?: AbortSignal;
  timeoutMs?: number;
}

function isProblem(value: unknown): value is Problem {
  return typeof value === "object" && value !== null && "status" in value && "code" in value;
}

/** A Retry-After header in seconds: a number of seconds, or an HTTP date (RFC 9110 §10.2.3). */
export function retryAfterOf(header: string | null, now = Date.now()): number | null {
  if (!header) return null;
  const text = header.trim();
  if (/^\d+$/.test(text)) return Number(text);
  const at = Date.parse(text);
  return Number.isNaN(at) ? null : Math.max(0, Math.ceil((at - now) / 1000));
}

/** Calls `/api/v1{path}`; answers the parsed JSON body, or throws an ApiError. */
export async function api<T>(method: string, path: string, options: RequestOptions = {}): Promise<T> {
  const headers: Record<string, string> = { Accept: "application/json", ...options.headers };
  if (options.token) headers.Authorization = `Bearer ${options.token}`;
  if (options.body !== undefined) headers["Content-Type"] = "application/json";
  const timeout = AbortSignal.timeout(options.timeoutMs ?? DEFAULT_TIMEOUT_MS);
  const signal = options.signal ? AbortSignal.any([options.signal, timeout]) : timeout;
  let response: Response;
  try {
    response = await fetch(`${API_BASE}${path}`, {
      method,
      headers,
      body: options.body === undefined ? undefined : JSON.stringify(options.body),
      signal,
      cache: "no-store",
      // A person signed in through the identity provider is a session cookie (HttpOnly, SameSite=Lax;
      // a write it makes must carry this origin, which a same-origin fetch does).
      credentials: "same-origin",
    });
  } catch (error) {
    if (options.signal?.aborted) throw error;
    if (timeout.aborted) {
      throw new ApiError({
        title: "No answer",
        status: 0,
        code: "TIMEOUT",
        detail: "The registry did not answer in time. Try again in a moment.",
      });
    }
    throw new ApiError({
      title: "Network error",
      status: 0,
      code: "NETWORK",
      detail: "The registry could not be reached. Check your connection and try again.",
    });
  }
  const text = await response.text().catch(() => "");
  let body: unknown = null;
  try {
    body = text ? JSON.parse(text) : null;
  } catch {
    body = null;
  }
  if (response.ok) return body as T;
  const retryAfter = retryAfterOf(response.headers.get("retry-after"));
  if (isProblem(body)) throw new ApiError(body, retryAfter);
  throw new ApiError(
    {
      title: response.statusText || "Error",
      status: response.status,
      code: response.status >= 500 ? "INTERNAL" : "ERROR",
      detail: `The registry answered ${response.status}${response.statusText ? ` ${response.statusText}` : ""}.`,
    },
    retryAfter,
  );
}

/** True for the rejection of a request that was aborted on purpose (superseded). */
export function isAbort(error: unknown): boolean {
  return error instanceof DOMException && error.name === "AbortError";
}

/** A query string of the non-empty values, e.g. `?search=x&limit=20`. */
export function query(params: Record<string, string | number | null | undefined>): string {
  const search = new URLSearchParams();
  for (const [key, value] of Object.entries(params)) {
    if (value !== null && value !== undefined && value !== "") search.set(key, String(value));
  }
  const text = search.toString();
  return text ? `?${text}` : "";
}

// Tokens pasted into a page are kept for this tab only: sessionStorage, forgotten when the tab closes.
const REVIEWER_TOKEN_KEY = "agent-registry.reviewer-token";
/** The token of the webhooks page: an agent's token, or a reviewer's JWT. */
const WEBHOOKS_TOKEN_KEY = "agent-registry.webhooks-token";

function stored(key: string): string | null {
  try {
    return sessionStorage.getItem(key);
  } catch {
    return null;
  }
}

function store(key: string, token: string | null): void {
  try {
    if (token) sessionStorage.setItem(key, token);
    else sessionStorage.removeItem(key);
  } catch {
    // Storage refused (private mode): the session lasts as long as the page then.
  }
}

/**
 * An agent's own token, pasted on its profile page: kept by agent code, since a token is of one
 * agent only and must not be sent along when reading another's profile.
 */
const OWNER_TOKEN_KEY = "agent-registry.owner-token.";

export const reviewerToken = (): string | null => stored(REVIEWER_TOKEN_KEY);
export const setReviewerToken = (token: string | null): void => store(REVIEWER_TOKEN_KEY, token);
export const webhooksToken = (): string | null => stored(WEBHOOKS_TOKEN_KEY);
export const setWebhooksToken = (token: string | null): void => store(WEBHOOKS_TOKEN_KEY, token);
export const ownerToken = (providerCode: string): string | null => stored(`${OWNER_TOKEN_KEY}${providerCode}`);
export const setOwnerToken = (providerCode: string, token: string | null): void =>
  store(`${OWNER_TOKEN_KEY}${providerCode}`, token);

/** Whether a token is an agent's access token (`agr_…`) rather than a reviewer's JWT. */
export const isAgentToken = (token: string): boolean => token.startsWith("agr_");

/** The claims of a JWT, decoded for display only (the server verifies it). */
export function jwtClaims(token: string): { sub?: string; exp?: number; roles?: unknown } | null {
  const part = token.split(".")[1];
  if (!part) return null;
  try {
    const json = atob(
      part
        .replace(/-/g, "+")
        .replace(/_/g, "/")
        .padEnd(Math.ceil(part.length / 4) * 4, "="),
    );
    const claims = JSON.parse(json);
    return typeof claims === "object" && claims !== null ? claims : null;
  } catch {
    return null;
  }
}

/**
 * A read that uses the reviewer's token when this tab has one; if the server refuses that token
 * (expired, say), the tab forgets it and the read is made again anonymously.
 */
export async function readAsViewer<T>(
  path: string,
  options: Omit<RequestOptions, "token"> = {},
): Promise<{ data: T; asReviewer: boolean; droppedToken: boolean }> {
  const token = reviewerToken();
  if (!token) return { data: await api<T>("GET", path, options), asReviewer: false, droppedToken: false };
  try {
    return { data: await api<T>("GET", path, { ...options, token }), asReviewer: true, droppedToken: false };
  } catch (error) {
    if (!(error instanceof ApiError) || error.status !== 401) throw error;
    setReviewerToken(null);
    return { data: await api<T>("GET", path, options), asReviewer: false, droppedToken: true };
  }
}
