/**
 * Shared test helpers: the app on this file's own database, requests through the front door
 * (`yoga.fetch`), and builders of data through the API (`tests/builders.ts` has those that need
 * nothing). Every test makes its own providers with unique codes.
 */
import { createServer, type RequestListener, type Server } from "node:http";
import type { AddressInfo, Socket } from "node:net";
import { afterAll } from "@jest/globals";
import { signReviewerToken } from "../src/auth/reviewer.jwt.ts";
import { loadConfig } from "../src/config.ts";
import { dialectOf, openDb } from "../src/db/client.ts";
import { createApp } from "../src/yoga.ts";
import { intakeBody } from "./builders.ts";
import { copyOfTemplate } from "./database.ts";

// This file's own copy of the run's template (tests/database.ts): what `appWith` and the server
// processes of this file inherit too.
process.env.DATABASE_URL = await copyOfTemplate();
export const config = loadConfig({ ...process.env, NODE_ENV: "test" });
export const db = await openDb(config.databaseUrl);
export const app = createApp(config, db);

/** Apps of other configurations (`appWith`), disposed with the file. */
const ownApps: ReturnType<typeof createApp>[] = [];
/** How to close what this file opened (servers, browsers), newest first. */
const closers: (() => unknown)[] = [];

/**
 * Closes `close` after the file's tests, however they and their setup ended: a resource registers
 * itself when it is made, so a setup that fails halfway still closes what it had opened.
 */
export function closeAfterAll(close: () => unknown): void {
  closers.unshift(close);
}

// Each test file has its own client (its own pool on PostgreSQL): close it so workers exit cleanly.
afterAll(async () => {
  await Promise.allSettled(closers.map(async (close) => close()));
  // The apps next: a feed's tail reads the log on a timer, which would open the pool again.
  await Promise.all([app, ...ownApps].map((a) => a.dispose()));
  await db.$disconnect();
});

/** The app of the test configuration with these variables set, on the run's database. */
export function appWith(env: Record<string, string>): ReturnType<typeof createApp> {
  const made = createApp(loadConfig({ ...process.env, NODE_ENV: "test", ...env }), db);
  ownApps.push(made);
  return made;
}

/** What a production configuration must set, without logging. */
export const PRODUCTION = { NODE_ENV: "production", REVIEWER_JWT_SECRET: "s".repeat(40), LOG_LEVEL: "silent" };

export interface Listening {
  server: Server;
  /** `http://127.0.0.1:<port>` */
  url: string;
  close(): Promise<void>;
}

/**
 * `handler` (the shared app by default) on a node:http server on a free loopback port, as src/main.ts
 * serves it; closed after the file's tests if the file has not closed it.
 */
export async function listen(handler: RequestListener = app): Promise<Listening> {
  const server = createServer(handler);
  // Every socket, upgraded ones (WebSockets) too, which closeAllConnections() does not know.
  const sockets = new Set<Socket>();
  server.on("connection", (socket) => {
    sockets.add(socket);
    socket.once("close", () => sockets.delete(socket));
  });
  const close = () =>
    new Promise<void>((resolve) => {
      for (const socket of sockets) socket.destroy();
      server.close(() => resolve());
    });
  closeAfterAll(() => server.listening && close());
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return { server, url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, close };
}

export interface Answer {
  status: number;
  headers: Headers;
  body: any;
  text: string;
}

export type App = ReturnType<typeof createApp>;

export interface CallOptions {
  body?: unknown;
  token?: string;
  headers?: Record<string, string>;
  /** The app to call (default: the shared app of the test configuration). */
  app?: App;
  /** The server context handed to `app.fetch` (e.g. a socket with its remote address). */
  serverContext?: Record<string, unknown>;
}

/** A REST or transport request; `body` is sent as JSON unless it is a string. */
export async function call(method: string, path: string, options: CallOptions = {}): Promise<Answer> {
  const headers: Record<string, string> = { ...options.headers };
  if (options.token) headers.authorization = `Bearer ${options.token}`;
  let body: string | undefined;
  if (options.body !== undefined) {
    body = typeof options.body === "string" ? options.body : JSON.stringify(options.body);
    headers["content-type"] ??= "application/json";
  }
  const target = options.app ?? app;
  const url = `http://registry.test${path}`;
  const init = { method, headers, body };
  const res = await (options.serverContext ? target.fetch(url, init, options.serverContext) : target.fetch(url, init));
  const text = await res.text();
  let parsed: unknown = text;
  try {
    parsed = JSON.parse(text);
  } catch {}
  return { status: res.status, headers: res.headers, body: parsed, text };
}

