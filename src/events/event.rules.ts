/**
 * The change log's rules, pure: which kinds there are, what a provider's public snapshot is, what an
 * event records of a change, and who may read which event (API.md §2).
 */
import { createHash } from "node:crypto";
import canonicalize from "canonicalize";
import { createPatch } from "rfc6902";
import { OWNER_FIELDS } from "../providers/provider.rules.ts";

/**
 * Changes of a provider: public when the provider is (or was) in the public directory. Its health
 * changing is one (the profile shows health to anyone), though it changes nothing versioned: its
 * event carries an empty patch.
 */
export const PROVIDER_EVENT_KINDS = [
  "PROVIDER_CREATED",
  "PROVIDER_UPDATED",
  "LIFECYCLE_CHANGED",
  "STAGE_CHANGED",
  "PUBLISHER_CHANGED",
  "HEALTH_CHANGED",
] as const;

/** What admins do to the registry as a whole (an API key made or revoked): admins read these only. */
export const ADMIN_EVENT_KINDS = ["API_KEY_CREATED", "API_KEY_REVOKED"] as const;

/**
 * Every kind: provider changes, review changes and drift of the live agent (owner and reviewers
 * only), a webhook disabled, and admins' actions.
 */
export const EVENT_KINDS = [
  ...PROVIDER_EVENT_KINDS,
  "REVIEW_OPENED",
  "REVIEW_ASSIGNED",
  "REVIEW_DECIDED",
  "REVIEW_RESUBMITTED",
  "REVIEW_COMMENTED",
  "REVIEW_PRIORITY_CHANGED",
  "WEBHOOK_DISABLED",
  "DRIFT_DETECTED",
  ...ADMIN_EVENT_KINDS,
] as const;
export type EventKind = (typeof EVENT_KINDS)[number];

const PROVIDER_KINDS: ReadonlySet<string> = new Set(PROVIDER_EVENT_KINDS);
const ADMIN_KINDS: ReadonlySet<string> = new Set(ADMIN_EVENT_KINDS);

/** The owner fields anyone may read (contactEmail is for the owner and reviewers only). */
export const PUBLIC_OWNER_FIELDS = OWNER_FIELDS.filter((f) => f !== "contactEmail");
/** The provider's state beside its owner fields that the public snapshot holds. */
export const PUBLIC_STATE_FIELDS = [
  "lifecycle",
  "lifecycleMessage",
  "successorCode",
  "reviewStage",
  "trustTier",
  "publisherVerified",
] as const;

/** What the public snapshot is made of: a provider row, or a profile with the row's state beside it. */
export type ProviderState = { providerCode: string } & { [F in (typeof PUBLIC_OWNER_FIELDS)[number]]?: unknown } & {
  lifecycle: string;
  lifecycleMessage: string | null;
  successorCode: string | null;
  reviewStage: string;
  trustTier: string;
  publisherVerified: boolean;
};

export type PublicSnapshot = Record<string, unknown>;

/**
 * The provider as anyone may read it, without what changes on every write (`version`, `updatedAt`):
 * so a review event or an empty PATCH leaves it, and its hash, as they were.
 */
export function publicSnapshot(state: ProviderState): PublicSnapshot {
  const snapshot: PublicSnapshot = { providerCode: state.providerCode };
  for (const field of PUBLIC_OWNER_FIELDS) snapshot[field] = state[field] ?? null;
  snapshot.lifecycle = state.lifecycle;
  snapshot.lifecycleMessage = state.lifecycleMessage ?? null;
  snapshot.successorCode = state.successorCode ?? null;
  snapshot.reviewStage = state.reviewStage;
  snapshot.trustTier = state.trustTier;
  snapshot.publisherVerified = state.publisherVerified;
  return snapshot;
}

/** SHA-256 (hex) of the RFC 8785 canonical form of a snapshot. */
export function stateHash(snapshot: PublicSnapshot): string {
  return createHash("sha256")
    .update(canonicalize(snapshot) as string)
    .digest("hex");
}

