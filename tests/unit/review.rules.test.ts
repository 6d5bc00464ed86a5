/** The review workflow's pure rules (API.md §1 "Stage and status transitions"), without a database. */
import { describe, expect, test } from "@jest/globals";
import {
  ACTIVE_STATUSES,
  assign,
  DECISIONS,
  type Decision,
  decide,
  effectOfOwnerPatch,
  isActive,
  newReviewCode,
  noteRequired,
  type Outcome,
  PRIORITIES,
  priorityRank,
  REVIEW_STATUSES,
  type ReviewKind,
  type ReviewStatus,
  reinstate,
  resubmit,
  suspend,
  type WorkflowState,
} from "../../src/reviews/review.rules.ts";

const state = (kind: ReviewKind, status: ReviewStatus, stage: string): WorkflowState => ({
  review: { code: "RV-TEST0000", kind, status },
  stage,
});

const CLOSED: ReviewStatus[] = ["APPROVED", "REJECTED", "WITHDRAWN"];
const STAGES = ["SUBMITTED", "IN_REVIEW", "CHANGES_REQUESTED", "APPROVED", "REJECTED", "SUSPENDED"];

/** A refusal whose reason names the current state. */
function expectRefusal(outcome: Outcome, current: string) {
  expect(outcome.ok).toBe(false);
  if (!outcome.ok) expect(outcome.reason).toContain(current);
}

describe("codes, priorities and active statuses", () => {
  test("a review code is RV- and 8 Crockford base32 characters, and codes differ", () => {
    const codes = new Set<string>();
    for (let i = 0; i < 200; i++) {
      const code = newReviewCode();
      expect(code).toMatch(/^RV-[0-9A-HJKMNP-TV-Z]{8}$/);
      codes.add(code);
    }
    expect(codes.size).toBe(200);
  });

  test("URGENT ranks first, LOW last", () => {
    expect(PRIORITIES.map(priorityRank)).toEqual([0, 1, 2, 3]);
    expect(priorityRank("URGENT")).toBeLessThan(priorityRank("HIGH"));
    expect(priorityRank("HIGH")).toBeLessThan(priorityRank("NORMAL"));
    expect(priorityRank("NORMAL")).toBeLessThan(priorityRank("LOW"));
  });

  test("OPEN, IN_PROGRESS and CHANGES_REQUESTED are active; the rest are closed", () => {
    expect(REVIEW_STATUSES.filter(isActive)).toEqual([...ACTIVE_STATUSES]);
    expect(ACTIVE_STATUSES).toEqual(["OPEN", "IN_PROGRESS", "CHANGES_REQUESTED"]);
    for (const status of CLOSED) expect(isActive(status)).toBe(false);
    expect(isActive("SOMETHING")).toBe(false);
  });

  test("only APPROVE may come without a note", () => {
    expect(DECISIONS.filter(noteRequired)).toEqual(["REJECT", "REQUEST_CHANGES"]);
  });
});

describe("assign", () => {
  test("an OPEN intake goes IN_PROGRESS and its provider IN_REVIEW", () => {
    expect(assign(state("INTAKE", "OPEN", "SUBMITTED"))).toEqual({
      ok: true,
      move: { status: "IN_PROGRESS", stage: "IN_REVIEW", event: "ASSIGNED" },
    });
  });

  test("re-assigning an IN_PROGRESS intake leaves the stage where it is", () => {
    expect(assign(state("INTAKE", "IN_PROGRESS", "IN_REVIEW"))).toEqual({
      ok: true,
      move: { status: "IN_PROGRESS", event: "ASSIGNED" },
    });
  });

  test("an UPDATE review never moves the stage of its approved provider", () => {
    for (const status of ["OPEN", "IN_PROGRESS"] as const) {
      expect(assign(state("UPDATE", status, "APPROVED"))).toEqual({
        ok: true,
        move: { status: "IN_PROGRESS", event: "ASSIGNED" },
      });
    }
  });

  test.each(["CHANGES_REQUESTED", ...CLOSED] as ReviewStatus[])(
    "a %s review cannot be assigned, and the reason names it",
    (status) => {
      for (const kind of ["INTAKE", "UPDATE"] as const) expectRefusal(assign(state(kind, status, "APPROVED")), status);
    },
  );
});

describe("decide an intake", () => {
  test.each([
    ["APPROVE", { status: "APPROVED", stage: "APPROVED", event: "APPROVED" }],
    ["REJECT", { status: "REJECTED", stage: "REJECTED", event: "REJECTED" }],
    ["REQUEST_CHANGES", { status: "CHANGES_REQUESTED", stage: "CHANGES_REQUESTED", event: "CHANGES_REQUESTED" }],
  ] as [Decision, object][])("%s moves the review and the stage together", (decision, move) => {
    for (const [status, stage] of [
      ["OPEN", "SUBMITTED"],
      ["IN_PROGRESS", "IN_REVIEW"],
    ] as const) {
      expect(decide(state("INTAKE", status, stage), decision)).toEqual({ ok: true, move });
    }
  });

  test("no intake decision revokes tokens", () => {
    for (const decision of DECISIONS) {
      const outcome = decide(state("INTAKE", "IN_PROGRESS", "IN_REVIEW"), decision);
      expect(outcome.ok && outcome.move.revokeTokens).toBeFalsy();
    }
  });
});

