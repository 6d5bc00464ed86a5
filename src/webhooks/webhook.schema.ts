/**
 * Webhook subscriptions over GraphQL (and REST through SOFA). An agent subscribes to its own
 * provider's events; a reviewer to any provider's, or all. A subscription is its creator's: an agent
 * sees its own, a reviewer every one, and anyone else is told it does not exist.
 */

import { actorOf } from "../auth/viewer.ts";
import { builder, type Context } from "../builder.ts";
import { badInput, conflict, forbidden, notFound } from "../errors.ts";
import { decodeCursor, page, pageSize } from "../pagination.ts";
import { assertVisible } from "../providers/provider.visibility.ts";
import { checkKinds, checkUrl, newSecret, newWebhookId, PING_KIND } from "./webhook.rules.ts";
import {
  createPing,
  createWebhook,
  type DeliveryRow,
  deleteWebhook,
  deliveryById,
  findDelivery,
  findWebhook,
  listDeliveries,
  listWebhooks,
  redeliver,
  type WebhookRow,
} from "./webhook.store.ts";

const WebhookRef = builder.objectRef<WebhookRow>("Webhook").implement({
  description:
    "A subscription: the events its owner may see (and its filters keep) are pushed to its URL, signed as Standard Webhooks says.",
  fields: (t) => ({
    webhookId: t.exposeString("webhookId"),
    url: t.exposeString("url"),
    providerCode: t.exposeString("providerCode", {
      nullable: true,
      description: "Only this provider's events; null for every provider the owner may see",
    }),
    kinds: t.stringList({
      nullable: true,
      description: "Only these event kinds; null for every kind",
      resolve: (w) => (Array.isArray(w.kinds) ? (w.kinds as string[]) : null),
    }),
    createdBy: t.exposeString("createdBy", { description: "`agent:<code>` or `reviewer:<subject>`" }),
    createdAt: t.expose("createdAt", { type: "DateTime" }),
    enabled: t.boolean({ resolve: (w) => w.disabledAt === null }),
    disabledAt: t.expose("disabledAt", { type: "DateTime", nullable: true }),
    disabledReason: t.exposeString("disabledReason", {
      nullable: true,
      description: "Why deliveries stopped: a message that could not be delivered for the whole retry period",
    }),
    lastSeq: t.exposeInt("lastSeq", { description: "The seq of the last event looked at for deliveries" }),
  }),
});

const DeliveryStatusEnum = builder.enumType("WebhookDeliveryStatus", {
  description: "PENDING: attempts go on; SUCCEEDED: the receiver answered 2xx; FAILED: given up",
  values: ["PENDING", "SUCCEEDED", "FAILED"] as const,
});

const DeliveryRef = builder.objectRef<DeliveryRow>("WebhookDelivery").implement({
  description: "One message of a subscription (an event, or a test ping) and its attempts.",
  fields: (t) => ({
    deliveryId: t.exposeString("deliveryId", {
      description: "The message id: the `webhook-id` header of every attempt, redeliveries included",
    }),
    seq: t.exposeInt("seq", { nullable: true, description: "The event's seq; null for a ping" }),
    kind: t.exposeString("kind", { description: "The message's type: the event's kind, or PING" }),
    status: t.field({ type: DeliveryStatusEnum, resolve: (d) => d.status as "PENDING" | "SUCCEEDED" | "FAILED" }),
    attempts: t.exposeInt("attempts", { description: "Attempts made in this series (a redelivery starts a new one)" }),
    lastAttemptAt: t.expose("lastAttemptAt", { type: "DateTime", nullable: true }),
    nextAttemptAt: t.expose("nextAttemptAt", { type: "DateTime", nullable: true }),
    lastStatusCode: t.exposeInt("lastStatusCode", {
      nullable: true,
      description: "The HTTP status of the last attempt; null when it got no answer",
    }),
    latencyMs: t.exposeInt("lastLatencyMs", { nullable: true, description: "How long the last attempt took" }),
    lastError: t.exposeString("lastError", { nullable: true }),
    deliveredAt: t.expose("deliveredAt", { type: "DateTime", nullable: true }),
    createdAt: t.expose("createdAt", { type: "DateTime" }),
  }),
});

const CreatedWebhookRef = builder.objectRef<{ secret: string; webhook: WebhookRow }>("CreatedWebhook").implement({
  fields: (t) => ({
    secret: t.exposeString("secret", {
      description: "The signing secret (`whsec_…`), shown this once only: keep it to verify deliveries",
    }),
    webhook: t.field({ type: WebhookRef, resolve: (c) => c.webhook }),
  }),
});

