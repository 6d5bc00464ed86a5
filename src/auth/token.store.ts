/**
 * The token writes, which must hold under concurrency: at most MAX_ACTIVE_TOKENS active per
 * provider, one successor per rotation, one record of each revocation. Each issue first locks its
 * provider's row (`FOR UPDATE` on PostgreSQL; SQLite runs one write transaction at a time), so the
 * issues of one provider, and its suspension, which updates that row, queue: each counts the tokens
 * the one before it left.
 */
import { type Db, type Queryable, queryRows } from "../db/client.ts";
import { columnList, pickColumns, rowReader } from "../db/model.ts";
import { conflict, notFound, unauthenticated } from "../errors.ts";
import { Prisma } from "../generated/prisma/client.ts";
import type { MintedToken } from "./agent.token.ts";

/** At most this many unrevoked, unexpired tokens per provider (API.md §3). */
export const MAX_ACTIVE_TOKENS = 5;

export interface TokenIssue {
  providerCode: string;
  token: MintedToken;
  label: string | null;
  actor: string;
  /** The token to revoke in the same step (a rotation): it must still be active. */
  revokeTokenId?: string;
}

/** Issues a token; answers the new row's id. */
export async function issueToken(db: Db, issue: TokenIssue): Promise<number> {
  const now = new Date();
  return db.$transaction(async (tx) => {
    const [provider] = await queryRows(
      tx,
      Prisma.sql`SELECT "id", "reviewStage" FROM "providers" WHERE "providerCode" = ${issue.providerCode}
        ${db.dialect === "postgresql" ? Prisma.sql`FOR UPDATE` : Prisma.empty}`,
    );
    if (!provider) throw notFound(`No provider "${issue.providerCode}"`);
    const providerId = Number(provider.id);
    if (provider.reviewStage === "SUSPENDED") {
      throw conflict("the provider is SUSPENDED; it has no working token until it is reinstated");
    }
    if (issue.revokeTokenId !== undefined) {
      // A concurrent rotation with the same token revoked it first: this one's credential is gone.
      const revoked = await tx.accessToken.updateMany({
        where: { tokenId: issue.revokeTokenId, providerId, revokedAt: null },
        data: { revokedAt: now },
      });
      if (revoked.count !== 1) throw unauthenticated();
    }
    const active = await tx.accessToken.count({
      where: { providerId, revokedAt: null, OR: [{ expiresAt: null }, { expiresAt: { gt: now } }] },
    });
    if (active >= MAX_ACTIVE_TOKENS) {
      throw conflict(`At most ${MAX_ACTIVE_TOKENS} active tokens; revoke one first (or rotate with revokeCurrent)`);
    }
    const { token } = issue;
    const created = await tx.accessToken.create({
      data: { providerId, tokenId: token.tokenId, hash: token.hash, prefix: token.prefix, label: issue.label },
      select: { id: true },
    });
    await tx.reviewEvent.createMany({
      data: [
        { providerId, kind: "TOKEN_ISSUED", actor: issue.actor, note: null },
        ...(issue.revokeTokenId !== undefined
          ? [{ providerId, kind: "TOKEN_REVOKED", actor: issue.actor, note: null }]
          : []),
      ],
    });
    return created.id;
  });
}

/**
 * Revokes a token if it is still active, with its timeline event; answers whether this call did
 * (of two concurrent revocations, one records it).
 */
export async function revokeToken(db: Db, token: { id: number; providerId: number }, actor: string): Promise<boolean> {
  return db.$transaction(async (tx) => {
    const revoked = await tx.accessToken.updateMany({
      where: { id: token.id, revokedAt: null },
      data: { revokedAt: new Date() },
    });
    if (revoked.count !== 1) return false;
    await tx.reviewEvent.create({ data: { providerId: token.providerId, kind: "TOKEN_REVOKED", actor } });
    return true;
  });
}

/** A token as the viewer checks it, with its provider's code. */
export interface TokenCheck {
  id: number;
  tokenId: string;
  providerId: number;
  providerCode: string;
  revokedAt: Date | null;
  expiresAt: Date | null;
  lastUsedAt: Date | null;
}
const CHECKED = pickColumns("AccessToken", ["id", "tokenId", "providerId", "revokedAt", "expiresAt", "lastUsedAt"]);
const checkRow = rowReader<Omit<TokenCheck, "providerCode">>(CHECKED);

/**
 * The token of a hash with its provider's code, in one statement (the ORM's relation select takes
 * two, each through the client's query pipeline: a twentieth of a PATCH's CPU).
 */
export async function tokenByHash(db: Queryable, hash: string): Promise<TokenCheck | null> {
  const [raw] = await queryRows(
    db,
    Prisma.sql`SELECT ${Prisma.raw(columnList(CHECKED, "t"))}, p."providerCode"
      FROM "access_tokens" AS t JOIN "providers" AS p ON p."id" = t."providerId" WHERE t."hash" = ${hash}`,
  );
  return raw ? Object.assign(checkRow(raw), { providerCode: raw.providerCode as string }) : null;
}

/**
 * Records a token's use. Raw too: Prisma's query interpreter builds objects that outlive young
 * collections (docs/architecture.md, "Hot objects are plain"), and this runs on a fresh token's first request.
 */
export async function touchToken(db: Queryable, id: number, at: Date): Promise<void> {
  await queryRows(db, Prisma.sql`UPDATE "access_tokens" SET "lastUsedAt" = ${at} WHERE "id" = ${id}`);
}
