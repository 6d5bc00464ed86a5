/**
 * The provider domain's operations: the list and the profile, intake and the owner's PATCH.
 * Their types are in provider.types.ts; REST routes for the same operations are generated from
 * these by SOFA (src/http/rest/).
 */
import { actorOf } from "../auth/viewer.ts";
import { builder, type Context } from "../builder.ts";
import type { Queryable } from "../db/client.ts";
import { dialectIn } from "../db/client.ts";
import { badInput, notFound } from "../errors.ts";
import { IF_VERSION_DESCRIPTION, ifMatchOf } from "../http/if-match.ts";
import { idempotencyOf, REPLAY_NOTICE } from "../idempotency/idempotency.plugin.ts";
import { commitInTransaction } from "../idempotency/idempotency.store.ts";
import { pageSize } from "../pagination.ts";
import { filterWheres, listFilterArgs, listFilters } from "./provider.filters.ts";
import {
  changeLifecycle,
  type LifecycleState,
  MAX_LIFECYCLE_MESSAGE,
  PATCH_PATHS,
  requestOfPatch,
} from "./provider.lifecycle.ts";
import { relationsAsked } from "./provider.relations.ts";
import { type Intake, validateIntake, validatePatch } from "./provider.rules.ts";
import {
  listChanges,
  listProviders,
  PROVIDER_SORTS,
  type ProviderSort,
  providerMatchSql,
  searchProviders,
} from "./provider.search.store.ts";
import { type Relations, readProvider } from "./provider.store.ts";
import {
  IntakeResultRef,
  LifecycleEnum,
  ProviderPageRef,
  ProviderRef,
  ProviderSummaryRef,
  profileArgs,
} from "./provider.types.ts";
import { assertVisible, canSee, ownerScope } from "./provider.visibility.ts";
import { type IntakeRecords, intakeProvider, patchProvider } from "./provider.write.ts";

// ── Queries ─────────────────────────────────────────────────────────────────────────────────
const ProviderSortEnum = builder.enumType("ProviderSort", {
  description:
    "RELEVANCE: best match first when searching (without a search, as UPDATED). UPDATED: most recently updated first. NAME: by name, A to Z, case ignored.",
  values: PROVIDER_SORTS,
});

builder.queryFields((t) => ({
  providers: t.field({
    type: ProviderPageRef,
    description:
      "Provider summaries the caller may see, every filter given holding: best match first when searching, else most recently updated first, or in the order `sort` names.",
    args: {
      ...listFilterArgs(t),
      sort: t.arg({
        type: ProviderSortEnum,
        description:
          "The order (default RELEVANCE: best match when searching, else UPDATED); a cursor holds to its sort",
      }),
      limit: t.arg.int({ description: "Page size, 1–100 (default 20)" }),
      cursor: t.arg.string({ description: "The nextCursor of the previous page" }),
    },
    resolve: async (_root, args, ctx) => {
      const limit = pageSize(args.limit);
      // The filters, once, for both paths (and for the facets, provider.facets.schema.ts).
      const filters = listFilters(args, ctx);
      const wheres = filterWheres(filters);
      const sort: ProviderSort = args.sort ?? "RELEVANCE";
      if (filters.since && args.sort) {
        throw badInput("sort does not apply with updatedSince: the change feed is oldest change first", [
          { path: "sort", message: "not with updatedSince" },
        ]);
      }
      if (filters.words.length > 0 && sort !== "RELEVANCE") {
        // Another order than the ranking: the search is one more filter of the plain list.
        const match = providerMatchSql(dialectIn(ctx.db), "p", filters.words, "all");
        return listProviders(ctx.db, wheres, limit, args.cursor, { sort, match });
      }
      if (filters.words.length > 0) {
        // Ranked on the index; the page's rows come with the ranking, in one statement.
        const found = await searchProviders(ctx.db, {
          words: filters.words,
          filters: wheres,
          context: filters.context,
          limit,
          cursor: args.cursor,
        });
        return { items: found.rows, nextCursor: found.nextCursor };
      }
      // With updatedSince the list is a change feed: oldest change first (provider.changes.ts).
      if (filters.since) return listChanges(ctx.db, wheres, limit, args.cursor);
      return listProviders(ctx.db, wheres, limit, args.cursor, { sort: sort === "NAME" ? "NAME" : "UPDATED" });
    },
  }),

  provider: t.field({
    type: ProviderRef,
    nullable: true,
    description: "A provider's full profile; null, with a NOT_FOUND error, when there is none the caller may see.",
    args: { providerCode: t.arg.string({ required: true }) },
    resolve: async (_root, args, ctx, info) => {
      const provider = await visibleProvider(ctx, args.providerCode, relationsAsked(ctx, info));
      ctx.response.headers.set("ETag", `"${provider.version}"`);
      return provider;
    },
  }),
}));

