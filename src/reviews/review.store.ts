/**
 * The review workflow's writes. Each action reads the review and its provider, asks the rules in
 * review.rules.ts where they go, and writes the review's status, the provider's stage (and tokens,
 * on suspension) and the timeline event together in one transaction. A refused move is a 409 that
 * names the current state; a review that changed meanwhile is a 409 too, never a silent overwrite.
 */
import { MAX_SUBJECT } from "../auth/reviewer.jwt.ts";
import { assignments, type Db, type Dialect, dialectIn, type Queryable, queryRows } from "../db/client.ts";
import { asJson, columnList, columnsOf, pickColumns, rowReader } from "../db/model.ts";
import { badInput, conflict, notFound } from "../errors.ts";
import { eventsOfMove } from "../events/event.rules.ts";
import { type LoggedEvent, logWrite, snapshotBefore } from "../events/event.store.ts";
import { noteAppended, noteFeed } from "../feed/feed.outbox.ts";
import { Prisma } from "../generated/prisma/client.ts";
import { touchReleases } from "../interop/mcp.registry.store.ts";
import {
  providerMatchSql,
  providersTable,
  type SqlTable,
  searchWords,
  whereSql,
} from "../providers/provider.search.store.ts";
import { insertEvents, type NewEvent } from "../providers/provider.store.ts";
import { fits } from "../text.ts";
import { endpointVerified } from "../trust/domain.store.ts";
import {
  ACTIVE_STATUSES,
  assign,
  DEFAULT_PRIORITY,
  type Decision,
  decide,
  isActive,
  type Move,
  noteRequired,
  type Outcome,
  type Priority,
  priorityRank,
  type ReviewKind,
  type ReviewStatus,
  reinstate,
  suspend,
  type WorkflowState,
} from "./review.rules.ts";

type Tx = Prisma.TransactionClient;

/** The review columns a move may also set. */
type ReviewColumns = Partial<{ assignedTo: string; priority: Priority; priorityRank: number }>;

/**
 * Writes a move of the workflow: the review (if any), the provider, tokens and the timeline — in raw
 * statements (`queryRows`), so that it runs in any transaction, a PATCH's raw one included.
 */
export async function applyMove(
  tx: Queryable,
  target: { providerId: number; stage: string; review?: { id: number; status: ReviewStatus } },
  move: Move,
  actor: string,
  options: { note?: string | null; review?: ReviewColumns; provider?: Partial<{ trustTier: string }> } = {},
): Promise<{ revokedTokenIds: string[] }> {
  const now = new Date();
  const { review } = target;
  if (review && (move.status || options.review)) {
    const sets = {
      ...(move.status ? { status: move.status, ...(isActive(move.status) ? {} : { decidedAt: now }) } : {}),
      ...options.review,
      updatedAt: now,
    };
    await updateUnchanged(tx, "reviews", sets, Prisma.sql`"id" = ${review.id} AND "status" = ${review.status}`);
  }
  if (move.stage || options.provider) {
    // Only from the stage the move was decided on: a concurrent move makes this one a 409.
    const sets = { ...(move.stage ? { reviewStage: move.stage } : {}), ...options.provider, updatedAt: now };
    const where = Prisma.sql`"id" = ${target.providerId} AND "reviewStage" = ${target.stage}`;
    await updateUnchanged(tx, "providers", sets, where);
    // Approved or no longer: its MCP server's entries come or go, which readers of updated_since must see.
    if (move.stage) await touchReleases(tx, target.providerId, now);
  }
  const reviewId = review?.id ?? null;
  const events: NewEvent[] = [
    { reviewId, kind: move.event, actor, note: options.note ?? null, at: now },
    ...(move.also ? [{ reviewId, kind: move.also, actor, note: null, at: now }] : []),
  ];
  let revoked: Record<string, unknown>[] = [];
  if (move.revokeTokens) {
    revoked = await queryRows(
      tx,
      Prisma.sql`UPDATE "access_tokens" SET "revokedAt" = ${now} WHERE "providerId" = ${target.providerId} AND "revokedAt" IS NULL RETURNING "tokenId"`,
    );
    // Whatever review was still open is moot once the provider is suspended.
    await queryRows(
      tx,
      Prisma.sql`UPDATE "reviews" SET "status" = 'WITHDRAWN', "decidedAt" = ${now}, "updatedAt" = ${now}
        WHERE "providerId" = ${target.providerId} AND "status" IN (${Prisma.join([...ACTIVE_STATUSES])})
        ${review ? Prisma.sql`AND "id" <> ${review.id}` : Prisma.empty}`,
    );
    if (revoked.length > 0) {
      const note = `all ${revoked.length} active token(s), on suspension`;
      events.push({ reviewId: null, kind: "TOKEN_REVOKED", actor, note, at: now });
    }
  }
  await insertEvents(tx, target.providerId, events);
  return { revokedTokenIds: revoked.map((r) => String(r.tokenId)) };
}

