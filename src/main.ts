/**
 * Starts the service: reads the configuration, migrates the database, listens, and drains on
 * SIGTERM (readiness turns 503, requests in flight finish, then the process exits 0).
 */
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { loadConfig } from "./config.ts";
import { migrate } from "./db.migrate.ts";
import { openDb } from "./db.ts";
import { createApp } from "./yoga.ts";

const config = loadConfig();
await migrate(config.databaseUrl);
const db = await openDb(config.databaseUrl);
const state = { draining: false };
const app = createApp(config, db, state);
const server = createServer(app);

server.listen(config.port, config.host, () => {
  // The bound port, which differs from the configured one when that is 0 (any free port).
  const { port } = server.address() as AddressInfo;
  console.log(JSON.stringify({ level: "info", msg: "listening", url: `http://${config.host}:${port}` }));
});

const DRAIN_DEADLINE_MS = 10_000;
function drain(signal: string) {
  if (state.draining) return;
  state.draining = true;
  console.log(JSON.stringify({ level: "info", msg: "draining", signal }));
  server.close(async () => {
    // Closes what the app holds (the rate limits' Redis client), then the database.
    await app.dispose();
    await db.$disconnect();
    process.exit(0);
  });
  server.closeIdleConnections();
  setTimeout(() => {
    server.closeAllConnections();
    process.exit(0);
  }, DRAIN_DEADLINE_MS).unref();
}
process.on("SIGTERM", () => drain("SIGTERM"));
process.on("SIGINT", () => drain("SIGINT"));