const NO_RELATIONS: Relations = Object.freeze({ tokens: false, events: false, domains: false });

/**
 * The profile the caller may see, or NOT_FOUND: the look-up of `provider` and of a provider's Node ID.
 * One round trip: the row with its tokens (only a signed-in caller may be shown them) and timeline,
 * when the operation asks for them (provider.store.ts).
 */
async function visibleProvider(ctx: Context, providerCode: string, asked: Relations) {
  const provider = await readProvider(ctx.db, providerCode, {
    tokens: ctx.viewer.kind !== "anonymous" && asked.tokens,
    events: asked.events,
    domains: asked.domains,
  });
  assertVisible(ctx.viewer, provider, providerCode);
  return provider;
}

// A profile and a list's summary of it are two views of one provider: each its own Node, keyed by
// the code, loaded by the same look-up (under a Node ID, relations asked for load on their own).
builder.nodeRef(ProviderRef, {
  id: { resolve: (p: { providerCode: string }) => p.providerCode },
  loadWithoutCache: (providerCode, ctx) => visibleProvider(ctx, providerCode, NO_RELATIONS),
});
builder.nodeRef(ProviderSummaryRef, {
  id: { resolve: (p: { providerCode: string }) => p.providerCode },
  loadWithoutCache: (providerCode, ctx) => visibleProvider(ctx, providerCode, NO_RELATIONS),
});

/**
 * Writes a valid intake for the caller (createProvider, importProvider): an Idempotency-Key
 * (src/idempotency) is recorded in the intake's own transaction, and the caller, who now holds the
 * new agent's token, is its owner for the rest of the answer.
 */
export async function submitIntake(ctx: Context, intake: Intake, recorded?: IntakeRecords) {
  const idempotency = idempotencyOf(ctx);
  const result = await intakeProvider(
    ctx.db,
    intake,
    idempotency && ((tx, done) => commitInTransaction(tx, idempotency.key, idempotency.claimId, done)),
    recorded,
  );
  if (idempotency) idempotency.committed = { accessToken: result.accessToken };
  ctx.viewer = {
    kind: "agent",
    providerId: result.providerId,
    providerCode: result.providerCode,
    tokenId: result.tokenId,
  };
  return result;
}

