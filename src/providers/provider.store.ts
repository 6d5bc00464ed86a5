/**
 * The providers' SQL: reads that answer a request in one round trip, and the statements of a
 * versioned write. Prisma would read a profile with its tokens and timeline in three statements;
 * here it is one, whose related rows come back as JSON arrays turned into exactly the rows Prisma
 * would have answered (the columns and their types come from the model, src/db/model.ts), so the
 * Pothos types resolve them as they would Prisma's. Writes on the hot path are raw too: through
 * `queryRows` in a `rawTransaction` they run straight on SQLite's open transaction, where each ORM
 * call cost several times the SQL it ran.
 */
import { assignments, type Dialect, dialectIn, jsonArg, type Queryable, queryRows } from "../db/client.ts";
import { asJson, columnList, columnsOf, pickColumns, rowReader } from "../db/model.ts";
import { apiError, notFound } from "../errors.ts";
import { Prisma } from "../generated/prisma/client.ts";
import { type IfMatch, ifMatchHolds } from "../http/if-match.ts";

export type ProviderRow = Prisma.ProviderGetPayload<object>;
type TokenRow = Prisma.AccessTokenGetPayload<object>;
type EventRow = Prisma.ReviewEventGetPayload<object>;
type DomainRow = Prisma.DomainVerificationGetPayload<object>;

/** The columns of the providers row: every scalar of the model. */
const PROVIDER = columnsOf("Provider");
const PROVIDER_COLUMNS: readonly string[] = PROVIDER.map((c) => c.name);
/** The providers row's Json columns (text on SQLite, jsonb on PostgreSQL), each with whether it is nullable. */
const JSON_COLUMNS: ReadonlyMap<string, boolean> = new Map(
  PROVIDER.filter((c) => c.type === "Json").map((c) => [c.name, !c.required]),
);
/** A raw providers row as Prisma would answer it. */
const providerRow = rowReader<ProviderRow>(PROVIDER);

/** The columns of the list form (ProviderSummary). */
const SUMMARY_COLUMNS = [
  "id",
  "providerCode",
  "name",
  "summary",
  "agentType",
  "visibility",
  "trustTier",
  "reviewStage",
  "labels",
  "endpoint",
  "updatedAt",
  "lifecycle",
  "lifecycleMessage",
  "successorCode",
  "publisherVerified",
  "healthState",
] as const;
export type SummaryRow = Pick<ProviderRow, (typeof SUMMARY_COLUMNS)[number]>;
const SUMMARY = pickColumns("Provider", SUMMARY_COLUMNS);
/** A raw summary row as Prisma would answer it. */
export const summaryRow = rowReader<SummaryRow>(SUMMARY);

/** The same columns as a Prisma `select` (lists read through the ORM). */
export const SUMMARY_SELECT = Object.fromEntries(SUMMARY_COLUMNS.map((column) => [column, true])) as {
  [C in (typeof SUMMARY_COLUMNS)[number]]: true;
} satisfies Prisma.ProviderSelect;

/** The summary columns of `p`, for a raw SELECT. */
export const SUMMARY_SQL = Prisma.raw(columnList(SUMMARY, "p"));

// Token metadata never includes its hash: nothing that reads a profile needs it.
const TOKEN = columnsOf("AccessToken", ["hash"]);
const tokenRow = rowReader<Omit<TokenRow, "hash">>(TOKEN);
const EVENT = columnsOf("ReviewEvent");
const eventRow = rowReader<EventRow>(EVENT);
// A domain's challenge token is no part of a profile: only its verified domains are read with it.
const DOMAIN = columnsOf("DomainVerification", ["token"]);
const domainRow = rowReader<Omit<DomainRow, "token">>(DOMAIN);

