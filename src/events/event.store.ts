/**
 * The change log's SQL: appending inside a write's transaction, reading by `seq`, retention.
 *
 * Commit order. A reader pages by `seq` and must never skip an event that commits after a higher
 * one. SQLite has one writer at a time, so its AUTOINCREMENT follows commit order. PostgreSQL hands
 * out sequence values to concurrent transactions, which may commit in another order; so a write
 * takes a transaction-scoped advisory lock just before it appends, as its last statement, and holds
 * it through its commit. The next writer gets its `seq` only once the previous one has committed
 * (and is visible), so whatever a reader sees is a gap-free prefix of what will ever be there (an
 * aborted write leaves a hole that never fills, which a reader does not wait for). The lock is held
 * for the append and the commit only, not the write's own work.
 */
import { type Db, dialectIn, jsonArg, type Queryable, queryRows, rawTransaction } from "../db/client.ts";
import { asDate, columnList, columnsOf, pickColumns, rowReader } from "../db/model.ts";
import { Prisma } from "../generated/prisma/client.ts";
import {
  ADMIN_EVENT_KINDS,
  type Audience,
  draftsOfWrite,
  type EventDraft,
  PROVIDER_EVENT_KINDS,
  type ProviderState,
  PUBLIC_OWNER_FIELDS,
  PUBLIC_STATE_FIELDS,
  type PublicSnapshot,
  publicSnapshot,
  type Write,
} from "./event.rules.ts";

/** An event as the log holds it: its draft, with its place and time. */
export type LoggedEvent = EventDraft & { seq: number; at: Date };

const EVENT = columnsOf("Event");
const eventRow = rowReader<LoggedEvent>(EVENT);
const EVENT_SQL = Prisma.raw(columnList(EVENT));

/** Any 64-bit number the registry's writers agree on: the advisory lock of the log's order. */
const APPEND_LOCK = 4_172_001_296;

/**
 * Appends events: call it as the LAST statement of the write's transaction (see above). Any
 * transaction will do, Prisma's interactive ones and `rawTransaction`'s alike.
 */
export async function appendEvents(tx: Queryable, drafts: readonly EventDraft[]): Promise<LoggedEvent[]> {
  if (drafts.length === 0) return [];
  const dialect = dialectIn(tx);
  if (dialect === "postgresql") {
    await queryRows(tx, Prisma.sql`SELECT 1 AS "locked" FROM pg_advisory_xact_lock(CAST(${APPEND_LOCK} AS bigint))`);
  }
  const at = new Date();
  const rows = drafts.map(
    (d) =>
      Prisma.sql`(${at}, ${d.kind}, ${d.providerId}, ${d.providerCode}, ${d.version}, ${d.reviewCode}, ${jsonArg(tx, d.patch)}, ${d.stateHash}, ${d.note}, ${d.listed})`,
  );
  const written = await queryRows(
    tx,
    Prisma.sql`INSERT INTO "events" ("at", "kind", "providerId", "providerCode", "version", "reviewCode", "patch", "stateHash", "note", "listed")
      VALUES ${Prisma.join(rows)} RETURNING "seq"`,
  );
  // The rows are the drafts as given: only their seqs are read back (in the order of the VALUES).
  const seqs = written.map((r) => Number(r.seq)).sort((a, b) => a - b);
  return drafts.map((draft, i) => ({ ...draft, seq: seqs[i] as number, at }));
}

/** What a public snapshot is read from: a write that has not the provider's row in hand reads these. */
export const STATE_FIELDS = ["id", "providerCode", ...PUBLIC_OWNER_FIELDS, ...PUBLIC_STATE_FIELDS, "version"] as const;
const STATE = pickColumns("Provider", STATE_FIELDS);
export type StateRow = ProviderState & { id: number; version: number };
const stateRow = rowReader<StateRow>(STATE);
const STATE_SQL = Prisma.raw(columnList(STATE));

/** A provider's state as the write's transaction sees it, for its public snapshot. */
export async function providerState(tx: Queryable, providerId: number): Promise<StateRow> {
  const [raw] = await queryRows(tx, Prisma.sql`SELECT ${STATE_SQL} FROM "providers" WHERE "id" = ${providerId}`);
  if (!raw) throw new Error(`No provider with id ${providerId}`);
  return stateRow(raw);
}

/**
 * Logs what a write did to a provider, as the LAST statement of its transaction: the state after it
 * is the one given (a write that has the row in hand) or read here.
 */
export async function logWrite(
  tx: Queryable,
  write: Omit<Write, "before" | "after" | "version"> & {
    /** The snapshot before; null for a creation; "unchanged" when the write left the provider as it was. */
    before: PublicSnapshot | null | "unchanged";
    after?: StateRow;
  },
): Promise<LoggedEvent[]> {
  if (write.events.length === 0) return [];
  const state = write.after ?? (await providerState(tx, write.providerId));
  const after = publicSnapshot(state);
  const before = write.before === "unchanged" ? after : write.before;
  return appendEvents(tx, draftsOfWrite({ ...write, before, after, version: state.version }));
}

/** The public snapshot of a provider as the transaction sees it (before a write that lacks the row). */
export async function snapshotBefore(tx: Queryable, providerId: number): Promise<PublicSnapshot> {
  return publicSnapshot(await providerState(tx, providerId));
}

