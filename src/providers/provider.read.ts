/**
 * Reads that answer a request in one database round trip. Prisma would read a profile
 * with its tokens and timeline in three statements (one per relation, no join strategy without a
 * preview feature); here each is one SQL statement whose related rows come back as JSON arrays,
 * turned into exactly the rows Prisma would have answered, so the Pothos types resolve them as
 * they would Prisma's.
 */
import { setLoaderMappings } from "@pothos/selection-mapper";
import { type FieldNode, type GraphQLResolveInfo, getNamedType, Kind, type SelectionSetNode } from "graphql";
import { type Dialect, type Queryable, queryRows } from "../db/client.ts";
import { Prisma } from "../generated/prisma/client.ts";

/** A DateTime as the drivers answer it: a Date, an ISO string (SQLite, JSON) or epoch ms. */
export function asDate(value: unknown): Date {
  if (value instanceof Date) return value;
  if (typeof value === "number" || typeof value === "bigint") return new Date(Number(value));
  const text = String(value);
  // PostgreSQL's JSON renders `timestamp(3)` (UTC, without zone) without an offset: it is UTC.
  return new Date(/(?:[zZ]|[+-]\d\d:?\d\d)$/.test(text) ? text : `${text}Z`);
}

export function asDateOrNull(value: unknown): Date | null {
  return value === null || value === undefined ? null : asDate(value);
}

/** A Json column as the drivers answer it: parsed already (PostgreSQL) or text (SQLite). */
export function asJson(value: unknown): Prisma.JsonValue {
  return typeof value === "string" ? (JSON.parse(value) as Prisma.JsonValue) : (value as Prisma.JsonValue);
}

/** The columns of the providers row. */
export const PROVIDER_COLUMNS = [
  "id",
  "providerCode",
  "name",
  "summary",
  "description",
  "labels",
  "agentType",
  "visibility",
  "trustTier",
  "reviewStage",
  "contactEmail",
  "capabilities",
  "models",
  "tools",
  "endpoint",
  "policy",
  "roles",
  "version",
  "createdAt",
  "updatedAt",
  "lifecycle",
  "lifecycleMessage",
  "successorCode",
] as const;

/** The providers row's Json columns (text on SQLite, jsonb on PostgreSQL). */
export const JSON_COLUMNS: ReadonlySet<string> = new Set([
  "labels",
  "capabilities",
  "models",
  "tools",
  "endpoint",
  "policy",
  "roles",
]);

/** The columns of the list form (ProviderSummary), for a raw SELECT on `p`. */
export const SUMMARY_COLUMNS = [
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
] as const;

/** The same columns as a Prisma `select` (lists read through the ORM). */
export const SUMMARY_SELECT = Object.fromEntries(SUMMARY_COLUMNS.map((column) => [column, true])) as {
  [C in (typeof SUMMARY_COLUMNS)[number]]: true;
} satisfies Prisma.ProviderSelect;

export function columnsSql(columns: readonly string[], alias = "p"): Prisma.Sql {
  return Prisma.raw(columns.map((c) => `"${alias}"."${c}"`).join(", "));
}

export type ProviderRow = Prisma.ProviderGetPayload<object>;
type TokenRow = Prisma.AccessTokenGetPayload<object>;
type EventRow = Prisma.ReviewEventGetPayload<object>;
export type SummaryRow = Pick<ProviderRow, (typeof SUMMARY_COLUMNS)[number]>;

/** A raw summary row as Prisma would answer it. */
export function summaryRow(raw: Record<string, unknown>): SummaryRow {
  return {
    id: Number(raw.id),
    providerCode: raw.providerCode as string,
    name: raw.name as string,
    summary: raw.summary as string,
    agentType: raw.agentType as string,
    visibility: raw.visibility as string,
    trustTier: raw.trustTier as string,
    reviewStage: raw.reviewStage as string,
    labels: asJson(raw.labels),
    endpoint: asJson(raw.endpoint),
    updatedAt: asDate(raw.updatedAt),
    lifecycle: raw.lifecycle as string,
    lifecycleMessage: (raw.lifecycleMessage as string | null) ?? null,
    successorCode: (raw.successorCode as string | null) ?? null,
  };
}

