/**
 * The model of the review workflow that the property test (workflow.property.test.ts) drives the
 * service against. It is written from API.md §1–§3 alone: nothing here imports the rules under
 * test (src/reviews/review.rules.ts), so a bug in those rules shows up as a disagreement.
 *
 * Every `expect…` function answers what the service must reply to one request in the modelled
 * state (the HTTP status, the timeline events it appends) and how the state moves when it
 * succeeds. A refused request must change nothing.
 */

export type Stage = "SUBMITTED" | "IN_REVIEW" | "CHANGES_REQUESTED" | "APPROVED" | "REJECTED" | "SUSPENDED";
export type Status = "OPEN" | "IN_PROGRESS" | "CHANGES_REQUESTED" | "APPROVED" | "REJECTED" | "WITHDRAWN";
export type Kind = "INTAKE" | "UPDATE";
export type Visibility = "PUBLIC" | "UNLISTED" | "PRIVATE";
export type Decision = "APPROVE" | "REJECT" | "REQUEST_CHANGES";
export type TrustTier = "UNVERIFIED" | "VERIFIED" | "TRUSTED" | "OFFICIAL";

// ── The transitions table (API.md §1), as the test reads it ────────────────────────────────
/** The active review statuses; every other status is closed and final. */
export const ACTIVE: readonly Status[] = ["OPEN", "IN_PROGRESS", "CHANGES_REQUESTED"];

interface Row {
  /** The review statuses the move may start from; from any other status it is a 409. */
  from: readonly Status[];
  /** The review's status after the move. */
  status: Status;
  /** The provider's reviewStage after the move, by the review's kind; null: it does not move. */
  stage: Record<Kind, Stage | null>;
  /** The timeline event that records it. */
  event: string;
}

/**
 * Moves on a review. A reviewer works on a review that waits for a reviewer (OPEN, or IN_PROGRESS
 * when re-assigned); one that waits for its owner (CHANGES_REQUESTED) moves only by the owner's
 * PATCH; closed reviews never move again.
 */
export const REVIEW_TABLE: Record<"assign" | Decision | "resubmit", Row> = {
  assign: {
    from: ["OPEN", "IN_PROGRESS"],
    status: "IN_PROGRESS",
    stage: { INTAKE: "IN_REVIEW", UPDATE: null },
    event: "ASSIGNED",
  },
  REQUEST_CHANGES: {
    from: ["OPEN", "IN_PROGRESS"],
    status: "CHANGES_REQUESTED",
    stage: { INTAKE: "CHANGES_REQUESTED", UPDATE: null },
    event: "CHANGES_REQUESTED",
  },
  APPROVE: {
    from: ["OPEN", "IN_PROGRESS"],
    status: "APPROVED",
    stage: { INTAKE: "APPROVED", UPDATE: null },
    event: "APPROVED",
  },
  // Rejecting an update suspends the provider (and so revokes its tokens).
  REJECT: {
    from: ["OPEN", "IN_PROGRESS"],
    status: "REJECTED",
    stage: { INTAKE: "REJECTED", UPDATE: "SUSPENDED" },
    event: "REJECTED",
  },
  resubmit: {
    from: ["CHANGES_REQUESTED"],
    status: "OPEN",
    stage: { INTAKE: "SUBMITTED", UPDATE: null },
    event: "RESUBMITTED",
  },
};

/** Moves on a provider without a review: only from `from`, else 409. */
export const MODERATION_TABLE = {
  suspend: { from: "APPROVED", to: "SUSPENDED", event: "SUSPENDED" },
  reinstate: { from: "SUSPENDED", to: "APPROVED", event: "REINSTATED" },
} as const satisfies Record<string, { from: Stage; to: Stage; event: string }>;

/** Owner changes to these fields of an APPROVED provider open an UPDATE review (one at a time). */
export const REVIEWED_FIELDS = ["endpoint", "tools", "policy"] as const;
/** Anonymous callers may read the detail of these visibilities, in any stage but the hidden ones. */
export const READABLE_VISIBILITIES: readonly Visibility[] = ["PUBLIC", "UNLISTED"];
export const HIDDEN_STAGES: readonly Stage[] = ["REJECTED", "SUSPENDED"];
export const MAX_ACTIVE_TOKENS = 5;

