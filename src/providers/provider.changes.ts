/**
 * The list arguments: `includeRetired` (lists hide RETIRED providers unless asked) and
 * `updatedSince` (the change feed of a list). Shared by the providers list and the review queue.
 *
 * How a client polls (README, "Lifecycle and change feed"): ask `providers(updatedSince: T)`; the
 * answer is every provider (the caller may list) updated at or after T, OLDEST CHANGE FIRST, paged
 * with `nextCursor` as usual. Keep the `updatedAt` of the last item processed as the next T. A
 * provider written while the client pages moves to the end of the order (its `updatedAt` grows),
 * so it is seen later in the same pass or the next one, never skipped. "At or after" makes the
 * last item come again in the next poll: items are idempotent (compare `updatedAt`). Writes stamp
 * `updatedAt` before they commit, and replicas' clocks differ slightly: poll with T a few seconds
 * earlier than the last `updatedAt` seen (and skip what you have) so a slow commit is not missed.
 */
import type { builder } from "../builder.ts";
import type { Prisma } from "../generated/prisma/client.ts";

/** The two arguments, as a list query declares them. */
export function changeFeedArgs(t: Parameters<Parameters<typeof builder.queryField>[1]>[0]) {
  return {
    includeRetired: t.arg.boolean({
      description: "Include RETIRED providers (hidden by default); `?includeRetired=true` in REST",
    }),
    updatedSince: t.arg({
      type: "DateTime",
      description:
        "Only providers updated at or after this instant (e.g. 2026-11-21T12:00:00Z); without a search the list is then oldest change first, for polling",
    }),
  };
}

/** The list filters of the two arguments (Prisma `where`; provider.search.store.ts turns them into SQL). */
export function lifecycleFilters(args: {
  includeRetired: boolean | null | undefined;
  since: Date | null;
}): Prisma.ProviderWhereInput[] {
  return [
    ...(args.includeRetired ? [] : [{ lifecycle: { in: ["ACTIVE", "DEPRECATED"] } }]),
    ...(args.since ? [{ updatedAt: { gte: args.since } }] : []),
  ];
}
