/**
 * Sign-ins under way and sessions in the database, so that every replica knows them: a callback may
 * reach another replica than the one that started the sign-in, and a sign-out ends the session
 * everywhere at once.
 */
import { type Db, queryRows } from "../db/client.ts";
import { Prisma } from "../generated/prisma/client.ts";

export interface Attempt {
  bindingHash: string;
  nonce: string;
  codeVerifier: string;
  returnTo: string;
  expiresAt: Date;
}

/** Stores a sign-in under way, dropping those that have expired. */
export async function saveAttempt(db: Db, attempt: Attempt & { stateHash: string }, now: Date): Promise<void> {
  await db.signInAttempt.deleteMany({ where: { expiresAt: { lte: now } } });
  await db.signInAttempt.create({ data: attempt, select: { id: true } });
}

/**
 * Takes the sign-in of a state's hash out of the database: of two callbacks with one state, one gets
 * it, whichever replica each reached (the delete that removed the row decides), the other gets null.
 */
export async function takeAttempt(db: Db, stateHash: string): Promise<Attempt | null> {
  const attempt = await db.signInAttempt.findUnique({
    where: { stateHash },
    select: { id: true, bindingHash: true, nonce: true, codeVerifier: true, returnTo: true, expiresAt: true },
  });
  if (!attempt) return null;
  const taken = await db.signInAttempt.deleteMany({ where: { id: attempt.id } });
  if (taken.count !== 1) return null;
  const { id: _, ...rest } = attempt;
  return rest;
}

/** How long a session over stays in the table before it is deleted (a sign-in deletes them). */
const KEEP_ENDED_MS = 24 * 3_600_000;

export interface NewSession {
  hash: string;
  subject: string;
  name: string | null;
  roles: string;
  idToken: string | null;
  lastSeenAt: Date;
  idleExpiresAt: Date;
  expiresAt: Date;
}

/** Stores a new session, deleting those that have been over for a day. */
export async function createSession(db: Db, session: NewSession): Promise<void> {
  const before = new Date(session.lastSeenAt.getTime() - KEEP_ENDED_MS);
  await db.session.deleteMany({
    where: { OR: [{ expiresAt: { lt: before } }, { idleExpiresAt: { lt: before } }, { endedAt: { lt: before } }] },
  });
  await db.session.create({ data: { ...session, createdAt: session.lastSeenAt }, select: { id: true } });
}

export interface SessionRow {
  id: number;
  subject: string;
  name: string | null;
  roles: string;
  lastSeenAt: Date;
  idleExpiresAt: Date;
  expiresAt: Date;
  endedAt: Date | null;
}

/** The session of a secret's hash, as the viewer checks it. */
export async function sessionByHash(db: Db, hash: string): Promise<SessionRow | null> {
  return db.session.findUnique({
    where: { hash },
    select: {
      id: true,
      subject: true,
      name: true,
      roles: true,
      lastSeenAt: true,
      idleExpiresAt: true,
      expiresAt: true,
      endedAt: true,
    },
  });
}

/** Records a session's use and moves its idle expiry (at most once a minute: signin.rules.ts). */
export async function touchSession(db: Db, id: number, at: Date, idleExpiresAt: Date): Promise<void> {
  await queryRows(
    db,
    Prisma.sql`UPDATE "sessions" SET "lastSeenAt" = ${at}, "idleExpiresAt" = ${idleExpiresAt} WHERE "id" = ${id} AND "endedAt" IS NULL`,
  );
}

/**
 * Ends the session of a secret's hash if it is not over yet; answers its ID token (null if it kept
 * none), or undefined when there was no such session still standing.
 */
export async function endSession(db: Db, hash: string, at: Date): Promise<{ idToken: string | null } | undefined> {
  const session = await db.session.findUnique({
    where: { hash },
    select: { id: true, idToken: true, idleExpiresAt: true, expiresAt: true },
  });
  if (!session || session.idleExpiresAt <= at || session.expiresAt <= at) return undefined;
  const ended = await db.session.updateMany({ where: { id: session.id, endedAt: null }, data: { endedAt: at } });
  return ended.count === 1 ? { idToken: session.idToken } : undefined;
}
