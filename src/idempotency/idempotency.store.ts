/**
 * The keys of `Idempotency-Key` in the database (`idempotency_keys`), so that every replica sees
 * the same ones. A key moves PENDING → COMMITTED → DONE:
 *
 * - `claim` inserts it PENDING under a fresh claim id (the unique key decides who holds it);
 * - the intake's own transaction moves it to COMMITTED (`commitInTransaction`), only under the
 *   claim it was made with — so an intake and its key are written together or not at all, and an
 *   intake whose claim was taken over rolls back instead of happening twice;
 * - the answer, without its token, is stored before it is sent (`saveAnswer`): DONE.
 *
 * A request that fails before its intake commits releases its claim (`release`): nothing was done,
 * so a retry runs afresh. A claim left PENDING by a process that died is taken over by a retry
 * after `LEASE_MS`. Keys live 24 hours; every claim first deletes the expired ones.
 */
import { randomUUID } from "node:crypto";
import type { Db } from "../db/client.ts";
import { conflict } from "../errors.ts";
import type { Prisma } from "../generated/prisma/client.ts";

/** How long a key is kept after its first use. */
export const KEY_TTL_MS = 24 * 60 * 60 * 1000;
/** How long a PENDING claim holds its key before a retry may take it over. */
export const LEASE_MS = 30_000;

type Tx = Prisma.TransactionClient;

export type Claim =
  | { kind: "claimed"; claimId: string }
  /** The key belongs to another request: 422. */
  | { kind: "mismatch" }
  /** Another request holds the key and is still working: 409. */
  | { kind: "inFlight"; retryAfterSeconds: number }
  /** The first answer, stored: replay it. */
  | { kind: "replay"; response: unknown }
  /** The intake committed but its answer was never stored (the process stopped in between). */
  | { kind: "committed"; claimId: string; providerId: number; providerCode: string; reviewCode: string };

function isUniqueViolation(error: unknown): boolean {
  return (error as { code?: unknown } | null)?.code === "P2002";
}

/** Claims `key` for a request with this fingerprint, or says why not. */
export async function claim(db: Db, key: string, fingerprint: string, now = new Date()): Promise<Claim> {
  await db.idempotencyKey.deleteMany({ where: { expiresAt: { lt: now } } });
  for (let attempt = 0; attempt < 3; attempt++) {
    const claimId = randomUUID();
    try {
      await db.idempotencyKey.create({
        data: {
          key,
          fingerprint,
          claimId,
          claimedAt: now,
          createdAt: now,
          expiresAt: new Date(now.getTime() + KEY_TTL_MS),
        },
        select: { id: true },
      });
      return { kind: "claimed", claimId };
    } catch (error) {
      if (!isUniqueViolation(error)) throw error;
    }
    const row = await db.idempotencyKey.findUnique({ where: { key } });
    if (!row || row.expiresAt < now) continue; // released or expired in between: try again
    if (row.fingerprint !== fingerprint) return { kind: "mismatch" };
    if (row.state === "DONE" && row.response !== null) return { kind: "replay", response: row.response };
    if (row.state !== "PENDING" && row.providerId !== null && row.providerCode && row.reviewCode) {
      const { claimId: held, providerId, providerCode, reviewCode } = row;
      return { kind: "committed", claimId: held, providerId, providerCode, reviewCode };
    }
    const heldFor = now.getTime() - row.claimedAt.getTime();
    if (heldFor < LEASE_MS)
      return { kind: "inFlight", retryAfterSeconds: Math.max(1, Math.ceil((LEASE_MS - heldFor) / 1000)) };
    // The holder has gone quiet for longer than the lease: take the key over. Should it still be
    // alive, its intake cannot commit any more (commitInTransaction checks the claim).
    const taken = await db.idempotencyKey.updateMany({
      where: { key, claimId: row.claimId, state: "PENDING" },
      data: { claimId, claimedAt: now },
    });
    if (taken.count === 1) return { kind: "claimed", claimId };
  }
  return { kind: "inFlight", retryAfterSeconds: 1 };
}

/** Inside the intake's transaction: the key now stands for this intake, or the transaction fails. */
export async function commitInTransaction(
  tx: Tx,
  key: string,
  claimId: string,
  result: { providerId: number; providerCode: string; reviewCode: string },
): Promise<void> {
  const done = await tx.idempotencyKey.updateMany({
    where: { key, claimId, state: "PENDING" },
    data: { state: "COMMITTED", ...result },
  });
  if (done.count !== 1) {
    throw conflict("This Idempotency-Key was taken over by a retry of the same request; that retry's answer counts");
  }
}

/** Stores the first answer (already without its token) of a committed intake. */
export async function saveAnswer(db: Db, key: string, claimId: string, response: unknown): Promise<void> {
  await db.idempotencyKey.updateMany({
    where: { key, claimId, state: "COMMITTED" },
    data: { state: "DONE", response: response as object },
  });
}

/** Gives a key back when its request did not commit an intake. */
export async function release(db: Db, key: string, claimId: string): Promise<void> {
  await db.idempotencyKey.deleteMany({ where: { key, claimId, state: "PENDING" } });
}
