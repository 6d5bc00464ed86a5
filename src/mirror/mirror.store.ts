/**
 * The mirror's SQL: sources (made by admins or MIRROR_SOURCES), the claim of a due source under a
 * lease, the position of the run under way, and the entries that say which upstream entry each
 * mirrored provider was made from.
 *
 * Exactly once: an entry's write and the run's step past it commit in one transaction, and the step
 * holds only while the lease is still this replica's (otherwise the whole write rolls back). A run
 * killed half-way resumes from the last step committed; an entry applied again changes nothing.
 */
import { randomBytes } from "node:crypto";
import type { GraphQLError } from "graphql";
import { type Db, jsonArg, type Queryable, queryRows } from "../db/client.ts";
import { asDate, asJson } from "../db/model.ts";
import { conflict } from "../errors.ts";
import { Prisma } from "../generated/prisma/client.ts";
import { KEPT_ERRORS, KEPT_SKIPS, type SourceInput } from "./mirror.rules.ts";

export type SourceRow = Prisma.MirrorSourceGetPayload<object>;

/** A public source id: `ms_` and 16 characters. */
export const newSourceId = () => `ms_${randomBytes(12).toString("base64url")}`;

/** The 409 an owner's write of a mirrored provider gets, naming the source that changes it. */
export async function mirroredConflict(
  tx: Queryable,
  row: { id: number; providerCode: string },
): Promise<GraphQLError> {
  const [origin] = await queryRows(
    tx,
    Prisma.sql`SELECT "sourceUrl" FROM "mirror_entries" WHERE "providerId" = ${row.id}`,
  );
  return conflict(
    `"${row.providerCode}" is mirrored from ${String(origin?.sourceUrl ?? "a mirror source")}: its source changes it, not its owner's token`,
  );
}

/** Whether a write failed because a source of that URL exists already (a unique violation). */
export function sourceTaken(error: unknown): boolean {
  return (error as { code?: unknown } | null)?.code === "P2002";
}

export async function createSource(db: Db, input: SourceInput, fromEnv = false): Promise<SourceRow> {
  return db.mirrorSource.create({
    data: {
      ...input,
      filter: input.filter as object,
      credential: input.credential ?? null,
      sourceId: newSourceId(),
      fromEnv,
    },
  });
}

export async function updateSource(db: Db, id: number, input: SourceInput): Promise<SourceRow> {
  // A new address or kind is another upstream: its sync starts over.
  const current = await db.mirrorSource.findUniqueOrThrow({ where: { id } });
  const restart = current.url !== input.url || current.kind !== input.kind;
  return db.mirrorSource.update({
    where: { id },
    data: {
      ...input,
      filter: input.filter as object,
      ...(restart && { mark: null, runSince: null, runCursor: null, runOffset: 0, runHigh: null }),
      nextSyncAt: new Date(),
    },
  });
}

/** Asks for a sync now: the next poll of any replica takes it (a run under way goes on). */
export async function requestSync(db: Db, id: number): Promise<SourceRow> {
  return db.mirrorSource.update({ where: { id }, data: { nextSyncAt: new Date() } });
}

/** The sources MIRROR_SOURCES declares, kept as it says: added, changed, and those it no longer names removed. */
export async function bootstrapSources(db: Db, declared: readonly SourceInput[]): Promise<void> {
  for (const input of declared) {
    const existing = await db.mirrorSource.findUnique({ where: { url: input.url } });
    if (!existing) {
      await createSource(db, input, true).catch((error) => {
        if (!sourceTaken(error)) throw error; // else another replica starting beside this one made it
      });
    } else if (existing.fromEnv) {
      // The variable says everything of its sources: one that names no credential has none.
      await updateSource(db, existing.id, { ...input, credential: input.credential ?? null });
    }
  }
  await db.mirrorSource.deleteMany({ where: { fromEnv: true, url: { notIn: declared.map((d) => d.url) } } });
}

/**
 * Claims one due source until `leaseUntil` with a conditional update, so among replicas each sync
 * is one replica's; a run whose replica died is due again once its lease has passed.
 */
export async function claimSource(
  db: Db,
  options: { now: Date; leaseUntil: Date; id?: number },
): Promise<Claimed | null> {
  const { now } = options;
  const [candidate] = await queryRows(
    db,
    Prisma.sql`SELECT "id" FROM "mirror_sources"
      WHERE ${options.id === undefined ? Prisma.sql`"nextSyncAt" <= ${now}` : Prisma.sql`"id" = ${options.id}`}
        AND ("leaseUntil" IS NULL OR "leaseUntil" < ${now})
      ORDER BY "nextSyncAt" LIMIT 1`,
  );
  if (!candidate) return null;
  const token = randomBytes(12).toString("base64url");
  const [claimed] = await queryRows(
    db,
    Prisma.sql`UPDATE "mirror_sources" SET "leaseUntil" = ${options.leaseUntil}, "leaseToken" = ${token},
        "state" = 'SYNCING', "lastSyncAt" = ${now}
      WHERE "id" = ${Number(candidate.id)} AND ("leaseUntil" IS NULL OR "leaseUntil" < ${now}) RETURNING "id"`,
  );
  if (!claimed) return null;
  return { row: await db.mirrorSource.findUniqueOrThrow({ where: { id: Number(claimed.id) } }), token };
}

