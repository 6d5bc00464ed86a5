/**
 * The benchmark's PostGraphile v5 peer (tests/bench/peer/postgraphile.ts): an automatic GraphQL
 * API over the registry's PostgreSQL tables, on node:http through grafserv's node adapter.
 *
 * Plain JavaScript, copied by `installPeer` into data/bench/postgraphile/ next to the
 * node_modules it imports from, and run there as
 *   node --single-threaded-gc data/bench/postgraphile/postgraphile.server.mjs
 * with env PORT, HOST, DATABASE_URL and DATABASE_POOL_SIZE (the pg pool's max, default 10).
 *
 * Loads the connection filter plugin and @graphile/pg-aggregates (the facets' groupedAggregates).
 * Serves `POST /graphql` only. Readiness: `POST /graphql` with `{"query":"{__typename}"}` answers
 * 200 once the schema is built (the server listens only after that). SIGTERM (and SIGINT) close the
 * server and the pool, then the process exits 0.
 *
 * Production settings: no GraphiQL (Ruru), no GraphQL over GET, no watch mode, no websockets or
 * pub/sub, no explain, Grafast in production mode (GRAPHILE_ENV=production, whatever NODE_ENV
 * is), no per-request logging (grafserv logs only masked errors).
 */

// PostGraphile v5's packages (grafast, grafserv, @dataplan/pg) declare node >= 22 and call
// Promise.withResolvers (ES2024), which Node 20 lacks: define it before they load, hence the
// dynamic imports below (static imports would be evaluated before this line).
if (typeof Promise.withResolvers !== "function") {
  Object.defineProperty(Promise, "withResolvers", {
    configurable: true,
    writable: true,
    value: function withResolvers() {
      let resolve;
      let reject;
      const promise = new this((res, rej) => {
        resolve = res;
        reject = rej;
      });
      return { promise, resolve, reject };
    },
  });
}

// Until PostGraphile is loaded a signal just exits; from then on stop() (below) releases it first.
let onSignal = () => process.exit(0);
process.once("SIGTERM", () => void onSignal("SIGTERM"));
process.once("SIGINT", () => void onSignal("SIGINT"));

// Grafast reads its mode when it loads: production, even when the bench's env says NODE_ENV=test.
process.env.GRAPHILE_ENV = "production";

const { createServer } = await import("node:http");
const { postgraphile } = await import("postgraphile");
const { grafserv } = await import("postgraphile/grafserv/node");
const { makePgService } = await import("postgraphile/adaptors/pg");
const { PostGraphileAmberPreset } = await import("postgraphile/presets/amber");
const { jsonPgSmartTags } = await import("postgraphile/utils");
const { PostGraphileConnectionFilterPreset } = await import("postgraphile-plugin-connection-filter");
const { PgAggregatesPreset } = await import("@graphile/pg-aggregates");

const port = Number(process.env.PORT ?? 5678);
const host = process.env.HOST ?? "127.0.0.1";
const databaseUrl = process.env.DATABASE_URL;
if (!databaseUrl) throw new Error("DATABASE_URL is required");
const poolSize = Number(process.env.DATABASE_POOL_SIZE ?? 10);
if (!Number.isInteger(poolSize) || poolSize < 1) throw new Error("DATABASE_POOL_SIZE must be a positive whole number");

/**
 * Smart tags, telling PostGraphile what the database holds but its introspection misses:
 * - `providers."providerCode"` is unique by a unique INDEX (as Prisma's migrations make them), not
 *   a unique constraint, and PostGraphile derives `providerByProviderCode` from constraints only:
 *   `@unique providerCode` gives that look-up (PgFakeConstraintsPlugin), on the same index.
 * - PostGraphile offers filters and orders only on indexed columns (PgIndexBehaviorsPlugin);
 *   `providers.lifecycle` has no index of its own, yet the service's lists filter on it (ACTIVE or
 *   DEPRECATED), as PostgreSQL does on the rows an index finds: mark it filterable, nothing else.
 * - The facets group by `publisherVerified` and by the endpoint's protocol; both are in the
 *   service's facets index (providers_facets_idx) but lead no index, so they are marked indexed
 *   too; `endpoint` is jsonb, which the filter plugin leaves out unless the behaviour asks for it,
 *   for its `contains` (one count per protocol: groupedAggregates cannot group by a JSON member).
 */
