/**
 * The review domain's GraphQL surface: the review type, the reviewers' queue and one review.
 */
import { builder } from "../builder.ts";
import { badInput, notFound, unauthenticated } from "../errors.ts";
import type { Prisma } from "../generated/prisma/client.ts";
import { decodeCursor, page, pageSize } from "../pagination.ts";
import { ACTIVE_STATUSES, PRIORITIES, REVIEW_KINDS, REVIEW_STATUSES } from "./review.rules.ts";

const ReviewKind = builder.enumType("ReviewKind", { values: REVIEW_KINDS });
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
    kind: t.field({ type: ReviewKind, resolve: (r) => r.kind as never }),
    status: t.field({ type: ReviewStatus, resolve: (r) => r.status as never }),
    priority: t.field({ type: ReviewPriority, resolve: (r) => r.priority as never }),
    assignedTo: t.exposeString("assignedTo", { nullable: true, description: "The assigned reviewer's subject" }),
    createdAt: t.expose("createdAt", { type: "DateTime" }),
    updatedAt: t.expose("updatedAt", { type: "DateTime" }),
    decidedAt: t.expose("decidedAt", { type: "DateTime", nullable: true }),
  }),
});

type ReviewRow = Prisma.ReviewGetPayload<{ include: { provider: { select: { providerCode: true; name: true } } } }>;

const ReviewPageRef = builder.objectRef<{ items: ReviewRow[]; nextCursor: string | null }>("ReviewPage").implement({
  fields: (t) => ({
    items: t.field({ type: [ReviewRef], resolve: (p) => p.items }),
    nextCursor: t.exposeString("nextCursor", { nullable: true, description: "null on the last page" }),
  }),
});

function queueSearch(search: string | null | undefined): Prisma.ReviewWhereInput[] {
  if (search === null || search === undefined) return [];
  if (search.length > 200)
    throw badInput("search must be at most 200 characters", [{ path: "search", message: "at most 200 characters" }]);
  return search
    .split(/\s+/)
    .filter(Boolean)
    .slice(0, 16)
    .map((word) => ({
      OR: [
        { reviewCode: { contains: word.toUpperCase() } },
        { provider: { providerCode: { contains: word.toLowerCase() } } },
        { provider: { name: { contains: word } } },
      ],
    }));
}

builder.queryFields((t) => ({
  // Declared before `review` so that REST matches /reviews/queue before /reviews/{reviewCode}.
  reviewQueue: t.field({
    type: ReviewPageRef,
    description:
      "Active reviews (OPEN, IN_PROGRESS, CHANGES_REQUESTED), most urgent first, then oldest first. Reviewers only.",
    authScopes: { reviewer: true },
    args: {
      status: t.arg({ type: ReviewStatus, description: "One of the active statuses" }),
      priority: t.arg({ type: ReviewPriority }),
      assignedTo: t.arg.string({ description: "A reviewer's subject" }),
      providerCode: t.arg.string(),
      search: t.arg.string({ description: "Words of the review code, provider code or provider name" }),
      limit: t.arg.int({ description: "Page size, 1–100 (default 20)" }),
      cursor: t.arg.string(),
    },
    resolve: async (_root, args, ctx) => {
      const limit = pageSize(args.limit);
      if (args.status && !(ACTIVE_STATUSES as readonly string[]).includes(args.status)) {
        throw badInput(`status must be one of the active statuses ${ACTIVE_STATUSES.join(", ")}`, [
          { path: "status", message: "the queue holds active reviews only" },
        ]);
      }
      const after = decodeCursor(args.cursor, ["number", "string", "number"] as const);
      const rows = await ctx.db.review.findMany({
        where: {
          AND: [
            { status: args.status ?? { in: [...ACTIVE_STATUSES] } },
            args.priority ? { priority: args.priority } : {},
            args.assignedTo ? { assignedTo: args.assignedTo } : {},
            args.providerCode ? { provider: { providerCode: args.providerCode } } : {},
            ...queueSearch(args.search),
            after
              ? {
                  OR: [
                    { priorityRank: { gt: after[0] } },
                    { priorityRank: after[0], createdAt: { gt: new Date(after[1]) } },
                    { priorityRank: after[0], createdAt: new Date(after[1]), id: { gt: after[2] } },
                  ],
                }
              : {},
          ],
        },
        include: { provider: { select: { providerCode: true, name: true } } },
        orderBy: [{ priorityRank: "asc" }, { createdAt: "asc" }, { id: "asc" }],
        take: limit + 1,
      });
      return page(rows, limit, (r) => [r.priorityRank, r.createdAt.toISOString(), r.id]);
    },
  }),

  review: t.prismaField({
    type: ReviewRef,
    description: "One review: for reviewers, and for the owner of its provider.",
    args: { reviewCode: t.arg.string({ required: true }) },
    resolve: async (query, _root, args, ctx) => {
      if (ctx.viewer.kind === "anonymous") throw unauthenticated();
      const review = await ctx.db.review.findUnique({ ...query, where: { reviewCode: args.reviewCode } });
      const viewer = ctx.viewer;
      if (!review || (viewer.kind === "agent" && viewer.providerId !== review.providerId)) {
        throw notFound(`No review "${args.reviewCode}"`);
      }
      return review;
    },
  }),
}));