/** A raw providers row as Prisma would answer it. */
export function providerRow(raw: Record<string, unknown>): ProviderRow {
  // Object.assign, not `{ ...summaryRow(raw), … }` (docs/architecture.md, "Hot objects are plain").
  return Object.assign(summaryRow(raw), {
    description: (raw.description as string | null) ?? null,
    contactEmail: raw.contactEmail as string,
    capabilities: asJson(raw.capabilities),
    models: asJson(raw.models),
    tools: asJson(raw.tools),
    policy: raw.policy === null || raw.policy === undefined ? null : asJson(raw.policy),
    roles: asJson(raw.roles),
    version: Number(raw.version),
    createdAt: asDate(raw.createdAt),
  });
}

// Token metadata never includes its hash: nothing that reads a profile needs it.
const TOKEN_FIELDS = [
  "id",
  "tokenId",
  "providerId",
  "prefix",
  "label",
  "createdAt",
  "lastUsedAt",
  "expiresAt",
  "revokedAt",
];
const EVENT_FIELDS = ["id", "providerId", "reviewId", "at", "kind", "actor", "note"];

/** A JSON array of the rows of `table` that belong to provider `p`, oldest (lowest id) first. */
function relatedJson(dialect: Dialect, table: string, fields: readonly string[]): Prisma.Sql {
  if (dialect === "postgresql") {
    const object = fields.map((f) => `'${f}', r."${f}"`).join(", ");
    return Prisma.raw(
      `(SELECT COALESCE(json_agg(json_build_object(${object}) ORDER BY r."id"), '[]'::json) FROM "${table}" AS r WHERE r."providerId" = p."id")`,
    );
  }
  const object = fields.map((f) => `'${f}', r."${f}"`).join(", ");
  return Prisma.raw(
    `(SELECT json_group_array(json_object(${object}) ORDER BY r."id") FROM "${table}" AS r WHERE r."providerId" = p."id")`,
  );
}

function tokenRow(raw: Record<string, unknown>): Omit<TokenRow, "hash"> {
  return {
    id: Number(raw.id),
    tokenId: raw.tokenId as string,
    providerId: Number(raw.providerId),
    prefix: raw.prefix as string,
    label: (raw.label as string | null) ?? null,
    createdAt: asDate(raw.createdAt),
    lastUsedAt: asDateOrNull(raw.lastUsedAt),
    expiresAt: asDateOrNull(raw.expiresAt),
    revokedAt: asDateOrNull(raw.revokedAt),
  };
}

function eventRow(raw: Record<string, unknown>): EventRow {
  return {
    id: Number(raw.id),
    providerId: Number(raw.providerId),
    reviewId: raw.reviewId === null || raw.reviewId === undefined ? null : Number(raw.reviewId),
    at: asDate(raw.at),
    kind: raw.kind as string,
    actor: raw.actor as string,
    note: (raw.note as string | null) ?? null,
  } as EventRow;
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
  /** The providers naming this one as their successor (by code, at most 100), read with the row. */
  predecessorRows: PredecessorRow[];
};

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

/** The relations a profile read loads with the row. */
type Relations = { tokens: boolean; events: boolean };

/** The detail's statement but its condition, built once per dialect and relations asked. */
const detailSelects = new Map<string, Prisma.Sql>();
function detailSelect(dialect: Dialect, relations: Relations): Prisma.Sql {
  const key = `${dialect} ${relations.tokens} ${relations.events}`;
  let select = detailSelects.get(key);
  if (!select) {
    const tokens = relations.tokens ? relatedJson(dialect, "access_tokens", TOKEN_FIELDS) : Prisma.sql`NULL`;
    const events = relations.events ? relatedJson(dialect, "review_events", EVENT_FIELDS) : Prisma.sql`NULL`;
    select = Prisma.sql`
    SELECT ${columnsSql(PROVIDER_COLUMNS)}, ${tokens} AS "tokensJson", ${events} AS "eventsJson",
           ${predecessorsJson(dialect)} AS "predecessorsJson"
    FROM "providers" AS p`;
    detailSelects.set(key, select);
  }
  return select;
}