// ── The modelled state ─────────────────────────────────────────────────────────────────────
export interface ReviewModel {
  code: string;
  kind: Kind;
  status: Status;
  assignedTo: string | null;
}

export interface TokenModel {
  secret: string;
  tokenId: string;
  revoked: boolean;
}

export interface EventModel {
  kind: string;
  actor: string;
}

/** The owner-editable fields the test changes, in the normalised form the service answers. */
export interface ProfileModel {
  summary: string;
  description: string | null;
  labels: string[];
  visibility: Visibility;
  endpoint: unknown;
  tools: unknown[];
  policy: unknown;
}

export interface ProviderModel {
  code: string;
  stage: Stage;
  trustTier: TrustTier;
  version: number;
  profile: ProfileModel;
  reviews: ReviewModel[];
  tokens: TokenModel[];
  events: EventModel[];
}

export interface Model {
  providers: ProviderModel[];
}

export const agentActor = (p: ProviderModel) => `agent:${p.code}`;
export const reviewerActor = (subject: string) => `reviewer:${subject}`;

export function activeReview(p: ProviderModel): ReviewModel | undefined {
  return p.reviews.find((r) => ACTIVE.includes(r.status));
}
export function activeTokens(p: ProviderModel): TokenModel[] {
  return p.tokens.filter((t) => !t.revoked);
}
/** API.md §2: what an anonymous caller may read and list. */
export function anonymousCanRead(p: ProviderModel): boolean {
  return READABLE_VISIBILITIES.includes(p.profile.visibility) && !HIDDEN_STAGES.includes(p.stage);
}
export function anonymousCanList(p: ProviderModel): boolean {
  return p.profile.visibility === "PUBLIC" && p.stage === "APPROVED";
}

/** Labels as stored: trimmed, lower-cased, de-duplicated, order kept. */
export function normaliseLabels(labels: readonly string[]): string[] {
  return [...new Set(labels.map((l) => l.trim().toLowerCase()))];
}

/** JSON with sorted keys, to compare documents whatever their key order. */
export function canonical(value: unknown): string {
  return JSON.stringify(value, (_key, v) =>
    v && typeof v === "object" && !Array.isArray(v)
      ? Object.fromEntries(Object.entries(v).sort(([a], [b]) => a.localeCompare(b)))
      : v,
  );
}

// ── Expectations ───────────────────────────────────────────────────────────────────────────
/** What one request must answer; `apply` moves the model when it succeeds (status 2xx). */
export interface Expectation {
  status: number;
  /** The timeline events the request appends, in order (none when refused). */
  events: EventModel[];
  apply: () => void;
  /** Why, for the failure message. */
  why: string;
  /** A new UPDATE review is opened (its code is read from the service afterwards). */
  opensUpdate?: boolean;
  /** A refused transition's 409 names the current state (API.md §1): this word is in its detail. */
  names?: string;
}

const refused = (status: number, why: string, names?: string): Expectation => ({
  status,
  events: [],
  apply: () => {},
  why,
  ...(names ? { names } : {}),
});

/**
 * A suspension, by a reviewer or by a rejected update: the timeline records SUSPENDED, then
 * TOKEN_REVOKED when there was a token to revoke; every token is revoked and a review still
 * active is withdrawn (it is moot).
 */
function suspension(p: ProviderModel, actor: string): { events: EventModel[]; apply: () => void } {
  const any = activeTokens(p).length > 0;
  return {
    events: [{ kind: "SUSPENDED", actor }, ...(any ? [{ kind: "TOKEN_REVOKED", actor }] : [])],
    apply: () => {
      for (const t of p.tokens) t.revoked = true;
      for (const r of p.reviews) if (ACTIVE.includes(r.status)) r.status = "WITHDRAWN";
      p.stage = "SUSPENDED";
    },
  };
}

/** Who a request is made as: a reviewer, or an agent with one of its tokens (or none). */
export type Caller =
  | { kind: "reviewer"; subject: string }
  | { kind: "agent"; provider: ProviderModel; token: TokenModel }
  | { kind: "anonymous" };

