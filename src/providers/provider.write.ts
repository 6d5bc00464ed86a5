/**
 * The provider writes: intake and the owner's PATCH. Each runs in one transaction that touches
 * only the database (tokens are minted and hashed before it opens), so a failure leaves nothing.
 */
import { mintToken } from "../auth/agent.token.ts";
import { type Db, type RawTx, rawTransaction } from "../db/client.ts";
import { badInput, conflict } from "../errors.ts";
import { eventsOfMove, publicSnapshot } from "../events/event.rules.ts";
import { type LoggedEvent, logWrite, STATE_FIELDS, type StateRow } from "../events/event.store.ts";
import { noteAppended } from "../feed/feed.outbox.ts";
import { Prisma } from "../generated/prisma/client.ts";
import type { IfMatch } from "../http/if-match.ts";
import { isMcpServer } from "../interop/mcp.registry.rules.ts";
import { recordRelease } from "../interop/mcp.registry.store.ts";
import { mirroredConflict } from "../mirror/mirror.store.ts";
import { effectOfOwnerPatch, newReviewCode } from "../reviews/review.rules.ts";
import { activeReviewOf, applyMove, openReview } from "../reviews/review.store.ts";
import { removeUncoveredDomains } from "../trust/domain.store.ts";
import { lifecycleOf, lifecycleSnapshot } from "./provider.lifecycle.ts";
import {
  applyPatch,
  changedFields,
  deriveProviderCode,
  type Intake,
  OWNER_FIELDS,
  type OwnerField,
  type Patch,
  type Profile,
  REVIEWED_FIELDS,
  snapshotOf,
} from "./provider.rules.ts";
import {
  appendVersion,
  claimVersion,
  insertEvents,
  type ProviderRow,
  packageKinds,
  replaceLabels,
  replacePackageKinds,
  setColumns,
} from "./provider.store.ts";

/** The owner-editable profile held by a provider row. */
export function profileOf(row: ProviderRow): Profile {
  return snapshotOf(row as unknown as Profile);
}

/**
 * The provider row columns for a profile (JSON sections as they are): no policy or repository is
 * SQL NULL, no endpoint JSON null (the column is NOT NULL; the database checks the agent then has a package).
 */
function columnsOf(profile: Partial<Profile>) {
  const { policy, repository, endpoint, ...rest } = profile;
  const nullable = <T>(value: T | null | undefined) => (value === null ? Prisma.DbNull : value);
  return {
    ...(rest as Omit<Partial<Profile>, "policy" | "repository" | "endpoint">),
    ...(policy !== undefined ? { policy: nullable(policy) } : {}),
    ...(repository !== undefined ? { repository: nullable(repository) } : {}),
    ...(endpoint !== undefined ? { endpoint: endpoint === null ? Prisma.JsonNull : endpoint } : {}),
  } as Prisma.ProviderUpdateInput;
}

type AdapterCause = { kind?: unknown; constraint?: { fields?: unknown; index?: unknown } };

/**
 * The columns (or index) of a unique violation; null when the error is another. Prisma's client
 * wraps the driver adapter's error (`meta.driverAdapterError`), as P2002 from a model query and as
 * P2010 from a raw one: SQLite names the columns (`constraint.fields`), PostgreSQL the index
 * (`providers_providerCode_key`, `constraint.index`). A raw statement on the service's own
 * connections throws the driver's error: better-sqlite3's names `table.column` in its message, pg's
 * has SQLSTATE 23505 and the index's name.
 */
function violatedFields(error: unknown): string[] | null {
  const raw = error as { code?: unknown; message?: unknown; constraint?: unknown } | null;
  if (raw?.code === "SQLITE_CONSTRAINT_UNIQUE") return [String(raw.message)];
  if (raw?.code === "23505") return [String(raw.constraint)];
  if (!(error instanceof Prisma.PrismaClientKnownRequestError)) return null;
  const meta = error.meta as { target?: unknown; driverAdapterError?: { cause?: AdapterCause } } | undefined;
  const cause = meta?.driverAdapterError?.cause;
  const unique = error.code === "P2002" || (error.code === "P2010" && cause?.kind === "UniqueConstraintViolation");
  if (!unique) return null;
  const fields = cause?.constraint?.fields ?? cause?.constraint?.index ?? meta?.target;
  if (Array.isArray(fields)) return fields.map(String);
  return typeof fields === "string" ? [fields] : [];
}

