/**
 * The change feed's GraphQL surface: `Subscription.feed`, served over Server-Sent Events at
 * /graphql (`Accept: text/event-stream`; GraphQL only — no REST route runs a subscription).
 *
 * Who sees which event (API.md §2), decided per subscriber as each event arrives, on the provider as
 * it stood when the event was published:
 * - anonymous: provider events (created, updated, lifecycle, stage) of providers in the public
 *   directory (PUBLIC and APPROVED; RETIRED ones too, so a mirror learns of a retirement), with the
 *   public list form only; never review events;
 * - an agent: that, plus every event of its own provider, review events included; its stream ends
 *   when its token is revoked, or its provider suspended (which revokes every token);
 * - a reviewer: every event.
 */
import type { Viewer } from "../auth/viewer.ts";
import { builder } from "../builder.ts";
import { badInput } from "../errors.ts";
import { ProviderSummaryRef } from "../providers/provider.types.ts";
import { ReviewKind, ReviewPriority, ReviewStatus } from "../reviews/review.schema.ts";
import { FEED_KINDS, type FeedKind, PROVIDER_FEED_KINDS } from "./feed.outbox.ts";
import { type FeedEvent, type FeedReview, feedOf } from "./feed.pubsub.ts";

/** Whether a viewer may see an event (see above). */
export function visibleTo(viewer: Viewer, event: FeedEvent): boolean {
  if (event.kind === "TOKENS_REVOKED") return false;
  if (viewer.kind === "reviewer") return true;
  if (viewer.kind === "agent" && viewer.providerId === event.provider.id) return true;
  if (!PROVIDER_FEED_KINDS.has(event.kind)) return false;
  return event.provider.visibility === "PUBLIC" && event.provider.reviewStage === "APPROVED";
}

const FeedEventKind = builder.enumType("FeedEventKind", {
  description:
    "Provider events (PROVIDER_CREATED, PROVIDER_UPDATED, LIFECYCLE_CHANGED, STAGE_CHANGED) and review events (REVIEW_…, for reviewers and the provider's owner only)",
  values: FEED_KINDS,
});

const FeedReviewRef = builder.objectRef<FeedReview>("FeedReview").implement({
  description: "The review a review event concerns, as it stood when the event was published.",
  fields: (t) => ({
    reviewCode: t.exposeString("reviewCode"),
    kind: t.field({ type: ReviewKind, resolve: (r) => r.kind as never }),
    status: t.field({ type: ReviewStatus, resolve: (r) => r.status as never }),
    priority: t.field({ type: ReviewPriority, resolve: (r) => r.priority as never }),
    assignedTo: t.exposeString("assignedTo", { nullable: true }),
  }),
});

const FeedEventRef = builder.objectRef<FeedEvent>("FeedEvent").implement({
  description: "One change, published once its write has committed.",
  fields: (t) => ({
    seq: t.exposeInt("seq", {
      description:
        "The event's place in the order of publication, across all replicas: it increases from one event to the next a subscriber receives (gaps are events it may not see)",
    }),
    at: t.field({
      type: "DateTime",
      description: "When the event was published, just after its write committed",
      resolve: (e) => new Date(e.at),
    }),
    kind: t.field({ type: FeedEventKind, resolve: (e) => e.kind as (typeof FEED_KINDS)[number] }),
    providerCode: t.string({ resolve: (e) => e.provider.providerCode }),
    version: t.int({
      description: "The provider's profile version after the change",
      resolve: (e) => e.provider.version,
    }),
    provider: t.field({
      type: ProviderSummaryRef,
      description: "The provider's list form after the change (public fields only)",
      resolve: (e) => ({
        ...e.provider,
        labels: e.provider.labels as never,
        endpoint: e.provider.endpoint as never,
        updatedAt: new Date(e.provider.updatedAt),
      }),
    }),
    review: t.field({
      type: FeedReviewRef,
      nullable: true,
      description: "The review, for review events (and a stage change a review decision made); null otherwise",
      resolve: (e) => e.review,
    }),
  }),
});

builder.subscriptionType({});

builder.subscriptionField("feed", (t) =>
  t.field({
    type: FeedEventRef,
    description:
      "Provider and review events as they happen, each once, in order (`seq`), from the moment of subscribing; what the caller may see only (anonymous: providers in the public directory; an agent: also its own; reviewers: everything). Over SSE: GET or POST /graphql with `Accept: text/event-stream`. Not replayed: catch up with `providers(updatedSince:)`.",
    args: {
      providerCode: t.arg.string({ description: "Only this provider's events" }),
      kinds: t.arg({ type: [FeedEventKind], description: "Only these kinds" }),
    },
    subscribe: (_root, args, ctx) => {
      const kinds = args.kinds ? new Set<FeedKind>(args.kinds) : null;
      if (kinds && kinds.size === 0) {
        throw badInput("kinds must name at least one kind", [{ path: "kinds", message: "empty" }]);
      }
      const viewer = ctx.viewer;
      const own = viewer.kind === "agent" ? viewer : null;
      return feedOf(ctx).subscribe(
        (event) =>
          (!args.providerCode || event.provider.providerCode === args.providerCode) &&
          (!kinds || kinds.has(event.kind)) &&
          visibleTo(viewer, event),
        {
          // An agent's stream ends when its token is revoked, or every token of its provider (suspension).
          until: (event) =>
            own !== null &&
            event.provider.id === own.providerId &&
            ((event.kind === "TOKENS_REVOKED" && (event.tokenIds ?? []).includes(own.tokenId)) ||
              (event.kind === "STAGE_CHANGED" && event.provider.reviewStage === "SUSPENDED")),
        },
      );
    },
    resolve: (event) => event,
  }),
);
