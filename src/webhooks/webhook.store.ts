/**
 * Webhooks: every SQL statement of the domain. Subscriptions and their deliveries; the fan-out that
 * turns new events into deliveries (one transaction per subscription, which advances its cursor);
 * the claim of due attempts under a lease; and the record of an attempt, which may disable the
 * subscription and log why.
 */
import { randomBytes } from "node:crypto";
import { type Db, dialectIn, jsonArg, queryRows, rawTransaction } from "../db/client.ts";
import { asDate, asJson } from "../db/model.ts";
import { conflict } from "../errors.ts";
import type { Audience } from "../events/event.rules.ts";
import { appendEvents, eventJson, lastSeq, readEvents } from "../events/event.store.ts";
import { Prisma } from "../generated/prisma/client.ts";
import { newMessageId } from "./webhook.rules.ts";

export type WebhookRow = Prisma.WebhookGetPayload<object>;
export type DeliveryRow = Prisma.WebhookDeliveryGetPayload<object>;

const later = (now: Date, ms: number) => new Date(now.getTime() + ms);

/**
 * Records a subscription, starting after the newest event: it gets what happens from now on. An
 * agent's subscriptions are counted under a lock of its provider's row (PostgreSQL; SQLite has one
 * writer), so two creations racing cannot both pass the limit.
 */
export async function createWebhook(
  db: Db,
  input: Omit<WebhookRow, "id" | "lastSeq" | "createdAt" | "disabledAt" | "disabledReason" | "kinds"> & {
    kinds: string[] | null;
    maxPerProvider: number;
  },
): Promise<WebhookRow> {
  const { maxPerProvider, kinds, ...data } = input;
  return db.$transaction(async (tx) => {
    if (data.ownerProviderId !== null) {
      if (dialectIn(tx) === "postgresql") {
        await queryRows(
          tx,
          Prisma.sql`SELECT 1 AS "one" FROM "providers" WHERE "id" = ${data.ownerProviderId} FOR UPDATE`,
        );
      }
      const held = await tx.webhook.count({ where: { ownerProviderId: data.ownerProviderId } });
      if (held >= maxPerProvider) {
        throw conflict(`An agent may hold at most ${maxPerProvider} webhook subscriptions; delete one first`);
      }
    }
    return tx.webhook.create({
      data: { ...data, kinds: kinds ?? Prisma.DbNull, lastSeq: await lastSeq(tx) },
    });
  });
}

export function findWebhook(db: Db, webhookId: string): Promise<WebhookRow | null> {
  return db.webhook.findUnique({ where: { webhookId } });
}

/** Subscriptions by id, oldest first: an agent's own (`ownerProviderId`), or every one (undefined). */
export function listWebhooks(
  db: Db,
  q: { ownerProviderId: number | undefined; limit: number; afterId: number | null },
): Promise<WebhookRow[]> {
  return db.webhook.findMany({
    where: {
      ...(q.ownerProviderId !== undefined ? { ownerProviderId: q.ownerProviderId } : {}),
      ...(q.afterId !== null ? { id: { gt: q.afterId } } : {}),
    },
    orderBy: { id: "asc" },
    take: q.limit,
  });
}

/** Deletes a subscription and its deliveries (an attempt under way is then recorded nowhere). */
export async function deleteWebhook(db: Db, id: number): Promise<void> {
  await db.webhook.deleteMany({ where: { id } });
}

/** A subscription's deliveries, newest first. */
export function listDeliveries(
  db: Db,
  q: { webhookRowId: number; limit: number; beforeId: number | null },
): Promise<DeliveryRow[]> {
  return db.webhookDelivery.findMany({
    where: { webhookRowId: q.webhookRowId, ...(q.beforeId !== null ? { id: { lt: q.beforeId } } : {}) },
    orderBy: { id: "desc" },
    take: q.limit,
  });
}

/** How many deliveries are still to be made (PENDING), every subscription's: the backlog the metrics report. */
export function pendingDeliveries(db: Db): Promise<number> {
  return db.webhookDelivery.count({ where: { status: "PENDING" } });
}

export function findDelivery(db: Db, webhookRowId: number, deliveryId: string): Promise<DeliveryRow | null> {
  return db.webhookDelivery.findFirst({ where: { webhookRowId, deliveryId } });
}

