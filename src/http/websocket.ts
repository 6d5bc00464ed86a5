/**
 * GraphQL over WebSocket at /graphql (the `graphql-transport-ws` protocol of `graphql-ws`), beside
 * SSE, for clients such as Apollo and urql that subscribe over a socket by default.
 *
 * Every operation runs through Yoga's envelope of the app's plugins, as an HTTP request's does: the
 * viewer (credentials), the GraphQL limits, the rate limits, masked errors, the feed. Its context is
 * built from a Request that carries what an HTTP request would: the credential the client sent in
 * `connectionParams` (`{ authorization: "Bearer …" }`, or an `Authorization` header on the upgrade
 * request) and the proxies' `X-Forwarded-For`; nothing else of the upgrade request, so that a header
 * such as `Idempotency-Key` cannot apply to every operation of a socket.
 *
 * - Credentials are verified when the connection is initialised: refused ones close the socket with
 *   4403 Forbidden, an address over its limit of failed authentications with 4429. Each operation
 *   verifies them again, so a revoked token opens nothing more on a socket that is still open.
 * - Revocation: an agent's subscriptions end when its token is revoked (the feed ends them, as it
 *   ends SSE streams); a reviewer's socket closes (4403) when its JWT expires.
 * - Limits: a message is at most MAX_BODY_BYTES (1009 Message Too Big beyond), the client has a few
 *   seconds to initialise the connection (4408), and a socket runs a bounded number of operations
 *   at once (further ones are refused with RATE_LIMITED).
 * - Draining: `close()` ends every socket with 1001 Going Away, so clients reconnect elsewhere.
 */
import type { IncomingMessage, Server } from "node:http";
import { type ExecutionArgs, GraphQLError } from "graphql";
import { CloseCode, type Context as SocketContext } from "graphql-ws";
import { useServer } from "graphql-ws/use/ws";
import { decodeJwt } from "jose";
import { type WebSocket, WebSocketServer } from "ws";
import { looksLikeApiKey } from "../apikeys/apikey.rules.ts";
import type { Context } from "../builder.ts";
import type { Config } from "../config.ts";
import { apiError, codeOf } from "../errors.ts";
import type { App } from "../yoga.ts";
import { withErrorCodes } from "./graphql.http.ts";
import { envelopeOf, keepEnvelope } from "./operation.runner.ts";

export interface WebSocketOptions {
  /** How long a client may take to send `connection_init` (graphql-ws's default, 3 s). */
  initTimeoutMs?: number;
  /** How many operations one socket may run at once. */
  maxOperations?: number;
}

export interface WebSocketDoor {
  /** Open sockets (tests). */
  readonly connections: number;
  /** Closes every socket with 1001 Going Away and accepts no more; resolves once they are closed. */
  close(): Promise<void>;
}

/** What a socket keeps between its messages. */
type Connection = {
  /** The Request its operations are made as (credentials and client address). */
  credentials?: Request;
  /** Closes it when a reviewer JWT expires. */
  expiry?: NodeJS.Timeout;
};

type Extra = { socket: WebSocket; request: IncomingMessage } & Partial<Connection>;
type Ctx = SocketContext<Record<string, unknown> | undefined, Extra>;
type Enveloped = ReturnType<App["getEnveloped"]>;

const DEFAULT_MAX_OPERATIONS = 100;
/** The longest a timer may wait (setTimeout fires at once beyond it). */
const MAX_TIMER_MS = 2 ** 31 - 1;

/**
 * The Request a socket's operations are made as, or null when `connectionParams` carry a
 * credential that is not a string or not a header value. A credential sent both ways is refused by the viewer plugin, as
 * two `Authorization` headers are (the two values make one that is no `Bearer` credential).
 */
function credentialsOf(ctx: Ctx): Request | null {
  const upgrade = ctx.extra.request;
  const params = ctx.connectionParams ?? {};
  const credential = params.authorization ?? params.Authorization;
  if (credential !== undefined && typeof credential !== "string") return null;
  const headers = new Headers();
  if (upgrade.headers.authorization !== undefined) headers.set("authorization", upgrade.headers.authorization);
  try {
    if (credential !== undefined) headers.append("authorization", credential);
  } catch {
    return null; // not a header value (a line break): no credential
  }
  const forwarded = upgrade.headers["x-forwarded-for"];
  if (forwarded !== undefined) headers.set("x-forwarded-for", String(forwarded));
  // Its origin, as Yoga derives a request's, is what links in answers are built on without PUBLIC_URL.
  const origin = `${(upgrade.socket as { encrypted?: boolean }).encrypted ? "https" : "http"}://${upgrade.headers.host}`;
  return new Request(URL.canParse(origin) ? new URL("/graphql", origin) : "http://localhost/graphql", { headers });
}

