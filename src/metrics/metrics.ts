/**
 * The app's Prometheus metrics, answered at GET /metrics (metrics.route.ts). Each app has a registry
 * of its own, never prom-client's global one, so that the apps of one process (tests make many)
 * count apart. The process's own metrics (CPU, memory, heap, event loop delay, GC) are one set per
 * process, shown beside every app's.
 *
 * Gauges are read when Prometheus scrapes (`gauge`), never kept up to date between scrapes: what
 * costs a query costs it once per scrape, not per change.
 */
import { Counter, collectDefaultMetrics, Gauge, Histogram, Registry } from "prom-client";
import { type Db, poolUsage } from "../db/client.ts";
import { pendingDeliveries } from "../webhooks/webhook.store.ts";
import { type ObserveRequest, recordRequests } from "./metrics.requests.ts";
import { CHECK_OUTCOMES, outcomeLabel, STREAM_KINDS, type StreamKind } from "./metrics.rules.ts";

/** One value of a gauge: its labels (values from code, never from a caller) and its number. */
export interface GaugeSample {
  labels: Record<string, string>;
  value: number;
}

export interface Metrics {
  /** METRICS: when off, every method does nothing and /metrics is not answered. */
  readonly enabled: boolean;
  /**
   * A request answered: `route` is the request log's pattern (`routeOf`, or the REST guard's), null
   * when it matched none. Route, method and status are clamped to known values (metrics.rules.ts).
   */
  observeRequest: ObserveRequest;
  /** A health check done: its outcome (UP, AUTH_REQUIRED, WRONG_PROTOCOL, DOWN or UNKNOWN) and how long it took. */
  observeCheck(outcome: string, seconds: number): void;
  /**
   * Registers a gauge whose samples `collect` answers at each scrape. A gauge that cannot be read
   * (its query fails) is left out of that scrape and logged; the rest is still answered.
   */
  gauge(
    name: string,
    help: string,
    labelNames: readonly string[],
    collect: () => readonly GaugeSample[] | Promise<readonly GaugeSample[]>,
  ): void;
  /** A stream (SSE, WebSocket) opened: counted until the function it answers is called (once is enough). */
  streamOpened(kind: StreamKind): () => void;
  /** Every metric, the app's and the process's, in Prometheus' text format. */
  scrape(): Promise<string>;
  /** The Content-Type of what `scrape` answers. */
  readonly contentType: string;
}

/** Upper bounds of the health check duration buckets, in seconds (a check's deadline is HEALTH_TIMEOUT_MS). */
const CHECK_BUCKETS = [0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30];

let processRegistry: Registry | undefined;
/**
 * The process's metrics, set up once: each set keeps a GC observer and an event loop monitor running,
 * which one per app would multiply for nothing. The monitor samples the loop's delay every 50 ms, not
 * prom-client's 10: at 10 it cost an idle process 1% of a core (docs/performance.md).
 */
function processMetrics(): Registry {
  if (!processRegistry) {
    processRegistry = new Registry();
    collectDefaultMetrics({ register: processRegistry, eventLoopMonitoringPrecision: 50 });
  }
  return processRegistry;
}

const nothing = () => {};

/** What an app with METRICS=off has: nothing counted, nothing kept. */
const OFF: Metrics = Object.freeze({
  enabled: false,
  observeRequest: nothing,
  observeCheck: nothing,
  gauge: nothing,
  streamOpened: () => nothing,
  scrape: async () => "",
  contentType: Registry.PROMETHEUS_CONTENT_TYPE,
});

/**
 * The metrics of an app. With `db`, the built-in gauges of the database's connections and of the
 * webhook backlog are registered too.
 */
export function createMetrics(options: {
  enabled: boolean;
  db?: Db;
  log?: (line: Record<string, unknown>) => void;
}): Metrics {
  if (!options.enabled) return OFF;
  const log = options.log ?? nothing;
  const registry = new Registry();
  const proc = processMetrics();

  const gauge: Metrics["gauge"] = (name, help, labelNames, collect) => {
    new Gauge({
      name,
      help,
      labelNames: [...labelNames],
      registers: [registry],
      async collect() {
        let samples: readonly GaugeSample[] = [];
        try {
          samples = await collect();
        } catch (error) {
          log({
            time: new Date().toISOString(),
            level: "warn",
            msg: "metrics: a gauge could not be read",
            gauge: name,
            error: (error as Error)?.message ?? String(error),
          });
        }
        // Only what was read now: a gauge without labels has no value rather than a stale or a zero one.
        this.reset();
        if (labelNames.length === 0) this.remove();
        for (const { labels, value } of samples) this.set(labels, value);
      },
    });
  };

  const observeRequest = recordRequests(registry);

  const checks = new Counter({
    name: "registry_health_checks_total",
    help: "Health checks of agents' endpoints, by outcome",
    labelNames: ["outcome"],
    registers: [registry],
  });
  const checkDurations = new Histogram({
    name: "registry_health_check_duration_seconds",
    help: "How long a health check of an agent's endpoint took, by outcome",
    labelNames: ["outcome"],
    buckets: CHECK_BUCKETS,
    registers: [registry],
  });
  // Every outcome from the start, so that a rate over the first checks has a zero to start from.
  for (const outcome of CHECK_OUTCOMES) {
    checks.inc({ outcome }, 0);
    checkDurations.zero({ outcome });
  }

  const open: Record<StreamKind, number> = { sse: 0, websocket: 0 };
  gauge("registry_open_streams", "Streams open now: SSE subscriptions and WebSocket connections", ["kind"], () =>
    STREAM_KINDS.map((kind) => ({ labels: { kind }, value: open[kind] })),
  );

  const db = options.db;
  if (db) {
    gauge(
      "registry_db_pool_connections",
      "Database connections by state: PostgreSQL's two pools together, or SQLite's one connection",
      ["state"],
      () => {
        const usage = poolUsage(db);
        return usage
          ? [
              { labels: { state: "in_use" }, value: usage.inUse },
              { labels: { state: "idle" }, value: usage.idle },
            ]
          : [];
      },
    );
    gauge("registry_db_pool_waiting", "Callers waiting for a database connection", [], () => {
      const usage = poolUsage(db);
      return usage ? [{ labels: {}, value: usage.waiting }] : [];
    });
    gauge("registry_webhook_backlog", "Webhook deliveries still to be made (PENDING)", [], async () => [
      { labels: {}, value: await pendingDeliveries(db) },
    ]);
  }

  return {
    enabled: true,
    observeRequest,
    observeCheck(outcome, seconds) {
      const labels = { outcome: outcomeLabel(outcome) };
      checks.inc(labels);
      if (seconds >= 0 && seconds < Number.POSITIVE_INFINITY) checkDurations.observe(labels, seconds);
    },
    gauge,
    streamOpened(kind) {
      open[kind]++;
      let closed = false;
      return () => {
        if (closed) return;
        closed = true;
        open[kind]--;
      };
    },
    async scrape() {
      const [own, process] = await Promise.all([registry.metrics(), proc.metrics()]);
      return `${own}\n${process}`;
    },
    contentType: registry.contentType,
  };
}
