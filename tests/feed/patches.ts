/**
 * The feed tests' reading of an event's `patch` and `stateHash`: a patch as GraphQL answers it,
 * replayed over the state before it, gives the state after it, whose RFC 8785 form hashes to
 * the event's `stateHash`.
 */
import { createHash } from "node:crypto";
import { expect } from "@jest/globals";
import canonicalize from "canonicalize";
import { applyPatch } from "rfc6902";

/** One op as GraphQL answers it: `from` and `value` are null where the op has none. */
export type Op = { op: string; path: string; from: string | null; value: unknown };

/** An event as FEED_QUERY (tests/feed/sse.ts) asks for it. */
export interface FeedEvent {
  seq: number;
  at: string;
  kind: string;
  providerCode: string;
  version: number;
  reviewCode: string | null;
  patch: Op[];
  stateHash: string;
  note: string | null;
}

/** SHA-256 (hex) of the RFC 8785 form, as the log hashes a public snapshot. */
export const sha256 = (value: unknown): string =>
  createHash("sha256")
    .update(canonicalize(value) as string)
    .digest("hex");

/** A patch as GraphQL answers it, as RFC 6902 ops. */
const rfc6902 = (patch: Op[]) =>
  patch.map(({ op, path, from, value }) => ({
    op,
    path,
    ...(from === null ? {} : { from }),
    ...(op === "remove" ? {} : { value }),
  }));

/**
 * Replays events' patches over `state` (a provider's, from before the first of them; `{}` before its
 * creation), checking that each applies and that each event's `stateHash` is the hash of the state
 * after it. Answers the state after the last.
 */
export function replay(events: readonly FeedEvent[], state: Record<string, unknown> = {}): Record<string, unknown> {
  for (const event of events) {
    const failed = applyPatch(state, rfc6902(event.patch) as never).filter((r) => r !== null);
    expect({ seq: event.seq, failed }).toEqual({ seq: event.seq, failed: [] });
    expect({ seq: event.seq, stateHash: sha256(state) }).toEqual({ seq: event.seq, stateHash: event.stateHash });
  }
  return state;
}

/** The op of a patch at `path`. */
export const opAt = (patch: readonly Op[], path: string): Op | undefined => patch.find((o) => o.path === path);
