/**
 * The statements every versioned provider write runs (a PATCH, a lifecycle change), as raw SQL that
 * both dialects understand. Through `queryRows` in a transaction (src/db/client.ts) they run straight on
 * SQLite's open transaction: each ORM call cost 120-320 us of client-side work around ~30 us of SQL,
 * most of a PATCH's CPU. On PostgreSQL they go through `$queryRaw`.
 */
import { assignments, type Dialect, type Queryable, queryRows } from "../db/client.ts";
import { apiError, notFound } from "../errors.ts";
import { Prisma } from "../generated/prisma/client.ts";
import { type IfMatch, ifMatchHolds } from "../http/if-match.ts";
import { insertEvents } from "../reviews/review.write.ts";
import { JSON_COLUMNS, PROVIDER_COLUMNS, type ProviderRow, providerRow } from "./provider.read.ts";

/** A value for a Json column: its JSON text (SQLite keeps it as text; PostgreSQL casts it to jsonb). */
export function jsonArg(dialect: Dialect, value: unknown): Prisma.Sql {
  if (value === null || value === undefined) return Prisma.sql`NULL`;
  const text = JSON.stringify(value);
  return dialect === "postgresql" ? Prisma.sql`CAST(${text} AS jsonb)` : Prisma.sql`${text}`;
}

const RETURNED = Prisma.raw(PROVIDER_COLUMNS.map((c) => `"${c}"`).join(", "));

/**
 * Claims the provider's next version and answers its row as claimed (version already the new one).
 * The UPDATE takes the row's lock first, so concurrent writes of one provider queue here (on
 * PostgreSQL each replica's, under READ COMMITTED) and each reads the row as the one before it left
 * it: a write without If-Match is never refused for a race, and versions stay 1..n with neither gap
 * nor duplicate. `ifMatch`, when sent, must name the version before this one.
 */
export async function claimVersion(
  tx: Queryable,
  input: { providerCode: string; ifMatch: IfMatch; now: Date },
): Promise<ProviderRow> {
  const [raw] = await queryRows(
    tx,
    Prisma.sql`UPDATE "providers" SET "version" = "version" + 1, "updatedAt" = ${input.now}
      WHERE "providerCode" = ${input.providerCode} RETURNING ${RETURNED}`,
  );
  if (!raw) throw notFound(`No provider "${input.providerCode}"`);
  const row = providerRow(raw);
  const current = row.version - 1;
  if (!ifMatchHolds(input.ifMatch, current)) {
    throw apiError("PRECONDITION_FAILED", `If-Match does not match the current version ${current}`);
  }
  return row;
}

/** Sets columns of the provider row (`undefined` ones are left alone), Json ones as JSON. */
export async function setColumns(
  tx: Queryable,
  dialect: Dialect,
  providerId: number,
  columns: Record<string, unknown>,
): Promise<void> {
  const values: Record<string, unknown> = {};
  for (const [column, value] of Object.entries(columns)) {
    if (!PROVIDER_COLUMNS.includes(column as (typeof PROVIDER_COLUMNS)[number])) {
      throw new Error(`Not a provider column: ${column}`);
    }
    if (value !== undefined) values[column] = JSON_COLUMNS.has(column) ? jsonArg(dialect, value) : value;
  }
  const sets = assignments(values);
  if (sets.length === 0) return;
  await queryRows(tx, Prisma.sql`UPDATE "providers" SET ${Prisma.join(sets)} WHERE "id" = ${providerId}`);
}

/** Appends the version a write made and its timeline event. */
export async function appendVersion(
  tx: Queryable,
  dialect: Dialect,
  input: {
    providerId: number;
    version: number;
    actor: string;
    changedFields: readonly string[];
    snapshot: object;
    event: { kind: string; note: string | null };
    now: Date;
  },
): Promise<void> {
  const { providerId, version, actor, now } = input;
  await queryRows(
    tx,
    Prisma.sql`INSERT INTO "provider_versions" ("providerId", "version", "createdAt", "actor", "changedFields", "snapshot")
      VALUES (${providerId}, ${version}, ${now}, ${actor}, ${jsonArg(dialect, input.changedFields)}, ${jsonArg(dialect, input.snapshot)})`,
  );
  await insertEvents(tx, providerId, [{ reviewId: null, ...input.event, actor, at: now }]);
}