/** A source this replica holds the lease of, and the lease's token. */
export interface Claimed {
  row: SourceRow;
  token: string;
}

/** Extends this replica's lease; false when it has passed to another (the run must stop). */
export async function renewLease(db: Queryable, id: number, token: string, leaseUntil: Date): Promise<boolean> {
  const rows = await queryRows(
    db,
    Prisma.sql`UPDATE "mirror_sources" SET "leaseUntil" = ${leaseUntil} WHERE "id" = ${id} AND "leaseToken" = ${token} RETURNING "id"`,
  );
  return rows.length === 1;
}

/** Lets go of the lease, keeping the run's position: another replica (or this one) resumes it. */
export async function releaseLease(db: Queryable, claim: Claim): Promise<void> {
  await queryRows(
    db,
    Prisma.sql`UPDATE "mirror_sources" SET "leaseUntil" = NULL, "leaseToken" = NULL, "nextSyncAt" = ${new Date()}
      WHERE "id" = ${claim.id} AND "leaseToken" = ${claim.token}`,
  );
}

/** Lost the lease mid-run: whatever was written under it is rolled back with this. */
export class LeaseLost extends Error {
  constructor() {
    super("the mirror source's lease passed to another replica");
    this.name = "LeaseLost";
  }
}

export interface Claim {
  id: number;
  token: string;
}

/**
 * Sets columns of the source under this replica's lease (and `where`, when given); throws LeaseLost
 * when it is no longer ours.
 */
async function setUnderLease(tx: Queryable, claim: Claim, sets: Prisma.Sql[], where?: Prisma.Sql): Promise<void> {
  const rows = await queryRows(
    tx,
    Prisma.sql`UPDATE "mirror_sources" SET ${Prisma.join(sets)} WHERE "id" = ${claim.id} AND "leaseToken" = ${claim.token}${where ? Prisma.sql` AND ${where}` : Prisma.empty} RETURNING "id"`,
  );
  if (rows.length !== 1) throw new LeaseLost();
}

const ZERO_COUNTS = ["seen", "created", "updated", "retired", "skipped"].map((c) => Prisma.raw(`"${c}" = 0`));

/** A new run: from the source's mark, on its first page, counts at zero. */
export async function startRun(db: Queryable, claim: Claim, since: string): Promise<void> {
  await setUnderLease(db, claim, [
    Prisma.sql`"runSince" = ${since}`,
    Prisma.sql`"runCursor" = NULL`,
    Prisma.sql`"runOffset" = 0`,
    Prisma.sql`"runHigh" = "mark"`,
    ...ZERO_COUNTS,
  ]);
}

/** The run (new, or one changing phase) from its first page at `high`; a new one counts from zero. */
export async function setRun(
  db: Queryable,
  claim: Claim,
  run: { since: string; high: string | null; fresh: boolean },
): Promise<void> {
  await setUnderLease(db, claim, [
    Prisma.sql`"runSince" = ${run.since}`,
    Prisma.sql`"runCursor" = NULL`,
    Prisma.sql`"runOffset" = 0`,
    Prisma.sql`"runHigh" = ${run.high}`,
    ...(run.fresh ? ZERO_COUNTS : []),
  ]);
}

export type Outcome = "unchanged" | "created" | "updated" | "retired" | "skipped";

export interface Step {
  outcome: Outcome;
  /** The newest upstream mark seen so far in the run (an `updatedAt`, or a seq). */
  high: string | null;
  /** Where the run stands after this entry: the page's cursor and the entries of it applied. */
  cursor: string | null;
  offset: number;
  skip?: { name: string; version: string | null; reason: string };
  /** Its place among steps written at once (see StepOrder). */
  order?: StepOrder;
}

/**
 * The place of an entry's step when entries are written at once (mirror.sync.ts): the step is
 * written once the entry before it has committed, and only where that one left the run
 * (`runOffset` = `from`), so steps commit in their order; when that entry failed, this one fails too.
 */
export interface StepOrder {
  from: number;
  /** Settles once the entry before has committed; rejects when it failed. */
  previous: Promise<void>;
}

