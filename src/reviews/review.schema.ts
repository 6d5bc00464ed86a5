/**
 * The review domain's GraphQL surface: the review type, the reviewers' queue and one review.
 */
import { queryFromInfo } from "@pothos/plugin-prisma";
import { MAX_SUBJECT } from "../auth/reviewer.jwt.ts";
import { actorOf } from "../auth/viewer.ts";
import { builder, type Context } from "../builder.ts";
import { badInput, notFound, unauthenticated } from "../errors.ts";
import type { Prisma } from "../generated/prisma/client.ts";
import { decodeCursor, page, pageSize } from "../pagination.ts";
import type { Package } from "../providers/package.rules.ts";
import { PackageRef, ProviderRef, TrustTier } from "../providers/provider.types.ts";
import { fits } from "../text.ts";
import { ACTIVE_STATUSES, DECISIONS, PRIORITIES, REVIEW_KINDS, REVIEW_STATUSES } from "./review.rules.ts";
import {
  assignReview,
  commentOnReview,
  decideReview,
  moderateProvider,
  QUEUE_SORTS,
  type QueueSort,
  queuePage,
  type ReviewRow,
  setReviewPriority,
} from "./review.store.ts";

export const ReviewKind = builder.enumType("ReviewKind", { values: REVIEW_KINDS });
export const ReviewStatus = builder.enumType("ReviewStatus", { values: REVIEW_STATUSES });
export const ReviewPriority = builder.enumType("ReviewPriority", { values: PRIORITIES });

export const ReviewRef = builder.prismaObject("Review", {
  description: "An item of the review queue: one intake or one update of a provider.",
  fields: (t) => ({
    reviewCode: t.exposeString("reviewCode"),
    providerCode: t.string({
      select: { provider: { select: { providerCode: true } } },
      resolve: (r) => r.provider.providerCode,
    }),
    providerName: t.string({
      select: { provider: { select: { name: true } } },
      resolve: (r) => r.provider.name,
    }),
    providerPackages: t.field({
      type: [PackageRef],
      description: "The MCP packages the provider ships (empty when it is reached only at its endpoint)",
      select: { provider: { select: { packages: true } } },
      resolve: (r) => (r.provider.packages ?? []) as unknown as Package[],
    }),
    kind: t.field({ type: ReviewKind, resolve: (r) => r.kind as never }),
    status: t.field({ type: ReviewStatus, resolve: (r) => r.status as never }),
    priority: t.field({ type: ReviewPriority, resolve: (r) => r.priority as never }),
    assignedTo: t.exposeString("assignedTo", { nullable: true, description: "The assigned reviewer's subject" }),
    createdAt: t.expose("createdAt", { type: "DateTime" }),
    updatedAt: t.expose("updatedAt", { type: "DateTime" }),
    decidedAt: t.expose("decidedAt", { type: "DateTime", nullable: true }),
    // Drift as a reviewer scans a queue for it: in words and since when (the patches are on the
    // provider's `drift`). The queue's page reads it with each review, other look-ups by the select.
    driftSummary: t.string({
      nullable: true,
      description:
        "How the live agent differs from what it declares, in plain words; null while it matches or nothing is probed",
      select: { provider: { select: { health: { select: { drift: true } } } } },
      resolve: (r, _args, ctx) => (ctx.config.health.enabled ? driftOf(r.provider.health?.drift)?.summary : null),
    }),
    driftDetectedAt: t.field({
      type: "DateTime",
      nullable: true,
      description: "When that drift was detected; null without one",
      select: { provider: { select: { health: { select: { drift: true, driftAt: true } } } } },
      resolve: (r, _args, ctx) =>
        ctx.config.health.enabled && driftOf(r.provider.health?.drift) ? (r.provider.health?.driftAt ?? null) : null,
    }),
  }),
});

/** The stored drift's summary, when there is a drift. */
function driftOf(drift: unknown): { summary: string } | null {
  const summary = (drift as { summary?: unknown } | null | undefined)?.summary;
  return typeof summary === "string" ? { summary } : null;
}

