/**
 * The application: graphql-yoga with its plugins, in the order a request meets them. It never
 * listens (main.ts does; tests call `yoga.fetch`).
 */

import { GraphQLError } from "graphql";
import { createYoga } from "graphql-yoga";
import type { AppState } from "./app.state.ts";
import { credentials, useViewer } from "./auth/viewer.plugin.ts";
import type { Context, ResponseBag } from "./builder.ts";
import type { Config } from "./config.ts";
import type { Db } from "./db/client.ts";
import { apiError, codeOf } from "./errors.ts";
import { useFeedFanOut } from "./feed/feed.fanout.ts";
import type { FeedNote } from "./feed/feed.outbox.ts";
import { createFeed, useFeed } from "./feed/feed.pubsub.ts";
import { useFeedSse } from "./feed/feed.sse.ts";
import { countByState } from "./health/health.store.ts";
import { createResponseCache } from "./http/cache/cache.plugin.ts";
import { withNodeCache } from "./http/cache/node.front.ts";
import { useCompression } from "./http/compression.ts";
import { useCors } from "./http/cors.ts";
import { requestIdFor, useHttpEdge } from "./http/edge.plugin.ts";
import { useErrorCodes, useGraphqlGetParams, useGraphqlPost } from "./http/graphql.http.ts";
import { useCompiledExecution } from "./http/jit.plugin.ts";
import { routeOf, writeLogLine } from "./http/request.log.ts";
import { useRest } from "./http/rest/rest.plugin.ts";
import { useValidText } from "./http/text.plugin.ts";
import { useTransportRoutes } from "./http/transport.plugin.ts";
import { useVariableErrorsWithoutValues } from "./http/variable.errors.ts";
import { useIdempotency } from "./idempotency/idempotency.plugin.ts";
import { useGraphqlLimits } from "./limits/graphql.limits.ts";
import { credentialGuard, useLimits } from "./limits/limits.plugin.ts";
import { createLimits, type Limits } from "./limits/rate.limits.ts";
import { useMetricsRoute } from "./metrics/metrics.route.ts";
import { createMetrics } from "./metrics/metrics.ts";
import { registerMirrorMetrics } from "./mirror/mirror.metrics.ts";
import { createOutbound } from "./outbound/outbound.ts";
import { schema } from "./schema.ts";
import { useSignInRoutes } from "./signin/signin.routes.ts";
import { useWebPages } from "./web/web.plugin.ts";

/** The JSON line logger of a configuration. */
function logger(config: Config): (line: Record<string, unknown>) => void {
  return config.logLevel === "silent" ? () => {} : writeLogLine;
}

/**
 * The app for a configuration and a database. `limits` defaults to the set the configuration asks
 * for (off in tests); the app owns it: `app.dispose()` closes its Redis client.
 */
