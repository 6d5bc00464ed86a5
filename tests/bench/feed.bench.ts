/**
 * The feed's fan-out, for `npm run bench` (op `feed`): `subscribers` SSE streams open on one
 * replica, then one agent's profile is PATCHed `events` times, evenly spaced; each stream records
 * when each change reached it. The latency of a (change, subscriber) pair is from the moment the
 * PATCH was sent to the moment its message arrived; the figure is its p50/p99 over all pairs.
 * `warmup` changes go first, unrecorded, as every other cell has its warm-up: the first changes a
 * process fans out run code V8 has not optimised yet (docs/performance.md).
 */
import http from "node:http";

export interface FeedSample {
  subscribers: number;
  events: number;
  /** Pairs (event, subscriber) that arrived, of events × subscribers. */
  delivered: number;
  p50: number;
  p99: number;
  max: number;
}

function quantile(sorted: number[], q: number): number {
  if (sorted.length === 0) return Number.NaN;
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil(q * sorted.length) - 1))] as number;
}

export async function benchFeed(options: {
  url: string;
  reviewer: string;
  owner: { code: string; token: string };
  subscribers: number;
  events: number;
  /** Unrecorded changes before them, at the same rate. */
  warmup: number;
  /** Changes per second. */
  rate: number;
}): Promise<FeedSample> {
  const { url, owner } = options;
  // One connection per stream, as a thousand separate clients would have.
  const agent = new http.Agent({ keepAlive: true, maxSockets: options.subscribers + 16 });
  const sentAt = new Map<string, number>();
  const latencies: number[] = [];
  const query = `subscription ($c: String) { feed(providerCode: $c, kinds: [PROVIDER_UPDATED]) { seq patch { value } } }`;
  const requests: http.ClientRequest[] = [];
  const ready: Promise<void>[] = [];
  const body = JSON.stringify({ query, variables: { c: owner.code } });
  for (let i = 0; i < options.subscribers; i++) {
    ready.push(
      new Promise<void>((resolve, reject) => {
        const request = http.request(
          `${url}/graphql`,
          {
            method: "POST",
            agent,
            headers: {
              accept: "text/event-stream",
              "content-type": "application/json",
              authorization: `Bearer ${options.reviewer}`,
            },
          },
          (response) => {
            if (response.statusCode !== 200) reject(new Error(`feed: ${response.statusCode}`));
            else resolve();
            response.setEncoding("utf8");
            response.on("data", (text: string) => {
              const now = performance.now();
              for (const match of text.matchAll(/"value":"(feed-bench-\d+)"/g)) {
                const sent = sentAt.get(match[1] as string);
                if (sent !== undefined) latencies.push(now - sent);
              }
            });
            response.on("error", () => {});
          },
        );
        request.on("error", (error) => reject(error));
        request.end(body);
        requests.push(request);
      }),
    );
  }
  await Promise.all(ready);
  // Every stream is open (its headers came after its start was fixed): let the server settle.
  await new Promise((r) => setTimeout(r, 1000));
  const gap = 1000 / options.rate;
  const start = performance.now();
  const writes: Promise<unknown>[] = [];
  for (let i = 0; i < options.warmup + options.events; i++) {
    const due = start + i * gap;
    const wait = due - performance.now();
    if (wait > 0) await new Promise((r) => setTimeout(r, wait));
    // Only the recorded changes' markers match what the streams look for.
    const marker = i < options.warmup ? `feed-warmup-${i}` : `feed-bench-${i - options.warmup}`;
    sentAt.set(marker, performance.now());
    writes.push(
      fetch(`${url}/api/v1/providers/${owner.code}`, {
        method: "PATCH",
        headers: { "content-type": "application/json", authorization: `Bearer ${owner.token}` },
        body: JSON.stringify({ summary: marker }),
      }).then(async (r) => {
        await r.arrayBuffer();
        if (r.status !== 200) throw new Error(`PATCH ${r.status}`);
      }),
    );
  }
  await Promise.all(writes);
  // The last changes' messages are on their way.
  for (let i = 0; i < 50 && latencies.length < options.events * options.subscribers; i++) {
    await new Promise((r) => setTimeout(r, 100));
  }
  for (const request of requests) request.destroy();
  agent.destroy();
  const sorted = [...latencies].sort((a, b) => a - b);
  return {
    subscribers: options.subscribers,
    events: options.events,
    delivered: latencies.length,
    p50: quantile(sorted, 0.5),
    p99: quantile(sorted, 0.99),
    max: sorted[sorted.length - 1] ?? Number.NaN,
  };
}
