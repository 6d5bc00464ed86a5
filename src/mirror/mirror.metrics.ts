/**
 * Each mirror source's progress in /metrics, read from the database at each scrape (so every
 * replica answers the same, whichever of them runs the sync). A source is labelled by its `sourceId`,
 * which the registry made: never by its URL, which an admin chose.
 */
import type { Db } from "../db/client.ts";
import type { GaugeSample, Metrics } from "../metrics/metrics.ts";
import { MIRROR_STATES } from "./mirror.rules.ts";

const OUTCOMES = ["seen", "created", "updated", "retired", "skipped"] as const;

type SourceStats = {
  sourceId: string;
  state: string;
  failures: number;
  lastSyncAt: Date | null;
  lastSuccessAt: Date | null;
  mirrored: number;
} & Record<(typeof OUTCOMES)[number], number>;

export function registerMirrorMetrics(metrics: Metrics, db: Db): void {
  if (!metrics.enabled) return;
  // One read serves every gauge of a scrape, which asks them one after another.
  let read: { at: number; stats: Promise<SourceStats[]> } | null = null;
  const stats = () => {
    if (read === null || Date.now() - read.at > 1000) read = { at: Date.now(), stats: readStats(db) };
    return read.stats;
  };
  const per = (sample: (s: SourceStats) => GaugeSample[]) => async () => (await stats()).flatMap(sample);
  const seconds = (d: Date | null) => (d === null ? [] : [d.getTime() / 1000]);

  metrics.gauge(
    "registry_mirror_source_state",
    "Each mirror source's state: 1 for the one it is in (IDLE, SYNCING, FAILED)",
    ["source", "state"],
    per((s) =>
      MIRROR_STATES.map((state) => ({ labels: { source: s.sourceId, state }, value: Number(s.state === state) })),
    ),
  );
  metrics.gauge(
    "registry_mirror_source_entries",
    "Upstream entries of each source's run under way (or its last) by outcome: seen, created, updated, retired, skipped",
    ["source", "outcome"],
    per((s) => OUTCOMES.map((outcome) => ({ labels: { source: s.sourceId, outcome }, value: s[outcome] }))),
  );
  metrics.gauge(
    "registry_mirror_source_providers",
    "Providers each source has made",
    ["source"],
    per((s) => [{ labels: { source: s.sourceId }, value: s.mirrored }]),
  );
  metrics.gauge(
    "registry_mirror_source_failures",
    "Each source's failed syncs in a row (0 after a success)",
    ["source"],
    per((s) => [{ labels: { source: s.sourceId }, value: s.failures }]),
  );
  metrics.gauge(
    "registry_mirror_source_last_sync_timestamp_seconds",
    "When each source's last sync began (Unix time)",
    ["source"],
    per((s) => seconds(s.lastSyncAt).map((value) => ({ labels: { source: s.sourceId }, value }))),
  );
  metrics.gauge(
    "registry_mirror_source_last_success_timestamp_seconds",
    "When each source's last sync succeeded (Unix time)",
    ["source"],
    per((s) => seconds(s.lastSuccessAt).map((value) => ({ labels: { source: s.sourceId }, value }))),
  );
}

function readStats(db: Db): Promise<SourceStats[]> {
  return db.mirrorSource.findMany({
    select: {
      sourceId: true,
      state: true,
      failures: true,
      lastSyncAt: true,
      lastSuccessAt: true,
      seen: true,
      created: true,
      updated: true,
      retired: true,
      skipped: true,
      mirrored: true,
    },
    orderBy: { id: "asc" },
  });
}
