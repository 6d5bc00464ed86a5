/**
 * The prober's SQL: which providers are probed (kept in step with their profiles), the claim of due
 * checks under a lease, the record of a check (its result, the hourly counts, the state, drift, and
 * the events of a change), and the reads of the profile, lists, the queue and the metrics.
 *
 * A check is claimed with a conditional update (due, and not under another replica's lease), so among
 * replicas each runs once; its record is written only while the claim is still this replica's.
 */
import { randomBytes } from "node:crypto";
import { type Db, jsonArg, type Queryable, queryRows, type RawTx, rawTransaction } from "../db/client.ts";
import { asDate, asJson } from "../db/model.ts";
import type { EventKind } from "../events/event.rules.ts";
import type { LoggedEvent } from "../events/event.store.ts";
import { logWrite } from "../events/event.store.ts";
import { Prisma } from "../generated/prisma/client.ts";
import type { Profile } from "../providers/provider.rules.ts";
import { insertEvents } from "../providers/provider.store.ts";
import { newReviewCode } from "../reviews/review.rules.ts";
import { activeReviewOf, openReview } from "../reviews/review.store.ts";
import {
  afterResult,
  answering,
  type CardParts,
  type CheckResult,
  canonicalHash,
  type Drift,
  declaredCard,
  driftOf,
  type HealthState,
  hostOf,
  hourOf,
  type Live,
  nextCheckAt,
  type Target,
  targetOf,
  uptime,
} from "./health.rules.ts";

const DAY_MS = 86_400_000;
/** How long the hourly counts are kept: the longest uptime figure. */
const HOURLY_DAYS = 30;

/** The health of a provider as the profile shows it. */
export interface Health {
  state: HealthState;
  since: Date;
  checkedAt: Date | null;
  latencyMs: number | null;
  reason: string | null;
  uptime24h: number | null;
  uptime7d: number | null;
  uptime30d: number | null;
}

/** The drift the owner and reviewers see, and when it was detected. */
export type DriftRecord = Drift & { detectedAt: Date; version: number };

/** What the schedule needs of a provider to keep its row in step. */
interface Probed {
  id: number;
  target: Target | null;
}

function probedOf(row: Record<string, unknown>): Probed {
  const lifecycle = String(row.lifecycle);
  const endpoint = row.endpoint === null ? null : (asJson(row.endpoint) as Profile["endpoint"]);
  return { id: Number(row.id), target: lifecycle === "RETIRED" ? null : targetOf(endpoint) };
}

/** Rows written per transaction when the probed rows are brought in step. */
const SYNC_BATCH = 500;

/**
 * Keeps the probed rows in step with the profiles (all of them, or those of `providerIds`): a new
 * target gets a row, due at once for a named provider and spread over the interval otherwise (a
 * start with thousands never checked); a changed target starts over; a provider with nothing to
 * probe (no endpoint, a retired agent) loses its row and its state. Answers how many rows changed.
 */