/**
 * A provider's full row, with its tokens and its review timeline when asked, in one statement.
 * Relations not asked for come back as empty lists.
 */
export async function readProvider(
  db: Queryable,
  dialect: Dialect,
  providerCode: string,
  relations: Relations,
): Promise<ProviderDetail | null> {
  const rows = await queryRows(
    db,
    Prisma.sql`${detailSelect(dialect, relations)} WHERE p."providerCode" = ${providerCode}`,
  );
  const raw = rows[0];
  if (!raw) return null;
  const list = (value: unknown) => (value === null || value === undefined ? [] : (asJson(value) as object[]));
  return Object.assign(providerRow(raw), {
    tokens: list(raw.tokensJson).map((t) => tokenRow(t as Record<string, unknown>)),
    events: list(raw.eventsJson).map((e) => eventRow(e as Record<string, unknown>)),
    predecessorRows: list(raw.predecessorsJson).map((r) => {
      const row = r as Record<string, unknown>;
      return {
        id: Number(row.id),
        providerCode: row.providerCode as string,
        visibility: row.visibility as string,
        reviewStage: row.reviewStage as string,
      };
    }),
  });
}

/** The Provider fields whose rows `readProvider` loads with the profile, by the relation they read. */
const RELATION_OF_FIELD: Record<string, keyof Relations | undefined> = { tokens: "tokens", reviewTimeline: "events" };

/** What the loaded row holds beneath a relation field: plain columns, nothing loaded beneath them. */
const LOADED = Object.freeze({ nested: Object.freeze({}) });

interface Asked {
  relations: Relations;
  /** For @pothos/selection-mapper: `Type@responseKey` of each relation field the row comes with. */
  mappings: Record<string, typeof LOADED>;
}
/** By the field node, which is the parsed document's own and lives as long as it is cached. */
const askedByField = new WeakMap<FieldNode, Asked>();

/**
 * Which relations the Provider field `info` resolves asks for (`readProvider` then loads them with
 * the row), and Pothos told that the row it resolves with holds them — what `t.prismaField` would
 * learn from its query plan. That plan is walked afresh on every request, through every field of
 * the profile: measured side by side, an uncached REST detail read went 285–289 →
 * 233–248 µs without it, over /graphql 347–365 → 290–301 µs. Here the selection is walked once
 * per document, through its fragments and under its aliases; a relation field not recorded would
 * load its own rows (tests/perf/round-trips.test.ts counts them). The answer is shared: frozen.
 */
export function relationsAsked(ctx: object, info: GraphQLResolveInfo): Relations {
  const node = info.fieldNodes.length === 1 ? info.fieldNodes[0] : undefined;
  let asked = node && askedByField.get(node);
  if (!asked) {
    asked = askedOf(info);
    if (node) askedByField.set(node, asked);
  }
  setLoaderMappings(ctx, info, asked.mappings);
  return asked.relations;
}

function askedOf(info: GraphQLResolveInfo): Asked {
  const type = getNamedType(info.returnType).name;
  const asked: Asked = { relations: { tokens: false, events: false }, mappings: {} };
  const fragments = new Set<string>();
  const walk = (set: SelectionSetNode | undefined) => {
    for (const selection of set?.selections ?? []) {
      if (selection.kind === Kind.FIELD) {
        const relation = RELATION_OF_FIELD[selection.name.value];
        if (!relation) continue;
        asked.relations[relation] = true;
        asked.mappings[`${type}@${(selection.alias ?? selection.name).value}`] = LOADED;
      } else if (selection.kind === Kind.INLINE_FRAGMENT) {
        walk(selection.selectionSet);
      } else if (!fragments.has(selection.name.value)) {
        fragments.add(selection.name.value);
        walk(info.fragments[selection.name.value]?.selectionSet);
      }
    }
  };
  for (const field of info.fieldNodes) walk(field.selectionSet);
  Object.freeze(asked.relations);
  return asked;
}