/** The 409 for a server name another provider holds, when that is what the error is. */
function serverNameTaken(error: unknown, serverName: string | null | undefined) {
  const fields = violatedFields(error);
  if (!fields?.some((f) => f.includes("serverName"))) return undefined;
  return conflict(`serverName "${serverName}" is another provider's: update that provider instead`);
}

/** A free code for a derived name: the slug itself, or the slug with the next free number. */
async function freeCode(db: Db, base: string): Promise<string> {
  const taken = new Set(
    (
      await db.provider.findMany({
        where: { providerCode: { startsWith: base } },
        select: { providerCode: true },
      })
    ).map((p) => p.providerCode),
  );
  if (!taken.has(base)) return base;
  for (let n = 2; ; n++) if (!taken.has(`${base}-${n}`)) return `${base}-${n}`;
}

export interface IntakeResult {
  providerId: number;
  providerCode: string;
  reviewCode: string;
  accessToken: string;
  tokenId: string;
}

/** What an intake's INSERT returns: the row's state, which its events' public snapshot is made of. */
const CREATED_STATE = Object.fromEntries(STATE_FIELDS.map((field) => [field, true])) as Record<
  (typeof STATE_FIELDS)[number],
  true
>;

/** What an intake records beside the profile: the signature check of the card it was imported from. */
export interface IntakeRecords {
  cardSignature?: object;
  signedCard?: object;
  /**
   * Made by a mirror source (src/mirror), whose actor it names: marked mirrored, with no token (no
   * owner would receive it), and, from a TRUSTED source, approved at once at its tier.
   */
  mirror?: { actor: string; approveAs: string | null };
}

/**
 * Registers a provider: profile version 1, an OPEN intake review, the first access token. `within`
 * runs last inside the same transaction (the Idempotency-Key's record): if it throws, nothing is kept.
 * It leaves the provider's row as made: the events logged after it are of that row.
 */