const WebhookPageRef = builder.objectRef<{ items: WebhookRow[]; nextCursor: string | null }>("WebhookPage").implement({
  fields: (t) => ({
    items: t.field({ type: [WebhookRef], resolve: (p) => p.items }),
    nextCursor: t.exposeString("nextCursor", { nullable: true }),
  }),
});

const DeliveryPageRef = builder
  .objectRef<{ items: DeliveryRow[]; nextCursor: string | null }>("WebhookDeliveryPage")
  .implement({
    fields: (t) => ({
      items: t.field({ type: [DeliveryRef], resolve: (p) => p.items }),
      nextCursor: t.exposeString("nextCursor", { nullable: true }),
    }),
  });

/** Whether the caller may see a subscription: a reviewer any, an agent those its token's provider holds. */
function mayManage(ctx: Context, ownerProviderId: number | null): boolean {
  const { viewer } = ctx;
  return viewer.kind === "reviewer" || (viewer.kind === "agent" && viewer.providerId === ownerProviderId);
}

/** The subscription the caller may see, or NOT_FOUND (one answer whether it exists or not). */
async function visibleWebhook(ctx: Context, webhookId: string): Promise<WebhookRow> {
  const row = await findWebhook(ctx.db, webhookId);
  if (!row || !mayManage(ctx, row.ownerProviderId)) throw notFound(`No webhook "${webhookId}"`);
  return row;
}

/** Retries and pings go to enabled subscriptions only: a disabled one stays so until deleted. */
function assertEnabled(row: WebhookRow): void {
  if (row.disabledAt) {
    throw conflict(
      `Webhook ${row.webhookId} was disabled at ${row.disabledAt.toISOString()}; delete it and subscribe again`,
    );
  }
}

builder.nodeRef(WebhookRef, {
  id: { resolve: (w: WebhookRow) => w.webhookId },
  loadWithoutCache: (webhookId, ctx) => visibleWebhook(ctx, webhookId),
});
builder.nodeRef(DeliveryRef, {
  id: { resolve: (d: DeliveryRow) => d.deliveryId },
  loadWithoutCache: async (deliveryId, ctx) => {
    const row = await deliveryById(ctx.db, deliveryId);
    if (!row || !mayManage(ctx, row.webhook.ownerProviderId)) throw notFound(`No delivery "${deliveryId}"`);
    return row;
  },
});

const SIGNED_IN = { agent: true, reviewer: true } as const;

builder.queryFields((t) => ({
  webhooks: t.field({
    type: WebhookPageRef,
    description: "The caller's webhook subscriptions (a reviewer's: every one), oldest first.",
    authScopes: SIGNED_IN,
    args: { limit: t.arg.int(), cursor: t.arg.string() },
    resolve: async (_root, args, ctx) => {
      const limit = pageSize(args.limit);
      const after = decodeCursor(args.cursor, ["int"] as const);
      const rows = await listWebhooks(ctx.db, {
        ownerProviderId: ctx.viewer.kind === "agent" ? ctx.viewer.providerId : undefined,
        limit: limit + 1,
        afterId: after ? after[0] : null,
      });
      ctx.response.headers.set("Cache-Control", "no-store");
      return page(rows, limit, (w) => [w.id]);
    },
  }),

  webhook: t.field({
    type: WebhookRef,
    nullable: true,
    description: "One subscription; null, with a NOT_FOUND error, when there is none the caller may see.",
    authScopes: SIGNED_IN,
    args: { webhookId: t.arg.string({ required: true }) },
    resolve: (_root, args, ctx) => visibleWebhook(ctx, args.webhookId),
  }),

  webhookDeliveries: t.field({
    type: DeliveryPageRef,
    description:
      "A subscription's deliveries, newest first: status, attempts, the last one's status, latency and error.",
    authScopes: SIGNED_IN,
    args: { webhookId: t.arg.string({ required: true }), limit: t.arg.int(), cursor: t.arg.string() },
    resolve: async (_root, args, ctx) => {
      const limit = pageSize(args.limit);
      const before = decodeCursor(args.cursor, ["int"] as const);
      const webhook = await visibleWebhook(ctx, args.webhookId);
      const rows = await listDeliveries(ctx.db, {
        webhookRowId: webhook.id,
        limit: limit + 1,
        beforeId: before ? before[0] : null,
      });
      ctx.response.headers.set("Cache-Control", "no-store");
      return page(rows, limit, (d) => [d.id]);
    },
  }),
}));

