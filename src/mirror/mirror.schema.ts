/**
 * The mirror's GraphQL surface (and so REST, `/api/v1/mirror/sources`): admins list, make, read,
 * change and remove sources and ask for a sync now; a source answers its sync's state and counts.
 * The profile's `origin` says which source and upstream entry a mirrored provider comes from.
 */
import { builder } from "../builder.ts";
import type { Db } from "../db/client.ts";
import { badInput, conflict, notFound } from "../errors.ts";
import { decodeCursor, page, pageSize } from "../pagination.ts";
import { TRUST_TIERS } from "../providers/provider.rules.ts";
import { ProviderRef } from "../providers/provider.types.ts";
import {
  MIRROR_KINDS,
  MIRROR_ONLY,
  MIRROR_POLICIES,
  MIRROR_STATES,
  type MirrorFilter,
  type SourceInput,
  validateSource,
} from "./mirror.rules.ts";
import {
  createSource,
  type Origin,
  originOf,
  requestSync,
  type SourceRow,
  sourceTaken,
  updateSource,
} from "./mirror.store.ts";

const ADMIN = { admin: true } as const;

const MirrorKindEnum = builder.enumType("MirrorKind", {
  description:
    "MCP_REGISTRY: a registry of the MCP registry's API (`/v0.1/servers`). AGENT_REGISTRY: another Agent Registry.",
  values: MIRROR_KINDS,
});
const MirrorPolicyEnum = builder.enumType("MirrorPolicy", {
  description: "REVIEW: each new entry opens an intake review. TRUSTED: approved at once, at the source's trust tier.",
  values: MIRROR_POLICIES,
});
const MirrorOnlyEnum = builder.enumType("MirrorOnly", {
  description: "Which MCP servers to take: ANY, those with REMOTES (endpoints), or those with PACKAGES.",
  values: MIRROR_ONLY,
});
const MirrorStateEnum = builder.enumType("MirrorState", {
  description:
    "IDLE: waiting for its next sync. SYNCING: a sync is under way. FAILED: the last sync failed; it is retried later.",
  values: MIRROR_STATES,
});
const MirrorTrustTierEnum = builder.enumType("MirrorTrustTier", {
  description: "The trust tier a TRUSTED source's agents are approved at",
  values: TRUST_TIERS,
});

const MirrorFilterRef = builder.objectRef<MirrorFilter>("MirrorFilter").implement({
  description: "What a source takes of its upstream.",
  fields: (t) => ({
    include: t.exposeStringList("include", {
      description: "Server-name patterns (`*` any characters); none: every name",
    }),
    exclude: t.exposeStringList("exclude", { description: "Server-name patterns left out" }),
    registryTypes: t.exposeStringList("registryTypes", {
      description: "Package registry types an entry must ship one of (NPM, PYPI, OCI, …); none: any",
    }),
    only: t.field({ type: MirrorOnlyEnum, resolve: (f) => f.only }),
  }),
});

const MirrorFilterInput = builder.inputType("MirrorFilterInput", {
  fields: (t) => ({
    include: t.stringList(),
    exclude: t.stringList(),
    registryTypes: t.stringList(),
    only: t.field({ type: MirrorOnlyEnum }),
  }),
});

const MirrorErrorRef = builder.objectRef<{ at: string; message: string }>("MirrorError").implement({
  fields: (t) => ({
    at: t.field({ type: "DateTime", resolve: (e) => new Date(e.at) }),
    message: t.exposeString("message"),
  }),
});

const MirrorSkipRef = builder
  .objectRef<{ at: string; name: string; version: string | null; reason: string }>("MirrorSkippedEntry")
  .implement({
    description: "An upstream entry the sync could not take, and why; the sync went on without it.",
    fields: (t) => ({
      at: t.field({ type: "DateTime", resolve: (e) => new Date(e.at) }),
      name: t.exposeString("name"),
      version: t.exposeString("version", { nullable: true }),
      reason: t.exposeString("reason"),
    }),
  });

const MirrorCountsRef = builder.objectRef<SourceRow>("MirrorCounts").implement({
  description: "What the sync under way, or the last one, did with the entries it saw.",
  fields: (t) => ({
    seen: t.exposeInt("seen"),
    created: t.exposeInt("created"),
    updated: t.exposeInt("updated"),
    retired: t.exposeInt("retired"),
    skipped: t.exposeInt("skipped"),
  }),
});

