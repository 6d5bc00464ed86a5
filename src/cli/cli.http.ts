/**
 * The registry as the CLI reaches it: JSON over `/api/v1` with a bearer credential. A refusal comes
 * back as the registry's problem document (RFC 9457) turned into a CliError that keeps its code,
 * status and each field's JSON Pointer; a registry that cannot be reached is a CliError that says
 * where it looked and how to point elsewhere. No message ever carries the credential.
 */
import type { components } from "../web/client/api.types.ts";
import { CliError, type Problem, usage } from "./cli.errors.ts";

export type Schemas = components["schemas"];
export type ApiProblem = Schemas["Problem"];

/** How long one request may take before the CLI gives up on it. */
const TIMEOUT_MS = 30_000;
export const USER_AGENT = "agent-registry-cli";

/** The registry's URL as given, normalised: an http(s) origin and path, no trailing slash, no query. */
export function registryUrl(given: string): string {
  let url: URL;
  try {
    url = new URL(given);
  } catch {
    throw usage(`--registry must be a URL such as https://registry.example.com, got "${given}"`);
  }
  if (url.protocol !== "https:" && url.protocol !== "http:") {
    throw usage(`--registry must be an http: or https: URL, got "${given}"`);
  }
  if (url.username || url.password || url.search || url.hash) {
    throw usage("--registry must be a plain URL, without credentials, query or fragment");
  }
  return `${url.origin}${url.pathname.replace(/\/+$/, "")}`;
}

export interface Answer<T = any> {
  status: number;
  headers: Headers;
  body: T;
}

export interface RequestOptions {
  body?: unknown;
  token?: string | undefined;
  headers?: Record<string, string>;
}

/** Why fetch could not reach the registry, in words: the cause's code when Node gives one. */
function unreachableReason(error: unknown): string {
  const cause = (error as { cause?: { code?: string; message?: string } }).cause;
  if ((error as Error).name === "TimeoutError") return `no answer within ${TIMEOUT_MS / 1000} s`;
  const code = cause?.code;
  if (code === "ECONNREFUSED") return "connection refused";
  if (code === "ENOTFOUND" || code === "EAI_AGAIN") return "no such host";
  if (code) return code;
  return cause?.message ?? (error as Error).message;
}

export class Registry {
  constructor(readonly url: string) {}

  /** One request; answers whatever status came back. */
  async request<T = any>(method: string, path: string, options: RequestOptions = {}): Promise<Answer<T>> {
    const headers: Record<string, string> = {
      accept: "application/json",
      "user-agent": USER_AGENT,
      ...options.headers,
    };
    if (options.token) headers.authorization = `Bearer ${options.token}`;
    if (options.body !== undefined) headers["content-type"] ??= "application/json";
    let response: Response;
    try {
      response = await fetch(`${this.url}${path}`, {
        method,
        headers,
        body: options.body === undefined ? undefined : JSON.stringify(options.body),
        signal: AbortSignal.timeout(TIMEOUT_MS),
        redirect: "error",
      });
    } catch (error) {
      throw new CliError(
        `Cannot reach the registry at ${this.url} (${unreachableReason(error)}). Is it running? Point the CLI elsewhere with --registry or AGENT_REGISTRY_URL.`,
        1,
        { code: "UNREACHABLE" },
      );
    }
    const text = await response.text();
    let body: unknown = text;
    try {
      body = text ? JSON.parse(text) : null;
    } catch {}
    return { status: response.status, headers: response.headers, body: body as T };
  }

  /** A request that must succeed: anything else is the registry's refusal, in its own words. */
  async ok<T = any>(method: string, path: string, options: RequestOptions = {}): Promise<Answer<T>> {
    const answer = await this.request<T>(method, path, options);
    if (answer.status >= 400) throw refusal(answer);
    return answer;
  }
}

/** A registry's answer of 4xx or 5xx as a CliError: its detail, code, status and fields by pointer. */
export function refusal(answer: Answer): CliError {
  const problem = answer.body as Partial<ApiProblem> | null;
  const isProblem = typeof problem === "object" && problem !== null && typeof problem.detail === "string";
  const problems: Problem[] = isProblem
    ? (problem.errors ?? []).map((e) => ({ path: e.path, message: e.message }))
    : [];
  let message = isProblem ? (problem.detail as string) : `The registry answered HTTP ${answer.status}`;
  if (answer.status === 401) {
    message = `The registry refused the credentials (${message}). Sign in again with agent-registry login, or check AGENT_REGISTRY_TOKEN.`;
  }
  if (answer.status === 429) {
    const wait = answer.headers.get("retry-after");
    if (wait) message = `${message} (try again in ${wait} s)`;
  }
  return new CliError(message, 1, {
    status: answer.status,
    code: isProblem ? problem.code : "HTTP_ERROR",
    problems,
  });
}

/** A path segment, encoded. */
export const seg = (value: string | number) => encodeURIComponent(String(value));