export function createApp(
  config: Config,
  db: Db,
  state: AppState = { draining: false },
  limits: Limits = createLimits(config, logger(config)),
) {
  const log = logger(config);
  // Whatever was not raised as an API error is internal: logged, never shown.
  const maskError = (error: unknown): GraphQLError => {
    if (error instanceof GraphQLError && codeOf(error) !== "INTERNAL") return error;
    log({
      time: new Date().toISOString(),
      level: "error",
      msg: "internal error",
      error: String((error as Error)?.stack ?? error),
    });
    return apiError("INTERNAL", "Internal server error");
  };
  // Anonymous answers of public reads, kept until the next write (src/http/cache/).
  const cache = createResponseCache({
    enabled: config.responseCache,
    redisUrl: config.redisUrl,
    keyPrefix: config.responseCacheKeyPrefix,
    log,
  });
  // The change feed (src/feed): the event log streamed, replicas woken through Redis.
  const feed = createFeed({
    db,
    redisUrl: config.redisUrl,
    channel: config.feedChannel,
    pollMs: config.events.pollMs,
    log,
    state,
  });
  // One door per app, so its concurrency cap holds across requests; the prober has its own, so
  // probes never queue ahead of webhooks, sign-ins or domain checks.
  const outbound = createOutbound(config.outbound);
  // Prometheus metrics (src/metrics/): a registry of this app's own; off, nothing is counted.
  const metrics = createMetrics({ enabled: config.metrics.enabled, db, log });
  metrics.gauge("registry_agents_by_health_state", "Agents per confirmed health state", ["state"], async () =>
    [...(await countByState(db))].map(([state, value]) => ({ labels: { state }, value })),
  );
  const health: Context["health"] = { outbound: createOutbound(config.health.outbound), metrics };
  const mirror: Context["mirror"] = { outbound: createOutbound(config.mirror.outbound), kick: () => undefined };
  registerMirrorMetrics(metrics, db);
  // Who is asking: read by the viewer, and by the sign-in routes (people's sessions, src/signin/).
  const callers = credentials(config, db, outbound);
  const guard = credentialGuard(limits, config.trustProxy);
  // The pages render from the app's own REST reads (src/web/render/): the app, once it exists.
  let self: ((request: Request) => Promise<Response>) | undefined;
  const yoga = createYoga<Record<string, unknown>, Context>({
    schema,
    graphqlEndpoint: "/graphql",
    landingPage: false,
    // Yoga's own health check answers any URL that ends with its path (it would swallow
    // /api/v1/health); no URL ends with a NUL, so this turns it off: /health is ours.
    healthCheckEndpoint: "\u0000",
    batching: false,
    // Bodies are JSON only (the edge answers anything else 415): no multipart parser to ask.
    multipart: false,
    // Parsed documents are cached by Yoga; validation verdicts by document (graphql.limits.ts).
    parserAndValidationCache: { validationCache: false },
    // The edge (edge.plugin.ts) enforces the configured limit before Yoga reads a byte; Yoga's own
    // limit would pipe the bytes through a stream again (~10% of a POST's CPU).
    maxRequestBodySize: false,
    logging: config.logLevel === "silent" ? false : "warn",
    // GraphiQL is served by the web pages (src/web/graphiql.ts) as a small page and cacheable
    // assets, loaded when first asked for; Yoga's renderer would inline all 9 MB into every answer.
    graphiql: false,
    maskedErrors: { maskError },
    // CORS is ours (src/http/cors.ts): off unless CORS_ORIGINS lists origins.
    cors: false,
    // The response bag lives on the server context (edge.plugin.ts) so the edge can apply it. What
    // this returns is assigned onto the context, so it names only what it adds: a literal that
    // spreads and then adds keeps every request's objects alive until a major GC on Node 20
    // (docs/architecture.md, "Hot objects are plain").
    context: (initial) =>
      ({
        db,
        config,
        outbound,
        health,
        mirror,
        response: (initial.response as ResponseBag | undefined) ?? { headers: new Map() },
      }) as unknown as Context,
    plugins: [
      useHttpEdge({
        log,
        maxBodyBytes: config.maxBodyBytes,
        cacheMaxAge: config.httpCacheMaxAge,
        publicUrl: config.publicUrl,
        metrics,
      }),
      ...useCors(config.corsOrigins),
      cache.plugin,
      // After the cache's: it keeps an answer as made, and each is compressed as its request accepts.
      useCompression(),
      useTransportRoutes({ db, state, config }),
      useMetricsRoute(metrics, config.metrics.token, guard),
      // /auth/*: people sign in where OIDC_ISSUER and OIDC_CLIENT_ID are set; else only
      // /auth/session answers, saying that they cannot.
      useSignInRoutes({
        db,
        signIn: config.signIn,
        sessions: callers.sessions,
        accessTokens: config.accessTokens,
        outbound,
        guard,
        log,
      }),
      useWebPages({
        log,
        graphiql: config.graphiql,
        signInIssuer: config.signIn?.issuer,
        app: (request) => (self as NonNullable<typeof self>)(request),
      }),
      useGraphqlGetParams,
      useViewer(callers, config, guard),
      // Every operation, /graphql or a REST route's, meets the GraphQL limits first, then the check
      // of its text, then its Idempotency-Key (a replay or a refusal costs no intake), then the rate limits.
      ...useGraphqlLimits(config.graphqlLimits, { graphiql: config.graphiql }),
      useValidText,
      // Before anything that keeps an answer: a variable's refused value is never quoted back.
      useVariableErrorsWithoutValues,
      useIdempotency(log),
      useLimits(limits, config.trustProxy),
      // Sets the execute function that the feed then wraps (with its outbox): before it.
      useCompiledExecution(),
      useFeed(feed),
      useFeedSse({ onOpen: () => metrics.streamOpened("sse") }),
      useFeedFanOut(),
      ...useRest(),
      // Last of the plugins that answer from onRequest: the common /graphql request.
      useGraphqlPost({ endpoint: "/graphql", maskError }),
      useErrorCodes,
    ],
  });
  // node:http hands requests to the app as `app(req, res)` (main.ts): a cache hit is answered there,
  // before Yoga builds a fetch Request — with the same request id and log line as any answer.
  const app = withNodeCache(yoga, cache, {
    requestId: requestIdFor,
    logLine: ({ requestId, method, path, operation, status, ms }) => {
      const route = routeOf(path);
      metrics.observeRequest(route, method, status, ms / 1000);
      log({
        time: new Date().toISOString(),
        level: "info",
        requestId,
        method,
        route,
        operation,
        status,
        ms: Math.round(ms * 10) / 10,
      });
    },
  });
  self = async (request) => app.fetch(request);
  return Object.assign(app, {
    /** The app's metrics: the workers main.ts starts report through it (`observeCheck`, `gauge`). */
    metrics,
    /** The app's outbound door, for work outside requests (the domain re-checks, main.ts). */
    outbound,
    /** The app's change feed: its tail of the log is what the webhooks follow (main.ts). */
    feed,
    /** The prober's door, for the prober main.ts starts. */
    health,
    /** The mirror's door and its wake-up: main.ts points `kick` at the worker it starts. */
    mirror,
    /** Publishes writes made outside a request (the domain re-checks): the cache forgets, the feed announces. */
    async announce(notes: FeedNote[]): Promise<void> {
      await cache.forget(notes);
      await feed.announce(notes);
    },
  });
}

export type App = ReturnType<typeof createApp>;
