/**
 * The log's retention: events older than EVENT_RETENTION_DAYS are deleted, at start and then every
 * hour, by whichever replicas run it (deleting a prefix is the same whoever does it first).
 */
import type { Db } from "../db/client.ts";
import { pruneEvents } from "./event.store.ts";

const HOUR = 3_600_000;

export function startRetention(options: {
  db: Db;
  retentionDays: number;
  log?: (line: Record<string, unknown>) => void;
  everyMs?: number;
}): { stop(): Promise<void> } {
  let running: Promise<unknown> | undefined;
  const run = () => {
    running ??= pruneEvents(options.db, new Date(Date.now() - options.retentionDays * 86_400_000))
      .catch((error: unknown) =>
        options.log?.({
          level: "warn",
          msg: "event retention failed",
          error: (error as Error)?.message ?? String(error),
        }),
      )
      .finally(() => {
        running = undefined;
      });
  };
  run();
  const timer = setInterval(run, options.everyMs ?? HOUR);
  timer.unref();
  return {
    async stop() {
      clearInterval(timer);
      await running;
    },
  };
}
