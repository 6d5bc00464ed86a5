/**
 * Token rotation and revocation. Tokens are minted and hashed before the transaction opens; the
 * plaintext is answered once with `Cache-Control: no-store` and never stored.
 */
import { queryFromInfo } from "@pothos/plugin-prisma";
import { builder } from "../builder.ts";
import { badInput, notFound } from "../errors.ts";
import { noteFeed } from "../feed/feed.outbox.ts";
import { AccessTokenRef } from "../providers/provider.types.ts";
import { isPrivileged, ownerScope } from "../providers/provider.visibility.ts";
import { fits } from "../text.ts";
import { mintToken } from "./agent.token.ts";
import { issueToken, MAX_ACTIVE_TOKENS, revokeToken } from "./token.store.ts";
import { actorOf } from "./viewer.ts";

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

/**
 * A token's metadata under its Node ID: for whoever sees it in its provider's `tokens` (the owner
 * and reviewers); not found for anyone else, so token IDs cannot be probed.
 */
builder.nodeRef(AccessTokenRef, {
  id: { resolve: (token: { tokenId: string }) => token.tokenId },
  loadWithoutCache: async (tokenId, ctx, info) => {
    const query = queryFromInfo({ context: ctx, info, typeName: "AccessToken" });
    const token = await ctx.db.accessToken.findUnique({ ...(query as object), where: { tokenId } });
    if (!token || !isPrivileged(ctx.viewer, token.providerId)) throw notFound(`No token "${tokenId}"`);
    return token;
  },
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
      if (label && !fits(label, 80)) {
        throw badInput("label must be at most 80 characters", [{ path: "label", message: "at most 80 characters" }]);
      }
      const viewer = ctx.viewer;
      if (args.revokeCurrent && viewer.kind !== "agent") {
        throw badInput("revokeCurrent needs the request to be made with an agent token", [
          { path: "revokeCurrent", message: "only with an agent token" },
        ]);
      }
      const token = mintToken();
      const id = await issueToken(ctx.db, {
        providerCode: args.providerCode,
        token,
        label,
        actor: actorOf(viewer),
        ...(args.revokeCurrent && viewer.kind === "agent" ? { revokeTokenId: viewer.tokenId } : {}),
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
      if (!token.revokedAt && (await revokeToken(ctx.db, token, actorOf(ctx.viewer)))) {
        // Committed: the streams opened with this token end (src/feed).
        noteFeed({ kind: "TOKENS_REVOKED", providerId: token.providerId, tokenIds: [args.tokenId] });
      }
      return ctx.db.accessToken.findUniqueOrThrow({ ...query, where: { id: token.id } });
    },
  }),
}));
