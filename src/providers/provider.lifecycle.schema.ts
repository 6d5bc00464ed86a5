/**
 * The lifecycle's GraphQL surface: the `Lifecycle` enum, the lifecycle fields of
 * `Provider` and `ProviderSummary`, a provider's `predecessors`, and `setProviderLifecycle`
 * (REST: `POST /api/v1/providers/{providerCode}/lifecycle`). The rules are in provider.lifecycle.ts.
 */
import { actorOf } from "../auth/viewer.ts";
import { builder } from "../builder.ts";
import { notFound } from "../errors.ts";
import { IF_VERSION_DESCRIPTION, ifMatchOf } from "../http/if-match.ts";
import { changeLifecycle, MAX_LIFECYCLE_MESSAGE } from "./provider.lifecycle.ts";
import { relationsAsked } from "./provider.relations.ts";
import { type PredecessorRow, readProvider } from "./provider.store.ts";
import { LifecycleEnum, ProviderRef, ProviderSummaryRef } from "./provider.types.ts";
import { canSee, ownerScope } from "./provider.visibility.ts";

const lifecycleFields = {
  lifecycle: "ACTIVE, DEPRECATED or RETIRED; lists hide RETIRED providers unless includeRetired",
  lifecycleMessage: `Why the agent is deprecated or retired (at most ${MAX_LIFECYCLE_MESSAGE} characters); null while ACTIVE`,
  successorCode: "The providerCode of the agent to use instead, when its owner named one; null while ACTIVE",
};

builder.objectFields(ProviderSummaryRef, (t) => ({
  lifecycle: t.field({
    type: LifecycleEnum,
    description: lifecycleFields.lifecycle,
    resolve: (p) => p.lifecycle as never,
  }),
  lifecycleMessage: t.exposeString("lifecycleMessage", {
    nullable: true,
    description: lifecycleFields.lifecycleMessage,
  }),
  successorCode: t.exposeString("successorCode", { nullable: true, description: lifecycleFields.successorCode }),
}));

builder.prismaObjectFields(ProviderRef, (t) => ({
  lifecycle: t.field({
    type: LifecycleEnum,
    description: lifecycleFields.lifecycle,
    resolve: (p) => p.lifecycle as never,
  }),
  lifecycleMessage: t.exposeString("lifecycleMessage", {
    nullable: true,
    description: lifecycleFields.lifecycleMessage,
  }),
  successorCode: t.exposeString("successorCode", { nullable: true, description: lifecycleFields.successorCode }),
  predecessors: t.stringList({
    description: "The codes of the providers (that the caller may see) naming this one as their successor",
    resolve: async (p, _args, ctx) => {
      // Read with the profile when it came from Query.provider (provider.store.ts: one round trip).
      const rows =
        (p as { predecessorRows?: PredecessorRow[] }).predecessorRows ??
        (await ctx.db.provider.findMany({
          where: { successorCode: p.providerCode },
          select: { id: true, providerCode: true, visibility: true, reviewStage: true },
          orderBy: { providerCode: "asc" },
          take: 100,
        }));
      return rows.filter((row) => canSee(ctx.viewer, row)).map((row) => row.providerCode);
    },
  }),
}));

builder.mutationField("setProviderLifecycle", (t) =>
  t.field({
    type: ProviderRef,
    description:
      "Deprecates (message required, successor optional), retires (message and successor optional) or reactivates a provider, recording a new version and a timeline event. The owner (agent token) or a reviewer; retirement is final for the owner, only a reviewer can undo it. Send ifVersion (or If-Match) to refuse a stale change.",
    authScopes: (_root, args, ctx) => ownerScope(ctx, args.providerCode, true),
    args: {
      providerCode: t.arg.string({ required: true }),
      state: t.arg({ type: LifecycleEnum, required: true, description: "The lifecycle to move to" }),
      message: t.arg.string({
        description: `Why, at most ${MAX_LIFECYCLE_MESSAGE} characters, shown to everyone; required to deprecate, refused to reactivate`,
      }),
      successorCode: t.arg.string({
        description:
          "The providerCode of the agent to use instead: an existing provider everyone may see, not RETIRED, not this one, and not one whose successors lead back here",
      }),
      ifVersion: t.arg.int({ description: IF_VERSION_DESCRIPTION }),
    },
    resolve: async (_root, args, ctx, info) => {
      const asked = relationsAsked(ctx, info);
      const { version, written } = await changeLifecycle(
        ctx.db,
        {
          providerCode: args.providerCode,
          request: { state: args.state, message: args.message, successorCode: args.successorCode },
          actor: actorOf(ctx.viewer),
          by: ctx.viewer.kind === "reviewer" ? "reviewer" : "owner",
          ifMatch: ifMatchOf(ctx, args.ifVersion),
          // A successor is for everyone to follow: one the public may see (so codes cannot be probed).
          canSeeSuccessor: (successor) => canSee({ kind: "anonymous" }, successor),
        },
        // The provider as this change left it, read in its transaction (not a later write's).
        (tx) => readProvider(tx, args.providerCode, asked),
      );
      ctx.response.headers.set("ETag", `"${version}"`);
      if (!written) throw notFound(`No provider "${args.providerCode}"`);
      return written;
    },
  }),
);