builder.mutationFields((t) => ({
  createWebhook: t.field({
    type: CreatedWebhookRef,
    description:
      "Subscribes an https: URL to the events from now on. An agent's token subscribes to its own provider's events; a reviewer's to any provider's (providerCode) or all, optionally only some kinds. The signing secret is answered this once.",
    authScopes: SIGNED_IN,
    args: {
      url: t.arg.string({ required: true, description: "An https: URL on a public host" }),
      providerCode: t.arg.string({ description: "Only this provider's events (an agent: its own, the default)" }),
      kinds: t.arg.stringList({ description: "Only these event kinds; every kind when left out" }),
    },
    resolve: async (_root, args, ctx) => {
      const url = checkUrl(args.url);
      const kinds = checkKinds(args.kinds);
      const errors = [...(url.ok ? [] : url.errors), ...(kinds.ok ? [] : kinds.errors)];
      if (!url.ok || !kinds.ok) throw badInput("The subscription is not valid", errors);
      const { viewer } = ctx;
      let target: { id: number; providerCode: string } | null = null;
      if (args.providerCode !== null && args.providerCode !== undefined) {
        const code = args.providerCode;
        if (viewer.kind === "agent" && code === viewer.providerCode) {
          target = { id: viewer.providerId, providerCode: code };
        } else {
          const provider = await ctx.db.provider.findUnique({
            where: { providerCode: code },
            select: { id: true, providerCode: true, visibility: true, reviewStage: true },
          });
          assertVisible(viewer, provider, code);
          if (viewer.kind === "agent") throw forbidden("An agent subscribes to its own provider's events only");
          target = provider;
        }
      } else if (viewer.kind === "agent") {
        target = { id: viewer.providerId, providerCode: viewer.providerCode };
      }
      const secret = newSecret();
      const webhook = await createWebhook(ctx.db, {
        webhookId: newWebhookId(),
        ownerProviderId: viewer.kind === "agent" ? viewer.providerId : null,
        createdBy: actorOf(viewer),
        url: url.value,
        providerId: target?.id ?? null,
        providerCode: target?.providerCode ?? null,
        kinds: kinds.value,
        secret,
        maxPerProvider: ctx.config.webhooks.maxPerProvider,
      });
      ctx.response.headers.set("Cache-Control", "no-store");
      return { secret, webhook };
    },
  }),

  deleteWebhook: t.field({
    type: WebhookRef,
    description: "Deletes a subscription and its delivery log; answers it as it was.",
    authScopes: SIGNED_IN,
    args: { webhookId: t.arg.string({ required: true }) },
    resolve: async (_root, args, ctx) => {
      const webhook = await visibleWebhook(ctx, args.webhookId);
      await deleteWebhook(ctx.db, webhook.id);
      return webhook;
    },
  }),

  retryWebhookDelivery: t.field({
    type: DeliveryRef,
    description:
      "Delivers one message again, with the same webhook-id: due now, with a fresh series of attempts. Not while an attempt of it is under way.",
    authScopes: SIGNED_IN,
    args: { webhookId: t.arg.string({ required: true }), deliveryId: t.arg.string({ required: true }) },
    resolve: async (_root, args, ctx) => {
      const webhook = await visibleWebhook(ctx, args.webhookId);
      const delivery = await findDelivery(ctx.db, webhook.id, args.deliveryId);
      if (!delivery) throw notFound(`No delivery "${args.deliveryId}" of webhook "${args.webhookId}"`);
      assertEnabled(webhook);
      const now = new Date();
      const again = await redeliver(ctx.db, delivery, now, ctx.config.webhooks.maxAgeMs);
      if (!again) throw conflict(`Delivery ${args.deliveryId} is being attempted right now; ask again in a moment`);
      return again;
    },
  }),

  testWebhook: t.field({
    type: DeliveryRef,
    description: "Sends a test ping (type PING) to the subscription's URL, as a delivery of its own.",
    authScopes: SIGNED_IN,
    args: { webhookId: t.arg.string({ required: true }) },
    resolve: async (_root, args, ctx) => {
      const webhook = await visibleWebhook(ctx, args.webhookId);
      assertEnabled(webhook);
      const now = new Date();
      return createPing(ctx.db, webhook, {
        kind: PING_KIND,
        data: { webhookId: webhook.webhookId, message: "A test ping from the Agent Registry" },
        now,
        maxAgeMs: ctx.config.webhooks.maxAgeMs,
      });
    },
  }),
}));