export const MirrorSourceRef = builder.objectRef<SourceRow>("MirrorSource").implement({
  description: "A registry this one mirrors, and where its sync stands. Admins only.",
  fields: (t) => ({
    sourceId: t.exposeString("sourceId"),
    url: t.exposeString("url"),
    kind: t.field({ type: MirrorKindEnum, resolve: (s) => s.kind as (typeof MIRROR_KINDS)[number] }),
    filter: t.field({ type: MirrorFilterRef, resolve: (s) => s.filter as unknown as MirrorFilter }),
    policy: t.field({ type: MirrorPolicyEnum, resolve: (s) => s.policy as (typeof MIRROR_POLICIES)[number] }),
    trustTier: t.field({
      type: MirrorTrustTierEnum,
      nullable: true,
      resolve: (s) => s.trustTier as (typeof TRUST_TIERS)[number] | null,
    }),
    intervalSeconds: t.exposeInt("intervalSeconds"),
    contactEmail: t.exposeString("contactEmail", { description: "The contact its providers carry" }),
    fromEnv: t.exposeBoolean("fromEnv", { description: "Declared by MIRROR_SOURCES (kept as the variable says)" }),
    hasCredential: t.boolean({
      description:
        "Whether the source sends a credential to its upstream (`Authorization: Bearer …`). The credential itself is write-only: no read answers it",
      resolve: (s) => s.credential !== null,
    }),
    createdAt: t.expose("createdAt", { type: "DateTime" }),
    updatedAt: t.expose("updatedAt", { type: "DateTime" }),
    state: t.field({ type: MirrorStateEnum, resolve: (s) => s.state as (typeof MIRROR_STATES)[number] }),
    lastSyncAt: t.expose("lastSyncAt", { type: "DateTime", nullable: true, description: "When the last sync started" }),
    lastSuccessAt: t.expose("lastSuccessAt", { type: "DateTime", nullable: true }),
    nextSyncAt: t.expose("nextSyncAt", { type: "DateTime" }),
    highWaterMark: t.exposeString("mark", {
      nullable: true,
      description: "Where the next sync starts: the newest upstream `updatedAt` (or seq) it has taken",
    }),
    counts: t.field({ type: MirrorCountsRef, resolve: (s) => s }),
    mirrored: t.exposeInt("mirrored", { description: "Providers this source has made" }),
    lastErrors: t.field({
      type: [MirrorErrorRef],
      description: "The last errors, newest first",
      resolve: (s) => s.lastErrors as { at: string; message: string }[],
    }),
    skippedEntries: t.field({
      type: [MirrorSkipRef],
      description: "The entries the last syncs skipped, newest first",
      resolve: (s) => s.skippedEntries as { at: string; name: string; version: string | null; reason: string }[],
    }),
  }),
});

const MirrorSourcePageRef = builder
  .objectRef<{ items: SourceRow[]; nextCursor: string | null }>("MirrorSourcePage")
  .implement({
    fields: (t) => ({
      items: t.field({ type: [MirrorSourceRef], resolve: (p) => p.items }),
      nextCursor: t.exposeString("nextCursor", { nullable: true }),
    }),
  });

const OriginRef = builder.objectRef<Origin>("ProviderOrigin").implement({
  description: "Where a mirrored provider comes from: its source and the upstream entry it was last made from.",
  fields: (t) => ({
    sourceId: t.exposeString("sourceId"),
    sourceUrl: t.exposeString("sourceUrl"),
    kind: t.field({ type: MirrorKindEnum, resolve: (o) => o.kind as (typeof MIRROR_KINDS)[number] }),
    upstreamName: t.exposeString("upstreamName"),
    upstreamVersion: t.exposeString("upstreamVersion", { nullable: true }),
    upstreamStatus: t.exposeString("upstreamStatus", {
      description:
        "active, deprecated or deleted (an MCP registry's status); active, deprecated, retired or withdrawn (out of its directory) for another registry of this kind",
    }),
    upstreamStateHash: t.exposeString("stateHash", {
      nullable: true,
      description:
        "For another registry of this kind: the stateHash of the provider's public state there that this one was last made from (its events' hash); null for an MCP registry",
    }),
    fetchedAt: t.expose("fetchedAt", { type: "DateTime" }),
    unmapped: t.exposeStringList("unmapped", {
      description:
        "What the import could not map of the upstream entry last applied, as JSON Pointers into it (an MCP registry's server.json); empty when everything was taken",
    }),
  }),
});

builder.prismaObjectFields(ProviderRef, (t) => ({
  origin: t.field({
    type: OriginRef,
    nullable: true,
    description:
      "For a mirrored provider, the source it comes from (its source changes it, never its owner); null otherwise",
    resolve: (p, _args, ctx) => ((p as { mirrored?: boolean }).mirrored ? originOf(ctx.db, p.id) : null),
  }),
}));

const sourceArgs = (t: Parameters<Parameters<typeof builder.mutationFields>[0]>[0], create: boolean) => ({
  url: t.arg.string({ required: create, description: "The upstream's base URL (https:)" }),
  kind: t.arg({ type: MirrorKindEnum, description: "Default MCP_REGISTRY" }),
  filter: t.arg({ type: MirrorFilterInput }),
  policy: t.arg({ type: MirrorPolicyEnum, description: "Default REVIEW" }),
  trustTier: t.arg({ type: MirrorTrustTierEnum, description: "Required by TRUSTED, refused otherwise" }),
  intervalSeconds: t.arg.int({ description: "How often it is synced; default 3600, at least 60" }),
  contactEmail: t.arg.string({ description: "The contact its providers carry; default mirror@<the upstream's host>" }),
  credential: t.arg.string({
    description:
      "Sent as `Authorization: Bearer <credential>` on every request to the upstream: an API key of a registry whose reads need one, or an MCP registry's token. Write-only (a read answers only `hasCredential`); null clears it, absent leaves it. At most 4096 visible ASCII characters",
  }),
});

