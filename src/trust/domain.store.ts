/**
 * Verified publisher domains: every SQL statement of the domain. A check's network part runs
 * between two of these (domain.check.ts), never inside a transaction; the write that records its
 * outcome is conditional on the row still being the one that was checked.
 */
import type { Db, Queryable } from "../db/client.ts";
import { dialectIn, queryRows } from "../db/client.ts";
import { asJson, pickColumns, rowReader } from "../db/model.ts";
import { conflict } from "../errors.ts";
import { logWrite, snapshotBefore } from "../events/event.store.ts";
import type { FeedNote } from "../feed/feed.outbox.ts";
import { Prisma } from "../generated/prisma/client.ts";
import { insertEvents, setColumns } from "../providers/provider.store.ts";
import { type CardSignature, untrusted } from "./card.trust.ts";
import type { Proof } from "./domain.check.ts";
import { afterFailedRecheck, covers, endpointHost } from "./domain.rules.ts";

export type DomainRow = Prisma.DomainVerificationGetPayload<object>;

const later = (now: Date, seconds: number) => new Date(now.getTime() + seconds * 1000);

/** The provider's id and endpoint URL, by code (the owner scope has already let the caller in). */
export async function providerEndpoint(db: Db, providerCode: string): Promise<{ id: number; url: string } | null> {
  const row = await db.provider.findUnique({ where: { providerCode }, select: { id: true, endpoint: true } });
  return row ? { id: row.id, url: String((row.endpoint as { url?: unknown } | null)?.url ?? "") } : null;
}

/**
 * Records a challenge: a new one, or a fresh token and expiry for a pending one. A verified
 * domain keeps its token (the proof in place, which the re-checks look for) and its state.
 */
export async function saveChallenge(
  db: Db,
  input: { providerId: number; domain: string; token: string; now: Date; ttlSeconds: number },
): Promise<DomainRow> {
  const expiresAt = later(input.now, input.ttlSeconds);
  const key = { providerId_domain: { providerId: input.providerId, domain: input.domain } };
  const existing = await db.domainVerification.findUnique({ where: key });
  if (existing?.state === "VERIFIED") {
    return db.domainVerification.update({ where: { id: existing.id }, data: { expiresAt } });
  }
  return db.domainVerification.upsert({
    where: key,
    create: { providerId: input.providerId, domain: input.domain, token: input.token, createdAt: input.now, expiresAt },
    update: { token: input.token, createdAt: input.now, expiresAt, lastCheckedAt: null },
  });
}

/** A provider's row for a domain, or null. */
export function findDomain(db: Db, providerId: number, domain: string): Promise<DomainRow | null> {
  return db.domainVerification.findUnique({ where: { providerId_domain: { providerId, domain } } });
}

export interface CheckOutcome {
  row: DomainRow;
  /** The domain became verified, or stopped being verified, with this check. */
  gained: boolean;
  lost: boolean;
  notes: FeedNote[];
}

/**
 * Writes what a check found, in one transaction, on the row only as it was checked (same id, token
 * and state; for a re-check, still under this replica's lease): anything else changed it meanwhile
 * and is a 409. A proof verifies the domain only while it still covers the endpoint's host.
 */
