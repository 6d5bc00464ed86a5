/**
 * API keys over GraphQL (and so REST): an admin makes one (the secret answered once, with
 * `Cache-Control: no-store`), lists them with when each was last used, and revokes one.
 */
import { actorOf } from "../auth/viewer.ts";
import { builder } from "../builder.ts";
import { badInput, notFound } from "../errors.ts";
import { decodeCursor, page, pageSize } from "../pagination.ts";
import { keyInputErrors, MAX_KEY_NAME, mintApiKey } from "./apikey.rules.ts";
import { createApiKey, revokeApiKey } from "./apikey.store.ts";

const ADMIN = { admin: true } as const;

const ApiKeyRef = builder.prismaObject("ApiKey", {
  description:
    "A read key: a bearer credential with the reader role, for clients that cannot do OAuth. Its secret is never stored or shown again.",
  fields: (t) => ({
    keyId: t.exposeString("keyId"),
    name: t.exposeString("name"),
    prefix: t.exposeString("prefix", { description: "The first characters of the key, to tell keys apart" }),
    createdBy: t.exposeString("createdBy", { description: "The admin who made it: `reviewer:<subject>`" }),
    createdAt: t.expose("createdAt", { type: "DateTime" }),
    expiresAt: t.expose("expiresAt", { type: "DateTime", nullable: true }),
    lastUsedAt: t.expose("lastUsedAt", {
      type: "DateTime",
      nullable: true,
      description: "When a request last used it, to within a minute",
    }),
    revokedAt: t.expose("revokedAt", { type: "DateTime", nullable: true }),
    revokedBy: t.exposeString("revokedBy", { nullable: true }),
    active: t.boolean({
      description: "Neither revoked nor expired: it works now",
      resolve: (key) => key.revokedAt === null && (key.expiresAt === null || key.expiresAt.getTime() > Date.now()),
    }),
  }),
});

type ApiKeyRow = typeof ApiKeyRef.$inferType;

const ApiKeyPageRef = builder.objectRef<{ items: ApiKeyRow[]; nextCursor: string | null }>("ApiKeyPage").implement({
  fields: (t) => ({
    items: t.field({ type: [ApiKeyRef], resolve: (p) => p.items }),
    nextCursor: t.exposeString("nextCursor", { nullable: true }),
  }),
});

const CreatedApiKeyRef = builder.objectRef<{ secret: string; key: ApiKeyRow }>("CreatedApiKey").implement({
  fields: (t) => ({
    secret: t.exposeString("secret", {
      description: "The key in plaintext, shown this once only: send it as `Bearer <key>`",
    }),
    apiKey: t.field({ type: ApiKeyRef, resolve: (created) => created.key }),
  }),
});

builder.queryFields((t) => ({
  apiKeys: t.field({
    type: ApiKeyPageRef,
    description: "The registry's API keys, revoked and expired ones included, oldest first. Admins only.",
    authScopes: ADMIN,
    args: { limit: t.arg.int(), cursor: t.arg.string() },
    resolve: async (_root, args, ctx) => {
      const limit = pageSize(args.limit);
      const after = decodeCursor(args.cursor, ["int"] as const);
      const rows = await ctx.db.apiKey.findMany({
        where: after ? { id: { gt: after[0] } } : {},
        orderBy: { id: "asc" },
        take: limit + 1,
      });
      ctx.response.headers.set("Cache-Control", "no-store");
      return page(rows, limit, (k) => [k.id]);
    },
  }),
}));

builder.mutationFields((t) => ({
  createApiKey: t.field({
    type: CreatedApiKeyRef,
    description: `Makes a read key (a name of at most ${MAX_KEY_NAME} characters, an optional expiry). Its secret is answered this once. Admins only.`,
    authScopes: ADMIN,
    args: {
      name: t.arg.string({ required: true }),
      expiresAt: t.arg({ type: "DateTime", description: "When it stops working; never, if left out" }),
    },
    resolve: async (_root, args, ctx) => {
      const input = { name: args.name.trim(), expiresAt: args.expiresAt ?? null };
      const errors = keyInputErrors(input, new Date());
      if (errors.length > 0) throw badInput(errors.map((e) => `${e.path} ${e.message}`).join("; "), errors);
      const key = mintApiKey();
      const id = await createApiKey(ctx.db, { key, ...input, actor: actorOf(ctx.viewer) });
      ctx.response.headers.set("Cache-Control", "no-store");
      return { secret: key.secret, key: await ctx.db.apiKey.findUniqueOrThrow({ where: { id } }) };
    },
  }),

  revokeApiKey: t.field({
    type: ApiKeyRef,
    description:
      "Revokes an API key: the next request with it is refused. Revoking a revoked key changes nothing. Admins only.",
    authScopes: ADMIN,
    args: { keyId: t.arg.string({ required: true }) },
    resolve: async (_root, args, ctx) => {
      const key = await ctx.db.apiKey.findUnique({ where: { keyId: args.keyId } });
      if (!key) throw notFound(`No API key "${args.keyId}"`);
      if (!key.revokedAt) await revokeApiKey(ctx.db, key, actorOf(ctx.viewer));
      ctx.response.headers.set("Cache-Control", "no-store");
      return ctx.db.apiKey.findUniqueOrThrow({ where: { id: key.id } });
    },
  }),
}));