function validated(input: Record<string, unknown>): SourceInput {
  const source = validateSource(input);
  if (!source.ok)
    throw badInput(`The source is not valid: ${source.errors[0]?.path} ${source.errors[0]?.message}`, source.errors);
  return source.value;
}

async function sourceByIdOr404(db: Db, sourceId: string): Promise<SourceRow> {
  const row = await db.mirrorSource.findUnique({ where: { sourceId } });
  if (!row) throw notFound(`No mirror source "${sourceId}"`);
  return row;
}

/** A source MIRROR_SOURCES declares is kept there: each start would undo a change made here. */
function declaredHere(row: SourceRow): SourceRow {
  if (row.fromEnv) {
    throw conflict(`The source ${row.url} is declared by MIRROR_SOURCES: change or remove it there`);
  }
  return row;
}

const taken = (error: unknown, url: string) =>
  sourceTaken(error)
    ? badInput(`A source of ${url} exists already`, [{ path: "url", message: "already a source" }])
    : error;

builder.queryFields((t) => ({
  mirrorSources: t.field({
    type: MirrorSourcePageRef,
    description: "The registry's mirror sources, oldest first, with their sync state. Admins only.",
    authScopes: ADMIN,
    args: { limit: t.arg.int(), cursor: t.arg.string() },
    resolve: async (_root, args, ctx) => {
      const limit = pageSize(args.limit);
      const after = decodeCursor(args.cursor, ["int"] as const);
      const rows = await ctx.db.mirrorSource.findMany({
        where: after ? { id: { gt: after[0] } } : {},
        orderBy: { id: "asc" },
        take: limit + 1,
      });
      ctx.response.headers.set("Cache-Control", "no-store");
      return page(rows, limit, (s) => [s.id]);
    },
  }),
  mirrorSource: t.field({
    type: MirrorSourceRef,
    nullable: true,
    description: "One mirror source with its sync state and counts. Admins only.",
    authScopes: ADMIN,
    args: { sourceId: t.arg.string({ required: true }) },
    resolve: async (_root, args, ctx) => {
      ctx.response.headers.set("Cache-Control", "no-store");
      return sourceByIdOr404(ctx.db, args.sourceId);
    },
  }),
}));

builder.mutationFields((t) => ({
  createMirrorSource: t.field({
    type: MirrorSourceRef,
    description: "Adds a registry to mirror; its first sync starts at the next poll. Admins only.",
    authScopes: ADMIN,
    args: sourceArgs(t, true),
    resolve: async (_root, args, ctx) => {
      const input = validated(args as Record<string, unknown>);
      const row = await createSource(ctx.db, input).catch((error) => {
        throw taken(error, input.url);
      });
      ctx.mirror.kick();
      return row;
    },
  }),
  updateMirrorSource: t.field({
    type: MirrorSourceRef,
    description:
      "Changes a source: the fields given replace the current ones (a filter whole). A new url or kind starts its sync over. A source MIRROR_SOURCES declares is changed there (409). Admins only.",
    authScopes: ADMIN,
    args: { sourceId: t.arg.string({ required: true }), ...sourceArgs(t, false) },
    resolve: async (_root, { sourceId, ...args }, ctx) => {
      const current = declaredHere(await sourceByIdOr404(ctx.db, sourceId));
      const { credential, ...rest } = args;
      const given = Object.fromEntries(Object.entries(rest).filter(([, v]) => v !== undefined && v !== null));
      const input = validated({
        url: current.url,
        kind: current.kind,
        filter: current.filter,
        policy: current.policy,
        trustTier: "policy" in given ? undefined : current.trustTier,
        intervalSeconds: current.intervalSeconds,
        contactEmail: current.contactEmail,
        ...given,
        // Absent: kept as it is; null: cleared.
        ...(credential !== undefined && { credential }),
      });
      const row = await updateSource(ctx.db, current.id, input).catch((error) => {
        throw taken(error, input.url);
      });
      ctx.mirror.kick();
      return row;
    },
  }),
  deleteMirrorSource: t.field({
    type: MirrorSourceRef,
    description:
      "Removes a source: it is synced no more. The providers it made stay as they are, with their origin, changed by no one's token. A source MIRROR_SOURCES declares is removed there (409). Admins only.",
    authScopes: ADMIN,
    args: { sourceId: t.arg.string({ required: true }) },
    resolve: async (_root, args, ctx) => {
      const row = declaredHere(await sourceByIdOr404(ctx.db, args.sourceId));
      await ctx.db.mirrorSource.delete({ where: { id: row.id } });
      return row;
    },
  }),
  syncMirrorSource: t.field({
    type: MirrorSourceRef,
    description: "Starts a sync of the source now (a sync under way goes on). Admins only.",
    authScopes: ADMIN,
    args: { sourceId: t.arg.string({ required: true }) },
    resolve: async (_root, args, ctx) => {
      const row = await sourceByIdOr404(ctx.db, args.sourceId);
      const due = await requestSync(ctx.db, row.id);
      ctx.mirror.kick();
      return due;
    },
  }),
}));