/** Notes, once committed, a write's events and the tokens it revoked (which end their streams at once). */
function noteCommitted(providerId: number, written: { events: LoggedEvent[]; revokedTokenIds: string[] }): void {
  noteAppended(written.events);
  if (written.revokedTokenIds.length > 0) {
    noteFeed({ kind: "TOKENS_REVOKED", providerId, tokenIds: written.revokedTokenIds });
  }
}

/** Updates the one row still as the move found it (`where`); a 409 if it changed meanwhile. */
async function updateUnchanged(
  tx: Queryable,
  table: "reviews" | "providers",
  columns: Record<string, unknown>,
  where: Prisma.Sql,
): Promise<void> {
  const written = await queryRows(
    tx,
    Prisma.sql`UPDATE ${Prisma.raw(`"${table}"`)} SET ${Prisma.join(assignments(columns))} WHERE ${where} RETURNING "id"`,
  );
  const what = table === "reviews" ? "review" : "provider";
  if (written.length !== 1) throw conflict(`The ${what} changed while this was applied; read it and retry`);
}

/** The provider's active review (at most one: the database holds it to that), or null. */
export async function activeReviewOf(
  tx: Queryable,
  providerId: number,
): Promise<{ id: number; code: string; kind: ReviewKind; status: ReviewStatus } | null> {
  const [active] = await queryRows(
    tx,
    Prisma.sql`SELECT "id", "reviewCode", "kind", "status" FROM "reviews"
      WHERE "providerId" = ${providerId} AND "status" IN (${Prisma.join([...ACTIVE_STATUSES])}) LIMIT 1`,
  );
  return active
    ? {
        id: Number(active.id),
        code: active.reviewCode as string,
        kind: active.kind as ReviewKind,
        status: active.status as ReviewStatus,
      }
    : null;
}

/** Opens a review of the provider at the default priority; answers its id. */
export async function openReview(
  tx: Queryable,
  input: { reviewCode: string; providerId: number; kind: ReviewKind; now: Date },
): Promise<number> {
  const { reviewCode, providerId, kind, now } = input;
  const [review] = await queryRows(
    tx,
    Prisma.sql`INSERT INTO "reviews" ("reviewCode", "providerId", "kind", "status", "priority", "priorityRank", "createdAt", "updatedAt")
      VALUES (${reviewCode}, ${providerId}, ${kind}, 'OPEN', ${DEFAULT_PRIORITY}, ${priorityRank(DEFAULT_PRIORITY)}, ${now}, ${now})
      RETURNING "id"`,
  );
  return Number(review?.id);
}

function settle(outcome: Outcome): Move {
  if (!outcome.ok) throw conflict(outcome.reason);
  return outcome.move;
}

/** A reviewer's note: trimmed, 1–2000 characters; required where the rules say so. */
export function checkedNote(note: string | null | undefined, required: boolean): string | null {
  const text = note?.trim() ?? "";
  if (required && !text) throw badInput("A note is required: say why", [{ path: "note", message: "is required" }]);
  if (!fits(text, 2000))
    throw badInput("note must be at most 2000 characters", [{ path: "note", message: "at most 2000 characters" }]);
  return text || null;
}

async function loadReview(tx: Tx, reviewCode: string) {
  const review = await tx.review.findUnique({
    where: { reviewCode },
    select: {
      id: true,
      reviewCode: true,
      kind: true,
      status: true,
      assignedTo: true,
      providerId: true,
      provider: { select: { reviewStage: true } },
    },
  });
  if (!review) throw notFound(`No review "${reviewCode}"`);
  const state: WorkflowState = {
    review: { code: review.reviewCode, kind: review.kind as ReviewKind, status: review.status as ReviewStatus },
    stage: review.provider.reviewStage,
  };
  return {
    review: { id: review.id, status: review.status as ReviewStatus },
    providerId: review.providerId,
    assignedTo: review.assignedTo,
    state,
  };
}