export async function syncTargets(
  db: Db,
  options: { now: Date; intervalSeconds: number; providerIds?: readonly number[]; random?: () => number },
): Promise<number> {
  const { now } = options;
  const random = options.random ?? Math.random;
  const only = options.providerIds;
  if (only && only.length === 0) return 0;
  const where = only ? Prisma.sql`WHERE p."id" IN (${Prisma.join(only)})` : Prisma.empty;
  const rows = await queryRows(
    db,
    Prisma.sql`SELECT p."id", p."endpoint", p."lifecycle", h."target" AS "probed"
      FROM "providers" AS p LEFT JOIN "provider_health" AS h ON h."providerId" = p."id" ${where}`,
  );
  const changes = rows.flatMap((row) => {
    const { id, target } = probedOf(row);
    const text = target ? JSON.stringify(target) : null;
    const probed = (row.probed as string | null) ?? null;
    return text === probed ? [] : [{ id, target, text, probed }];
  });
  for (let i = 0; i < changes.length; i += SYNC_BATCH) {
    const batch = changes.slice(i, i + SYNC_BATCH);
    await rawTransaction(db, async (tx) => {
      // Conditional on what was read: a replica that synced the same provider meanwhile wins, and
      // this one changes nothing (a row replaced twice would reset a schedule just begun).
      const stale = batch.filter((c) => c.probed !== null);
      const deleted = stale.length
        ? await queryRows(
            tx,
            Prisma.sql`DELETE FROM "provider_health" WHERE ${Prisma.join(
              stale.map((c) => Prisma.sql`("providerId" = ${c.id} AND "target" = ${c.probed})`),
              " OR ",
            )} RETURNING "providerId"`,
          )
        : [];
      const gone = deleted.map((r) => Number(r.providerId));
      if (gone.length > 0) {
        // A changed target is another agent as far as health goes: its counts start over too.
        await queryRows(
          tx,
          Prisma.sql`DELETE FROM "health_hourly" WHERE "providerId" IN (${Prisma.join(gone)}) RETURNING "providerId"`,
        );
      }
      const probing = batch.filter((c) => c.target !== null && (c.probed === null || gone.includes(c.id)));
      const inserted = probing.length
        ? (
            await queryRows(
              tx,
              Prisma.sql`INSERT INTO "provider_health" ("providerId", "target", "host", "state", "since", "reason", "nextCheckAt", "pendingCount", "downStreak")
                VALUES ${Prisma.join(
                  probing.map((c) => {
                    // Spread over 90% of an interval, so that each is checked within its interval of the start.
                    const due = only ? now : new Date(now.getTime() + random() * options.intervalSeconds * 900);
                    const reason = c.probed
                      ? "The endpoint changed; it has not been checked since."
                      : "Not checked yet.";
                    return Prisma.sql`(${c.id}, ${c.text}, ${hostOf(c.target as Target)}, 'UNKNOWN', ${now}, ${reason}, ${due}, 0, 0)`;
                  }),
                )}
                ON CONFLICT ("providerId") DO NOTHING RETURNING "providerId"`,
            )
          ).map((r) => Number(r.providerId))
        : [];
      if (inserted.length > 0) {
        await queryRows(
          tx,
          Prisma.sql`UPDATE "providers" SET "healthState" = 'UNKNOWN' WHERE "id" IN (${Prisma.join(inserted)}) RETURNING "id"`,
        );
      }
      const forgotten = gone.filter((id) => !inserted.includes(id));
      if (forgotten.length > 0) {
        await queryRows(
          tx,
          Prisma.sql`UPDATE "providers" SET "healthState" = NULL WHERE "id" IN (${Prisma.join(forgotten)}) RETURNING "id"`,
        );
      }
    });
  }
  return changes.length;
}

/** A check claimed by this replica, with what recording it needs. */
export interface Claimed {
  providerId: number;
  leaseToken: string;
  target: Target;
  host: string;
  state: HealthState;
  pendingState: string | null;
  pendingCount: number;
  downStreak: number;
  /** Null until its first check: that first result sets the state at once. */
  checkedAt: Date | null;
  live: Live | null;
  liveHash: string | null;
  drift: DriftRecord | null;
}

const CLAIMED_COLUMNS = Prisma.sql`"providerId", "target", "host", "state", "pendingState", "pendingCount", "downStreak", "checkedAt", "live", "liveHash", "drift"`;

function claimedOf(row: Record<string, unknown>, leaseToken: string): Claimed {
  return {
    providerId: Number(row.providerId),
    leaseToken,
    target: JSON.parse(String(row.target)) as Target,
    host: String(row.host),
    state: row.state as HealthState,
    pendingState: (row.pendingState as string | null) ?? null,
    pendingCount: Number(row.pendingCount),
    downStreak: Number(row.downStreak),
    checkedAt: row.checkedAt === null ? null : asDate(row.checkedAt),
    live: row.live === null ? null : (asJson(row.live) as unknown as Live),
    liveHash: (row.liveHash as string | null) ?? null,
    drift: row.drift === null ? null : driftRecordOf(asJson(row.drift)),
  };
}

function driftRecordOf(value: unknown): DriftRecord {
  const record = value as DriftRecord & { detectedAt: string };
  return { ...record, detectedAt: new Date(record.detectedAt) };
}

/**
 * Claims up to `limit` due checks until `leaseUntil`, at most `perHost` of one host under way at once
 * (counting the leases other replicas hold). The candidates are read first, then claimed with a
 * conditional update: a row another replica claimed meanwhile no longer meets the condition (on
 * PostgreSQL the update re-reads it under its row lock), so each check is one replica's.
 */
