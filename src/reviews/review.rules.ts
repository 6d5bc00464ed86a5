/**
 * The review workflow's pure rules: codes, priorities and which statuses are active.
 */
import { randomInt } from "node:crypto";

export const REVIEW_KINDS = ["INTAKE", "UPDATE"] as const;
export const REVIEW_STATUSES = [
  "OPEN",
  "IN_PROGRESS",
  "CHANGES_REQUESTED",
  "APPROVED",
  "REJECTED",
  "WITHDRAWN",
] as const;
export const ACTIVE_STATUSES = ["OPEN", "IN_PROGRESS", "CHANGES_REQUESTED"] as const;
/** Most urgent first: the index is the queue's sort rank. */
export const PRIORITIES = ["URGENT", "HIGH", "NORMAL", "LOW"] as const;
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
] as const;

export type ReviewStatus = (typeof REVIEW_STATUSES)[number];
export type Priority = (typeof PRIORITIES)[number];

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

/** What an owner's successful PATCH does to the review workflow (API.md §1, transitions table). */
export type PatchEffect =
  | { kind: "none" }
  /** The owner answered a change request: the review goes back to OPEN, the stage to SUBMITTED. */
  | { kind: "resubmit"; reviewId: number }
  /** An approved provider changed what reviewers vouch for: a new UPDATE review is opened. */
  | { kind: "openUpdateReview" };

export function effectOfOwnerPatch(input: {
  reviewStage: string;
  activeReview: { id: number; kind: string; status: string } | null;
  changedReviewedFields: boolean;
}): PatchEffect {
  const { reviewStage, activeReview } = input;
  if (activeReview?.status === "CHANGES_REQUESTED") return { kind: "resubmit", reviewId: activeReview.id };
  if (reviewStage === "APPROVED" && input.changedReviewedFields && !activeReview) return { kind: "openUpdateReview" };
  return { kind: "none" };
}