/**
 * The authentication answer common to every request: a revoked agent token is a 401 (API.md §3),
 * an agent where only reviewers may act is a 403. Null: the caller passes.
 */
function authRefusal(caller: Caller, reviewerOnly: boolean): Expectation | null {
  if (caller.kind === "anonymous") return refused(401, "no credentials");
  if (caller.kind === "agent" && caller.token.revoked) return refused(401, "the agent token is revoked");
  if (reviewerOnly && caller.kind === "agent") return refused(403, "an agent token is not a reviewer");
  return null;
}

export function expectAssign(
  p: ProviderModel,
  review: ReviewModel,
  caller: Caller,
  assignee: string | null,
): Expectation {
  const auth = authRefusal(caller, true);
  if (auth) return auth;
  const subject = (caller as { subject: string }).subject;
  const row = REVIEW_TABLE.assign;
  if (!row.from.includes(review.status)) return refused(409, `assign of a ${review.status} review`, review.status);
  return {
    status: 200,
    events: [{ kind: row.event, actor: reviewerActor(subject) }],
    apply: () => {
      review.status = row.status;
      review.assignedTo = assignee ?? subject;
      p.stage = row.stage[review.kind] ?? p.stage;
    },
    why: `assign ${review.kind} ${review.status}`,
  };
}

export function expectDecision(
  p: ProviderModel,
  review: ReviewModel,
  caller: Caller,
  input: { decision: Decision; note: string | null; trustTier: TrustTier | null },
): Expectation {
  const auth = authRefusal(caller, true);
  if (auth) return auth;
  const subject = (caller as { subject: string }).subject;
  // A malformed request is a 400 whatever the state: a reason is owed for a refusal, a tier only with approval.
  if (input.decision !== "APPROVE" && !input.note?.trim()) return refused(400, `${input.decision} without a note`);
  if (input.trustTier && input.decision !== "APPROVE") return refused(400, `trustTier with ${input.decision}`);
  const row = REVIEW_TABLE[input.decision];
  if (!row.from.includes(review.status)) {
    return refused(409, `${input.decision} of a ${review.status} review`, review.status);
  }
  // No agent of this model has a verified domain: approving one takes a note (src/trust).
  if (input.decision === "APPROVE" && !input.note?.trim())
    return refused(400, "APPROVE of an unverified endpoint without a note");
  const actor = reviewerActor(subject);
  const stage = row.stage[review.kind];
  const suspends = stage === "SUSPENDED" ? suspension(p, actor) : null;
  return {
    status: 200,
    events: [{ kind: row.event, actor }, ...(suspends?.events ?? [])],
    apply: () => {
      suspends?.apply();
      review.status = row.status;
      review.assignedTo ??= subject;
      if (stage) p.stage = stage;
      if (input.trustTier) p.trustTier = input.trustTier;
    },
    why: `${input.decision} ${review.kind} ${review.status}`,
  };
}

/** A comment on any review of the provider: by a reviewer, or by its owner. */
export function expectComment(p: ProviderModel, caller: Caller): Expectation {
  const auth = authRefusal(caller, false);
  if (auth) return auth;
  const actor = caller.kind === "reviewer" ? reviewerActor(caller.subject) : agentActor(p);
  return { status: 201, events: [{ kind: "COMMENTED", actor }], apply: () => {}, why: "comment" };
}

export function expectModeration(
  p: ProviderModel,
  caller: Caller,
  action: keyof typeof MODERATION_TABLE,
  note: string | null,
): Expectation {
  const auth = authRefusal(caller, true);
  if (auth) return auth;
  const actor = reviewerActor((caller as { subject: string }).subject);
  if (action === "suspend" && !note?.trim()) return refused(400, "suspend without a note");
  const row = MODERATION_TABLE[action];
  if (p.stage !== row.from) return refused(409, `${action} of a ${p.stage} provider`, p.stage);
  if (action === "suspend") {
    const suspends = suspension(p, actor);
    return {
      status: 200,
      events: suspends.events,
      apply: suspends.apply,
      why: "suspend",
    };
  }
  return {
    status: 200,
    events: [{ kind: row.event, actor }],
    apply: () => {
      p.stage = row.to;
    },
    why: "reinstate",
  };
}