export async function assignReview(db: Db, reviewCode: string, assignee: string, actor: string): Promise<void> {
  const who = assignee.trim();
  if (!who || !fits(who, MAX_SUBJECT))
    throw badInput(`assignee must be 1–${MAX_SUBJECT} characters`, [
      { path: "assignee", message: `1–${MAX_SUBJECT} characters` },
    ]);
  const events = await db.$transaction(async (tx) => {
    const { review, providerId, state } = await loadReview(tx, reviewCode);
    const move = settle(assign(state));
    const before = await snapshotBefore(tx, providerId);
    await applyMove(tx, { providerId, stage: state.stage, review }, move, actor, {
      note: `assigned to ${who}`,
      review: { assignedTo: who },
    });
    return logWrite(tx, { providerId, before, events: eventsOfMove(move, reviewCode) });
  });
  noteAppended(events);
}

export async function decideReview(
  db: Db,
  input: {
    reviewCode: string;
    decision: Decision;
    note?: string | null;
    trustTier?: string | null;
    actor: string;
    reviewer: string;
  },
): Promise<void> {
  const note = checkedNote(input.note, noteRequired(input.decision));
  if (input.trustTier && input.decision !== "APPROVE") {
    throw badInput("trustTier can only be set when approving", [{ path: "trustTier", message: "only with APPROVE" }]);
  }
  const written = await db.$transaction(async (tx) => {
    const { review, providerId, assignedTo, state } = await loadReview(tx, input.reviewCode);
    const move = settle(decide(state, input.decision));
    const before = await snapshotBefore(tx, providerId);
    // Approving an agent whose endpoint's domain nobody proved control of is a choice to explain.
    if (input.decision === "APPROVE" && !note && !(await endpointVerified(tx, providerId))) {
      throw badInput("A note is required to approve an agent whose endpoint's domain is not verified", [
        { path: "note", message: "is required when the endpoint's domain is not verified" },
      ]);
    }
    const { revokedTokenIds } = await applyMove(tx, { providerId, stage: state.stage, review }, move, input.actor, {
      note,
      // Whoever decides an unassigned review is the one who reviewed it.
      ...(assignedTo ? {} : { review: { assignedTo: input.reviewer } }),
      ...(input.trustTier ? { provider: { trustTier: input.trustTier } } : {}),
    });
    const events = await logWrite(tx, { providerId, before, events: eventsOfMove(move, input.reviewCode) });
    return { providerId, events, revokedTokenIds };
  });
  noteCommitted(written.providerId, written);
}

export async function setReviewPriority(db: Db, reviewCode: string, priority: Priority, actor: string): Promise<void> {
  const events = await db.$transaction(async (tx) => {
    const { review, providerId, state } = await loadReview(tx, reviewCode);
    if (!isActive(review.status))
      throw conflict(`review ${reviewCode} is ${review.status}; only an active review can be reprioritised`);
    await applyMove(tx, { providerId, stage: state.stage, review }, { event: "PRIORITY_CHANGED" }, actor, {
      note: `priority set to ${priority}`,
      review: { priority, priorityRank: priorityRank(priority) },
    });
    return logWrite(tx, {
      providerId,
      before: "unchanged",
      events: eventsOfMove({ event: "PRIORITY_CHANGED" }, reviewCode),
    });
  });
  noteAppended(events);
}

export async function commentOnReview(db: Db, reviewCode: string, note: string, actor: string): Promise<number> {
  const text = checkedNote(note, true);
  const written = await db.$transaction(async (tx) => {
    const { review, providerId } = await loadReview(tx, reviewCode);
    const event = await tx.reviewEvent.create({
      data: { providerId, reviewId: review.id, kind: "COMMENTED", actor, note: text },
      select: { id: true },
    });
    const events = await logWrite(tx, {
      providerId,
      before: "unchanged",
      events: [{ kind: "REVIEW_COMMENTED", reviewCode }],
    });
    return { id: event.id, events };
  });
  noteAppended(written.events);
  return written.id;
}