export async function claimDue(
  db: Db,
  options: { now: Date; leaseUntil: Date; limit: number; perHost: number },
): Promise<Claimed[]> {
  const { now, limit, perHost } = options;
  if (limit <= 0) return [];
  const candidates = await queryRows(
    db,
    Prisma.sql`SELECT c."providerId" FROM (
        SELECT h."providerId", h."host", h."nextCheckAt",
          ROW_NUMBER() OVER (PARTITION BY h."host" ORDER BY h."nextCheckAt", h."providerId") AS "rank"
        FROM (
          -- The most overdue first, and only as many as a claim can use: a prober that fell behind
          -- must not rank every due row at each claim.
          SELECT d."providerId", d."host", d."nextCheckAt" FROM "provider_health" AS d
          WHERE d."nextCheckAt" <= ${now} AND (d."leaseUntil" IS NULL OR d."leaseUntil" < ${now})
          ORDER BY d."nextCheckAt" LIMIT ${limit * 8}
        ) AS h
      ) AS c
      WHERE c."rank" + (SELECT COUNT(*) FROM "provider_health" AS o WHERE o."host" = c."host" AND o."leaseUntil" >= ${now}) <= ${perHost}
      ORDER BY c."nextCheckAt" LIMIT ${limit}`,
  );
  if (candidates.length === 0) return [];
  const token = randomBytes(12).toString("base64url");
  const claimed = await queryRows(
    db,
    Prisma.sql`UPDATE "provider_health" SET "leaseUntil" = ${options.leaseUntil}, "leaseToken" = ${token}
      WHERE "providerId" IN (${Prisma.join(candidates.map((c) => Number(c.providerId)))})
        AND "nextCheckAt" <= ${now} AND ("leaseUntil" IS NULL OR "leaseUntil" < ${now})
      RETURNING ${CLAIMED_COLUMNS}`,
  );
  return claimed.map((row) => claimedOf(row, token));
}

/** Why a check now was refused: nothing to probe, asked too recently, or a check under way. */
export type CheckNowRefusal = { kind: "none" } | { kind: "recent" | "busy"; retryAfterSeconds: number };

/**
 * Claims one provider's check now, for its owner or a reviewer: at most once per `everySeconds`
 * (the database holds the rate, so replicas share it) and not while another check of it runs.
 */
export async function claimNow(
  db: Db,
  providerId: number,
  options: { now: Date; leaseUntil: Date; everySeconds: number },
): Promise<Claimed | CheckNowRefusal> {
  const { now } = options;
  const token = randomBytes(12).toString("base64url");
  const after = new Date(now.getTime() - options.everySeconds * 1000);
  const [row] = await queryRows(
    db,
    Prisma.sql`UPDATE "provider_health" SET "leaseUntil" = ${options.leaseUntil}, "leaseToken" = ${token}, "askedAt" = ${now}
      WHERE "providerId" = ${providerId} AND ("askedAt" IS NULL OR "askedAt" <= ${after})
        AND ("leaseUntil" IS NULL OR "leaseUntil" < ${now})
      RETURNING ${CLAIMED_COLUMNS}`,
  );
  if (row) return claimedOf(row, token);
  const [current] = await queryRows(
    db,
    Prisma.sql`SELECT "askedAt", "leaseUntil" FROM "provider_health" WHERE "providerId" = ${providerId}`,
  );
  if (!current) return { kind: "none" };
  const asked = current.askedAt === null ? null : asDate(current.askedAt);
  if (asked && asked > after) {
    return { kind: "recent", retryAfterSeconds: Math.max(1, Math.ceil((asked.getTime() - after.getTime()) / 1000)) };
  }
  const lease = current.leaseUntil === null ? now : asDate(current.leaseUntil);
  return { kind: "busy", retryAfterSeconds: Math.max(1, Math.ceil((lease.getTime() - now.getTime()) / 1000)) };
}

/** What the provider declares, read when a check is recorded: drift is measured against it. */
async function declared(tx: Queryable, providerId: number, base: string) {
  const [row] = await queryRows(
    tx,
    Prisma.sql`SELECT "providerCode", "name", "summary", "description", "capabilities", "roles", "endpoint", "tools",
        "version", "reviewStage" FROM "providers" WHERE "id" = ${providerId}`,
  );
  if (!row) return null;
  const endpoint = row.endpoint === null ? null : (asJson(row.endpoint) as Profile["endpoint"]);
  const source = {
    providerCode: String(row.providerCode),
    name: String(row.name),
    summary: String(row.summary),
    description: (row.description as string | null) ?? null,
    capabilities: asJson(row.capabilities) as Profile["capabilities"],
    roles: asJson(row.roles) as Profile["roles"],
    version: Number(row.version),
    endpoint,
  };
  const card: CardParts | null = endpoint?.protocol === "A2A" ? declaredCard(source, base) : null;
  return {
    tools: asJson(row.tools) as Profile["tools"],
    card,
    version: Number(row.version),
    reviewStage: String(row.reviewStage),
  };
}