/**
 * The owner's PATCH. `changes` holds the normalised values of the fields sent; `ifMatch` the
 * If-Match version sent, if any.
 */
export function expectPatch(
  p: ProviderModel,
  caller: Caller,
  changes: Partial<ProfileModel>,
  ifMatch: number | null,
): Expectation {
  const auth = authRefusal(caller, false);
  if (auth) return auth;
  if (caller.kind === "agent" && caller.provider !== p) {
    // Another agent: 403 where it may see the provider, 404 where it may not (API.md §2–3).
    return anonymousCanRead(p) ? refused(403, "another agent's token") : refused(404, "another agent's token");
  }
  if (caller.kind !== "agent") throw new Error("the model sends PATCH as an agent only");
  if (Object.keys(changes).length === 0) return refused(400, "an empty body");
  if (ifMatch !== null && ifMatch !== p.version) return refused(412, `If-Match ${ifMatch}, current ${p.version}`);

  const actor = agentActor(p);
  const after: ProfileModel = { ...p.profile, ...changes };
  const reviewedChanged = REVIEWED_FIELDS.some((f) => canonical(after[f]) !== canonical(p.profile[f]));
  const active = activeReview(p);
  const events: EventModel[] = [{ kind: "PROFILE_UPDATED", actor }];
  let workflow = () => {};
  let opensUpdate = false;
  if (active && REVIEW_TABLE.resubmit.from.includes(active.status)) {
    const row = REVIEW_TABLE.resubmit;
    events.push({ kind: row.event, actor });
    workflow = () => {
      active.status = row.status;
      p.stage = row.stage[active.kind] ?? p.stage;
    };
  } else if (p.stage === "APPROVED" && reviewedChanged && !active) {
    events.push({ kind: "UPDATE_SUBMITTED", actor });
    opensUpdate = true;
  }
  return {
    status: 200,
    events,
    apply: () => {
      p.profile = after;
      p.version += 1;
      workflow();
    },
    why: opensUpdate ? "PATCH opening an UPDATE review" : `PATCH in ${p.stage}`,
    opensUpdate,
  };
}

/** Issuing a token: by the owner (optionally rotating the one it uses) or by a reviewer. */
export function expectIssue(p: ProviderModel, caller: Caller, rotate: boolean): Expectation {
  const auth = authRefusal(caller, false);
  if (auth) return auth;
  if (rotate && caller.kind !== "agent") return refused(400, "revokeCurrent without an agent token");
  // API.md: a suspended provider has no working token until it is reinstated.
  if (p.stage === "SUSPENDED") return refused(409, "a token for a SUSPENDED provider");
  const actor = caller.kind === "reviewer" ? reviewerActor(caller.subject) : agentActor(p);
  const remaining = activeTokens(p).length - (rotate ? 1 : 0);
  if (remaining >= MAX_ACTIVE_TOKENS) return refused(409, `already ${remaining} active tokens`);
  return {
    status: 201,
    events: [{ kind: "TOKEN_ISSUED", actor }, ...(rotate ? [{ kind: "TOKEN_REVOKED", actor }] : [])],
    apply: () => {
      if (rotate && caller.kind === "agent") caller.token.revoked = true;
    },
    why: rotate ? "rotate" : "issue",
  };
}

/** Revoking one of the provider's tokens: by the owner or a reviewer. Revoking a revoked token changes nothing. */
export function expectRevoke(p: ProviderModel, caller: Caller, target: TokenModel): Expectation {
  const auth = authRefusal(caller, false);
  if (auth) return auth;
  const actor = caller.kind === "reviewer" ? reviewerActor(caller.subject) : agentActor(p);
  if (target.revoked) return { status: 200, events: [], apply: () => {}, why: "revoke a revoked token" };
  return {
    status: 200,
    events: [{ kind: "TOKEN_REVOKED", actor }],
    apply: () => {
      target.revoked = true;
    },
    why: "revoke",
  };
}