/** The run's step past one entry, in the entry's own transaction. */
export async function advance(tx: Queryable, claim: Claim, step: Step): Promise<void> {
  const count = step.outcome === "unchanged" ? null : step.outcome;
  const sets = [
    Prisma.sql`"runCursor" = ${step.cursor}`,
    Prisma.sql`"runOffset" = ${step.offset}`,
    Prisma.sql`"runHigh" = ${step.high}`,
    Prisma.sql`"seen" = "seen" + 1`,
  ];
  if (count) sets.push(Prisma.sql`${Prisma.raw(`"${count}"`)} = ${Prisma.raw(`"${count}"`)} + 1`);
  if (step.order) await step.order.previous;
  if (step.skip) {
    const [row] = await queryRows(
      tx,
      Prisma.sql`SELECT "skippedEntries" FROM "mirror_sources" WHERE "id" = ${claim.id}`,
    );
    const kept = [{ ...step.skip, at: new Date().toISOString() }, ...((asJson(row?.skippedEntries) as object[]) ?? [])];
    sets.push(Prisma.sql`"skippedEntries" = ${jsonArg(tx, kept.slice(0, KEPT_SKIPS), false)}`);
  }
  await setUnderLease(tx, claim, sets, step.order && Prisma.sql`"runOffset" = ${step.order.from}`);
}

/** The run moves to its next page. */
export async function nextPage(db: Queryable, claim: Claim, cursor: string): Promise<void> {
  await setUnderLease(db, claim, [Prisma.sql`"runCursor" = ${cursor}`, Prisma.sql`"runOffset" = 0`]);
}

/**
 * When the source is due again: `next`, unless a sync was asked for (or the source changed) after this
 * run began — that ask stands, so it is not lost to the run that was under way.
 */
function nextSync(next: Date): Prisma.Sql {
  return Prisma.sql`"nextSyncAt" = CASE WHEN "nextSyncAt" > "lastSyncAt" THEN "nextSyncAt" ELSE ${next} END`;
}

/** The run is done: its newest mark is where the next one starts. */
export async function finishRun(
  db: Queryable,
  claim: Claim,
  options: { mark: string | null; next: Date },
): Promise<void> {
  const now = new Date();
  await setUnderLease(db, claim, [
    Prisma.sql`"mark" = ${options.mark}`,
    Prisma.sql`"runSince" = NULL`,
    Prisma.sql`"runCursor" = NULL`,
    Prisma.sql`"runOffset" = 0`,
    Prisma.sql`"state" = 'IDLE'`,
    Prisma.sql`"failures" = 0`,
    Prisma.sql`"lastSuccessAt" = ${now}`,
    nextSync(options.next),
    Prisma.sql`"leaseUntil" = NULL`,
    Prisma.sql`"leaseToken" = NULL`,
  ]);
}

/** The run failed: the error kept, the position kept (the retry resumes there), the lease let go. */
export async function failRun(db: Db, claim: Claim, options: { message: string; next: Date }): Promise<void> {
  const row = await db.mirrorSource.findUnique({ where: { id: claim.id }, select: { lastErrors: true } });
  const kept = [{ at: new Date().toISOString(), message: options.message }, ...((row?.lastErrors as object[]) ?? [])];
  await setUnderLease(db, claim, [
    Prisma.sql`"state" = 'FAILED'`,
    Prisma.sql`"failures" = "failures" + 1`,
    Prisma.sql`"lastErrors" = ${jsonArg(db, kept.slice(0, KEPT_ERRORS), false)}`,
    nextSync(options.next),
    Prisma.sql`"leaseUntil" = NULL`,
    Prisma.sql`"leaseToken" = NULL`,
  ]).catch((error) => {
    if (!(error instanceof LeaseLost)) throw error;
  });
}

/** A mirrored provider as the sync compares it: its entry, and the profile state a change is made from. */
export interface EntryRow {
  providerId: number;
  providerCode: string;
  upstreamVersion: string | null;
  upstreamStatus: string;
  upstreamMark: string | null;
  snapshot: Record<string, unknown>;
  stateHash: string | null;
  unmapped: string[];
  lifecycle: string;
  lifecycleMessage: string | null;
  endpoint: unknown;
  policy: unknown;
}

export async function entryByName(db: Queryable, sourceRowId: number, upstreamName: string): Promise<EntryRow | null> {
  const [row] = await queryRows(
    db,
    Prisma.sql`SELECT e."providerId", p."providerCode", e."upstreamVersion", e."upstreamStatus", e."upstreamMark",
        e."snapshot", e."stateHash", e."unmapped", p."lifecycle", p."lifecycleMessage", p."endpoint", p."policy"
      FROM "mirror_entries" AS e JOIN "providers" AS p ON p."id" = e."providerId"
      WHERE e."sourceRowId" = ${sourceRowId} AND e."upstreamName" = ${upstreamName}`,
  );
  if (!row) return null;
  return {
    providerId: Number(row.providerId),
    providerCode: String(row.providerCode),
    upstreamVersion: (row.upstreamVersion as string | null) ?? null,
    upstreamStatus: String(row.upstreamStatus),
    upstreamMark: (row.upstreamMark as string | null) ?? null,
    snapshot: (asJson(row.snapshot) ?? {}) as Record<string, unknown>,
    stateHash: (row.stateHash as string | null) ?? null,
    unmapped: (asJson(row.unmapped) as string[] | null) ?? [],
    lifecycle: String(row.lifecycle),
    lifecycleMessage: (row.lifecycleMessage as string | null) ?? null,
    endpoint: asJson(row.endpoint),
    policy: asJson(row.policy),
  };
}