/** What recording a check did: its events (for the feed) and whether the claim was still ours. */
export interface Recorded {
  lost: boolean;
  events: LoggedEvent[];
  state: HealthState;
}

/** A finished check to record: its claim, its result, and when it ended. */
export interface CheckRecord {
  claimed: Claimed;
  result: CheckResult;
  at: Date;
}

/** What recording takes beside the checks. */
export interface RecordOptions {
  confirmations: number;
  intervalSeconds: number;
  maxBackoffSeconds: number;
  driftReview: boolean;
  /** The registry's public base URL, for the card it exports (what A2A drift compares against). */
  base: string;
  random?: () => number;
}

/**
 * Records checks in one transaction (one commit, so one sync of SQLite's log for a whole batch),
 * each only while its claim is still this replica's: the result, its hour's counts, the state
 * machine, the next check, and drift. A state change sets the provider's `healthState` and logs
 * HEALTH_CHANGED; a new drift logs DRIFT_DETECTED and, with `driftReview`, opens an UPDATE review of an
 * approved agent whose live tools or skills changed. A check adds no profile version.
 */
export async function recordChecks(db: Db, batch: readonly CheckRecord[], options: RecordOptions): Promise<Recorded[]> {
  return rawTransaction(db, async (tx) => {
    const recorded: Recorded[] = [];
    for (const check of batch) recorded.push(await recordOne(tx, check, options));
    return recorded;
  });
}

async function recordOne(tx: RawTx, { claimed, result, at }: CheckRecord, options: RecordOptions): Promise<Recorded> {
  // A first result has nothing to confirm against: "not checked yet" is no finding.
  const machine = afterResult(claimed, result.outcome, claimed.checkedAt === null ? 1 : options.confirmations);
  const changed = machine.state !== claimed.state;
  const downStreak = result.outcome === "DOWN" ? claimed.downStreak + 1 : 0;
  const next = nextCheckAt(machine, downStreak, at, options, options.random);
  // What the agent declares matters only when the check saw what it has live (tools, a card), and
  // it can change nothing while the live form is as before and matched the declaration then.
  const liveHash = result.live ? canonicalHash(result.live) : claimed.liveHash;
  const unchanged = result.live && claimed.drift === null && liveHash === claimed.liveHash;
  const wants = result.live && !unchanged ? await declared(tx, claimed.providerId, options.base) : null;
  let drift = claimed.drift;
  let newDrift: Drift | null = null;
  if (result.live && wants) {
    const found = driftOf(result.live, claimed.live, wants);
    // New: the live agent changed since the last check, or differs from what it declares in another way.
    if (found && (!drift || found.sinceLastCheck.length > 0 || declaredPart(found) !== declaredPart(drift))) {
      newDrift = found;
      drift = { ...found, detectedAt: at, version: wants.version };
    } else if (!found && drift && drift.version < wants.version) {
      // The owner has since updated the profile and the agent matches it: the drift is settled.
      drift = null;
    }
  }
  const live = result.live ?? claimed.live;
  const [written] = await queryRows(
    tx,
    Prisma.sql`UPDATE "provider_health" SET "state" = ${machine.state},
        "since" = ${changed ? at : Prisma.raw('"since"')}, "checkedAt" = ${at}, "latencyMs" = ${result.latencyMs},
        "reason" = ${result.reason}, "pendingState" = ${machine.pendingState}, "pendingCount" = ${machine.pendingCount},
        "downStreak" = ${downStreak}, "nextCheckAt" = ${next}, "leaseUntil" = NULL, "leaseToken" = NULL,
        "live" = ${liveHash === claimed.liveHash ? Prisma.raw('"live"') : jsonArg(tx, live)}, "liveHash" = ${liveHash},
        "drift" = ${jsonArg(tx, drift)}, "driftAt" = ${drift?.detectedAt ?? null}
      WHERE "providerId" = ${claimed.providerId} AND "leaseToken" = ${claimed.leaseToken} RETURNING "providerId"`,
  );
  if (!written) return { lost: true, events: [], state: claimed.state };
  await queryRows(
    tx,
    Prisma.sql`INSERT INTO "health_checks" ("providerId", "at", "outcome", "latencyMs", "reason")
      VALUES (${claimed.providerId}, ${at}, ${result.outcome}, ${result.latencyMs}, ${result.reason}) RETURNING "id"`,
  );
  const up = answering(result.outcome) ? 1 : 0;
  await queryRows(
    tx,
    Prisma.sql`INSERT INTO "health_hourly" ("providerId", "hour", "checks", "up") VALUES (${claimed.providerId}, ${hourOf(at)}, 1, ${up})
      ON CONFLICT ("providerId", "hour") DO UPDATE SET "checks" = "health_hourly"."checks" + 1, "up" = "health_hourly"."up" + ${up}
      RETURNING "providerId"`,
  );
  const happened: { kind: EventKind; reviewCode?: string | null; note?: string | null }[] = [];
  if (changed) {
    await queryRows(
      tx,
      Prisma.sql`UPDATE "providers" SET "healthState" = ${machine.state} WHERE "id" = ${claimed.providerId} RETURNING "id"`,
    );
    happened.push({ kind: "HEALTH_CHANGED", note: `${claimed.state} → ${machine.state}: ${result.reason}` });
  }
  if (newDrift && wants) {
    happened.push({ kind: "DRIFT_DETECTED", note: newDrift.summary });
    const toolsOrSkills = newDrift.sinceLastCheck.some((op) =>
      /^\/(?:skills|[^/]+\/inputSchema|[^/]+$)/.test(String((op as { path?: unknown }).path)),
    );
    if (options.driftReview && toolsOrSkills && wants.reviewStage === "APPROVED") {
      const reviewCode = await driftReview(tx, claimed.providerId, newDrift.summary, at);
      if (reviewCode) happened.push({ kind: "REVIEW_OPENED", reviewCode });
    }
  }
  const events = await logWrite(tx, { providerId: claimed.providerId, before: "unchanged", events: happened });
  return { lost: false, events, state: machine.state };
}

