/**
 * The review queue's enumerations that the pages offer as choices: plain lists with no imports
 * (review.rules.ts needs node:crypto, which a page cannot load).
 */
export const ACTIVE_STATUSES = ["OPEN", "IN_PROGRESS", "CHANGES_REQUESTED"] as const;
/** Most urgent first: the index is the queue's sort rank. */
export const PRIORITIES = ["URGENT", "HIGH", "NORMAL", "LOW"] as const;
