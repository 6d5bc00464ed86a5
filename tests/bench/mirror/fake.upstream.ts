/**
 * The mirror benchmark's upstream, run as a process of its own (its CPU is not the service's): the
 * fake of the official MCP registry (tests/mirror/fake.registry.ts) with `n` generated servers,
 * and beside it a control server the benchmark changes it through.
 *
 *   node --import tsx tests/bench/mirror/fake.upstream.ts <servers>
 *
 * It prints `{"port":…,"control":…}` on stdout once both listen. Control (POST, on its own port):
 * `/change?n=100` changes `n` servers as an upstream changes between syncs — mostly new versions
 * (a new description too, so the provider has something to update), a tenth deprecated, a tenth
 * deleted — and answers which and what the next sync should count; `/stats` answers the requests
 * the registry has served.
 */
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { generatedServer, startFakeRegistry } from "../../mirror/fake.registry.ts";

const servers = Number(process.argv[2] ?? 20_000);
if (!Number.isInteger(servers) || servers < 10) throw new Error("the number of servers must be a whole number ≥ 10");

const registry = await startFakeRegistry({ generated: servers });
/** Servers changed so far: each change takes servers not changed before, spread over the list. */
let changed = 0;

function change(n: number) {
  const step = Math.max(1, Math.floor(servers / n));
  const touched = { versions: 0, deprecated: 0, deleted: 0 };
  for (let k = 0; k < n; k++) {
    const i = ((changed + k * step) % servers) + 1;
    const name = `io.github.gen-${i}/server-${i}`;
    if (k % 10 === 8) {
      registry.setStatus(name, "all", "deprecated", `Server ${i} is no longer maintained`);
      touched.deprecated += 1;
    } else if (k % 10 === 9) {
      registry.setStatus(name, "all", "deleted");
      touched.deleted += 1;
    } else {
      const server = generatedServer(i, "2.0.0");
      registry.publish({ ...server, description: `${server.description}, version two` });
      touched.versions += 1;
    }
  }
  changed += 1;
  // A new version or a deprecation updates its provider; a deletion retires it.
  return { ...touched, expect: { seen: n, updated: touched.versions + touched.deprecated, retired: touched.deleted } };
}

const control = createServer((req, res) => {
  const url = new URL(req.url ?? "/", "http://control");
  let body: unknown;
  if (req.method === "POST" && url.pathname === "/change") body = change(Number(url.searchParams.get("n") ?? 100));
  else if (url.pathname === "/stats")
    body = { requests: registry.requests.length, lists: registry.requests.filter((r) => /\/servers\?/.test(r)).length };
  else {
    res.writeHead(404).end();
    return;
  }
  const text = JSON.stringify(body);
  res.writeHead(200, { "content-type": "application/json", "content-length": Buffer.byteLength(text) }).end(text);
});
await new Promise<void>((resolve) => control.listen(0, "127.0.0.1", resolve));
const port = Number(new URL(registry.url).port);
process.stdout.write(`${JSON.stringify({ port, control: (control.address() as AddressInfo).port })}\n`);
process.on("SIGTERM", () => {
  control.close();
  void registry.close().then(() => process.exit(0));
});
