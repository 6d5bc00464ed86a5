/**
 * Requests by route, method and status, and how long they took: counted in plain maps and arrays as
 * each is answered, handed to prom-client only when Prometheus scrapes. prom-client's own counter and
 * histogram build a string of their labels on every observation: ~1.5 µs a request here, several per
 * cent of a response-cache hit (docs/performance.md); this is a few map look-ups.
 */
import { Counter, type Metric, type Registry } from "prom-client";
import { methodLabel, routeLabel, statusKey, statusLabel } from "./metrics.rules.ts";

/** Upper bounds of the duration buckets, in seconds: a cache hit takes well under a millisecond, a write a few. */
export const REQUEST_BUCKETS: readonly number[] = [
  0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10,
];

/** One route and method's requests. */
interface Series {
  route: string;
  method: string;
  /** Requests by status key (metrics.rules.ts). */
  statuses: Map<number, number>;
  /** Durations by bucket, not cumulative; the last one is above every bound. */
  buckets: number[];
  sum: number;
  count: number;
}

export type ObserveRequest = (route: string | null, method: string, status: number, seconds: number) => void;

/**
 * Registers `registry_http_requests_total{route,method,status}` and
 * `registry_http_request_duration_seconds{route,method}` and answers what records a request into them.
 * A duration that is not a finite number of seconds is counted without being timed.
 */
export function recordRequests(registry: Registry): ObserveRequest {
  const byRoute = new Map<string, Map<string, Series>>();
  const everySeries = function* () {
    for (const byMethod of byRoute.values()) yield* byMethod.values();
  };

  new Counter({
    name: "registry_http_requests_total",
    help: "HTTP requests answered, by route pattern, method and status",
    labelNames: ["route", "method", "status"],
    registers: [registry],
    collect() {
      this.reset();
      for (const s of everySeries()) {
        for (const [status, count] of s.statuses) {
          this.inc({ route: s.route, method: s.method, status: statusLabel(status) }, count);
        }
      }
    },
  });

  // A histogram read from the series: prom-client's Histogram has no way to be given its counts.
  const name = "registry_http_request_duration_seconds";
  const help = "Time from a request's arrival to its answer's headers, by route pattern and method";
  const durations = {
    name,
    help,
    type: "histogram",
    aggregator: "sum",
    async get() {
      const values: { metricName: string; labels: Record<string, string | number>; value: number }[] = [];
      for (const s of everySeries()) {
        let cumulative = 0;
        for (let i = 0; i <= REQUEST_BUCKETS.length; i++) {
          cumulative += s.buckets[i] as number;
          const le = i < REQUEST_BUCKETS.length ? String(REQUEST_BUCKETS[i]) : "+Inf";
          values.push({
            metricName: `${name}_bucket`,
            labels: { route: s.route, method: s.method, le },
            value: cumulative,
          });
        }
        values.push({ metricName: `${name}_sum`, labels: { route: s.route, method: s.method }, value: s.sum });
        values.push({ metricName: `${name}_count`, labels: { route: s.route, method: s.method }, value: s.count });
      }
      return { name, help, type: durations.type, aggregator: durations.aggregator, values };
    },
    reset() {
      for (const s of everySeries()) {
        s.buckets.fill(0);
        s.sum = 0;
        s.count = 0;
      }
    },
  };
  registry.registerMetric(durations as unknown as Metric);

  return (route, method, status, seconds) => {
    const routeKey = routeLabel(route);
    let byMethod = byRoute.get(routeKey);
    if (byMethod === undefined) {
      byMethod = new Map();
      byRoute.set(routeKey, byMethod);
    }
    const methodKey = methodLabel(method);
    let s = byMethod.get(methodKey);
    if (s === undefined) {
      s = {
        route: routeKey,
        method: methodKey,
        statuses: new Map(),
        buckets: new Array<number>(REQUEST_BUCKETS.length + 1).fill(0),
        sum: 0,
        count: 0,
      };
      byMethod.set(methodKey, s);
    }
    const key = statusKey(status);
    s.statuses.set(key, (s.statuses.get(key) ?? 0) + 1);
    if (!(seconds >= 0 && seconds < Number.POSITIVE_INFINITY)) return;
    let bucket = 0;
    while (bucket < REQUEST_BUCKETS.length && seconds > (REQUEST_BUCKETS[bucket] as number)) bucket++;
    s.buckets[bucket] = (s.buckets[bucket] as number) + 1;
    s.sum += seconds;
    s.count++;
  };
}