/** How a drift differs from what the agent declares, as a hash: the part of it that lasts between checks. */
function declaredPart(drift: Drift): string {
  return canonicalHash([drift.fromDeclared, drift.undeclaredTools, drift.missingTools]);
}

/** Opens an UPDATE review of an approved agent whose live tools or skills changed, unless one is open. */
async function driftReview(tx: Queryable, providerId: number, summary: string, now: Date): Promise<string | null> {
  if (await activeReviewOf(tx, providerId)) return null;
  const reviewCode = newReviewCode();
  const reviewId = await openReview(tx, { reviewCode, providerId, kind: "UPDATE", now });
  await insertEvents(tx, providerId, [
    {
      reviewId,
      kind: "UPDATE_SUBMITTED",
      actor: "registry:prober",
      note: `The live agent drifted: ${summary}`,
      at: now,
    },
  ]);
  return reviewCode;
}

/** The health of these providers, by id; absent for a provider that is not probed. */
export async function healthOf(
  db: Queryable,
  providerIds: readonly number[],
  now = new Date(),
): Promise<Map<number, Health>> {
  const found = new Map<number, Health>();
  if (providerIds.length === 0) return found;
  const ids = Prisma.join(providerIds);
  const rows = await queryRows(
    db,
    Prisma.sql`SELECT "providerId", "state", "since", "checkedAt", "latencyMs", "reason" FROM "provider_health" WHERE "providerId" IN (${ids})`,
  );
  if (rows.length === 0) return found;
  const day = hourOf(new Date(now.getTime() - DAY_MS));
  const week = hourOf(new Date(now.getTime() - 7 * DAY_MS));
  const month = hourOf(new Date(now.getTime() - HOURLY_DAYS * DAY_MS));
  const counts = await queryRows(
    db,
    Prisma.sql`SELECT "providerId", "hour", "checks", "up" FROM "health_hourly" WHERE "providerId" IN (${ids}) AND "hour" >= ${month}`,
  );
  const hours = new Map<number, { hour: Date; checks: number; up: number }[]>();
  for (const c of counts) {
    const id = Number(c.providerId);
    const list = hours.get(id) ?? [];
    list.push({ hour: asDate(c.hour), checks: Number(c.checks), up: Number(c.up) });
    hours.set(id, list);
  }
  for (const row of rows) {
    const id = Number(row.providerId);
    const list = hours.get(id) ?? [];
    found.set(id, {
      state: row.state as HealthState,
      since: asDate(row.since),
      checkedAt: row.checkedAt === null ? null : asDate(row.checkedAt),
      latencyMs: row.latencyMs === null ? null : Number(row.latencyMs),
      reason: (row.reason as string | null) ?? null,
      uptime24h: uptime(list.filter((h) => h.hour >= day)),
      uptime7d: uptime(list.filter((h) => h.hour >= week)),
      uptime30d: uptime(list),
    });
  }
  return found;
}

