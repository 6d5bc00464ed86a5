/**
 * The difference between two version snapshots as an RFC 6902 JSON Patch (rfc6902's createPatch:
 * add, remove and replace, with minimal edits inside arrays). Pure: applying the patch to the first
 * snapshot gives the second.
 */
import { createPatch, type Operation } from "rfc6902";
import { OWNER_FIELDS } from "./provider.rules.ts";

export type PatchOperation = Operation;

/**
 * A snapshot as a caller reads it (`ProfileSnapshot` in version.schema.ts): the owner-editable
 * fields in their fixed order, a field an old snapshot lacks as null, `contactEmail` null unless the
 * caller may see it, and the lifecycle, which a snapshot keeps only while it is not ACTIVE.
 */
export function shownSnapshot(snapshot: unknown, privileged: boolean): Record<string, unknown> {
  const stored = (snapshot ?? {}) as Record<string, unknown>;
  const shown = Object.fromEntries(OWNER_FIELDS.map((f) => [f, stored[f] ?? null]));
  if (!privileged) shown.contactEmail = null;
  shown.lifecycle = stored.lifecycle ?? "ACTIVE";
  shown.lifecycleMessage = stored.lifecycleMessage ?? null;
  shown.successorCode = stored.successorCode ?? null;
  return shown;
}

/** The JSON Patch that turns `from` into `to`; empty when they are equal. */
export function snapshotPatch(from: Record<string, unknown>, to: Record<string, unknown>): PatchOperation[] {
  return createPatch(from, to);
}