// ── Mutations ───────────────────────────────────────────────────────────────────────────────
builder.mutationFields((t) => ({
  createProvider: t.field({
    type: IntakeResultRef,
    description:
      "Submits a new agent for review. Answers its review code and its access token, which is shown this once only.",
    args: {
      providerCode: t.arg.string({
        description: "3–63 characters of a-z 0-9 and -; derived from the name when absent. Never changes.",
      }),
      ...profileArgs(t, true),
    },
    resolve: async (_root, args, ctx) => {
      // Idempotency-Key (src/idempotency): the key is recorded in the intake's own transaction.
      const idempotency = idempotencyOf(ctx);
      ctx.response.headers.set("Cache-Control", "no-store");
      if (idempotency?.replayOf) return { ...idempotency.replayOf, accessToken: null, notice: REPLAY_NOTICE };
      const intake = validateIntake(args);
      if (!intake.ok) throw badInput("The intake is not valid", intake.errors);
      return submitIntake(ctx, intake.value);
    },
  }),

  updateProvider: t.field({
    type: ProviderRef,
    description:
      "Changes the given fields of the caller's own profile and records a new version. Send ifVersion (or If-Match) to refuse a stale update.",
    authScopes: (_root, args, ctx) => ownerScope(ctx, args.providerCode),
    args: {
      providerCode: t.arg.string({ required: true }),
      ...profileArgs(t, false),
      // API.md §1: the lifecycle is owner-settable. The same change as setProviderLifecycle, whose
      // rules it follows (provider.lifecycle.ts); what is left out keeps its value.
      lifecycle: t.arg({ type: LifecycleEnum, description: "ACTIVE, DEPRECATED or RETIRED (final for the owner)" }),
      lifecycleMessage: t.arg.string({
        description: `Why, at most ${MAX_LIFECYCLE_MESSAGE} characters; required to deprecate`,
      }),
      successorCode: t.arg.string({ description: "The providerCode of the agent to use instead" }),
      ifVersion: t.arg.int({ description: IF_VERSION_DESCRIPTION }),
    },
    resolve: async (
      _root,
      { providerCode, lifecycle, lifecycleMessage, successorCode, ifVersion, ...fields },
      ctx,
      info,
    ) => {
      // The profile as this PATCH left it, read in its transaction in one round trip
      // (provider.store.ts): after the commit it could already hold a concurrent later PATCH,
      // unlike the ETag. The caller is its owner.
      const relations = relationsAsked(ctx, info);
      const readBack = (tx: Queryable) => readProvider(tx, providerCode, relations);
      const asked = Object.entries({ lifecycle, lifecycleMessage, successorCode }).filter(([, v]) => v !== undefined);
      let answer: { version: number; written: Awaited<ReturnType<typeof readBack>> };
      if (asked.length > 0) {
        // A lifecycle change is its own version with its own timeline event: alone in its PATCH.
        const mixed = Object.entries(fields).find(([, v]) => v !== undefined);
        if (mixed)
          throw badInput("Change the lifecycle in a PATCH of its own, without other fields", [
            { path: mixed[0], message: "not with lifecycle fields in the same PATCH" },
          ]);
        answer = await changeLifecycle(
          ctx.db,
          {
            providerCode,
            request: (current) => requestOfPatch(current, Object.fromEntries(asked) as Partial<LifecycleState>),
            paths: PATCH_PATHS,
            actor: `agent:${providerCode}`,
            by: "owner",
            ifMatch: ifMatchOf(ctx, ifVersion),
            canSeeSuccessor: (successor) => canSee({ kind: "anonymous" }, successor),
          },
          readBack,
        );
      } else {
        const patch = validatePatch(fields);
        if (!patch.ok) throw badInput("The update is not valid", patch.errors);
        answer = await patchProvider(
          ctx.db,
          {
            providerCode,
            patch: patch.value,
            actor: `agent:${providerCode}`,
            ifMatch: ifMatchOf(ctx, ifVersion),
          },
          readBack,
        );
      }
      ctx.response.headers.set("ETag", `"${answer.version}"`);
      const provider = answer.written;
      if (!provider) throw notFound(`No provider "${providerCode}"`);
      return provider;
    },
  }),

  setProviderLabels: t.field({
    type: ProviderRef,
    description:
      "Sets a provider's labels as reviewers curate them: any provider, a mirrored one too (its source never changes its labels). A new version; no review answers it. Send ifVersion (or If-Match) to refuse a stale change. Reviewers only.",
    authScopes: { reviewer: true },
    args: {
      providerCode: t.arg.string({ required: true }),
      labels: t.arg.stringList({ required: true, description: "The whole list; [] removes every label" }),
      ifVersion: t.arg.int({ description: IF_VERSION_DESCRIPTION }),
    },
    resolve: async (_root, { providerCode, labels, ifVersion }, ctx, info) => {
      const patch = validatePatch({ labels });
      if (!patch.ok) throw badInput("The labels are not valid", patch.errors);
      const relations = relationsAsked(ctx, info);
      const answer = await patchProvider(
        ctx.db,
        {
          providerCode,
          patch: patch.value,
          actor: actorOf(ctx.viewer),
          ifMatch: ifMatchOf(ctx, ifVersion),
          curator: true,
        },
        (tx) => readProvider(tx, providerCode, relations),
      );
      ctx.response.headers.set("ETag", `"${answer.version}"`);
      if (!answer.written) throw notFound(`No provider "${providerCode}"`);
      return answer.written;
    },
  }),
}));
