/**
 * The review workflow's pure rules: codes, priorities and which statuses are active.
 */
import { randomInt } from "node:crypto";
import { ACTIVE_STATUSES, PRIORITIES } from "./review.enums.ts";

export const REVIEW_KINDS = ["INTAKE", "UPDATE"] as const;
export const REVIEW_STATUSES = [
  "OPEN",
  "IN_PROGRESS",
  "CHANGES_REQUESTED",
  "APPROVED",
  "REJECTED",
  "WITHDRAWN",
] as const;
export { ACTIVE_STATUSES, PRIORITIES } from "./review.enums.ts";
export const TIMELINE_KINDS = [
  "SUBMITTED",
  "ASSIGNED",
  "COMMENTED",
  "CHANGES_REQUESTED",
  "RESUBMITTED",
  "APPROVED",
  "REJECTED",
  "SUSPENDED",
  "REINSTATED",
  "PROFILE_UPDATED",
  "TOKEN_ISSUED",
  "TOKEN_REVOKED",
  "UPDATE_SUBMITTED",
  "PRIORITY_CHANGED",
  // The provider's lifecycle (src/providers/provider.lifecycle.ts).
  "DEPRECATED",
  "RETIRED",
  "REACTIVATED",
  // Verified publisher domains (src/trust/domain.*).
  "DOMAIN_VERIFIED",
  "DOMAIN_VERIFICATION_LOST",
  "DOMAIN_REMOVED",
] as const;

export type ReviewStatus = (typeof REVIEW_STATUSES)[number];
export type Priority = (typeof PRIORITIES)[number];

/** A new review's priority (the schema's default too). */
export const DEFAULT_PRIORITY: Priority = "NORMAL";

export function priorityRank(priority: Priority): number {
  return PRIORITIES.indexOf(priority);
}

export function isActive(status: string): boolean {
  return (ACTIVE_STATUSES as readonly string[]).includes(status);
}

const CROCKFORD = "0123456789ABCDEFGHJKMNPQRSTVWXYZ";

/** `RV-` + 8 characters of Crockford base32. */
export function newReviewCode(): string {
  let code = "RV-";
  for (let i = 0; i < 8; i++) code += CROCKFORD[randomInt(32)];
  return code;
}

// ── The transitions table (API.md §1) ──────────────────────────────────────────────────────
// Each function answers where a review and its provider go, or why they cannot: the caller
// writes both in one transaction, or answers 409 with the reason.

export type ReviewKind = (typeof REVIEW_KINDS)[number];
export type Decision = "APPROVE" | "REJECT" | "REQUEST_CHANGES";
export const DECISIONS: readonly Decision[] = ["APPROVE", "REJECT", "REQUEST_CHANGES"];

export interface WorkflowState {
  review: { code: string; kind: ReviewKind; status: ReviewStatus };
  /** The provider's reviewStage. */
  stage: string;
}

export interface Move {
  /** The review's new status (unchanged when absent). */
  status?: ReviewStatus;
  /** The provider's new reviewStage (unchanged when absent). */
  stage?: string;
  /** The timeline event that records the move. */
  event: (typeof TIMELINE_KINDS)[number];
  /** A second event the move records after `event`: a rejected update also suspends the provider. */
  also?: (typeof TIMELINE_KINDS)[number];
  /** Every token of the provider is revoked (suspension). */
  revokeTokens?: boolean;
}

export type Outcome = { ok: true; move: Move } | { ok: false; reason: string };

const refuse = (reason: string): Outcome => ({ ok: false, reason });
const CLAIMABLE: readonly ReviewStatus[] = ["OPEN", "IN_PROGRESS"];

/** Assign or claim: a review that is OPEN or IN_PROGRESS goes IN_PROGRESS; an intake's provider IN_REVIEW. */
export function assign({ review, stage }: WorkflowState): Outcome {
  if (!CLAIMABLE.includes(review.status)) {
    return refuse(`review ${review.code} is ${review.status}; only an OPEN or IN_PROGRESS review can be assigned`);
  }
  return {
    ok: true,
    move: {
      status: "IN_PROGRESS",
      ...(review.kind === "INTAKE" && stage !== "IN_REVIEW" ? { stage: "IN_REVIEW" } : {}),
      event: "ASSIGNED",
    },
  };
}

