/**
 * The version history of a profile (`provider_versions`): newest first in lists, one version with
 * its snapshot on its own. Who may read it is who may read the profile.
 */
import { builder, type Context } from "../builder.ts";
import { notFound } from "../errors.ts";
import type { Prisma } from "../generated/prisma/client.ts";
import { decodeCursor, page, pageSize } from "../pagination.ts";
import type { LifecycleState } from "./provider.lifecycle.ts";
import type { Profile } from "./provider.rules.ts";
import { LifecycleEnum, ownerFields } from "./provider.types.ts";
import { assertVisible, isPrivileged, shownActor } from "./provider.visibility.ts";

type VersionRow = Prisma.ProviderVersionGetPayload<{ include: { provider: { select: { providerCode: true } } } }>;

const ProfileSnapshotRef = builder.objectRef<Profile>("ProfileSnapshot").implement({
  description: "The owner-editable part of a profile as it stood after a version.",
  fields: (t) => ({
    ...ownerFields(t as unknown as Parameters<typeof ownerFields>[0]),
    contactEmail: t.exposeString("contactEmail", {
      nullable: true,
      description: "Shown to the provider's owner and to reviewers only",
    }),
    // The lifecycle, kept in a snapshot only while it is not ACTIVE (provider.lifecycle.ts).
    lifecycle: t.field({
      type: LifecycleEnum,
      resolve: (s) => (s as Partial<LifecycleState>).lifecycle ?? "ACTIVE",
    }),
    lifecycleMessage: t.string({
      nullable: true,
      resolve: (s) => (s as Partial<LifecycleState>).lifecycleMessage ?? null,
    }),
    successorCode: t.string({ nullable: true, resolve: (s) => (s as Partial<LifecycleState>).successorCode ?? null }),
  }),
});

const VersionSummaryRef = builder
  .objectRef<VersionRow>("ProviderVersionSummary")
  .implement({ description: "One version of a profile, without its snapshot.", fields: () => ({}) });
const ProviderVersionRef = builder.objectRef<VersionRow>("ProviderVersion").implement({
  description: "One version of a profile with the snapshot of the profile after it.",
  fields: () => ({}),
});

for (const ref of [VersionSummaryRef, ProviderVersionRef]) {
  builder.objectFields(ref, (t) => ({
    providerCode: t.string({ resolve: (v) => v.provider.providerCode }),
    version: t.exposeInt("version"),
    createdAt: t.expose("createdAt", { type: "DateTime" }),
    actor: t.string({
      description: "Who made it: `agent:<code>`, `reviewer:<subject>` (just `reviewer` for the public) or `system`",
      resolve: (v, _args, ctx) => shownActor(ctx.viewer, v.providerId, v.actor),
    }),
    changedFields: t.stringList({ resolve: (v) => v.changedFields as string[] }),
  }));
}

builder.objectField(ProviderVersionRef, "snapshot", (t) =>
  t.field({
    type: ProfileSnapshotRef,
    resolve: (v, _args, ctx) => {
      const snapshot = v.snapshot as unknown as Profile;
      return isPrivileged(ctx.viewer, v.providerId) ? snapshot : { ...snapshot, contactEmail: null as never };
    },
  }),
);

const VersionPageRef = builder
  .objectRef<{ items: VersionRow[]; nextCursor: string | null }>("ProviderVersionPage")
  .implement({
    fields: (t) => ({
      items: t.field({ type: [VersionSummaryRef], resolve: (p) => p.items }),
      nextCursor: t.exposeString("nextCursor", { nullable: true }),
    }),
  });

builder.queryFields((t) => ({
  providerVersions: t.field({
    type: VersionPageRef,
    description: "A provider's profile versions, newest first, without snapshots.",
    args: {
      providerCode: t.arg.string({ required: true }),
      limit: t.arg.int({ description: "Page size, 1–100 (default 20)" }),
      cursor: t.arg.string(),
    },
    resolve: async (_root, args, ctx) => {
      const limit = pageSize(args.limit);
      const after = decodeCursor(args.cursor, ["int"] as const);
      const provider = await ctx.db.provider.findUnique({
        where: { providerCode: args.providerCode },
        select: {
          id: true,
          visibility: true,
          reviewStage: true,
          versions: {
            where: after ? { version: { lt: after[0] } } : {},
            orderBy: { version: "desc" },
            take: limit + 1,
            include: { provider: { select: { providerCode: true } } },
          },
        },
      });
      assertVisible(ctx.viewer, provider, args.providerCode);
      return page(provider.versions, limit, (v) => [v.version]);
    },
  }),

  providerVersion: t.field({
    type: ProviderVersionRef,
    nullable: true,
    description:
      "One version of a provider's profile, with its snapshot; null, with a NOT_FOUND error, when there is none the caller may see.",
    args: { providerCode: t.arg.string({ required: true }), version: t.arg.int({ required: true }) },
    resolve: (_root, args, ctx) => visibleVersion(ctx, args.providerCode, args.version),
  }),
}));

/** One version of a profile the caller may see, or NOT_FOUND: the look-up of `providerVersion` and of its Node IDs. */
async function visibleVersion(ctx: Context, providerCode: string, version: number): Promise<VersionRow> {
  const provider = await ctx.db.provider.findUnique({
    where: { providerCode },
    select: {
      id: true,
      visibility: true,
      reviewStage: true,
      versions: { where: { version }, include: { provider: { select: { providerCode: true } } } },
    },
  });
  assertVisible(ctx.viewer, provider, providerCode);
  const found = provider.versions[0];
  if (!found) throw notFound(`No version ${version} of provider "${providerCode}"`);
  return found;
}

/**
 * A version's Node key: `<providerCode>:<version>` (a code holds no colon). A key that names no
 * version of any provider is not found, as a look-up of it would be.
 */
const versionKey = (v: VersionRow) => `${v.provider.providerCode}:${v.version}`;
function loadVersion(key: string, ctx: Context) {
  const at = key.lastIndexOf(":");
  const version = key.slice(at + 1);
  if (at < 1 || !/^[1-9][0-9]{0,8}$/.test(version)) throw notFound(`No version "${key}"`);
  return visibleVersion(ctx, key.slice(0, at), Number(version));
}
for (const ref of [ProviderVersionRef, VersionSummaryRef]) {
  builder.nodeRef(ref, { id: { resolve: versionKey }, loadWithoutCache: loadVersion });
}