export const ReviewQueueSort = builder.enumType("ReviewQueueSort", {
  description:
    "PRIORITY: most urgent, then oldest (the default). OLDEST, NEWEST: by when the review opened. RECENTLY_UPDATED, LEAST_RECENTLY_UPDATED: by its last change.",
  values: Object.keys(QUEUE_SORTS) as QueueSort[],
});

const ReviewPageRef = builder.objectRef<{ items: ReviewRow[]; nextCursor: string | null }>("ReviewPage").implement({
  fields: (t) => ({
    // A prismaField so that Pothos knows what the rows hold (each with its provider's code and
    // name, read with the page): a plain field would make it load every review's provider again.
    items: t.prismaField({ type: [ReviewRef], resolve: (_query, p) => p.items }),
    nextCursor: t.exposeString("nextCursor", { nullable: true, description: "null on the last page" }),
  }),
});

builder.queryFields((t) => ({
  // Declared before `review` so that REST matches /reviews/queue before /reviews/{reviewCode}.
  reviewQueue: t.field({
    type: ReviewPageRef,
    description:
      "Active reviews (OPEN, IN_PROGRESS, CHANGES_REQUESTED), most urgent first, then oldest first, or in the order `sort` names. Reviewers only.",
    authScopes: { reviewer: true },
    args: {
      status: t.arg({ type: ReviewStatus, description: "One of the active statuses" }),
      priority: t.arg({ type: ReviewPriority }),
      assignedTo: t.arg.string({ description: "A reviewer's subject" }),
      providerCode: t.arg.string(),
      search: t.arg.string({ description: "Words of the review code, provider code or provider name" }),
      endpointVerified: t.arg.boolean({
        description: "true: only providers whose endpoint's domain is verified; false: only those whose is not",
      }),
      updatedSince: t.arg({
        type: "DateTime",
        description: "Only reviews updated at or after this instant (e.g. 2026-11-21T12:00:00Z)",
      }),
      sort: t.arg({ type: ReviewQueueSort, description: "The order (default PRIORITY); a cursor holds to its sort" }),
      limit: t.arg.int({ description: "Page size, 1–100 (default 20)" }),
      cursor: t.arg.string(),
    },
    resolve: async (_root, args, ctx) => {
      const limit = pageSize(args.limit);
      const sort: QueueSort = args.sort ?? "PRIORITY";
      const since = args.updatedSince ?? null;
      if (args.status && !(ACTIVE_STATUSES as readonly string[]).includes(args.status)) {
        throw badInput(`status must be one of the active statuses ${ACTIVE_STATUSES.join(", ")}`, [
          { path: "status", message: "the queue holds active reviews only" },
        ]);
      }
      // Filters are bounded like the values they match: a subject, a provider code.
      for (const [path, value, max] of [
        ["assignedTo", args.assignedTo, MAX_SUBJECT],
        ["providerCode", args.providerCode, 63],
      ] as const) {
        if (value && !fits(value, max)) {
          throw badInput(`${path} must be at most ${max} characters`, [{ path, message: `at most ${max} characters` }]);
        }
      }
      const after = queueCursor(args.cursor, sort);
      const where: Prisma.ReviewWhereInput = {
        AND: [
          { status: args.status ?? { in: [...ACTIVE_STATUSES] } },
          ...(args.priority ? [{ priority: args.priority }] : []),
          ...(args.assignedTo ? [{ assignedTo: args.assignedTo }] : []),
          ...(args.providerCode ? [{ provider: { providerCode: args.providerCode } }] : []),
          ...(since ? [{ updatedAt: { gte: since } }] : []),
          ...(after ? [after] : []),
        ],
      };
      const rows = await queuePage(ctx.db, {
        where,
        search: args.search,
        byProviderCode: Boolean(args.providerCode),
        endpointVerified: args.endpointVerified ?? null,
        sort,
        take: limit + 1,
      });
      return page(rows, limit, (r) => [
        sort,
        ...QUEUE_SORTS[sort].keys.map((k) => (k === "priorityRank" ? r.priorityRank : r[k].toISOString())),
        r.id,
      ]);
    },
  }),

  review: t.prismaField({
    type: ReviewRef,
    nullable: true,
    description:
      "One review: for reviewers, and for the owner of its provider; null, with a NOT_FOUND error, for anyone else.",
    args: { reviewCode: t.arg.string({ required: true }) },
    resolve: (query, _root, args, ctx) => visibleReview(ctx, args.reviewCode, query),
  }),
}));