describe("decide an update", () => {
  test("approve closes it and leaves the provider APPROVED", () => {
    expect(decide(state("UPDATE", "IN_PROGRESS", "APPROVED"), "APPROVE")).toEqual({
      ok: true,
      move: { status: "APPROVED", event: "APPROVED" },
    });
  });

  test("request changes leaves the provider APPROVED", () => {
    expect(decide(state("UPDATE", "OPEN", "APPROVED"), "REQUEST_CHANGES")).toEqual({
      ok: true,
      move: { status: "CHANGES_REQUESTED", event: "CHANGES_REQUESTED" },
    });
  });

  test("reject suspends the provider, records the suspension and revokes every token", () => {
    expect(decide(state("UPDATE", "IN_PROGRESS", "APPROVED"), "REJECT")).toEqual({
      ok: true,
      move: { status: "REJECTED", stage: "SUSPENDED", event: "REJECTED", also: "SUSPENDED", revokeTokens: true },
    });
  });
});

describe("decisions on a review that is not OPEN or IN_PROGRESS are refused, naming its status", () => {
  test.each(["CHANGES_REQUESTED", ...CLOSED] as ReviewStatus[])("%s", (status) => {
    for (const kind of ["INTAKE", "UPDATE"] as const) {
      for (const decision of DECISIONS) {
        expectRefusal(
          decide(state(kind, status, kind === "UPDATE" ? "APPROVED" : "CHANGES_REQUESTED"), decision),
          status,
        );
      }
    }
  });
});

describe("resubmit", () => {
  test("an intake awaiting changes reopens, its provider SUBMITTED again", () => {
    expect(resubmit(state("INTAKE", "CHANGES_REQUESTED", "CHANGES_REQUESTED"))).toEqual({
      ok: true,
      move: { status: "OPEN", stage: "SUBMITTED", event: "RESUBMITTED" },
    });
  });

  test("an update awaiting changes reopens; the provider stays APPROVED", () => {
    expect(resubmit(state("UPDATE", "CHANGES_REQUESTED", "APPROVED"))).toEqual({
      ok: true,
      move: { status: "OPEN", event: "RESUBMITTED" },
    });
  });

  test.each(["OPEN", "IN_PROGRESS", ...CLOSED] as ReviewStatus[])("a %s review is not resubmitted", (status) => {
    expectRefusal(resubmit(state("INTAKE", status, "SUBMITTED")), status);
  });
});

describe("suspend and reinstate", () => {
  test("only an APPROVED provider is suspended, and suspension revokes every token", () => {
    expect(suspend("APPROVED")).toEqual({
      ok: true,
      move: { stage: "SUSPENDED", event: "SUSPENDED", revokeTokens: true },
    });
    for (const stage of STAGES.filter((s) => s !== "APPROVED")) expectRefusal(suspend(stage), stage);
  });

  test("only a SUSPENDED provider is reinstated, as APPROVED, without touching tokens", () => {
    expect(reinstate("SUSPENDED")).toEqual({ ok: true, move: { stage: "APPROVED", event: "REINSTATED" } });
    for (const stage of STAGES.filter((s) => s !== "SUSPENDED")) expectRefusal(reinstate(stage), stage);
  });

  test("neither moves a review", () => {
    const moves = [suspend("APPROVED"), reinstate("SUSPENDED")];
    for (const outcome of moves) expect(outcome.ok && outcome.move.status).toBeUndefined();
  });
});

describe("what an owner's PATCH does", () => {
  const review = (kind: ReviewKind, status: ReviewStatus) => ({ id: 7, code: "RV-TEST0000", kind, status });

  test("while changes are requested on the intake: resubmit it", () => {
    expect(
      effectOfOwnerPatch({
        reviewStage: "CHANGES_REQUESTED",
        activeReview: review("INTAKE", "CHANGES_REQUESTED"),
        changedReviewedFields: false,
      }),
    ).toEqual({ kind: "resubmit", reviewId: 7, move: { status: "OPEN", stage: "SUBMITTED", event: "RESUBMITTED" } });
  });

  test("while changes are requested on an update: resubmit it, whatever changed", () => {
    for (const changedReviewedFields of [true, false]) {
      expect(
        effectOfOwnerPatch({
          reviewStage: "APPROVED",
          activeReview: review("UPDATE", "CHANGES_REQUESTED"),
          changedReviewedFields,
        }),
      ).toEqual({ kind: "resubmit", reviewId: 7, move: { status: "OPEN", event: "RESUBMITTED" } });
    }
  });

  test("an approved provider changing endpoint, tools or policy: a new UPDATE review", () => {
    expect(effectOfOwnerPatch({ reviewStage: "APPROVED", activeReview: null, changedReviewedFields: true })).toEqual({
      kind: "openUpdateReview",
    });
  });

  test("one update review at a time: none while one is OPEN or IN_PROGRESS", () => {
    for (const status of ["OPEN", "IN_PROGRESS"] as const) {
      expect(
        effectOfOwnerPatch({
          reviewStage: "APPROVED",
          activeReview: review("UPDATE", status),
          changedReviewedFields: true,
        }),
      ).toEqual({ kind: "none" });
    }
  });

  test("an approved provider changing only unreviewed fields: nothing", () => {
    expect(effectOfOwnerPatch({ reviewStage: "APPROVED", activeReview: null, changedReviewedFields: false })).toEqual({
      kind: "none",
    });
  });

  test.each(["SUBMITTED", "IN_REVIEW", "REJECTED", "SUSPENDED"])(
    "a %s provider's PATCH, even of reviewed fields, does nothing to the workflow",
    (reviewStage) => {
      const activeReview =
        reviewStage === "SUBMITTED"
          ? review("INTAKE", "OPEN")
          : reviewStage === "IN_REVIEW"
            ? review("INTAKE", "IN_PROGRESS")
            : null;
      expect(effectOfOwnerPatch({ reviewStage, activeReview, changedReviewedFields: true })).toEqual({ kind: "none" });
    },
  );
});