/** A delivery by its message id, whichever subscription it belongs to (its Node look-up). */
export function deliveryById(
  db: Db,
  deliveryId: string,
): Promise<(DeliveryRow & { webhook: { ownerProviderId: number | null } }) | null> {
  return db.webhookDelivery.findUnique({
    where: { deliveryId },
    include: { webhook: { select: { ownerProviderId: true } } },
  });
}

/**
 * Makes a delivery due now with a fresh series of attempts (and a fresh deadline), under the same
 * message id. Not while a replica is sending it: null then. Answers the row as this wrote it (a
 * worker may claim it the moment after).
 */
export async function redeliver(
  db: Db,
  delivery: DeliveryRow,
  now: Date,
  maxAgeMs: number,
): Promise<DeliveryRow | null> {
  const data = {
    status: "PENDING",
    attempts: 0,
    nextAttemptAt: now,
    expiresAt: later(now, maxAgeMs),
    leaseUntil: null,
    leaseToken: null,
    deliveredAt: null,
  };
  const { count } = await db.webhookDelivery.updateMany({
    where: { id: delivery.id, OR: [{ leaseUntil: null }, { leaseUntil: { lt: now } }] },
    data,
  });
  return count === 1 ? { ...delivery, ...data } : null;
}

/** A test ping: a message of its own, due now. */
export function createPing(
  db: Db,
  webhook: WebhookRow,
  input: { kind: string; data: Prisma.InputJsonValue; now: Date; maxAgeMs: number },
): Promise<DeliveryRow> {
  return db.webhookDelivery.create({
    data: {
      deliveryId: newMessageId(),
      webhookRowId: webhook.id,
      seq: null,
      kind: input.kind,
      data: input.data,
      at: input.now,
      nextAttemptAt: input.now,
      expiresAt: later(input.now, input.maxAgeMs),
    },
  });
}

// ── The worker's statements (webhook.delivery.ts) ──────────────────────────────────────────────

/**
 * The enabled subscriptions behind the log: whose cursor is below its newest seq. A subscription
 * whose filters matched nothing new has its cursor moved up by its fan-out, so it is not asked again.
 */
export async function behindWebhooks(db: Db, limit: number): Promise<{ head: number; ids: number[] }> {
  const head = await lastSeq(db);
  const rows = await queryRows(
    db,
    Prisma.sql`SELECT "id" FROM "webhooks" WHERE "disabledAt" IS NULL AND "lastSeq" < ${head}
      ORDER BY "lastSeq", "id" LIMIT ${limit}`,
  );
  return { head, ids: rows.map((r) => Number(r.id)) };
}

/** Who a subscription reads the log as: an agent its own provider's events, a reviewer any. */
function readerOf(row: { ownerProviderId: number | null; providerId: number | null }): {
  audience: Audience;
  providerId: number | undefined;
} {
  if (row.ownerProviderId !== null) {
    return { audience: { kind: "agent", providerId: row.ownerProviderId }, providerId: row.ownerProviderId };
  }
  return { audience: { kind: "reviewer" }, providerId: row.providerId ?? undefined };
}

/**
 * One subscription's fan-out, in one transaction: the events after its cursor that its owner may
 * see and its filters keep become deliveries, and the cursor moves past them. On PostgreSQL the
 * subscription's row is locked (SKIP LOCKED: a replica already fanning it out is left to it); the
 * cursor is read under the lock, so no event gets two deliveries. When fewer than `batch` events
 * come back, every event up to the log's head read first has been seen (the log is read as a
 * gap-free prefix, event.store.ts), so the cursor moves to the head even when nothing matched.
 * Raw statements: the worker's statements run hundreds of times a second, and Prisma's client
 * compiles each of its queries anew.
 */