/** Whether a provider in this state is in the public directory (a list an anonymous caller reads). */
export function inDirectory(snapshot: PublicSnapshot): boolean {
  return snapshot.visibility === "PUBLIC" && snapshot.reviewStage === "APPROVED";
}

/** What is appended for an event: the change, its patch, its hash and its audience. */
export interface EventDraft {
  kind: EventKind;
  providerId: number | null;
  providerCode: string | null;
  version: number | null;
  reviewCode: string | null;
  patch: unknown[];
  stateHash: string | null;
  note: string | null;
  /** In the public directory before or after the change: a mirror learns of arrivals and departures alike. */
  listed: boolean;
}

/** What one write did to one provider, inside its transaction. */
export interface Write {
  providerId: number;
  /** The public snapshot before the write; null for a creation (its patch builds it from `{}`). */
  before: PublicSnapshot | null;
  after: PublicSnapshot;
  /** The provider's profile version after the write. */
  version: number;
  /** What happened, in the order it happened. */
  events: readonly { kind: EventKind; reviewCode?: string | null; note?: string | null }[];
}

/**
 * The events of one write. The write's whole patch goes on its first event, which is a provider
 * event (one is added, PROVIDER_UPDATED, when a write changed the public snapshot with review events
 * only, such as a trust tier set on approving an update): so anyone who may read the provider's
 * changes reads every change, and replaying each event's patch over the snapshot before it gives
 * that event's `stateHash`. The write's other events carry an empty patch.
 */
export function draftsOfWrite(write: Write): EventDraft[] {
  const patch = createPatch(write.before ?? {}, write.after);
  const events = [...write.events].sort(
    (a, b) => Number(!PROVIDER_KINDS.has(a.kind)) - Number(!PROVIDER_KINDS.has(b.kind)),
  );
  if (patch.length > 0 && !events.some((e) => PROVIDER_KINDS.has(e.kind))) events.unshift({ kind: "PROVIDER_UPDATED" });
  const hash = stateHash(write.after);
  const listed = inDirectory(write.after) || (write.before !== null && inDirectory(write.before));
  return events.map((event, i) => ({
    kind: event.kind,
    providerId: write.providerId,
    providerCode: write.after.providerCode as string,
    version: write.version,
    reviewCode: event.reviewCode ?? null,
    patch: i === 0 ? patch : [],
    stateHash: hash,
    note: event.note ?? null,
    listed,
  }));
}

/** The events of a review workflow move (review.rules.ts `Move`): its review event, then a stage change. */
export function eventsOfMove(
  move: { event: string; stage?: string | undefined },
  reviewCode: string | null,
): { kind: EventKind; reviewCode: string | null }[] {
  const kind: EventKind | undefined =
    move.event === "ASSIGNED"
      ? "REVIEW_ASSIGNED"
      : move.event === "RESUBMITTED"
        ? "REVIEW_RESUBMITTED"
        : move.event === "PRIORITY_CHANGED"
          ? "REVIEW_PRIORITY_CHANGED"
          : ["APPROVED", "REJECTED", "CHANGES_REQUESTED"].includes(move.event)
            ? "REVIEW_DECIDED"
            : undefined;
  return [
    ...(kind && reviewCode ? [{ kind, reviewCode }] : []),
    ...(move.stage ? [{ kind: "STAGE_CHANGED" as const, reviewCode }] : []),
  ];
}

/** Who reads the log: what a request's viewer, or a webhook's owner, may see. An admin sees all of it. */
export type Audience =
  | { kind: "admin" }
  | { kind: "reviewer" }
  | { kind: "agent"; providerId: number }
  | { kind: "anonymous" };

/** Whether an audience may see an event (the SQL of event.store.ts `readEvents` says the same). */
export function visibleTo(
  audience: Audience,
  event: { kind: string; providerId: number | null; listed: boolean },
): boolean {
  if (audience.kind === "admin") return true;
  if (audience.kind === "reviewer") return !ADMIN_KINDS.has(event.kind);
  if (audience.kind === "agent" && event.providerId !== null && event.providerId === audience.providerId) return true;
  return event.listed && PROVIDER_KINDS.has(event.kind);
}