/** The SQL form of event.rules.ts `visibleTo`: what an audience may read. */
function audienceSql(audience: Audience): Prisma.Sql {
  if (audience.kind === "admin") return Prisma.empty;
  if (audience.kind === "reviewer") {
    return Prisma.sql`AND "kind" NOT IN (${Prisma.join(ADMIN_EVENT_KINDS.map((k) => Prisma.sql`${k}`))})`;
  }
  const kinds = Prisma.join(PROVIDER_EVENT_KINDS.map((k) => Prisma.sql`${k}`));
  const listed = Prisma.sql`("listed" = ${true} AND "kind" IN (${kinds}))`;
  if (audience.kind === "agent") return Prisma.sql`AND (${listed} OR "providerId" = ${audience.providerId})`;
  return Prisma.sql`AND ${listed}`;
}

export interface EventQuery {
  after: number;
  limit: number;
  audience: Audience;
  providerId?: number | undefined;
  providerCode?: string | undefined;
  kinds?: readonly string[] | undefined;
}

/** The filters of a query, as SQL. */
function filterSql(q: Omit<EventQuery, "after" | "limit">): Prisma.Sql {
  return Prisma.sql`${audienceSql(q.audience)}
    ${q.providerId === undefined ? Prisma.empty : Prisma.sql`AND "providerId" = ${q.providerId}`}
    ${q.providerCode === undefined ? Prisma.empty : Prisma.sql`AND "providerCode" = ${q.providerCode}`}
    ${q.kinds?.length ? Prisma.sql`AND "kind" IN (${Prisma.join(q.kinds.map((k) => Prisma.sql`${k}`))})` : Prisma.empty}`;
}

/** The events after `after`, oldest first, that the audience may see and the filters keep. */
export async function readEvents(db: Queryable, q: EventQuery): Promise<LoggedEvent[]> {
  const rows = await queryRows(
    db,
    Prisma.sql`SELECT ${EVENT_SQL} FROM "events" WHERE "seq" > ${q.after} ${filterSql(q)} ORDER BY "seq" LIMIT ${q.limit}`,
  );
  return rows.map(eventRow);
}

/** The last `limit` events the audience may see and the filters keep, oldest first. */
export async function lastEvents(db: Queryable, q: Omit<EventQuery, "after">): Promise<LoggedEvent[]> {
  const rows = await queryRows(
    db,
    Prisma.sql`SELECT ${EVENT_SQL} FROM "events" WHERE 1 = 1 ${filterSql(q)} ORDER BY "seq" DESC LIMIT ${q.limit}`,
  );
  return rows.map(eventRow).reverse();
}

/** The highest seq written so far (0 for none): where a reader that wants only new events starts. */
export async function lastSeq(db: Queryable): Promise<number> {
  const [row] = await queryRows(db, Prisma.sql`SELECT MAX("seq") AS "seq" FROM "events"`);
  return Number(row?.seq ?? 0);
}

/** The highest seq retention has deleted: asking from before it cannot be answered. */
export async function prunedThrough(db: Queryable): Promise<number> {
  const [row] = await queryRows(db, Prisma.sql`SELECT "prunedThrough" FROM "event_retention" WHERE "id" = 1`);
  return Number(row?.prunedThrough ?? 0);
}

/** How many of the oldest events retention looks at, and deletes, per transaction. */
const PRUNE_BATCH = 1000;

/**
 * Deletes the events older than `before`: the longest prefix of the log (by seq) written before it,
 * so that what is left is everything after one seq, which is recorded with each deletion. It never
 * deletes the newest event: on SQLite the next seq is the highest left plus one.
 */
export async function pruneEvents(db: Db, before: Date): Promise<number> {
  let through = 0;
  for (;;) {
    const cut = await rawTransaction(db, async (tx) => {
      const oldest = await queryRows(
        tx,
        Prisma.sql`SELECT "seq", "at" FROM "events" WHERE "seq" < (SELECT MAX("seq") FROM "events")
          ORDER BY "seq" LIMIT ${PRUNE_BATCH}`,
      );
      let last = 0;
      for (const row of oldest) {
        if (asDate(row.at) >= before) break;
        last = Number(row.seq);
      }
      if (last === 0) return { last, more: false };
      await queryRows(tx, Prisma.sql`DELETE FROM "events" WHERE "seq" <= ${last}`);
      await queryRows(
        tx,
        Prisma.sql`UPDATE "event_retention" SET "prunedThrough" = ${last} WHERE "id" = 1 AND "prunedThrough" < ${last}`,
      );
      return { last, more: last === Number(oldest[oldest.length - 1]?.seq) && oldest.length === PRUNE_BATCH };
    });
    through = cut.last || through;
    if (!cut.more) return through;
  }
}

/** An event as JSON, as a client reads it (a webhook's payload carries it). */
export function eventJson(e: LoggedEvent): Record<string, unknown> {
  return {
    seq: e.seq,
    at: e.at.toISOString(),
    kind: e.kind,
    providerCode: e.providerCode,
    version: e.version,
    reviewCode: e.reviewCode,
    patch: e.patch,
    stateHash: e.stateHash,
    note: e.note,
  };
}