export async function fanOut(
  db: Db,
  webhookRowId: number,
  options: { now: Date; maxAgeMs: number; batch: number },
): Promise<number> {
  return rawTransaction(db, async (tx) => {
    const lock = dialectIn(tx) === "postgresql" ? Prisma.sql` FOR UPDATE SKIP LOCKED` : Prisma.empty;
    const [raw] = await queryRows(
      tx,
      Prisma.sql`SELECT "lastSeq", "ownerProviderId", "providerId", "kinds" FROM "webhooks"
        WHERE "id" = ${webhookRowId} AND "disabledAt" IS NULL${lock}`,
    );
    if (!raw) return 0;
    const after = Number(raw.lastSeq);
    const head = await lastSeq(tx);
    const reader = readerOf({
      ownerProviderId: raw.ownerProviderId === null ? null : Number(raw.ownerProviderId),
      providerId: raw.providerId === null ? null : Number(raw.providerId),
    });
    const kinds = raw.kinds === null || raw.kinds === undefined ? undefined : (asJson(raw.kinds) as string[]);
    const events = await readEvents(tx, { after, limit: options.batch, ...reader, kinds });
    if (events.length > 0) {
      const expiresAt = later(options.now, options.maxAgeMs);
      const rows = events.map(
        (e) =>
          Prisma.sql`(${newMessageId()}, ${webhookRowId}, ${e.seq}, ${e.kind}, ${jsonArg(tx, eventJson(e))}, ${e.at}, 'PENDING', 0, ${options.now}, ${expiresAt}, ${options.now})`,
      );
      await queryRows(
        tx,
        Prisma.sql`INSERT INTO "webhook_deliveries" ("deliveryId", "webhookRowId", "seq", "kind", "data", "at", "status", "attempts", "nextAttemptAt", "expiresAt", "createdAt")
          VALUES ${Prisma.join(rows)}`,
      );
    }
    const lastRead = events[events.length - 1]?.seq ?? after;
    const cursor = events.length < options.batch ? Math.max(head, lastRead) : lastRead;
    if (cursor !== after) {
      await queryRows(tx, Prisma.sql`UPDATE "webhooks" SET "lastSeq" = ${cursor} WHERE "id" = ${webhookRowId}`);
    }
    return events.length;
  });
}

/** A delivery claimed for an attempt, with what sending it needs. */
export interface Claimed {
  id: number;
  deliveryId: string;
  webhookRowId: number;
  kind: string;
  data: unknown;
  at: Date;
  /** Attempts made, this one included. */
  attempts: number;
  expiresAt: Date;
  leaseToken: string;
  url: string;
  secret: string;
}

/**
 * Claims up to `limit` due deliveries of enabled subscriptions for this replica until `leaseUntil`,
 * counting the attempt now (so one cut off by a crash counts too). One statement: on PostgreSQL the
 * rows are locked with SKIP LOCKED, so replicas claiming at once take different rows, and a row
 * another replica claimed meanwhile fails the condition when it is re-checked under the lock; SQLite
 * runs one write at a time. A claim whose lease ran out (its replica died) is due again.
 */
export async function claimDue(db: Db, options: { now: Date; leaseUntil: Date; limit: number }): Promise<Claimed[]> {
  const token = randomBytes(12).toString("base64url");
  const { now } = options;
  const lock = dialectIn(db) === "postgresql" ? Prisma.sql` FOR UPDATE OF d SKIP LOCKED` : Prisma.empty;
  const claimed = await queryRows(
    db,
    Prisma.sql`UPDATE "webhook_deliveries" SET "leaseUntil" = ${options.leaseUntil}, "leaseToken" = ${token},
        "attempts" = "attempts" + 1, "lastAttemptAt" = ${now}
      WHERE "id" IN (
        SELECT d."id" FROM "webhook_deliveries" AS d JOIN "webhooks" AS w ON w."id" = d."webhookRowId"
        WHERE d."status" = 'PENDING' AND d."nextAttemptAt" <= ${now}
          AND (d."leaseUntil" IS NULL OR d."leaseUntil" < ${now}) AND w."disabledAt" IS NULL
        ORDER BY d."nextAttemptAt" LIMIT ${options.limit}${lock})
      RETURNING "id", "deliveryId", "webhookRowId", "kind", "data", "at", "attempts", "expiresAt"`,
  );
  if (claimed.length === 0) return [];
  const ids = [...new Set(claimed.map((r) => Number(r.webhookRowId)))];
  const targets = new Map(
    (
      await queryRows(db, Prisma.sql`SELECT "id", "url", "secret" FROM "webhooks" WHERE "id" IN (${Prisma.join(ids)})`)
    ).map((w) => [Number(w.id), { url: String(w.url), secret: String(w.secret) }]),
  );
  return claimed.flatMap((r) => {
    const target = targets.get(Number(r.webhookRowId));
    if (!target) return []; // deleted meanwhile
    return [
      {
        id: Number(r.id),
        deliveryId: String(r.deliveryId),
        webhookRowId: Number(r.webhookRowId),
        kind: String(r.kind),
        data: asJson(r.data),
        at: asDate(r.at),
        attempts: Number(r.attempts),
        expiresAt: asDate(r.expiresAt),
        leaseToken: token,
        url: target.url,
        secret: target.secret,
      },
    ];
  });
}

