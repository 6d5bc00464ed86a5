/**
 * The re-checks of verified domains, off the request path: every replica runs them on a timer,
 * and each due row is checked by one replica only, which claims it with a lease (domain.store.ts
 * `claimDomain`) before its check. The check runs outside any transaction; its outcome is written
 * on the row only while the lease is still this replica's. Expired challenges are deleted here too.
 */
import type { TrustConfig } from "../config.ts";
import type { Db } from "../db/client.ts";
import { codeOf } from "../errors.ts";
import type { FeedNote } from "../feed/feed.outbox.ts";
import type { Outbound } from "../outbound/outbound.ts";
import { proveControl } from "./domain.check.ts";
import { claimDomain, deleteExpiredChallenges, dueDomains, providerCodeOf, recordCheck } from "./domain.store.ts";

/** How long a claimed row stays this replica's: longer than any check of the outbound door takes. */
const LEASE_MS = 5 * 60_000;
/** At most this many rows per run, so a run ends; the next run takes the rest. */
const MAX_PER_RUN = 200;

export interface RecheckResult {
  checked: number;
  lost: number;
  expired: number;
  /** What the change feed announces (a lost verification changes the profile). */
  notes: FeedNote[];
}

/** Checks every verified domain due at `now` (one at a time) and deletes expired challenges. */
export async function recheckDue(
  db: Db,
  outbound: Outbound,
  config: Pick<TrustConfig, "recheckIntervalSeconds" | "challengeTtlSeconds">,
  now: Date = new Date(),
): Promise<RecheckResult> {
  const result: RecheckResult = { checked: 0, lost: 0, expired: await deleteExpiredChallenges(db, now), notes: [] };
  const intervalSeconds = config.recheckIntervalSeconds > 0 ? config.recheckIntervalSeconds : 86_400;
  while (result.checked < MAX_PER_RUN) {
    const due = await dueDomains(db, now, 10);
    if (due.length === 0) break;
    for (const candidate of due) {
      const lease = new Date(Math.max(now.getTime(), Date.now()) + LEASE_MS);
      const row = await claimDomain(db, candidate, now, lease);
      if (!row) continue; // another replica has it
      const providerCode = await providerCodeOf(db, row.providerId);
      if (!providerCode) continue;
      const proof = await proveControl(outbound, { domain: row.domain, providerCode, token: row.token });
      try {
        const outcome = await recordCheck(db, row, proof, {
          now,
          intervalSeconds,
          ttlSeconds: config.challengeTtlSeconds,
          actor: "system",
          lease,
        });
        result.checked += 1;
        if (outcome.lost) result.lost += 1;
        result.notes.push(...outcome.notes);
      } catch (error) {
        if (codeOf(error) !== "CONFLICT") throw error;
        // The row changed while it was checked (the endpoint moved, the owner checked it): the
        // change that did it stands, and the row is looked at again when next due.
        result.checked += 1;
      }
    }
  }
  return result;
}

/**
 * Runs the re-checks every `everyMs` (a minute by default) until stopped. The timer does not keep
 * the process alive; `onChange` publishes what a run changed (the response cache, the change feed).
 */
export function startRechecks(options: {
  db: Db;
  outbound: Outbound;
  config: Pick<TrustConfig, "recheckIntervalSeconds" | "challengeTtlSeconds">;
  onChange?: (notes: FeedNote[]) => Promise<void>;
  log?: (line: Record<string, unknown>) => void;
  everyMs?: number;
}): { stop(): Promise<void> } {
  let running: Promise<void> | undefined;
  const run = async () => {
    try {
      const result = await recheckDue(options.db, options.outbound, options.config);
      if (result.notes.length > 0) await options.onChange?.(result.notes);
    } catch (error) {
      options.log?.({
        level: "warn",
        msg: "domain re-checks failed",
        error: (error as Error)?.message ?? String(error),
      });
    }
  };
  const timer = setInterval(() => {
    if (!running) running = run().finally(() => (running = undefined));
  }, options.everyMs ?? 60_000);
  timer.unref();
  return {
    async stop() {
      clearInterval(timer);
      await running;
    },
  };
}