export async function intakeProvider(
  db: Db,
  intake: Intake,
  within?: (
    tx: Prisma.TransactionClient,
    result: { providerId: number; providerCode: string; reviewCode: string },
  ) => Promise<void>,
  recorded: IntakeRecords = {},
): Promise<IntakeResult> {
  const token = mintToken();
  const { providerCode: asked, ...profile } = intake;
  const { mirror, ...records } = recorded;
  const approveAs = mirror?.approveAs ?? null;
  for (let attempt = 0; ; attempt++) {
    const providerCode = asked ?? (await freeCode(db, deriveProviderCode(profile.name)));
    const actor = mirror?.actor ?? `agent:${providerCode}`;
    const reviewCode = newReviewCode();
    try {
      const written = await db.$transaction(async (tx) => {
        const now = new Date();
        // The row and its related rows each in one INSERT: created nested, Prisma reads the row
        // back after them; its state, returned here, is what the events' snapshot is made of.
        const created = (await tx.provider.create({
          data: {
            ...(columnsOf(profile) as Prisma.ProviderCreateInput),
            ...(records as Prisma.ProviderCreateInput),
            ...(mirror && { mirrored: true }),
            ...(approveAs && { reviewStage: "APPROVED", trustTier: approveAs }),
            providerCode,
          },
          select: CREATED_STATE,
        })) as unknown as StateRow;
        const providerId = created.id;
        if (profile.labels.length > 0) {
          await tx.providerLabel.createMany({ data: profile.labels.map((label) => ({ providerId, label })) });
        }
        const kinds = packageKinds(profile.packages);
        if (kinds.length > 0) await tx.providerPackage.createMany({ data: kinds.map((k) => ({ providerId, ...k })) });
        await tx.providerVersion.createMany({
          data: [{ providerId, version: 1, actor, changedFields: [...OWNER_FIELDS], snapshot: snapshotOf(profile) }],
        });
        if (!mirror) {
          await tx.accessToken.createMany({
            data: [{ providerId, tokenId: token.tokenId, hash: token.hash, prefix: token.prefix, label: "intake" }],
          });
        }
        const review = await tx.review.create({
          data: {
            reviewCode,
            providerId: created.id,
            kind: "INTAKE",
            ...(approveAs && { status: "APPROVED", decidedAt: now }),
          },
          select: { id: true },
        });
        const timeline: Prisma.ReviewEventCreateManyInput[] = [
          { providerId: created.id, reviewId: review.id, kind: "SUBMITTED", actor },
        ];
        if (!mirror) timeline.push({ providerId: created.id, kind: "TOKEN_ISSUED", actor, note: null });
        else if (approveAs) {
          const note = `approved by a trusted source at ${approveAs}`;
          timeline.push({ providerId: created.id, reviewId: review.id, kind: "APPROVED", actor, note });
        }
        await tx.reviewEvent.createMany({ data: timeline });
        await recordRelease(tx, {
          providerId: created.id,
          providerCode,
          profile,
          wasMcpServer: false,
          version: 1,
          now: new Date(),
          all: false,
          created: true,
        });
        if (within) await within(tx, { providerId: created.id, providerCode, reviewCode });
        const events = await logWrite(tx, {
          providerId: created.id,
          before: null,
          after: created,
          events: [
            { kind: "PROVIDER_CREATED" },
            { kind: "REVIEW_OPENED", reviewCode },
            ...(approveAs ? [{ kind: "REVIEW_DECIDED" as const, reviewCode }] : []),
          ],
        });
        return { id: created.id, events };
      });
      // Committed: wake the feed's readers (src/feed).
      noteAppended(written.events);
      return { providerId: written.id, providerCode, reviewCode, accessToken: token.secret, tokenId: token.tokenId };
    } catch (error) {
      const fields = violatedFields(error);
      if (fields === null) throw error;
      if (asked && fields.some((f) => f.includes("providerCode"))) {
        throw conflict(`providerCode "${asked}" is already taken`);
      }
      const taken = serverNameTaken(error, profile.serverName);
      if (taken) throw taken;
      // A derived code or a review code raced with another intake: draw again.
      if (attempt >= 4) throw error;
    }
  }
}

/**
 * Applies an owner's PATCH: the profile, one new version, the timeline, and the review workflow's
 * answer to it. `ifMatch` is the version the caller last saw, when it sent `If-Match`. The common
 * path runs in raw statements (provider.store.ts); a PATCH that moves a review uses the review writes.
 */