/** A JSON array of the rows of `table` that belong to provider `p` (and hold `and`), oldest (lowest id) first. */
function relatedJson(dialect: Dialect, table: string, columns: readonly { name: string }[], and = ""): Prisma.Sql {
  const object = columns.map((c) => `'${c.name}', r."${c.name}"`).join(", ");
  return Prisma.raw(
    dialect === "postgresql"
      ? `(SELECT COALESCE(json_agg(json_build_object(${object}) ORDER BY r."id"), '[]'::json) FROM "${table}" AS r WHERE r."providerId" = p."id"${and})`
      : `(SELECT json_group_array(json_object(${object}) ORDER BY r."id") FROM "${table}" AS r WHERE r."providerId" = p."id"${and})`,
  );
}

/** A provider naming another as its successor: what `Provider.predecessors` needs to decide who may see it. */
export interface PredecessorRow {
  id: number;
  providerCode: string;
  visibility: string;
  reviewStage: string;
}

export type ProviderDetail = ProviderRow & {
  tokens: Omit<TokenRow, "hash">[];
  events: EventRow[];
  /** Its verified domains (src/trust/domain.*), when asked. */
  domains: Omit<DomainRow, "token">[];
  /** The providers naming this one as their successor (by code, at most 100), read with the row. */
  predecessorRows: PredecessorRow[];
  /** Its health and drift as stored (src/health/ reads them: `healthOfRow`), read with the row; null when it is not probed. */
  healthRow: Record<string, unknown> | null;
};

const predecessorRow = rowReader<PredecessorRow>(
  pickColumns("Provider", ["id", "providerCode", "visibility", "reviewStage"]),
);

/** The providers naming `p` as their successor, as a JSON array ordered by code (at most 100). */
function predecessorsJson(dialect: Dialect): Prisma.Sql {
  return dialect === "postgresql"
    ? Prisma.raw(
        `(SELECT COALESCE(json_agg(json_build_object('id', s."id", 'providerCode', s."providerCode", 'visibility', s."visibility", 'reviewStage', s."reviewStage") ORDER BY s."providerCode"), '[]'::json) FROM (SELECT * FROM "providers" AS s0 WHERE s0."successorCode" = p."providerCode" ORDER BY s0."providerCode" LIMIT 100) AS s)`,
      )
    : Prisma.raw(
        `(SELECT json_group_array(json_object('id', s."id", 'providerCode', s."providerCode", 'visibility', s."visibility", 'reviewStage', s."reviewStage") ORDER BY s."providerCode") FROM (SELECT "id", "providerCode", "visibility", "reviewStage" FROM "providers" AS s0 WHERE s0."successorCode" = p."providerCode" ORDER BY s0."providerCode" LIMIT 100) AS s)`,
      );
}

/**
 * The provider's health row (src/health/) with its checks and the answering ones over the last 24 hours,
 * 7 days and 30 days, summed from the hourly counts, as one JSON object; null when it is not probed.
 */
function healthJson(dialect: Dialect, now: Date): Prisma.Sql {
  const hour = 3_600_000;
  const start = Math.floor(now.getTime() / hour) * hour;
  const [day, week, month] = [24, 7 * 24, 30 * 24].map((hours) => new Date(start - hours * hour));
  const counts = (since: Date | undefined, column: string) =>
    Prisma.sql`COALESCE(SUM(CASE WHEN x."hour" >= ${since} THEN x.${Prisma.raw(`"${column}"`)} ELSE 0 END), 0)`;
  const object = dialect === "postgresql" ? Prisma.raw("json_build_object") : Prisma.raw("json_object");
  const uptime = Prisma.sql`(SELECT ${object}('c24', ${counts(day, "checks")}, 'u24', ${counts(day, "up")},
      'c7', ${counts(week, "checks")}, 'u7', ${counts(week, "up")}, 'c30', ${counts(month, "checks")}, 'u30', ${counts(month, "up")})
    FROM "health_hourly" AS x WHERE x."providerId" = p."id" AND x."hour" >= ${month})`;
  return Prisma.sql`(SELECT ${object}('state', h."state", 'since', h."since", 'checkedAt', h."checkedAt",
      'latencyMs', h."latencyMs", 'reason', h."reason", 'drift', h."drift", 'counts', ${uptime})
    FROM "provider_health" AS h WHERE h."providerId" = p."id")`;
}