/**
 * Upstream names of the source's entries not written since `since` (a listing that did not meet
 * them), in name order after `after`.
 */
export async function unseenSince(
  db: Queryable,
  sourceRowId: number,
  options: { since: Date; after: string; limit: number },
): Promise<string[]> {
  const rows = await queryRows(
    db,
    Prisma.sql`SELECT "upstreamName" FROM "mirror_entries"
      WHERE "sourceRowId" = ${sourceRowId} AND "fetchedAt" < ${options.since} AND "upstreamName" > ${options.after}
      ORDER BY "upstreamName" LIMIT ${options.limit}`,
  );
  return rows.map((r) => String(r.upstreamName));
}

export interface EntryRecord {
  providerId: number;
  source: Pick<SourceRow, "id" | "sourceId" | "url" | "kind">;
  upstreamName: string;
  upstreamVersion: string | null;
  upstreamStatus: string;
  /** Null while a later step of the same entry is still to be written. */
  upstreamMark: string | null;
  upstreamMeta: unknown;
  snapshot: Record<string, unknown>;
  stateHash?: string | null;
  /** What the import could not map of the entry (JSON Pointers). */
  unmapped: string[];
}

/** Writes a provider's entry (made, or as the upstream now has it). */
export async function recordEntry(tx: Queryable, e: EntryRecord): Promise<void> {
  const now = new Date();
  const meta = jsonArg(tx, e.upstreamMeta ?? null);
  const snapshot = jsonArg(tx, e.snapshot, false);
  const unmapped = jsonArg(tx, e.unmapped, false);
  await queryRows(
    tx,
    Prisma.sql`INSERT INTO "mirror_entries" ("providerId", "sourceRowId", "sourceId", "sourceUrl", "kind", "upstreamName",
        "upstreamVersion", "upstreamStatus", "upstreamMark", "fetchedAt", "upstreamMeta", "snapshot", "stateHash", "unmapped")
      VALUES (${e.providerId}, ${e.source.id}, ${e.source.sourceId}, ${e.source.url}, ${e.source.kind}, ${e.upstreamName},
        ${e.upstreamVersion}, ${e.upstreamStatus}, ${e.upstreamMark}, ${now}, ${meta}, ${snapshot}, ${e.stateHash ?? null}, ${unmapped})
      ON CONFLICT ("providerId") DO UPDATE SET "upstreamVersion" = ${e.upstreamVersion}, "upstreamStatus" = ${e.upstreamStatus},
        "upstreamMark" = ${e.upstreamMark}, "fetchedAt" = ${now}, "upstreamMeta" = ${meta}, "snapshot" = ${snapshot},
        "stateHash" = ${e.stateHash ?? null}, "unmapped" = ${unmapped}`,
  );
}

/** A provider's origin: the entry it was made from, for the profile. */
export interface Origin {
  sourceId: string;
  sourceUrl: string;
  kind: string;
  upstreamName: string;
  upstreamVersion: string | null;
  upstreamStatus: string;
  fetchedAt: Date;
  upstreamMeta: unknown;
  stateHash: string | null;
  unmapped: string[];
}

export async function originOf(db: Queryable, providerId: number): Promise<Origin | null> {
  const [row] = await queryRows(
    db,
    Prisma.sql`SELECT "sourceId", "sourceUrl", "kind", "upstreamName", "upstreamVersion", "upstreamStatus", "fetchedAt", "upstreamMeta", "stateHash", "unmapped"
      FROM "mirror_entries" WHERE "providerId" = ${providerId}`,
  );
  if (!row) return null;
  return {
    sourceId: String(row.sourceId),
    sourceUrl: String(row.sourceUrl),
    kind: String(row.kind),
    upstreamName: String(row.upstreamName),
    upstreamVersion: (row.upstreamVersion as string | null) ?? null,
    upstreamStatus: String(row.upstreamStatus),
    fetchedAt: asDate(row.fetchedAt),
    upstreamMeta: asJson(row.upstreamMeta),
    stateHash: (row.stateHash as string | null) ?? null,
    unmapped: (asJson(row.unmapped) as string[] | null) ?? [],
  };
}