const RegistryTagsPlugin = jsonPgSmartTags({
  version: 1,
  config: {
    class: { providers: { tags: { unique: "providerCode" } } },
    attribute: {
      "providers.lifecycle": { tags: { isIndexed: true } },
      "providers.publisherVerified": { tags: { isIndexed: true } },
      "providers.endpoint": { tags: { isIndexed: true, behavior: "+attribute:filterBy" } },
    },
  },
});

/**
 * A full-text operator on tsvector columns, `searchVector: { matches: "word:*" }`, as the
 * connection filter's docs show adding one (addConnectionFilterOperator): the service's own match,
 * `"searchVector" @@ to_tsquery('simple', provider_search_fold(…))`, on the same GIN index. The
 * plugin has no full-text operator of its own (tsvector gets equality only).
 */
const FullTextMatchesPlugin = {
  name: "BenchFullTextMatchesPlugin",
  version: "1.0.0",
  schema: {
    hooks: {
      init(_, build) {
        const { sql } = build;
        const { TYPES } = build.dataplanPg;
        build.addConnectionFilterOperator("TSVector", "matches", {
          description: "Matches the to_tsquery('simple', …) of this text, accents folded as the registry folds them.",
          resolveInputCodec: () => TYPES.text,
          resolve: (column, value) => sql`${column} @@ to_tsquery('simple', provider_search_fold(${value}))`,
        });
        return _;
      },
    },
  },
};

const pgService = makePgService({
  connectionString: databaseUrl,
  schemas: ["public"],
  poolConfig: { max: poolSize },
  // No subscriptions: no LISTEN client.
  pubsub: false,
});

/** @type {GraphileConfig.Preset} */
const preset = {
  extends: [PostGraphileAmberPreset, PostGraphileConnectionFilterPreset, PgAggregatesPreset],
  plugins: [RegistryTagsPlugin, FullTextMatchesPlugin],
  pgServices: [pgService],
  schema: {
    // `filter: { providerLabelsByProviderId: { some: … } }`: the label filter, an EXISTS.
    connectionFilterRelations: true,
  },
  grafast: { explain: false },
  grafserv: {
    port,
    host,
    graphqlPath: "/graphql",
    graphqlOverGET: false,
    graphiql: false,
    graphiqlOnGraphQLGET: false,
    watch: false,
    websockets: false,
  },
};

const pgl = postgraphile(preset);

/** The HTTP server, once listening. SIGTERM (or SIGINT) closes it, then the instance and the pool. */
let server = null;
let stopping = false;
async function stop(signal) {
  if (stopping) return;
  stopping = true;
  const timer = setTimeout(() => {
    process.stderr.write(`postgraphile peer: ${signal}: not closed after 5 s, exiting\n`);
    process.exit(0);
  }, 5_000);
  timer.unref();
  if (server) {
    const closing = server;
    await new Promise((resolve) => {
      closing.close(() => resolve(undefined));
      closing.closeIdleConnections?.();
    });
  }
  // The instance releases its grafserv; the pool is the service's, released last.
  try {
    await pgl.release();
    await pgService.release?.();
  } catch (error) {
    process.stderr.write(`postgraphile peer: ${signal}: releasing failed: ${error}\n`);
  }
  process.stderr.write(`postgraphile peer: ${signal}: stopped\n`);
  process.exit(0);
}
onSignal = stop;

// Build the schema before listening, so that the first answer to the probe means ready. A signal
// meanwhile stops the start (stop() exits once the instance is released).
await pgl.getSchema();
if (!stopping) {
  const serv = pgl.createServ(grafserv);
  const http = createServer();
  await serv.addTo(http, false);
  await new Promise((resolve, reject) => {
    http.once("error", reject);
    http.listen(port, host, () => resolve(undefined));
  });
  server = http;
  process.stderr.write(`postgraphile peer listening on http://${host}:${port}/graphql (pool ${poolSize})\n`);
}