/** The relations a profile read loads with the row. */
export type Relations = { tokens: boolean; events: boolean; domains: boolean };

/** The detail's statement but its condition, built once per dialect and relations asked. */
const detailSelects = new Map<string, Prisma.Sql>();
function detailSelect(dialect: Dialect, relations: Relations): Prisma.Sql {
  const key = `${dialect} ${relations.tokens} ${relations.events} ${relations.domains}`;
  let select = detailSelects.get(key);
  if (!select) {
    const tokens = relations.tokens ? relatedJson(dialect, "access_tokens", TOKEN) : Prisma.sql`NULL`;
    const events = relations.events ? relatedJson(dialect, "review_events", EVENT) : Prisma.sql`NULL`;
    const domains = relations.domains
      ? relatedJson(dialect, "domain_verifications", DOMAIN, ` AND r."state" = 'VERIFIED'`)
      : Prisma.sql`NULL`;
    select = Prisma.sql`
    SELECT ${Prisma.raw(columnList(PROVIDER, "p"))}, ${tokens} AS "tokensJson", ${events} AS "eventsJson",
           ${domains} AS "domainsJson",
           ${predecessorsJson(dialect)} AS "predecessorsJson"`;
    detailSelects.set(key, select);
  }
  return select;
}

/**
 * A provider's full row, with its tokens and its review timeline when asked, and its health (the
 * health domain's subquery), in one statement. Relations not asked for come back as empty lists.
 */
export async function readProvider(
  db: Queryable,
  providerCode: string,
  relations: Relations,
): Promise<ProviderDetail | null> {
  const rows = await queryRows(
    db,
    Prisma.sql`${detailSelect(dialectIn(db), relations)}, ${healthJson(dialectIn(db), new Date())} AS "healthJson"
      FROM "providers" AS p WHERE p."providerCode" = ${providerCode}`,
  );
  const raw = rows[0];
  if (!raw) return null;
  const list = (value: unknown) => (value === null || value === undefined ? [] : (asJson(value) as object[]));
  return Object.assign(providerRow(raw), {
    tokens: list(raw.tokensJson).map((t) => tokenRow(t as Record<string, unknown>)),
    events: list(raw.eventsJson).map((e) => eventRow(e as Record<string, unknown>)),
    domains: list(raw.domainsJson).map((d) => domainRow(d as Record<string, unknown>)),
    predecessorRows: list(raw.predecessorsJson).map((r) => predecessorRow(r as Record<string, unknown>)),
    healthRow:
      raw.healthJson === null || raw.healthJson === undefined
        ? null
        : (asJson(raw.healthJson) as Record<string, unknown>),
  });
}

const RETURNED = Prisma.raw(columnList(PROVIDER));

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
export async function setColumns(tx: Queryable, providerId: number, columns: Record<string, unknown>): Promise<void> {
  const values: Record<string, unknown> = {};
  for (const [column, value] of Object.entries(columns)) {
    if (!PROVIDER_COLUMNS.includes(column)) {
      throw new Error(`Not a provider column: ${column}`);
    }
    const json = JSON_COLUMNS.get(column);
    if (value !== undefined) values[column] = json === undefined ? value : jsonArg(tx, value, json);
  }
  const sets = assignments(values);
  if (sets.length === 0) return;
  await queryRows(tx, Prisma.sql`UPDATE "providers" SET ${Prisma.join(sets)} WHERE "id" = ${providerId}`);
}