export async function recordCheck(
  db: Db,
  checked: DomainRow,
  proof: Proof,
  options: { now: Date; intervalSeconds: number; ttlSeconds: number; actor: string; lease?: Date },
): Promise<CheckOutcome> {
  const { now } = options;
  const written = await db.$transaction(async (tx) => {
    let data: Prisma.DomainVerificationUpdateManyMutationInput;
    let event: { kind: string; note: string } | null = null;
    const url = await lockProvider(tx, checked.providerId);
    // What the public saw, should this check change it (logged with the change, src/events).
    const before = await snapshotBefore(tx, checked.providerId);
    if (proof.verified) {
      if (!covers(checked.domain, endpointHost(url))) {
        throw conflict(`${checked.domain} is no longer the endpoint's host or a parent of it`);
      }
      data = {
        state: "VERIFIED",
        method: proof.method,
        verifiedAt: checked.state === "VERIFIED" ? checked.verifiedAt : now,
        lastCheckedAt: now,
        failures: 0,
        nextCheckAt: later(now, options.intervalSeconds),
        claimedUntil: null,
      };
      if (checked.state !== "VERIFIED")
        event = { kind: "DOMAIN_VERIFIED", note: `${checked.domain} (${proof.method})` };
    } else if (checked.state === "VERIFIED") {
      const next = afterFailedRecheck(checked.failures);
      data = next.lost
        ? {
            state: "PENDING",
            method: null,
            verifiedAt: null,
            lastCheckedAt: now,
            failures: 0,
            nextCheckAt: null,
            claimedUntil: null,
            // The owner may fix the proof and check again with the same token.
            expiresAt: later(now, options.ttlSeconds),
          }
        : {
            lastCheckedAt: now,
            failures: next.failures,
            nextCheckAt: later(now, options.intervalSeconds),
            claimedUntil: null,
          };
      if (next.lost) event = { kind: "DOMAIN_VERIFICATION_LOST", note: `${checked.domain}: ${proof.reason}` };
    } else {
      data = { lastCheckedAt: now };
    }
    const updated = await tx.domainVerification.updateMany({
      where: {
        id: checked.id,
        token: checked.token,
        state: checked.state,
        ...(options.lease ? { claimedUntil: options.lease } : {}),
      },
      data,
    });
    if (updated.count !== 1)
      throw conflict(`The challenge for ${checked.domain} changed while it was checked; check again`);
    const row = await tx.domainVerification.findUniqueOrThrow({ where: { id: checked.id } });
    if (!event) return { row, event, events: [] };
    await insertEvents(tx, checked.providerId, [{ reviewId: null, ...event, actor: options.actor, at: now }]);
    // The profile and its summary changed: the change feed's pollers (updatedSince) see it.
    await afterDomainsChanged(tx, checked.providerId, now);
    const events = await logWrite(tx, {
      providerId: checked.providerId,
      before,
      // The domain only: why a re-check failed is for the owner's timeline.
      events: [
        {
          kind: "PUBLISHER_CHANGED",
          note: `${checked.domain} ${event.kind === "DOMAIN_VERIFIED" ? "verified" : "no longer verified"}`,
        },
      ],
    });
    return { row, event, events };
  });
  const gained = written.event?.kind === "DOMAIN_VERIFIED";
  const lost = written.event?.kind === "DOMAIN_VERIFICATION_LOST";
  const notes: FeedNote[] = written.events.length ? [{ kind: "APPENDED", events: written.events }] : [];
  return { row: written.row, gained, lost, notes };
}

/**
 * Locks the provider's row for the rest of the transaction (PostgreSQL; SQLite has one writer) and
 * answers its endpoint URL. Every change of a domain's state takes this lock first, as a PATCH does
 * (claimVersion): so those writes of one provider queue in one order instead of deadlocking, and
 * `publisherVerified` is recomputed from rows no other transaction is changing.
 */
async function lockProvider(tx: Queryable, providerId: number): Promise<string> {
  const lock = dialectIn(tx) === "postgresql" ? Prisma.sql` FOR UPDATE` : Prisma.empty;
  const [provider] = await queryRows(
    tx,
    Prisma.sql`SELECT "endpoint" FROM "providers" WHERE "id" = ${providerId}${lock}`,
  );
  return String((asJson(provider?.endpoint) as { url?: unknown } | null)?.url ?? "");
}

/**
 * What follows from the provider's domain rows, in the transaction that changed them, after
 * `lockProvider` or claimVersion locked the row: `publisherVerified` (and `updatedAt`, when given),
 * and an imported card vouched for by a domain no longer verified goes back to UNTRUSTED_KEY.
 */
async function afterDomainsChanged(tx: Queryable, providerId: number, updatedAt?: Date): Promise<void> {
  const stamp = updatedAt ? Prisma.sql`, "updatedAt" = ${updatedAt}` : Prisma.empty;
  const [row] = await queryRows(
    tx,
    Prisma.sql`UPDATE "providers" SET "publisherVerified" = EXISTS (SELECT 1 FROM "domain_verifications" AS dv
      WHERE dv."providerId" = ${providerId} AND dv."state" = 'VERIFIED')${stamp} WHERE "id" = ${providerId}
      RETURNING "cardSignature"`,
  );
  const record = asJson(row?.cardSignature) as CardSignature | null;
  if (record?.status !== "VERIFIED" || !record.domain) return;
  const [still] = await queryRows(
    tx,
    Prisma.sql`SELECT 1 AS "one" FROM "domain_verifications"
      WHERE "providerId" = ${providerId} AND "domain" = ${record.domain} AND "state" = 'VERIFIED'`,
  );
  if (!still) await setColumns(tx, providerId, { cardSignature: untrusted(record) });
}