/** Suspends or reinstates a provider. */
export async function moderateProvider(
  db: Db,
  input: { providerCode: string; action: "suspend" | "reinstate"; note?: string | null; actor: string },
): Promise<void> {
  const note = checkedNote(input.note, input.action === "suspend");
  const written = await db.$transaction(async (tx) => {
    const provider = await tx.provider.findUnique({
      where: { providerCode: input.providerCode },
      select: { id: true, reviewStage: true },
    });
    if (!provider) throw notFound(`No provider "${input.providerCode}"`);
    const outcome = input.action === "suspend" ? suspend(provider.reviewStage) : reinstate(provider.reviewStage);
    const move = settle(outcome);
    const before = await snapshotBefore(tx, provider.id);
    const { revokedTokenIds } = await applyMove(
      tx,
      { providerId: provider.id, stage: provider.reviewStage },
      move,
      input.actor,
      { note },
    );
    const events = await logWrite(tx, { providerId: provider.id, before, events: eventsOfMove(move, null) });
    return { providerId: provider.id, events, revokedTokenIds };
  });
  noteCommitted(written.providerId, written);
}

// ── The reviewers' queue ───────────────────────────────────────────────────────────────────────

/** A review as the queue answers it, with its provider's code, name, packages, health state and drift. */
export type ReviewRow = Prisma.ReviewGetPayload<{
  include: {
    provider: {
      select: {
        providerCode: true;
        name: true;
        packages: true;
        healthState: true;
        health: { select: { drift: true; driftAt: true } };
      };
    };
  };
}>;

/**
 * The queue's orders, each a keyset: the columns it sorts by (then the id) and their direction.
 * PRIORITY is the API's own (most urgent, then oldest) and runs on the (status, priorityRank,
 * createdAt, id) index; the others sort the few active reviews by one timestamp.
 */
export const QUEUE_SORTS = {
  PRIORITY: { keys: ["priorityRank", "createdAt"], desc: false },
  OLDEST: { keys: ["createdAt"], desc: false },
  NEWEST: { keys: ["createdAt"], desc: true },
  RECENTLY_UPDATED: { keys: ["updatedAt"], desc: true },
  LEAST_RECENTLY_UPDATED: { keys: ["updatedAt"], desc: false },
} as const satisfies Record<string, { keys: readonly ("priorityRank" | "createdAt" | "updatedAt")[]; desc: boolean }>;
export type QueueSort = keyof typeof QUEUE_SORTS;

/** The ORDER BY of a sort over the reviews as `r`. */
function queueOrderSql(sort: QueueSort): Prisma.Sql {
  const { keys, desc } = QUEUE_SORTS[sort];
  const dir = desc ? "DESC" : "ASC";
  return Prisma.raw([...keys, "id"].map((k) => `r."${k}" ${dir}`).join(", "));
}

/**
 * The queue's search: each whitespace-separated term must match the review code (a prefix,
 * upper-cased: `rv-ab` finds RV-AB…) or, word by word, the provider's code or name (prefixes, on the
 * provider full-text index restricted to those two fields). Terms keep only the characters review
 * codes hold, so nothing of the user's text is a LIKE/GLOB wildcard or reaches the query raw.
 */
function queueTerms(search: string | null | undefined): { code: string; words: string[] }[] {
  if (search === null || search === undefined) return [];
  searchWords(search); // the length rule of every search
  return search
    .split(/\s+/)
    .filter(Boolean)
    .slice(0, 16)
    .map((term) => ({ code: term.toUpperCase().replace(/[^A-Z0-9-]+/g, ""), words: searchWords(term) }))
    .filter((t) => t.code !== "" || t.words.length > 0);
}

function queueTermSql(dialect: Dialect, term: { code: string; words: string[] }): Prisma.Sql {
  const parts: Prisma.Sql[] = [];
  if (term.code !== "")
    parts.push(
      dialect === "postgresql"
        ? Prisma.sql`r."reviewCode" LIKE ${`${term.code}%`}`
        : // GLOB is case-sensitive and uses the unique index on reviewCode for a constant prefix.
          Prisma.sql`r."reviewCode" GLOB ${`${term.code}*`}`,
    );
  if (term.words.length > 0) parts.push(providerMatchSql(dialect, "p", term.words, "codeAndName"));
  return Prisma.sql`(${Prisma.join(parts, " OR ")})`;
}