/**
 * A reviewer's decision on an OPEN or IN_PROGRESS review. An intake moves the provider's stage with
 * it; an update leaves an approved provider approved, unless it is rejected, which suspends it.
 */
export function decide({ review, stage }: WorkflowState, decision: Decision): Outcome {
  if (!CLAIMABLE.includes(review.status)) {
    return refuse(`review ${review.code} is ${review.status}; only an OPEN or IN_PROGRESS review can be decided`);
  }
  const intake = review.kind === "INTAKE";
  switch (decision) {
    case "APPROVE":
      return { ok: true, move: { status: "APPROVED", ...(intake ? { stage: "APPROVED" } : {}), event: "APPROVED" } };
    case "REQUEST_CHANGES":
      return {
        ok: true,
        move: {
          status: "CHANGES_REQUESTED",
          ...(intake ? { stage: "CHANGES_REQUESTED" } : {}),
          event: "CHANGES_REQUESTED",
        },
      };
    case "REJECT":
      return intake
        ? { ok: true, move: { status: "REJECTED", stage: "REJECTED", event: "REJECTED" } }
        : stage === "APPROVED"
          ? {
              ok: true,
              move: {
                status: "REJECTED",
                stage: "SUSPENDED",
                event: "REJECTED",
                also: "SUSPENDED",
                revokeTokens: true,
              },
            }
          : { ok: true, move: { status: "REJECTED", event: "REJECTED" } };
  }
}

/** The owner's PATCH while changes are requested: the review reopens; an intake's provider is SUBMITTED again. */
export function resubmit({ review }: WorkflowState): Outcome {
  if (review.status !== "CHANGES_REQUESTED") return refuse(`review ${review.code} is ${review.status}`);
  return {
    ok: true,
    move: { status: "OPEN", ...(review.kind === "INTAKE" ? { stage: "SUBMITTED" } : {}), event: "RESUBMITTED" },
  };
}

/** Suspending an approved provider revokes every token; an update under review is withdrawn with it. */
export function suspend(stage: string): Outcome {
  if (stage !== "APPROVED") return refuse(`the provider is ${stage}; only an APPROVED provider can be suspended`);
  return { ok: true, move: { stage: "SUSPENDED", event: "SUSPENDED", revokeTokens: true } };
}

export function reinstate(stage: string): Outcome {
  if (stage !== "SUSPENDED") return refuse(`the provider is ${stage}; only a SUSPENDED provider can be reinstated`);
  return { ok: true, move: { stage: "APPROVED", event: "REINSTATED" } };
}

/** Decisions that must say why, so the owner knows what to change. */
export function noteRequired(decision: Decision): boolean {
  return decision !== "APPROVE";
}

/** What an owner's successful PATCH does to the review workflow. */
export type PatchEffect =
  | { kind: "none" }
  /** The owner answered a change request. */
  | { kind: "resubmit"; reviewId: number; move: Move }
  /** An approved provider changed what reviewers vouch for: a new UPDATE review is opened. */
  | { kind: "openUpdateReview" };

export function effectOfOwnerPatch(input: {
  reviewStage: string;
  activeReview: { id: number; code: string; kind: ReviewKind; status: ReviewStatus } | null;
  changedReviewedFields: boolean;
}): PatchEffect {
  const { reviewStage, activeReview } = input;
  if (activeReview?.status === "CHANGES_REQUESTED") {
    const outcome = resubmit({ review: activeReview, stage: reviewStage });
    if (outcome.ok) return { kind: "resubmit", reviewId: activeReview.id, move: outcome.move };
  }
  if (reviewStage === "APPROVED" && input.changedReviewedFields && !activeReview) return { kind: "openUpdateReview" };
  return { kind: "none" };
}