export interface AttemptRecord {
  ok: boolean;
  statusCode: number | null;
  error: string | null;
  latencyMs: number;
  /** When the attempt ended. */
  at: Date;
  /** The next attempt; null after a success, or to give up. */
  next: Date | null;
}

/** What recording an attempt did. */
export type Recorded = "delivered" | "retry" | "disabled" | "lost";

/**
 * Records attempts that succeeded or will be tried again, in one transaction (one commit, so one
 * sync of SQLite's log for a whole batch), each only while its claim is still this replica's (its
 * lease token): a claim that ran out and was taken by another replica records nothing ("lost").
 */
export async function recordAttempts(
  db: Db,
  batch: readonly { claimed: Claimed; record: AttemptRecord }[],
): Promise<Recorded[]> {
  return rawTransaction(db, async (tx) => {
    const results: Recorded[] = [];
    for (const { claimed, record } of batch) {
      const state = record.ok
        ? Prisma.sql`"status" = 'SUCCEEDED', "deliveredAt" = ${record.at}, "nextAttemptAt" = NULL`
        : Prisma.sql`"status" = 'PENDING', "nextAttemptAt" = ${record.next}`;
      const rows = await queryRows(
        tx,
        Prisma.sql`UPDATE "webhook_deliveries" SET ${state}, "lastStatusCode" = ${record.statusCode},
            "lastLatencyMs" = ${record.latencyMs}, "lastError" = ${record.error}, "leaseUntil" = NULL, "leaseToken" = NULL
          WHERE "id" = ${claimed.id} AND "leaseToken" = ${claimed.leaseToken} RETURNING "id"`,
      );
      results.push(rows.length === 0 ? "lost" : record.ok ? "delivered" : "retry");
    }
    return results;
  });
}

/**
 * Records an attempt (see `recordAttempts`). Giving up (not ok, no next attempt) fails the delivery,
 * disables the subscription, fails its other pending deliveries and appends WEBHOOK_DISABLED, in
 * one transaction.
 */
export async function recordAttempt(db: Db, claimed: Claimed, record: AttemptRecord): Promise<Recorded> {
  if (record.ok || record.next) return (await recordAttempts(db, [{ claimed, record }]))[0] as Recorded;
  return db.$transaction(async (tx) => {
    const { count } = await tx.webhookDelivery.updateMany({
      where: { id: claimed.id, leaseToken: claimed.leaseToken },
      data: {
        status: "FAILED",
        nextAttemptAt: null,
        lastStatusCode: record.statusCode,
        lastLatencyMs: record.latencyMs,
        lastError: record.error,
        leaseUntil: null,
        leaseToken: null,
      },
    });
    if (count === 0) return "lost";
    const webhook = await tx.webhook.findUnique({ where: { id: claimed.webhookRowId } });
    if (!webhook || webhook.disabledAt) return "disabled";
    const reason = `message ${claimed.deliveryId} was not delivered by its deadline (${claimed.expiresAt.toISOString()}); the last attempt: ${record.error ?? "failed"}`;
    await tx.webhook.update({ where: { id: webhook.id }, data: { disabledAt: record.at, disabledReason: reason } });
    await tx.webhookDelivery.updateMany({
      where: { webhookRowId: webhook.id, status: "PENDING" },
      data: {
        status: "FAILED",
        nextAttemptAt: null,
        leaseUntil: null,
        leaseToken: null,
        lastError: "the subscription was disabled",
      },
    });
    await appendEvents(tx, [
      {
        kind: "WEBHOOK_DISABLED",
        providerId: webhook.ownerProviderId,
        providerCode: webhook.ownerProviderId !== null ? webhook.providerCode : null,
        version: null,
        reviewCode: null,
        patch: [],
        stateHash: null,
        note: `Webhook ${webhook.webhookId} disabled: ${reason}`,
        listed: false,
      },
    ]);
    return "disabled";
  });
}