/** Appends the version a write made and its timeline event. */
export async function appendVersion(
  tx: Queryable,
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
      VALUES (${providerId}, ${version}, ${now}, ${actor}, ${jsonArg(tx, input.changedFields)}, ${jsonArg(tx, input.snapshot)})`,
  );
  await insertEvents(tx, providerId, [{ reviewId: null, ...input.event, actor, at: now }]);
}

/** Replaces the provider's rows of the label index (what the label filter reads). */
export async function replaceLabels(tx: Queryable, providerId: number, labels: readonly string[]): Promise<void> {
  await queryRows(tx, Prisma.sql`DELETE FROM "provider_labels" WHERE "providerId" = ${providerId}`);
  if (labels.length === 0) return;
  const rows = labels.map((label) => Prisma.sql`(${providerId}, ${label})`);
  await queryRows(tx, Prisma.sql`INSERT INTO "provider_labels" ("providerId", "label") VALUES ${Prisma.join(rows)}`);
}

/** A provider's rows of the package index: each (registry, transport) pair of its packages, once. */
export function packageKinds(
  packages: readonly { registryType: string; transport: { type: string } }[],
): { registryType: string; transport: string }[] {
  const kinds = packages.map((p) => ({ registryType: p.registryType, transport: p.transport.type }));
  return [...new Map(kinds.map((k) => [`${k.registryType} ${k.transport}`, k])).values()];
}

/** Replaces the provider's rows of the package index (what the packageRegistry and transport filters read). */
export async function replacePackageKinds(
  tx: Queryable,
  providerId: number,
  packages: Parameters<typeof packageKinds>[0],
): Promise<void> {
  await queryRows(tx, Prisma.sql`DELETE FROM "provider_packages" WHERE "providerId" = ${providerId}`);
  const kinds = packageKinds(packages);
  if (kinds.length === 0) return;
  const rows = kinds.map((k) => Prisma.sql`(${providerId}, ${k.registryType}, ${k.transport})`);
  await queryRows(
    tx,
    Prisma.sql`INSERT INTO "provider_packages" ("providerId", "registryType", "transport") VALUES ${Prisma.join(rows)}`,
  );
}

/** What a lifecycle change needs to know of the provider it names as successor. */
export interface SuccessorRow {
  id: number;
  visibility: string;
  reviewStage: string;
  lifecycle: string;
  successorCode: string | null;
}
const SUCCESSOR = pickColumns("Provider", ["id", "visibility", "reviewStage", "lifecycle", "successorCode"]);
const successorRow = rowReader<SuccessorRow>(SUCCESSOR);

/** The provider of a code, as a lifecycle change checks its successor; null when there is none. */
export async function successorByCode(tx: Queryable, providerCode: string): Promise<SuccessorRow | null> {
  const [raw] = await queryRows(
    tx,
    Prisma.sql`SELECT ${Prisma.raw(columnList(SUCCESSOR))} FROM "providers" WHERE "providerCode" = ${providerCode}`,
  );
  return raw ? successorRow(raw) : null;
}

/** The summaries (with their versions) of the providers of these ids, as the change feed announces them. */
export async function summariesByIds(
  db: Queryable,
  providerIds: readonly number[],
): Promise<(SummaryRow & { version: number })[]> {
  const rows = await queryRows(
    db,
    Prisma.sql`SELECT ${SUMMARY_SQL}, p."version" FROM "providers" AS p WHERE p."id" IN (${Prisma.join(providerIds)})`,
  );
  return rows.map((raw) => Object.assign(summaryRow(raw), { version: Number(raw.version) }));
}

/** A timeline event to append. */
export interface NewEvent {
  reviewId: number | null;
  kind: string;
  actor: string;
  note: string | null;
  at: Date;
}

/** Appends timeline events of a provider, in the order given. */
export async function insertEvents(tx: Queryable, providerId: number, events: readonly NewEvent[]): Promise<void> {
  if (events.length === 0) return;
  const rows = events.map((e) => Prisma.sql`(${providerId}, ${e.reviewId}, ${e.at}, ${e.kind}, ${e.actor}, ${e.note})`);
  await queryRows(
    tx,
    Prisma.sql`INSERT INTO "review_events" ("providerId", "reviewId", "at", "kind", "actor", "note") VALUES ${Prisma.join(rows)}`,
  );
}