/**
 * The rows after a cursor of the queue, in its sort: the cursor names its sort first, so that one
 * issued under another order is a 400 rather than a page that skips or repeats reviews.
 */
function queueCursor(cursor: string | null | undefined, sort: QueueSort): Prisma.ReviewWhereInput | null {
  if (sort === "PRIORITY") {
    const after = decodeCursor(cursor, ["string", "int", "date", "int"] as const);
    if (!after) return null;
    const [from, rank, createdAt, id] = after;
    if (from !== sort) throw wrongCursor();
    return {
      OR: [
        { priorityRank: { gt: rank } },
        { priorityRank: rank, createdAt: { gt: createdAt } },
        { priorityRank: rank, createdAt, id: { gt: id } },
      ],
    };
  }
  const after = decodeCursor(cursor, ["string", "date", "int"] as const);
  if (!after) return null;
  const [from, at, id] = after;
  if (from !== sort) throw wrongCursor();
  const [key] = QUEUE_SORTS[sort].keys;
  const beyond = QUEUE_SORTS[sort].desc ? "lt" : "gt";
  return { OR: [{ [key]: { [beyond]: at } }, { [key]: at, id: { [beyond]: id } }] };
}

function wrongCursor() {
  return badInput("cursor was issued under another sort; use the nextCursor of a page in this sort", [
    { path: "cursor", message: "not a cursor of this sort" },
  ]);
}

/**
 * A review the caller may see, or NOT_FOUND (UNAUTHENTICATED without credentials): the look-up of
 * `review` and of a review's Node ID. Another agent's review is not found, so codes cannot be probed.
 */
async function visibleReview(ctx: Context, reviewCode: string, query: { include?: object; select?: object }) {
  if (ctx.viewer.kind === "anonymous") throw unauthenticated();
  const review = await ctx.db.review.findUnique({ ...(query as object), where: { reviewCode } });
  const viewer = ctx.viewer;
  if (!review || (viewer.kind === "agent" && viewer.providerId !== review.providerId)) {
    throw notFound(`No review "${reviewCode}"`);
  }
  return review;
}

builder.nodeRef(ReviewRef, {
  id: { resolve: (r: { reviewCode: string }) => r.reviewCode },
  // What the operation selects beneath the node, as `review` gets it as `query`.
  loadWithoutCache: (reviewCode, ctx, info) =>
    visibleReview(ctx, reviewCode, queryFromInfo({ context: ctx, info, typeName: "Review" })),
});

// ── The workflow ────────────────────────────────────────────────────────────────────────────
const ReviewDecision = builder.enumType("ReviewDecision", { values: DECISIONS });

/**
 * The scope of an action on a review its provider's owner may also take: reviewers, or the agent
 * whose provider it is. Another agent gets 404, so review codes cannot be probed.
 */
async function reviewerOrOwner(ctx: Context, reviewCode: string) {
  if (ctx.viewer.kind !== "agent") return { reviewer: true };
  const review = await ctx.db.review.findUnique({
    where: { reviewCode },
    select: { provider: { select: { providerCode: true } } },
  });
  if (!review || review.provider.providerCode !== ctx.viewer.providerCode) throw notFound(`No review "${reviewCode}"`);
  return { ownerOf: review.provider.providerCode };
}

function reviewerSubject(ctx: Context): string {
  if (ctx.viewer.kind !== "reviewer") throw unauthenticated();
  return ctx.viewer.subject;
}