/** Errors as they travel over the socket: the contract's code, and no HTTP status or headers. */
function formatted(errors: readonly GraphQLError[]) {
  const result = { errors };
  withErrorCodes(result);
  return result.errors.map((error) => {
    const { http: _, ...extensions } = error.extensions ?? {};
    return { ...error.toJSON(), extensions };
  });
}

/** Serves graphql-ws on `server`'s upgrades to /graphql with `app`'s plugins. */
export function attachWebSocket(
  server: Server,
  app: App,
  config: Pick<Config, "maxBodyBytes" | "production">,
  options: WebSocketOptions = {},
): WebSocketDoor {
  const maxOperations = options.maxOperations ?? DEFAULT_MAX_OPERATIONS;
  const sockets = new WebSocketServer({ server, path: "/graphql", maxPayload: config.maxBodyBytes });
  // Counted open from the upgrade to the close, whatever happens between (src/metrics/).
  sockets.on("connection", (socket) => socket.once("close", app.metrics.streamOpened("websocket")));
  const envelope = (ctx: Ctx, credentials: Request, params?: unknown) =>
    app.getEnveloped({ request: credentials, req: ctx.extra.request, socket: ctx.extra.socket, params });

  const door = useServer<Record<string, unknown> | undefined, Connection>(
    {
      isProd: config.production,
      connectionInitWaitTimeout: options.initTimeoutMs ?? 3000,
      // Each operation's execute or subscribe runs in the envelope its context was built in.
      execute: (args: ExecutionArgs) => envelopeOf(args.contextValue).execute(args),
      subscribe: (args: ExecutionArgs) => envelopeOf(args.contextValue).subscribe(args),

      async onConnect(ctx) {
        const credentials = credentialsOf(ctx);
        if (!credentials) return false;
        let context: Context;
        try {
          context = (await envelope(ctx, credentials).contextFactory()) as unknown as Context;
        } catch (error) {
          if (codeOf(error) === "RATE_LIMITED") {
            // Closed here with its own code and words; graphql-ws's close (Forbidden) then does nothing.
            ctx.extra.socket.close(CloseCode.TooManyInitialisationRequests, (error as GraphQLError).message);
          } else if (codeOf(error) !== "UNAUTHENTICATED" && codeOf(error) !== "FORBIDDEN") {
            throw error;
          }
          return false;
        }
        ctx.extra.credentials = credentials;
        const token = (credentials.headers.get("authorization") ?? "").replace(/^Bearer\s+/i, "");
        // A reviewer, or a reader with an access token (an API key is not a JWT): verified above, so a JWT with an `exp`.
        if (context.viewer.kind === "reviewer" || (context.viewer.kind === "reader" && !looksLikeApiKey(token))) {
          const expiresAt = (decodeJwt(token).exp ?? 0) * 1000;
          const arm = () => {
            const left = expiresAt - Date.now();
            ctx.extra.expiry =
              left > MAX_TIMER_MS
                ? setTimeout(arm, MAX_TIMER_MS)
                : setTimeout(() => ctx.extra.socket.close(CloseCode.Forbidden, "Credentials expired"), left);
          };
          arm();
        }
        return true;
      },

      onClose(ctx) {
        clearTimeout(ctx.extra.expiry);
      },

      async onSubscribe(ctx, _id, payload) {
        // The operation being subscribed is counted already.
        if (Object.keys(ctx.subscriptions).length > maxOperations) {
          return [apiError("RATE_LIMITED", `At most ${maxOperations} operations may run at once on one connection`)];
        }
        const run = envelope(ctx, ctx.extra.credentials as Request, payload);
        let document: ReturnType<Enveloped["parse"]>;
        try {
          document = run.parse(payload.query);
        } catch (error) {
          if (error instanceof GraphQLError) return [error];
          throw error;
        }
        const invalid = run.validate(run.schema, document);
        if (invalid.length > 0) return invalid;
        let contextValue: object;
        try {
          contextValue = await run.contextFactory();
        } catch (error) {
          // Credentials that no longer verify (a revoked token), or an address over its limit.
          if (error instanceof GraphQLError) return [error];
          throw error;
        }
        keepEnvelope(contextValue, run);
        return {
          schema: run.schema,
          document,
          operationName: payload.operationName,
          variableValues: payload.variables,
          contextValue,
        };
      },

      onNext: (_ctx, _id, _payload, _args, result) =>
        result.errors ? { ...result, errors: formatted(result.errors) } : undefined,
      onError: (_ctx, _id, _payload, errors) => formatted(errors),
    },
    sockets,
  );

  return {
    get connections() {
      return sockets.clients.size;
    },
    close: () => door.dispose() as Promise<void>,
  };
}