/** The reviews table as `r` joined to its provider as `p`, for whereSql. */
const REVIEWS_TABLE: SqlTable = {
  alias: "r",
  columns: new Set(["id", "status", "priority", "priorityRank", "assignedTo", "createdAt", "updatedAt"]),
  relations: { provider: (value) => whereSql(value, providersTable("p")) },
};

const REVIEW = columnsOf("Review");
const reviewRow = rowReader<Omit<ReviewRow, "provider">>(REVIEW);
/** The provider's `publisherVerified`, as the model converts it (0/1 on SQLite). */
const verifiedOf = rowReader<{ publisherVerified: boolean }>(pickColumns("Provider", ["publisherVerified"]));
/** When the drift was detected, as the model converts it (text or a number on SQLite). */
const driftAtReader = rowReader<{ driftAt: Date | null }>(pickColumns("ProviderHealth", ["driftAt"]));
const driftAtOf = (f: Record<string, unknown>) => driftAtReader(f).driftAt;

/**
 * One page of the queue in one statement: the filters (a Prisma `where`), the search on the index
 * and the order in SQL, each review with its provider's code and name (Prisma's include would be a
 * second query). The page is cut on the reviews first and only its rows are joined to their
 * providers: joined before the cut, every active review's provider row was read. The providers
 * table is in the cut only when a filter or the search needs it.
 */
export async function queuePage(
  db: Queryable,
  input: {
    where: Prisma.ReviewWhereInput;
    search: string | null | undefined;
    byProviderCode: boolean;
    /** Only reviews of providers whose endpoint's domain is (true) or is not (false) verified. */
    endpointVerified?: boolean | null;
    sort?: QueueSort;
    take: number;
  },
): Promise<(ReviewRow & { endpointVerified: boolean })[]> {
  const order = queueOrderSql(input.sort ?? "PRIORITY");
  const terms = queueTerms(input.search);
  const dialect = dialectIn(db);
  const search = terms.length
    ? Prisma.sql` AND ${Prisma.join(
        terms.map((term) => queueTermSql(dialect, term)),
        " AND ",
      )}`
    : Prisma.empty;
  const filterVerified = input.endpointVerified !== null && input.endpointVerified !== undefined;
  const byProvider = terms.length > 0 || input.byProviderCode || filterVerified;
  // The provider's column, kept in step with its domains (src/trust/domain.store.ts).
  const verified = !filterVerified
    ? Prisma.empty
    : input.endpointVerified
      ? Prisma.sql` AND p."publisherVerified"`
      : Prisma.sql` AND NOT p."publisherVerified"`;
  const found = await queryRows(
    db,
    Prisma.sql`
    SELECT ${Prisma.raw(columnList(REVIEW, "r"))}, p."providerCode" AS "providerCode", p."name" AS "providerName",
           p."packages" AS "providerPackages", p."publisherVerified" AS "publisherVerified", p."healthState" AS "providerHealthState",
           h."providerId" AS "healthProviderId", h."drift" AS "drift", h."driftAt" AS "driftAt"
    FROM (
      SELECT r.* FROM "reviews" AS r
      ${byProvider ? Prisma.sql`JOIN "providers" AS p ON p."id" = r."providerId"` : Prisma.empty}
      WHERE ${whereSql(input.where, REVIEWS_TABLE)}${search}${verified}
      ORDER BY ${order}
      LIMIT ${input.take}
    ) AS r JOIN "providers" AS p ON p."id" = r."providerId"
    LEFT JOIN "provider_health" AS h ON h."providerId" = r."providerId"
    ORDER BY ${order}`,
    // Open reviews are few among many decided ones, and a search may narrow them further.
    { planEach: true },
  );
  return found.map((f) =>
    Object.assign(reviewRow(f), {
      provider: {
        providerCode: f.providerCode as string,
        name: f.providerName as string,
        packages: asJson(f.providerPackages) as Prisma.JsonValue,
        healthState: (f.providerHealthState as string | null) ?? null,
        health:
          f.healthProviderId === null ? null : { drift: asJson(f.drift) as Prisma.JsonValue, driftAt: driftAtOf(f) },
      },
      endpointVerified: verifiedOf(f).publisherVerified,
    }),
  );
}
