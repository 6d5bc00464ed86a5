/**
 * The change log (GET /api/v1/events) as people read it: each event kind in words, and the fields
 * an event changed, from the top-level members its JSON Patch touches.
 */
import type { EventKind, RegistryEvent } from "./types.ts";

/** Every kind, in words; a kind the API adds and this lacks is a type error here. */
export const EVENT_KIND_WORDS: Record<EventKind, string> = {
  PROVIDER_CREATED: "Registered",
  PROVIDER_UPDATED: "Profile updated",
  LIFECYCLE_CHANGED: "Lifecycle changed",
  STAGE_CHANGED: "Review stage changed",
  PUBLISHER_CHANGED: "Publisher verification changed",
  HEALTH_CHANGED: "Health changed",
  REVIEW_OPENED: "Review opened",
  REVIEW_ASSIGNED: "Review assigned",
  REVIEW_DECIDED: "Review decided",
  REVIEW_RESUBMITTED: "Resubmitted for review",
  REVIEW_COMMENTED: "Review commented on",
  REVIEW_PRIORITY_CHANGED: "Review priority changed",
  WEBHOOK_DISABLED: "Webhook disabled",
  DRIFT_DETECTED: "Drift detected",
  API_KEY_CREATED: "API key made",
  API_KEY_REVOKED: "API key revoked",
};

/** The kinds, in the API's order. */
export const EVENT_KINDS = Object.keys(EVENT_KIND_WORDS) as EventKind[];

/** A kind in words; a name the API sends that this does not know (a webhook's PING, say) humanized. */
export function kindWords(kind: string): string {
  const known = (EVENT_KIND_WORDS as Record<string, string>)[kind];
  if (known) return known;
  const words = kind.toLowerCase().replace(/_/g, " ");
  return words.charAt(0).toUpperCase() + words.slice(1);
}

/** The top-level fields an event's patch touches, in patch order, each once (`/labels/1` → `labels`). */
export function changedFields(event: Pick<RegistryEvent, "patch">): string[] {
  const fields = new Set<string>();
  for (const op of event.patch) {
    const first = op.path.split("/")[1];
    if (first) fields.add(first.replace(/~1/g, "/").replace(/~0/g, "~"));
  }
  return [...fields];
}
