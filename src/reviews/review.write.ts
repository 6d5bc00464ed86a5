/**
 * The review workflow's writes. Each action reads the review and its provider, asks the rules in
 * review.rules.ts where they go, and writes the review's status, the provider's stage (and tokens,
 * on suspension) and the timeline event together in one transaction. A refused move is a 409 that
 * names the current state; a review that changed meanwhile is a 409 too, never a silent overwrite.
 */
import type { Db } from "../db.ts";
import { badInput, conflict, notFound } from "../errors.ts";
import { type FeedNote, noteFeed, notesOfMove } from "../feed/feed.outbox.ts";
import type { Prisma } from "../generated/prisma/client.ts";
import {
  ACTIVE_STATUSES,
  assign,
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

/** Writes a move of the workflow: the review (if any), the provider, tokens and the timeline. */
export async function applyMove(
  tx: Tx,
  target: { providerId: number; stage: string; review?: { id: number; status: ReviewStatus } },
  move: Move,
  actor: string,
  options: {
    note?: string | null;
    review?: Prisma.ReviewUpdateManyMutationInput;
    provider?: Prisma.ProviderUpdateManyMutationInput;
  } = {},
): Promise<void> {
  const now = new Date();
  const { review } = target;
  if (review && (move.status || options.review)) {
    const written = await tx.review.updateMany({
      where: { id: review.id, status: review.status },
      data: {
        ...(move.status ? { status: move.status, ...(isActive(move.status) ? {} : { decidedAt: now }) } : {}),
        ...options.review,
      },
    });
    if (written.count !== 1) throw conflict("The review changed while this was applied; read it and retry");
  }
  if (move.stage || options.provider) {
    // Only from the stage the move was decided on: a concurrent move makes this one a 409.
    const written = await tx.provider.updateMany({
      where: { id: target.providerId, reviewStage: target.stage },
      data: { ...(move.stage ? { reviewStage: move.stage } : {}), ...options.provider },
    });
    if (written.count !== 1) throw conflict("The provider changed while this was applied; read it and retry");
  }
  const events: Prisma.ReviewEventCreateManyInput[] = [
    {
      providerId: target.providerId,
      reviewId: review?.id ?? null,
      kind: move.event,
      actor,
      note: options.note ?? null,
    },
    ...(move.also ? [{ providerId: target.providerId, reviewId: review?.id ?? null, kind: move.also, actor }] : []),
  ];
  if (move.revokeTokens) {
    const revoked = await tx.accessToken.updateMany({
      where: { providerId: target.providerId, revokedAt: null },
      data: { revokedAt: now },
    });
    // Whatever review was still open is moot once the provider is suspended.
    await tx.review.updateMany({
      where: {
        providerId: target.providerId,
        status: { in: [...ACTIVE_STATUSES] },
        ...(review ? { id: { not: review.id } } : {}),
      },
      data: { status: "WITHDRAWN", decidedAt: now },
    });
    if (revoked.count > 0) {
      events.push({
        providerId: target.providerId,
        kind: "TOKEN_REVOKED",
        actor,
        note: `all ${revoked.count} active token(s), on suspension`,
      });
    }
  }
  await tx.reviewEvent.createMany({ data: events });
}

function settle(outcome: Outcome): Move {
  if (!outcome.ok) throw conflict(outcome.reason);
  return outcome.move;
}

/** A reviewer's note: trimmed, 1–2000 characters; required where the rules say so. */
export function checkedNote(note: string | null | undefined, required: boolean): string | null {
  const text = note?.trim() ?? "";
  if (required && !text) throw badInput("A note is required: say why", [{ path: "note", message: "is required" }]);
  if (text.length > 2000)
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
  if (!who || who.length > 200)
    throw badInput("assignee must be 1–200 characters", [{ path: "assignee", message: "1–200 characters" }]);
  const notes = await db.$transaction(async (tx) => {
    const { review, providerId, state } = await loadReview(tx, reviewCode);
    const move = settle(assign(state));
    await applyMove(tx, { providerId, stage: state.stage, review }, move, actor, {
      note: `assigned to ${who}`,
      review: { assignedTo: who },
    });
    return notesOfMove(move, { providerId, reviewId: review.id });
  });
  noteFeed(...notes);
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
  const notes = await db.$transaction(async (tx) => {
    const { review, providerId, assignedTo, state } = await loadReview(tx, input.reviewCode);
    const move = settle(decide(state, input.decision));
    await applyMove(tx, { providerId, stage: state.stage, review }, move, input.actor, {
      note,
      // Whoever decides an unassigned review is the one who reviewed it.
      ...(assignedTo ? {} : { review: { assignedTo: input.reviewer } }),
      ...(input.trustTier ? { provider: { trustTier: input.trustTier } } : {}),
    });
    return notesOfMove(move, { providerId, reviewId: review.id });
  });
  noteFeed(...notes);
}

export async function setReviewPriority(db: Db, reviewCode: string, priority: Priority, actor: string): Promise<void> {
  const notes = await db.$transaction(async (tx) => {
    const { review, providerId, state } = await loadReview(tx, reviewCode);
    if (!isActive(review.status))
      throw conflict(`review ${reviewCode} is ${review.status}; only an active review can be reprioritised`);
    await applyMove(tx, { providerId, stage: state.stage, review }, { event: "PRIORITY_CHANGED" }, actor, {
      note: `priority set to ${priority}`,
      review: { priority, priorityRank: priorityRank(priority) },
    });
    return notesOfMove({ event: "PRIORITY_CHANGED" }, { providerId, reviewId: review.id });
  });
  noteFeed(...notes);
}

export async function commentOnReview(db: Db, reviewCode: string, note: string, actor: string): Promise<number> {
  const text = checkedNote(note, true);
  const written = await db.$transaction(async (tx) => {
    const { review, providerId } = await loadReview(tx, reviewCode);
    const event = await tx.reviewEvent.create({
      data: { providerId, reviewId: review.id, kind: "COMMENTED", actor, note: text },
      select: { id: true },
    });
    return { id: event.id, note: { kind: "REVIEW_COMMENTED", providerId, reviewId: review.id } satisfies FeedNote };
  });
  noteFeed(written.note);
  return written.id;
}

/** Suspends or reinstates a provider. */
export async function moderateProvider(
  db: Db,
  input: { providerCode: string; action: "suspend" | "reinstate"; note?: string | null; actor: string },
): Promise<void> {
  const note = checkedNote(input.note, input.action === "suspend");
  const notes = await db.$transaction(async (tx) => {
    const provider = await tx.provider.findUnique({
      where: { providerCode: input.providerCode },
      select: { id: true, reviewStage: true },
    });
    if (!provider) throw notFound(`No provider "${input.providerCode}"`);
    const outcome = input.action === "suspend" ? suspend(provider.reviewStage) : reinstate(provider.reviewStage);
    const move = settle(outcome);
    await applyMove(tx, { providerId: provider.id, stage: provider.reviewStage }, move, input.actor, { note });
    return notesOfMove(move, { providerId: provider.id });
  });
  noteFeed(...notes);
}