/** A GraphQL request to /graphql. */
export async function gql(
  query: string,
  variables: Record<string, unknown> = {},
  options: Omit<CallOptions, "body"> = {},
): Promise<Answer> {
  return call("POST", "/graphql", { body: { query, variables }, ...options });
}

/** Registers a provider over REST; answers its code, token and review code. */
export async function intake(overrides: Record<string, unknown> = {}) {
  const answer = await call("POST", "/api/v1/providers", { body: intakeBody(overrides) });
  if (answer.status !== 201) throw new Error(`intake failed: ${answer.status} ${answer.text}`);
  return answer.body as { providerCode: string; reviewCode: string; accessToken: string; provider: any };
}

/** A reviewer JWT for the test configuration. */
export function reviewerToken(subject = "reviewer-1", roles = ["reviewer"]): Promise<string> {
  return signReviewerToken(config, subject, { roles });
}

/** The code of a provider's active review. */
export async function activeReviewCode(providerCode: string): Promise<string> {
  const review = await db.review.findFirstOrThrow({
    where: { provider: { providerCode }, status: { in: ["OPEN", "IN_PROGRESS", "CHANGES_REQUESTED"] } },
    select: { reviewCode: true },
  });
  return review.reviewCode;
}

/** Approves a provider's intake through the review workflow, so anonymous callers can list it. */
export async function approve(providerCode: string, trustTier?: string): Promise<void> {
  const reviewCode = await activeReviewCode(providerCode);
  const answer = await call("POST", `/api/v1/reviews/${reviewCode}/decision`, {
    body: { decision: "APPROVE", note: "approved in tests", ...(trustTier ? { trustTier } : {}) },
    token: await reviewerToken("approver"),
  });
  if (answer.status !== 200) throw new Error(`approve failed: ${answer.status} ${answer.text}`);
}

/**
 * A decision's arguments with a note when it approves without one: approving an agent whose
 * endpoint's domain is not verified takes a note (src/trust/domain.*).
 */
export function withApprovalNote(args: Record<string, unknown>): Record<string, unknown> {
  return args.decision === "APPROVE" && args.note === undefined ? { ...args, note: "approved in tests" } : args;
}

/** Checks an answer is an RFC 9457 problem with this status and code, with one Content-Type. */
export function expectProblem(answer: Answer, status: number, code: string): void {
  const problem = { status: answer.status, contentType: answer.headers.get("content-type"), code: answer.body?.code };
  if (problem.status !== status || problem.contentType !== "application/problem+json" || problem.code !== code) {
    throw new Error(
      `expected a ${status} ${code} problem+json, got ${answer.status} ${problem.contentType}: ${answer.text}`,
    );
  }
  if (
    answer.body.status !== status ||
    typeof answer.body.title !== "string" ||
    typeof answer.body.detail !== "string"
  ) {
    throw new Error(`not a problem document: ${answer.text}`);
  }
}

/** The paths named by a problem's (or a GraphQL error's) `errors[]`. */
export function errorPaths(answer: Answer): string[] {
  const first = answer.body?.errors?.[0];
  const graphql = answer.body?.code === undefined && typeof first?.message === "string";
  const list = (graphql ? first.extensions?.errors : answer.body?.errors) ?? [];
  return (list as { path: string }[]).map((e) => e.path);
}

/** The `extensions.code` of each GraphQL error of an answer. */
export function gqlCodes(answer: Answer): string[] {
  return ((answer.body?.errors ?? []) as { extensions?: { code?: string } }[]).map((e) => e.extensions?.code ?? "");
}

/** How many version rows a provider has. */
export async function versionCount(providerCode: string): Promise<number> {
  return db.providerVersion.count({ where: { provider: { providerCode } } });
}

/**
 * The tables of the run's database, whichever the dialect. On SQLite, ordinary tables only: the
 * full-text index (the FTS5 virtual table `provider_search` and its shadow tables) holds nothing
 * but an index of providers columns, which are read in `providers` itself.
 */
export async function tableNames(): Promise<{ name: string }[]> {
  return dialectOf(config.databaseUrl) === "postgresql"
    ? db.$queryRawUnsafe(
        "SELECT table_name AS name FROM information_schema.tables WHERE table_schema = current_schema() AND table_type = 'BASE TABLE'",
      )
    : db.$queryRawUnsafe(
        "SELECT name FROM pragma_table_list WHERE schema = 'main' AND type = 'table' AND name NOT LIKE 'sqlite_%'",
      );
}