/**
 * The health and drift of a profile read (provider.store.ts reads them with the row, in its one
 * statement: the `healthJson` object of the provider's health row and its hourly sums).
 */
export function healthOfRow(row: Record<string, unknown>): { health: Health; drift: DriftRecord | null } {
  const counts = (typeof row.counts === "string" ? JSON.parse(row.counts) : (row.counts ?? {})) as Record<
    string,
    unknown
  >;
  const share = (checks: string, up: string) =>
    uptime([{ checks: Number(counts[checks] ?? 0), up: Number(counts[up] ?? 0) }]);
  const drift = typeof row.drift === "string" ? JSON.parse(row.drift) : row.drift;
  return {
    health: {
      state: row.state as HealthState,
      since: asDate(row.since),
      checkedAt: row.checkedAt === null || row.checkedAt === undefined ? null : asDate(row.checkedAt),
      latencyMs: row.latencyMs === null || row.latencyMs === undefined ? null : Number(row.latencyMs),
      reason: (row.reason as string | null | undefined) ?? null,
      uptime24h: share("c24", "u24"),
      uptime7d: share("c7", "u7"),
      uptime30d: share("c30", "u30"),
    },
    drift: drift === null || drift === undefined ? null : driftRecordOf(drift),
  };
}

/** The drift of a provider, or null when none was detected (or it was settled). */
export async function driftOfProvider(db: Queryable, providerId: number): Promise<DriftRecord | null> {
  const [row] = await queryRows(
    db,
    Prisma.sql`SELECT "drift" FROM "provider_health" WHERE "providerId" = ${providerId}`,
  );
  return row && row.drift !== null ? driftRecordOf(asJson(row.drift)) : null;
}

/** A provider's most recent checks, newest first. */
export async function recentChecks(
  db: Queryable,
  providerId: number,
  limit: number,
): Promise<{ at: Date; outcome: HealthState; latencyMs: number | null; reason: string }[]> {
  const rows = await queryRows(
    db,
    Prisma.sql`SELECT "at", "outcome", "latencyMs", "reason" FROM "health_checks" WHERE "providerId" = ${providerId} ORDER BY "at" DESC, "id" DESC LIMIT ${limit}`,
  );
  return rows.map((r) => ({
    at: asDate(r.at),
    outcome: r.outcome as HealthState,
    latencyMs: r.latencyMs === null ? null : Number(r.latencyMs),
    reason: String(r.reason),
  }));
}

/** Approved agents DOWN for longer than `forMs`, longest first: what the review queue lists. */
export async function downApproved(
  db: Queryable,
  options: { now: Date; forMs: number; limit: number },
): Promise<{ providerId: number; since: Date; reason: string | null }[]> {
  const before = new Date(options.now.getTime() - options.forMs);
  const rows = await queryRows(
    db,
    Prisma.sql`SELECT h."providerId", h."since", h."reason" FROM "provider_health" AS h JOIN "providers" AS p ON p."id" = h."providerId"
      WHERE h."state" = 'DOWN' AND h."since" < ${before} AND p."reviewStage" = 'APPROVED'
      ORDER BY h."since", h."providerId" LIMIT ${options.limit}`,
  );
  return rows.map((r) => ({
    providerId: Number(r.providerId),
    since: asDate(r.since),
    reason: (r.reason as string | null) ?? null,
  }));
}

/** Agents per confirmed state (the metrics' gauge). */
export async function countByState(db: Queryable): Promise<Map<HealthState, number>> {
  const rows = await queryRows(
    db,
    Prisma.sql`SELECT "healthState", COUNT(*) AS "n" FROM "providers" WHERE "healthState" IS NOT NULL GROUP BY "healthState"`,
  );
  return new Map(rows.map((r) => [r.healthState as HealthState, Number(r.n)]));
}

/** Deletes check results older than `resultHours` and hourly counts older than 30 days. */
export async function pruneChecks(db: Db, options: { now: Date; resultHours: number }): Promise<number> {
  const results = new Date(options.now.getTime() - options.resultHours * 3_600_000);
  const hours = new Date(options.now.getTime() - HOURLY_DAYS * DAY_MS - 3_600_000);
  const a = await db.$executeRaw(Prisma.sql`DELETE FROM "health_checks" WHERE "at" < ${results}`);
  const b = await db.$executeRaw(Prisma.sql`DELETE FROM "health_hourly" WHERE "hour" < ${hours}`);
  return a + b;
}
