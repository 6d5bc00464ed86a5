/**
 * Starts the service: reads the configuration, migrates the database, listens, and drains on
 * SIGTERM (API.md §6; the timing is `config.drain`, see DrainConfig in config.ts):
 * 1. readiness (/ready) answers 503 at once, and every answer from then on says `Connection: close`;
 *    WebSockets are closed (1001) and no more are accepted;
 * 2. after DRAIN_DELAY_MS (default 0) the listener closes: new connections are refused, idle
 *    keep-alive connections are closed, requests in flight run to the end;
 * 3. when the last connection has closed, the app and the database are closed and the process exits 0;
 *    if DRAIN_TIMEOUT_MS passes first, what is left is cut and the process exits 1 (a drain that did
 *    not finish is worth telling the orchestrator about).
 */
import { createServer, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { setFlagsFromString } from "node:v8";
import { loadConfig } from "./config.ts";
import { openDb } from "./db/client.ts";
import { migrate } from "./db/migrate.ts";
import { startRetention } from "./events/event.retention.ts";
import { startProber } from "./health/health.worker.ts";
import { writeLogLine } from "./http/request.log.ts";
import { attachWebSocket } from "./http/websocket.ts";
import { declareSources, startMirrorThread } from "./mirror/mirror.worker.ts";
import { startRechecks } from "./trust/domain.recheck.ts";
import { webBundle } from "./web/web.bundle.ts";
import { startWebhooks } from "./webhooks/webhook.delivery.ts";
import { createApp } from "./yoga.ts";

// V8 "pretenures" an allocation site, allocating its objects straight into the old generation from
// then on, when most of them survived young-generation collections. The first requests after a
// start are slow (code not compiled yet), so the objects of the request path survive then, and V8
// pins their sites in the old generation for good; every later request fills the old generation,
// which then needs full collections (docs/architecture.md has the measurement). It is turned off
// before the first request arrives; V8 reads this flag when it collects, so setting it at run time works.
setFlagsFromString("--no-allocation-site-pretenuring");

// `npm start` runs this file with `node --single-threaded-gc`: a replica is one event loop, deployed
// one per core (or pinned to one, as the benchmark does), and V8's GC helper threads would take that
// core from it. A major GC's concurrent marking then stalled every request: on one core, intakes at
// 100/s on the 100k file had a p99 of 38 ms and stalls of ~65 ms, each at a major GC; with the flag,
// a p99 of 11-19 ms. V8 fixes its GC threads when it starts: set here, the flags crash it.

// The same writer as the request lines, so the process's lines keep their order.
const log = (line: Record<string, unknown>) => writeLogLine(Object.assign({ time: new Date().toISOString() }, line));

const config = loadConfig();
await migrate(config.databaseUrl);
const db = await openDb(config.databaseUrl, { poolSize: config.databasePoolSize });
const state = { draining: false };
const app = createApp(config, db, state);
// The pages' assets are bundled once per process: now, so that the first visitor need not wait.
webBundle().catch((error) => log({ level: "error", msg: "web pages bundle failed", error: String(error) }));

/** Answers not yet finished: on SIGTERM, the ones whose headers are not out yet close their connection. */
const inFlight = new Set<ServerResponse>();
const server = createServer((req, res) => {
  inFlight.add(res);
  res.once("close", () => inFlight.delete(res));
  // While draining no connection is kept alive: a keep-alive client reconnects, to another replica.
  if (state.draining) res.shouldKeepAlive = false;
  app(req, res);
});
// GraphQL over WebSocket (graphql-ws) at /graphql, beside SSE.
const sockets = attachWebSocket(server, app, config);
// Verified domains are checked again on a schedule, off the request path (src/trust/domain.recheck.ts).
const rechecks =
  config.trust.recheckIntervalSeconds > 0
    ? startRechecks({ db, outbound: app.outbound, config: config.trust, onChange: app.announce, log })
    : undefined;

// The event log keeps EVENT_RETENTION_DAYS of history (src/events/event.retention.ts).
const retention = startRetention({ db, retentionDays: config.events.retentionDays, log });

// Webhook deliveries, off the request path; each attempt is one replica's, under a lease (src/webhooks/).
const webhooks =
  config.webhooks.pollIntervalMs > 0
    ? startWebhooks({ db, outbound: app.outbound, config: config.webhooks, log, tail: app.feed.follow() })
    : undefined;

// Every agent's endpoint probed on a schedule; each check one replica's, under a lease (src/health/).
const prober = config.health.enabled
  ? startProber({
      db,
      outbound: app.health.outbound,
      config: config.health,
      base: config.publicUrl ?? `http://localhost:${config.port}`,
      announce: app.announce,
      log,
      metrics: app.metrics,
      tail: app.feed.follow(),
    })
  : undefined;

// Registries mirrored (src/mirror/): MIRROR_SOURCES declared, then each sync one replica's, under a
// lease, in a thread of the replica's own.
await declareSources(db, config.mirror);
const mirror = config.mirror.enabled
  ? startMirrorThread({ db, databaseUrl: config.databaseUrl, config: config.mirror, announce: app.announce, log })
  : undefined;
if (mirror) app.mirror.kick = () => mirror.kick();

server.listen(config.port, config.host, () => {
  // The bound port, which differs from the configured one when that is 0 (any free port).
  const { port } = server.address() as AddressInfo;
  log({ level: "info", msg: "listening", url: `http://${config.host}:${port}` });
});

let exiting = false;
let sweep: NodeJS.Timeout | undefined;

async function exit(code: 0 | 1): Promise<void> {
  if (exiting) return;
  exiting = true;
  clearInterval(sweep);
  if (code !== 0) {
    log({ level: "warn", msg: "drain deadline passed; cutting what is left", inFlight: inFlight.size });
    server.closeAllConnections();
  }
  // Should closing hang (an unreachable Redis), the exit still happens.
  setTimeout(() => process.exit(code), 2000).unref();
  try {
    // Closes what the app holds (the rate limits' Redis client), then the database.
    await rechecks?.stop();
    await retention.stop();
    await webhooks?.stop();
    await prober?.stop();
    await mirror?.stop();
    await app.dispose();
    await db.$disconnect();
  } finally {
    log({ level: code === 0 ? "info" : "warn", msg: "stopped", code });
    process.exit(code);
  }
}

function stopListening(): void {
  // Refuses new connections; the callback runs once every open connection has closed.
  server.close(() => void exit(0));
  server.closeIdleConnections();
  // A keep-alive connection becomes idle after its last answer: close each one as it does.
  sweep = setInterval(() => server.closeIdleConnections(), 50);
}

function drain(signal: string): void {
  if (state.draining) {
    // A second Ctrl-C means "now".
    if (signal === "SIGINT") void exit(1);
    return;
  }
  state.draining = true;
  const { delayMs, timeoutMs } = config.drain;
  log({ level: "info", msg: "draining", signal, inFlight: inFlight.size, delayMs, timeoutMs });
  for (const res of inFlight) if (!res.headersSent) res.shouldKeepAlive = false;
  // An upgraded socket is not a request: it would hold the drain until the deadline. Closed at once
  // (1001 Going Away), as the feed ends SSE streams, so its clients reconnect to another replica.
  void sockets.close();
  setTimeout(() => void exit(1), timeoutMs);
  if (delayMs > 0) setTimeout(stopListening, delayMs);
  else stopListening();
}
process.on("SIGTERM", () => drain("SIGTERM"));
process.on("SIGINT", () => drain("SIGINT"));
