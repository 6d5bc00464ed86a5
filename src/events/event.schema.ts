/**
 * The change log's GraphQL surface: the `Event` type and `Query.events` (REST `GET /api/v1/events`).
 * The stream of the same events is `Subscription.feed` (src/feed/feed.schema.ts).
 */

import { hasRole } from "../auth/roles.ts";
import type { Viewer } from "../auth/viewer.ts";
import { builder } from "../builder.ts";
import { apiError, badInput } from "../errors.ts";
import { JsonPatchOperationRef } from "../interop/interop.schema.ts";
import type { PatchOperation } from "../providers/version.diff.ts";
import { type Audience, EVENT_KINDS, type EventKind } from "./event.rules.ts";
import { type LoggedEvent, lastEvents, prunedThrough, readEvents } from "./event.store.ts";

export const EventKindRef = builder.enumType("EventKind", {
  description:
    "Provider events (PROVIDER_CREATED, PROVIDER_UPDATED, LIFECYCLE_CHANGED, STAGE_CHANGED, PUBLISHER_CHANGED), review events (REVIEW_…) and WEBHOOK_DISABLED; review and webhook events are for reviewers and the provider's owner only",
  values: EVENT_KINDS,
});

export const EventRef = builder.objectRef<LoggedEvent>("Event").implement({
  description:
    "One committed change to a provider or a review, in the registry-wide order of the log. Replaying the `patch` of each of a provider's events, from its PROVIDER_CREATED on, over `{}` gives its public snapshot, whose SHA-256 (of its RFC 8785 form) is `stateHash`.",
  fields: (t) => ({
    seq: t.exposeInt("seq", {
      description:
        "The event's place in the log: increasing in commit order across all replicas, never reused; gaps are events the caller may not see (or writes that rolled back)",
    }),
    at: t.expose("at", { type: "DateTime", description: "When the change was written" }),
    kind: t.field({ type: EventKindRef, resolve: (e) => e.kind }),
    providerCode: t.exposeString("providerCode", { nullable: true }),
    version: t.exposeInt("version", { nullable: true, description: "The provider's profile version after the change" }),
    reviewCode: t.exposeString("reviewCode", { nullable: true, description: "The review a review event concerns" }),
    patch: t.field({
      type: [JsonPatchOperationRef],
      description:
        "RFC 6902 JSON Patch from the provider's public snapshot before the change to after it (a creation's from `{}`); empty when the change left it as it was",
      resolve: (e) => e.patch as PatchOperation[],
    }),
    stateHash: t.exposeString("stateHash", {
      nullable: true,
      description: "SHA-256 (hex) of the RFC 8785 canonical public snapshot after the change",
    }),
    note: t.exposeString("note", { nullable: true, description: "Why, where the kind alone does not say" }),
  }),
});

const EventPageRef = builder.objectRef<{ items: LoggedEvent[]; nextCursor: number | null }>("EventPage").implement({
  fields: (t) => ({
    items: t.field({ type: [EventRef], resolve: (p) => p.items }),
    nextCursor: t.exposeInt("nextCursor", {
      nullable: true,
      description:
        "The `after` of the next page when this one is full; null when the page reached the end of the log as it is now (poll again with the seq of the last event you processed)",
    }),
  }),
});

/** Whose events a viewer may read (event.rules.ts `visibleTo`). */
export function audienceOf(viewer: Viewer): Audience {
  if (viewer.kind === "reviewer") return hasRole(viewer, "admin") ? { kind: "admin" } : { kind: "reviewer" };
  if (viewer.kind === "agent") return { kind: "agent", providerId: viewer.providerId };
  return { kind: "anonymous" };
}

/** A seq the caller gave, or a 400 naming `path`. */
export function seqArg(value: number | null | undefined, path: string): number | undefined {
  if (value === null || value === undefined) return undefined;
  if (!Number.isSafeInteger(value) || value < 0) {
    throw badInput(`${path} must be a seq: a whole number, 0 or more`, [{ path, message: "must be 0 or more" }]);
  }
  return value;
}