/**
 * The owner's PATCH changed the endpoint: the provider's domains that no longer cover its host are
 * removed in the PATCH's transaction (which holds the provider's row), each verified one with a
 * DOMAIN_REMOVED event, and `publisherVerified` follows. Raw statements, so it runs in the PATCH's
 * raw transaction.
 */
export async function removeUncoveredDomains(
  tx: Queryable,
  input: { providerId: number; endpointUrl: string; actor: string; now: Date },
): Promise<void> {
  const rows = await queryRows(
    tx,
    Prisma.sql`SELECT "id", "domain" FROM "domain_verifications" WHERE "providerId" = ${input.providerId}`,
  );
  const host = endpointHost(input.endpointUrl);
  const uncovered = rows.filter((r) => !covers(String(r.domain), host));
  if (uncovered.length === 0) return;
  // RETURNING: the state of each row as it was deleted.
  const gone = await queryRows(
    tx,
    Prisma.sql`DELETE FROM "domain_verifications" WHERE "id" IN (${Prisma.join(uncovered.map((r) => Number(r.id)))})
      RETURNING "domain", "state"`,
  );
  await afterDomainsChanged(tx, input.providerId);
  const events = gone
    .filter((r) => r.state === "VERIFIED")
    .map((r) => ({
      reviewId: null,
      kind: "DOMAIN_REMOVED",
      actor: input.actor,
      note: `${String(r.domain)}: the endpoint moved to ${host ?? "another host"}`,
      at: input.now,
    }));
  await insertEvents(tx, input.providerId, events);
}

/**
 * Whether the provider's endpoint host is covered by one of its verified domains: its
 * `publisherVerified` (every VERIFIED row covers the current host; runs in any transaction).
 */
export async function endpointVerified(tx: Queryable, providerId: number): Promise<boolean> {
  const [row] = await queryRows(tx, Prisma.sql`SELECT "publisherVerified" FROM "providers" WHERE "id" = ${providerId}`);
  return row ? verifiedRow(row).publisherVerified : false;
}
const verifiedRow = rowReader<{ publisherVerified: boolean }>(pickColumns("Provider", ["publisherVerified"]));

/** Deletes the challenges that expired unverified. */
export async function deleteExpiredChallenges(db: Db, now: Date): Promise<number> {
  const { count } = await db.domainVerification.deleteMany({ where: { state: "PENDING", expiresAt: { lt: now } } });
  return count;
}

/** Up to `limit` verified domains due for a re-check and not held by another replica's lease. */
export function dueDomains(db: Db, now: Date, limit: number): Promise<DomainRow[]> {
  return db.domainVerification.findMany({
    where: {
      state: "VERIFIED",
      nextCheckAt: { lte: now },
      OR: [{ claimedUntil: null }, { claimedUntil: { lt: now } }],
    },
    orderBy: [{ nextCheckAt: "asc" }, { id: "asc" }],
    take: limit,
  });
}

/**
 * Claims a due row for this replica until `lease`: one conditional UPDATE, so of two replicas racing
 * for it exactly one changes it (PostgreSQL re-reads the row's condition after the winner's lock;
 * SQLite runs one write at a time). Answers the claimed row, or null when another got it first.
 */
export async function claimDomain(db: Db, row: DomainRow, now: Date, lease: Date): Promise<DomainRow | null> {
  const { count } = await db.domainVerification.updateMany({
    where: {
      id: row.id,
      state: "VERIFIED",
      token: row.token,
      nextCheckAt: { lte: now },
      OR: [{ claimedUntil: null }, { claimedUntil: { lt: now } }],
    },
    data: { claimedUntil: lease },
  });
  return count === 1 ? { ...row, claimedUntil: lease } : null;
}

/** The provider code of a provider id (for the proof's well-known path). */
export async function providerCodeOf(db: Db, providerId: number): Promise<string | null> {
  const row = await db.provider.findUnique({ where: { id: providerId }, select: { providerCode: true } });
  return row?.providerCode ?? null;
}
