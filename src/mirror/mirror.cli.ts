/**
 * `npm run mirror -- --source <url> [--kind MCP_REGISTRY|AGENT_REGISTRY] [--policy REVIEW|TRUSTED --trust-tier T] --once`
 * bootstraps a registry from the command line: the source is made (or found by its URL), synced once
 * to its end in this process with a progress line on stderr, and the counts printed. The same sync
 * as the workers': a run a replica holds is waited for, and a run this one stops half-way resumes.
 */
import { parseArgs } from "node:util";
import { loadConfig } from "../config.ts";
import { openDb } from "../db/client.ts";
import { migrate } from "../db/migrate.ts";
import { createOutbound } from "../outbound/outbound.ts";
import { validateSource } from "./mirror.rules.ts";
import { claimSource, createSource, type Outcome } from "./mirror.store.ts";
import { runClaimed } from "./mirror.worker.ts";

const { values } = parseArgs({
  options: {
    source: { type: "string" },
    kind: { type: "string" },
    policy: { type: "string" },
    "trust-tier": { type: "string" },
    include: { type: "string", multiple: true },
    exclude: { type: "string", multiple: true },
    once: { type: "boolean", default: false },
  },
});
if (!values.source || !values.once) {
  process.stderr.write(
    "usage: npm run mirror -- --source <url> [--kind MCP_REGISTRY|AGENT_REGISTRY] [--policy REVIEW|TRUSTED --trust-tier T] [--include P] [--exclude P] --once\n",
  );
  process.exit(2);
}
const input = validateSource({
  url: values.source,
  kind: values.kind,
  policy: values.policy,
  trustTier: values["trust-tier"],
  filter: { include: values.include ?? [], exclude: values.exclude ?? [] },
});
if (!input.ok) {
  process.stderr.write(`${input.errors.map((e) => `${e.path}: ${e.message}`).join("\n")}\n`);
  process.exit(2);
}

const config = loadConfig();
await migrate(config.databaseUrl);
const db = await openDb(config.databaseUrl);
const row =
  (await db.mirrorSource.findUnique({ where: { url: input.value.url } })) ?? (await createSource(db, input.value));

const counts: Record<Outcome, number> = { unchanged: 0, created: 0, updated: 0, retired: 0, skipped: 0 };
const started = Date.now();
const line = () => {
  const seen = Object.values(counts).reduce((a, b) => a + b, 0);
  const rate = seen / Math.max((Date.now() - started) / 1000, 0.001);
  return `${row.url}: ${seen} seen · ${counts.created} created · ${counts.updated} updated · ${counts.retired} retired · ${counts.skipped} skipped · ${rate.toFixed(0)}/s`;
};
const tty = process.stderr.isTTY;
let drawn = 0;
const onEntry = (outcome: Outcome) => {
  counts[outcome] += 1;
  if (tty && Date.now() - drawn > 100) {
    drawn = Date.now();
    process.stderr.write(`\r${line()}\x1b[K`);
  } else if (!tty && (counts.created + counts.updated + counts.unchanged) % 1000 === 0) {
    process.stderr.write(`${line()}\n`);
  }
};

// The door's kept-alive sockets do not hold the process open: this does, until the run ends.
const alive = setInterval(() => undefined, 60_000);
// A replica syncing it now holds its lease: wait for that run, then run once more from its mark.
const claim = () =>
  claimSource(db, { now: new Date(), leaseUntil: new Date(Date.now() + config.mirror.leaseMs), id: row.id });
let claimed = await claim();
while (!claimed) {
  await new Promise((resolve) => setTimeout(resolve, 1000));
  claimed = await claim();
}
const outcome = await runClaimed(
  {
    db,
    outbound: createOutbound(config.mirror.outbound),
    config: config.mirror,
    announce: async () => undefined,
    onEntry,
  },
  claimed,
  () => false,
);
process.stderr.write(`${tty ? "\r" : ""}${line()}\x1b[K\n`);
const after = await db.mirrorSource.findUniqueOrThrow({ where: { id: row.id } });
process.stdout.write(
  `${JSON.stringify({ sourceId: after.sourceId, state: after.state, mark: after.mark, seen: after.seen, created: after.created, updated: after.updated, retired: after.retired, skipped: after.skipped, lastErrors: after.lastErrors })}\n`,
);
await db.$disconnect();
clearInterval(alive);
process.exit(outcome === "done" ? 0 : 1);
