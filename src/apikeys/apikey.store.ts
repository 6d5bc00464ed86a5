/**
 * API keys in the database: made and revoked by admins, each with its event in the log (admins
 * read those only), and looked up by hash on every request that sends one.
 */
import type { MintedToken } from "../auth/agent.token.ts";
import { type Db, type Queryable, queryRows } from "../db/client.ts";
import type { EventDraft } from "../events/event.rules.ts";
import { appendEvents } from "../events/event.store.ts";
import { Prisma } from "../generated/prisma/client.ts";

/** An admin's action on a key, as the log records it: who did it is in the note. */
function keyEvent(
  kind: "API_KEY_CREATED" | "API_KEY_REVOKED",
  key: { keyId: string; name: string },
  actor: string,
): EventDraft {
  const verb = kind === "API_KEY_CREATED" ? "created" : "revoked";
  return {
    kind,
    providerId: null,
    providerCode: null,
    version: null,
    reviewCode: null,
    patch: [],
    stateHash: null,
    note: `API key ${key.keyId} ("${key.name}") ${verb} by ${actor}`,
    listed: false,
  };
}

/** Stores a new key and logs it; answers the row's id. */
export async function createApiKey(
  db: Db,
  input: { key: MintedToken; name: string; expiresAt: Date | null; actor: string },
): Promise<number> {
  return db.$transaction(async (tx) => {
    const { key } = input;
    const created = await tx.apiKey.create({
      data: {
        keyId: key.tokenId,
        name: input.name,
        hash: key.hash,
        prefix: key.prefix,
        createdBy: input.actor,
        expiresAt: input.expiresAt,
      },
      select: { id: true },
    });
    await appendEvents(tx, [keyEvent("API_KEY_CREATED", { keyId: key.tokenId, name: input.name }, input.actor)]);
    return created.id;
  });
}

/**
 * Revokes a key if it is still active, and logs it; answers whether this call did (of two
 * concurrent revocations, one records it).
 */
export async function revokeApiKey(db: Db, key: { id: number; keyId: string; name: string }, actor: string) {
  return db.$transaction(async (tx) => {
    const revoked = await tx.apiKey.updateMany({
      where: { id: key.id, revokedAt: null },
      data: { revokedAt: new Date(), revokedBy: actor },
    });
    if (revoked.count !== 1) return false;
    await appendEvents(tx, [keyEvent("API_KEY_REVOKED", key, actor)]);
    return true;
  });
}

export interface KeyCheck {
  id: number;
  keyId: string;
  revokedAt: Date | null;
  expiresAt: Date | null;
  lastUsedAt: Date | null;
}

/** The key of a hash, as the viewer checks it. */
export async function apiKeyByHash(db: Db, hash: string): Promise<KeyCheck | null> {
  return db.apiKey.findUnique({
    where: { hash },
    select: { id: true, keyId: true, revokedAt: true, expiresAt: true, lastUsedAt: true },
  });
}

/** Records a key's use (the viewer refreshes it at most once a minute). */
export async function touchApiKey(db: Queryable, id: number, at: Date): Promise<void> {
  await queryRows(db, Prisma.sql`UPDATE "api_keys" SET "lastUsedAt" = ${at} WHERE "id" = ${id}`);
}