/** A 410 when the events after `after` are partly gone (retention); else nothing. */
export async function assertRetained(db: Parameters<typeof prunedThrough>[0], after: number): Promise<void> {
  const pruned = await prunedThrough(db);
  if (after >= pruned) return;
  throw apiError(
    "GONE",
    `Events up to seq ${pruned} are no longer kept; the oldest available is seq ${pruned + 1}. Read the current state (the provider's profile) and continue with after=${pruned}.`,
    { extensions: { oldestSeq: pruned + 1 } },
  );
}

const MAX_EVENTS = 500;

/** Kind names, as a list or comma-separated; a 400 naming `kinds` for an unknown one or none. */
function kindsArg(kinds: readonly string[] | null | undefined): EventKind[] | undefined {
  if (kinds === null || kinds === undefined) return undefined;
  const names = kinds.flatMap((k) => k.split(",")).map((k) => k.trim());
  const unknown = names.find((k) => !(EVENT_KINDS as readonly string[]).includes(k));
  if (names.length === 0 || unknown !== undefined) {
    throw badInput(`kinds must name event kinds: one or more of ${EVENT_KINDS.join(", ")}`, [
      { path: "kinds", message: unknown === undefined ? "empty" : `unknown kind "${unknown}"` },
    ]);
  }
  return names as EventKind[];
}

builder.queryField("events", (t) =>
  t.field({
    type: EventPageRef,
    description:
      "The change log, oldest first, what the caller may see only (anonymous: provider events of providers in the public directory, before or after the change; an agent: also every event of its own provider; reviewers: everything but admins' actions, such as an API key made or revoked, which admins only see). Page with `after` = the seq of the last event processed; asking from before the retention is a 410 naming the oldest available seq.",
    args: {
      after: t.arg.int({
        description: "Only events after this seq (0: from the first kept); default: from the oldest kept",
      }),
      last: t.arg.int({
        description: `Instead of after: the newest ${"`last`"} events (1–${MAX_EVENTS}), oldest first`,
      }),
      limit: t.arg.int({ description: `Page size, 1–${MAX_EVENTS} (default 100)` }),
      providerCode: t.arg.string({ description: "Only this provider's events" }),
      // Names rather than the enum, so that REST can take them comma-separated (as `labels`).
      kinds: t.arg.stringList({ description: "Only these kinds, EventKind names (comma-separated in REST)" }),
    },
    resolve: async (_root, args, ctx) => {
      const after = seqArg(args.after, "after");
      const count = (value: number | null | undefined, path: string, fallback: number) => {
        if (value === null || value === undefined) return fallback;
        if (!Number.isInteger(value) || value < 1 || value > MAX_EVENTS) {
          throw badInput(`${path} must be a whole number from 1 to ${MAX_EVENTS}`, [
            { path, message: `must be from 1 to ${MAX_EVENTS}` },
          ]);
        }
        return value;
      };
      const limit = count(args.limit, "limit", 100);
      const filters = {
        audience: audienceOf(ctx.viewer),
        providerCode: args.providerCode ?? undefined,
        kinds: kindsArg(args.kinds),
      };
      if (args.last !== null && args.last !== undefined) {
        if (after !== undefined) {
          throw badInput("after and last cannot be used together", [{ path: "last", message: "not with after" }]);
        }
        return {
          items: await lastEvents(ctx.db, { ...filters, limit: count(args.last, "last", 1) }),
          nextCursor: null,
        };
      }
      const from = after ?? (await prunedThrough(ctx.db));
      const items = await readEvents(ctx.db, { ...filters, after: from, limit });
      // Checked after the read: retention that ran meanwhile is seen.
      if (after !== undefined) await assertRetained(ctx.db, after);
      return { items, nextCursor: items.length === limit ? (items[items.length - 1]?.seq ?? null) : null };
    },
  }),
);
