/**
 * Token rotation and revocation. Tokens are minted and hashed before the transaction opens; the
 * plaintext is answered once with `Cache-Control: no-store` and never stored.
 */
import { builder } from "../builder.ts";
import { badInput, conflict, notFound } from "../errors.ts";
import { noteFeed } from "../feed/feed.outbox.ts";
import { AccessTokenRef, ownerScope } from "../providers/provider.schema.ts";
import { mintToken } from "./agent.token.ts";
import { actorOf } from "./viewer.plugin.ts";

/** At most this many unrevoked, unexpired tokens per provider (API.md §3). */
export const MAX_ACTIVE_TOKENS = 5;

const IssuedTokenRef = builder.objectRef<{ accessToken: string; tokenRowId: number }>("IssuedToken").implement({
  fields: (t) => ({
    accessToken: t.exposeString("accessToken", { description: "The new token in plaintext, shown this once only" }),
    token: t.prismaField({
      type: AccessTokenRef,
      resolve: (query, issued, _args, ctx) =>
        ctx.db.accessToken.findUniqueOrThrow({ ...query, where: { id: issued.tokenRowId } }),
    }),
  }),
});

builder.mutationFields((t) => ({
  issueToken: t.field({
    type: IssuedTokenRef,
    description: `Issues a new access token for the caller's own provider (at most ${MAX_ACTIVE_TOKENS} active). With revokeCurrent, the token used for this request is revoked in the same step: a rotation. A reviewer may issue one for any provider, to hand back access after a reinstatement.`,
    authScopes: (_root, args, ctx) => ownerScope(ctx, args.providerCode, true),
    args: {
      providerCode: t.arg.string({ required: true }),
      label: t.arg.string({ description: "A name to tell the token apart, at most 80 characters" }),
      revokeCurrent: t.arg.boolean({ description: "Revoke the token this request is made with" }),
    },
    resolve: async (_root, args, ctx) => {
      const label = args.label?.trim() || null;
      if (label && label.length > 80) {
        throw badInput("label must be at most 80 characters", [{ path: "label", message: "at most 80 characters" }]);
      }
      const viewer = ctx.viewer;
      if (args.revokeCurrent && viewer.kind !== "agent") {
        throw badInput("revokeCurrent needs the request to be made with an agent token", [
          { path: "revokeCurrent", message: "only with an agent token" },
        ]);
      }
      const token = mintToken();
      const now = new Date();
      const id = await ctx.db.$transaction(async (tx) => {
        const provider = await tx.provider.findUnique({
          where: { providerCode: args.providerCode },
          select: { id: true, reviewStage: true },
        });
        if (!provider) throw notFound(`No provider "${args.providerCode}"`);
        if (provider.reviewStage === "SUSPENDED") {
          throw conflict("the provider is SUSPENDED; it has no working token until it is reinstated");
        }
        if (args.revokeCurrent && viewer.kind === "agent") {
          await tx.accessToken.updateMany({
            where: { tokenId: viewer.tokenId, revokedAt: null },
            data: { revokedAt: now },
          });
        }
        const active = await tx.accessToken.count({
          where: { providerId: provider.id, revokedAt: null, OR: [{ expiresAt: null }, { expiresAt: { gt: now } }] },
        });
        if (active >= MAX_ACTIVE_TOKENS) {
          throw conflict(`At most ${MAX_ACTIVE_TOKENS} active tokens; revoke one first (or rotate with revokeCurrent)`);
        }
        const created = await tx.accessToken.create({
          data: { providerId: provider.id, tokenId: token.tokenId, hash: token.hash, prefix: token.prefix, label },
          select: { id: true },
        });
        await tx.reviewEvent.createMany({
          data: [
            { providerId: provider.id, kind: "TOKEN_ISSUED", actor: actorOf(viewer), note: null },
            ...(args.revokeCurrent
              ? [{ providerId: provider.id, kind: "TOKEN_REVOKED", actor: actorOf(viewer), note: null }]
              : []),
          ],
        });
        return created.id;
      });
      // Committed: a rotation ends the streams opened with the old token (src/feed).
      if (args.revokeCurrent && viewer.kind === "agent") {
        noteFeed({ kind: "TOKENS_REVOKED", providerId: viewer.providerId, tokenIds: [viewer.tokenId] });
      }
      ctx.response.headers.set("Cache-Control", "no-store");
      return { accessToken: token.secret, tokenRowId: id };
    },
  }),

  revokeToken: t.prismaField({
    type: AccessTokenRef,
    description: "Revokes one of a provider's tokens (its owner or a reviewer). Takes effect at the next request.",
    authScopes: (_root, args, ctx) => ownerScope(ctx, args.providerCode, true),
    args: { providerCode: t.arg.string({ required: true }), tokenId: t.arg.string({ required: true }) },
    resolve: async (query, _root, args, ctx) => {
      const token = await ctx.db.accessToken.findFirst({
        where: { tokenId: args.tokenId, provider: { providerCode: args.providerCode } },
        select: { id: true, providerId: true, revokedAt: true },
      });
      if (!token) throw notFound(`No token "${args.tokenId}" on provider "${args.providerCode}"`);
      if (!token.revokedAt) {
        await ctx.db.$transaction([
          ctx.db.accessToken.update({ where: { id: token.id }, data: { revokedAt: new Date() } }),
          ctx.db.reviewEvent.create({
            data: { providerId: token.providerId, kind: "TOKEN_REVOKED", actor: actorOf(ctx.viewer) },
          }),
        ]);
        // Committed: the streams opened with this token end (src/feed).
        noteFeed({ kind: "TOKENS_REVOKED", providerId: token.providerId, tokenIds: [args.tokenId] });
      }
      return ctx.db.accessToken.findUniqueOrThrow({ ...query, where: { id: token.id } });
    },
  }),
}));