builder.mutationFields((t) => ({
  assignReview: t.prismaField({
    type: ReviewRef,
    description: "Assigns a review (to the caller when no assignee is given); it goes IN_PROGRESS. Reviewers only.",
    authScopes: { reviewer: true },
    args: {
      reviewCode: t.arg.string({ required: true }),
      assignee: t.arg.string({ description: "A reviewer's subject; the caller when absent" }),
    },
    resolve: async (query, _root, args, ctx) => {
      const subject = reviewerSubject(ctx);
      await assignReview(ctx.db, args.reviewCode, args.assignee ?? subject, actorOf(ctx.viewer));
      return ctx.db.review.findUniqueOrThrow({ ...query, where: { reviewCode: args.reviewCode } });
    },
  }),

  decideReview: t.prismaField({
    type: ReviewRef,
    description:
      "Approves (optionally setting the trust tier), rejects or requests changes. A note is required to reject or request changes, and to approve an agent whose endpoint's domain is not verified. Reviewers only.",
    authScopes: { reviewer: true },
    args: {
      reviewCode: t.arg.string({ required: true }),
      decision: t.arg({ type: ReviewDecision, required: true }),
      note: t.arg.string({ description: "Why; shown to the owner and reviewers only" }),
      trustTier: t.arg({ type: TrustTier, description: "With APPROVE only" }),
    },
    resolve: async (query, _root, args, ctx) => {
      const subject = reviewerSubject(ctx);
      await decideReview(ctx.db, { ...args, actor: actorOf(ctx.viewer), reviewer: subject });
      return ctx.db.review.findUniqueOrThrow({ ...query, where: { reviewCode: args.reviewCode } });
    },
  }),

  commentOnReview: t.prismaField({
    type: "ReviewEvent",
    description: "Adds a note to a review's timeline: reviewers, or the owner of its provider.",
    authScopes: (_root, args, ctx) => reviewerOrOwner(ctx, args.reviewCode),
    args: { reviewCode: t.arg.string({ required: true }), note: t.arg.string({ required: true }) },
    resolve: async (query, _root, args, ctx) => {
      const id = await commentOnReview(ctx.db, args.reviewCode, args.note, actorOf(ctx.viewer));
      return ctx.db.reviewEvent.findUniqueOrThrow({ ...query, where: { id } });
    },
  }),

  updateReview: t.prismaField({
    type: ReviewRef,
    description: "Changes an active review's priority. Reviewers only.",
    authScopes: { reviewer: true },
    args: {
      reviewCode: t.arg.string({ required: true }),
      priority: t.arg({ type: ReviewPriority, required: true }),
    },
    resolve: async (query, _root, args, ctx) => {
      await setReviewPriority(ctx.db, args.reviewCode, args.priority, actorOf(ctx.viewer));
      return ctx.db.review.findUniqueOrThrow({ ...query, where: { reviewCode: args.reviewCode } });
    },
  }),

  suspendProvider: t.prismaField({
    type: ProviderRef,
    description:
      "Suspends an approved provider: every token is revoked at once and it leaves the directory. Reviewers only.",
    authScopes: { reviewer: true },
    args: { providerCode: t.arg.string({ required: true }), note: t.arg.string({ required: true }) },
    resolve: async (query, _root, args, ctx) => {
      await moderateProvider(ctx.db, { ...args, action: "suspend", actor: actorOf(ctx.viewer) });
      return ctx.db.provider.findUniqueOrThrow({ ...query, where: { providerCode: args.providerCode } });
    },
  }),

  reinstateProvider: t.prismaField({
    type: ProviderRef,
    description:
      "Reinstates a suspended provider as APPROVED. Its old tokens stay revoked: a reviewer issues a new one (issueToken). Reviewers only.",
    authScopes: { reviewer: true },
    args: { providerCode: t.arg.string({ required: true }), note: t.arg.string() },
    resolve: async (query, _root, args, ctx) => {
      await moderateProvider(ctx.db, { ...args, action: "reinstate", actor: actorOf(ctx.viewer) });
      return ctx.db.provider.findUniqueOrThrow({ ...query, where: { providerCode: args.providerCode } });
    },
  }),
}));