export async function patchProvider<R>(
  db: Db,
  input: {
    providerCode: string;
    patch: Patch;
    actor: string;
    ifMatch: IfMatch;
    /**
     * Written by the provider's mirror source (src/mirror) rather than its owner; a TRUSTED source's
     * change needs no UPDATE review. `within` runs inside the transaction: the sync's position.
     */
    mirror?: { trusted: boolean; within: (tx: RawTx) => Promise<void> };
    /** A reviewer's curation (labels): of any provider, mirrored ones too, and no review answers it. */
    curator?: boolean;
  },
  /** Reads what the caller answers, inside the transaction: the profile as this PATCH left it. */
  readBack: (tx: RawTx) => Promise<R>,
): Promise<{ version: number; written: R }> {
  let events: LoggedEvent[] = [];
  const written = await rawTransaction(db, async (tx) => {
    const now = new Date();
    const row = await claimVersion(tx, { providerCode: input.providerCode, ifMatch: input.ifMatch, now });
    if (row.mirrored && !input.mirror && !input.curator) throw await mirroredConflict(tx, row);
    const version = row.version;
    const before = profileOf(row);
    // Sections merge onto the current ones; an incomplete merge rolls the transaction back.
    const merged = applyPatch(before, input.patch);
    if (!merged.ok) throw badInput("The update is not valid", merged.errors);
    const after = merged.value;
    const changed = changedFields(before, after);

    await setColumns(
      tx,
      row.id,
      Object.fromEntries(Object.keys(input.patch).map((f) => [f, after[f as OwnerField]])),
    ).catch((error) => {
      throw serverNameTaken(error, after.serverName) ?? error;
    });
    if (changed.includes("labels")) await replaceLabels(tx, row.id, after.labels);
    if (changed.includes("packages")) await replacePackageKinds(tx, row.id, after.packages);
    // Its MCP server's entries: the release this version describes; a new name or visibility shows on all of them.
    await recordRelease(tx, {
      providerId: row.id,
      providerCode: row.providerCode,
      profile: after,
      wasMcpServer: isMcpServer(before),
      version,
      now,
      all: changed.includes("serverName") || changed.includes("visibility"),
    });
    // A verified domain vouches for the endpoint's host only: one the endpoint left (or every one,
    // when the endpoint is gone) is removed.
    if (changed.includes("endpoint")) {
      await removeUncoveredDomains(tx, {
        providerId: row.id,
        endpointUrl: after.endpoint?.url ?? "",
        actor: input.actor,
        now,
      });
    }
    await appendVersion(tx, {
      providerId: row.id,
      version,
      actor: input.actor,
      changedFields: changed,
      // The lifecycle (a PATCH never changes it) stays in the snapshot while it is not ACTIVE.
      snapshot: Object.assign(snapshotOf(after), lifecycleSnapshot(lifecycleOf(row))),
      event: {
        kind: "PROFILE_UPDATED",
        note: changed.length ? `version ${version}: ${changed.join(", ")}` : `version ${version}: no change`,
      },
      now,
    });

    const active = await activeReviewOf(tx, row.id);
    const effect = input.curator
      ? ({ kind: "none" } as const)
      : effectOfOwnerPatch({
          reviewStage: row.reviewStage,
          activeReview: active,
          changedReviewedFields: changed.some((f) => REVIEWED_FIELDS.includes(f)),
        });
    const happened: Parameters<typeof logWrite>[1]["events"][number][] = [{ kind: "PROVIDER_UPDATED" }];
    let reviewStage = row.reviewStage;
    if (effect.kind === "resubmit") {
      happened.push(...eventsOfMove(effect.move, active?.code ?? null));
      reviewStage = effect.move.stage ?? reviewStage;
      await applyMove(
        tx,
        { providerId: row.id, stage: row.reviewStage, review: { id: effect.reviewId, status: "CHANGES_REQUESTED" } },
        effect.move,
        input.actor,
      );
    } else if (effect.kind === "openUpdateReview" && !input.mirror?.trusted) {
      const reviewCode = newReviewCode();
      const reviewId = await openReview(tx, { reviewCode, providerId: row.id, kind: "UPDATE", now });
      const reviewed = changed.filter((f) => REVIEWED_FIELDS.includes(f));
      await insertEvents(tx, row.id, [
        { reviewId, kind: "UPDATE_SUBMITTED", actor: input.actor, note: `changed ${reviewed.join(", ")}`, at: now },
      ]);
      happened.push({ kind: "REVIEW_OPENED", reviewCode });
    }
    if (input.mirror) await input.mirror.within(tx);
    const answer = { version, written: await readBack(tx) };
    // Last: the log's append holds its order until the commit (src/events/event.store.ts). A PATCH
    // that moved the endpoint may have changed the verified domains: that state is read back.
    events = await logWrite(tx, {
      providerId: row.id,
      before: publicSnapshot(row),
      ...(changed.includes("endpoint") ? {} : { after: { ...row, ...after, reviewStage } }),
      events: happened,
    });
    return answer;
  });
  noteAppended(events);
  return written;
}
