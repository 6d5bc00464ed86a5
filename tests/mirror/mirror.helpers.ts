/**
 * The mirror worker as main.ts starts it, in a test's process: over an app's door and database, its
 * writes announced through the app, the app's kicks (a source made, a sync asked for) reaching it,
 * stopped after the file's tests.
 */
import { loadConfig } from "../../src/config.ts";
import type { Db } from "../../src/db/client.ts";
import { startMirror } from "../../src/mirror/mirror.worker.ts";
import { type App, closeAfterAll, db as sharedDb } from "../helpers.ts";

export function startTestMirror(
  app: App,
  options: { db?: Db; log?: (line: Record<string, unknown>) => void } = {},
): ReturnType<typeof startMirror> {
  const mirror = startMirror({
    db: options.db ?? sharedDb,
    outbound: app.mirror.outbound,
    config: loadConfig({ ...process.env, NODE_ENV: "test" }).mirror,
    announce: app.announce,
    ...(options.log && { log: options.log }),
  });
  app.mirror.kick = () => mirror.kick();
  closeAfterAll(() => mirror.stop());
  return mirror;
}
