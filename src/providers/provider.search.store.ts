/**
 * The providers list's statements (API.md §4 "Lists"): a plain page, newest change first, and
 * full-text search, on the index the database keeps itself
 * (prisma/migrations/<dialect>/20261121020000_search, 20261121030000_search_prefix,
 * 20261130000100_package_discovery):
 *
 * - SQLite: the FTS5 table `provider_search` (rowid = providers.id; columns providerCode, name,
 *   labels, packages (their identifiers), summary, description; tokenizer unicode61 remove_diacritics
 *   2; prefix indexes of 1–8 characters), ranked by a field-weighted score (scoreSql).
 * - PostgreSQL: the generated column providers."searchVector" (weights A code/name, B labels and
 *   package identifiers, C summary, D description) with its GIN index, ranked by ts_rank_cd().
 *
 * User text never reaches either query language: it is cut into words of letters and digits only
 * (the same split both tokenizers make), and each word becomes a quoted prefix term (`"rout"*` for
 * FTS5, `rout:*` for to_tsquery), all of which must match. Values are bound parameters.
 *
 * Filters are given as the same Prisma `where` objects the non-search path uses (the visibility
 * rule comes from listableWhere, never restated here) and turned into SQL by `whereSql`, so they
 * apply BEFORE the page is cut: a page is never short because of filtering.
 */
import { createHash } from "node:crypto";
import { type Db, type Dialect, dialectIn, queryRows } from "../db/client.ts";
import { badInput } from "../errors.ts";
import { Prisma } from "../generated/prisma/client.ts";
import { decodeCursor, encodeCursor, page } from "../pagination.ts";
import { SUMMARY_SQL, type SummaryRow, summaryRow } from "./provider.store.ts";

export const MAX_SEARCH_LENGTH = 200;
const MAX_WORDS = 16;

/**
 * The words of a search: runs of letters and digits, lower-cased (NFC first, so a decomposed `é`
 * stays one letter). Everything else — spaces, `- . _`, quotes, `* ( ) : & | !` — only separates
 * words, exactly as the FTS5 unicode61 tokenizer and provider_search_text() treat the indexed text.
 * An empty list means "no search". More than 200 characters is a 400 naming `search`.
 */
export function searchWords(search: string | null | undefined): string[] {
  if (search === null || search === undefined) return [];
  if (search.length > MAX_SEARCH_LENGTH)
    throw badInput(`search must be at most ${MAX_SEARCH_LENGTH} characters`, [
      { path: "search", message: `at most ${MAX_SEARCH_LENGTH} characters` },
    ]);
  const words = search
    .normalize("NFC")
    .toLowerCase()
    .split(/[^\p{L}\p{N}]+/u)
    .filter(Boolean);
  return [...new Set(words)].slice(0, MAX_WORDS);
}

/** Which indexed fields a match may use: all of them, or only code and name (the review queue). */
export type SearchScope = "all" | "codeAndName";

/** An FTS5 MATCH expression: every word a quoted prefix term, all required. */
export function ftsMatch(words: readonly string[], scope: SearchScope): string {
  const terms = words.map((w) => `"${w.replaceAll('"', '""')}"*`).join(" AND ");
  return scope === "all" ? terms : `{providerCode name} : (${terms})`;
}

/**
 * The text of a to_tsquery('simple', …): every word a prefix term, all required; `A` restricts a
 * term to weight A (code and name). Words hold letters and digits only, so nothing in them is
 * tsquery syntax; the SQL folds accents with provider_search_fold() as the column does.
 */
export function tsQuery(words: readonly string[], scope: SearchScope): string {
  return words.map((w) => `${w}:*${scope === "all" ? "" : "A"}`).join(" & ");
}

/** A condition on a providers row aliased `alias`: it matches every word (prefix) in the scope. */
export function providerMatchSql(dialect: Dialect, alias: string, words: readonly string[], scope: SearchScope) {
  const p = Prisma.raw(`"${alias}"`);
  return dialect === "postgresql"
    ? Prisma.sql`${p}."searchVector" @@ to_tsquery('simple', provider_search_fold(${tsQuery(words, scope)}))`
    : Prisma.sql`${p}."id" IN (SELECT "rowid" FROM "provider_search" WHERE "provider_search" MATCH ${ftsMatch(words, scope)})`;
}

// ── Prisma `where` → SQL ────────────────────────────────────────────────────────────────────
/** A table a `where` can be turned into SQL for: its alias, scalar columns and relation filters. */
export interface SqlTable {
  alias: string;
  columns: ReadonlySet<string>;
  relations: Record<string, (value: unknown, alias: string) => Prisma.Sql>;
  /** Fields that are an expression of the row rather than a column, compared like one. */
  expressions?: Record<string, (alias: string) => Prisma.Sql>;
}

type Scalar = string | number | Date;
const isScalar = (v: unknown): v is Scalar => typeof v === "string" || typeof v === "number" || v instanceof Date;

function unsupported(what: string): never {
  // A programming error (a filter shape this translation does not know), not a caller's mistake.
  throw new Error(`provider.search: cannot express ${what} in SQL`);
}

/**
 * The SQL of a Prisma `where` for the shapes the lists use: AND, OR, NOT, a scalar column equal to
 * a value or compared with `equals in gt gte lt lte`, and the table's relation filters. Any other
 * shape throws rather than being ignored, so a change to listableWhere that this cannot express
 * fails loudly (and in the tests) instead of widening what a caller sees.
 */
export function whereSql(where: unknown, table: SqlTable): Prisma.Sql {
  if (where === null || typeof where !== "object" || Array.isArray(where)) unsupported("a non-object where");
  const parts: Prisma.Sql[] = [];
  for (const [key, value] of Object.entries(where)) {
    if (value === undefined) unsupported(`undefined at ${key}`);
    if (key === "AND" || key === "OR") {
      const list = (Array.isArray(value) ? value : [value]).map((w) => whereSql(w, table));
      if (key === "AND") parts.push(list.length ? Prisma.sql`(${Prisma.join(list, " AND ")})` : Prisma.sql`1=1`);
      else parts.push(list.length ? Prisma.sql`(${Prisma.join(list, " OR ")})` : Prisma.sql`1=0`);
    } else if (key === "NOT") {
      const list = (Array.isArray(value) ? value : [value]).map((w) => whereSql(w, table));
      parts.push(Prisma.sql`NOT (${Prisma.join(list, " AND ")})`);
    } else if (key in table.relations) {
      parts.push(table.relations[key]?.(value, table.alias) ?? unsupported(key));
    } else if (table.columns.has(key)) {
      parts.push(columnSql(Prisma.raw(`"${table.alias}"."${key}"`), key, value));
    } else if (table.expressions?.[key]) {
      parts.push(columnSql(table.expressions[key](table.alias), key, value));
    } else unsupported(`the field ${key}`);
  }
  return parts.length ? Prisma.join(parts, " AND ") : Prisma.sql`1=1`;
}

function columnSql(column: Prisma.Sql, key: string, value: unknown): Prisma.Sql {
  if (isScalar(value)) return Prisma.sql`${column} = ${value}`;
  // A boolean column as a condition: SQLite stores 0/1 and binds no booleans, PostgreSQL compares no boolean with 1.
  if (typeof value === "boolean") return value ? Prisma.sql`${column}` : Prisma.sql`NOT ${column}`;
  if (value === null || typeof value !== "object") unsupported(`the value of ${key}`);
  const parts = Object.entries(value).map(([op, v]) => {
    if (op === "in" && Array.isArray(v) && v.every(isScalar))
      return v.length ? Prisma.sql`${column} IN (${Prisma.join(v)})` : Prisma.sql`1=0`;
    if (!isScalar(v)) return unsupported(`${key}.${op}`);
    switch (op) {
      case "equals":
        return Prisma.sql`${column} = ${v}`;
      case "gt":
        return Prisma.sql`${column} > ${v}`;
      case "gte":
        return Prisma.sql`${column} >= ${v}`;
      case "lt":
        return Prisma.sql`${column} < ${v}`;
      case "lte":
        return Prisma.sql`${column} <= ${v}`;
      default:
        return unsupported(`${key}.${op}`);
    }
  });
  return parts.length ? Prisma.join(parts, " AND ") : Prisma.sql`1=1`;
}

/**
 * A relation filter `{ some: { <column>: value, … } }` on an index of the providers' lists (rows
 * keyed by providerId), as an EXISTS of one row holding every value given (an undefined one: any).
 */
function indexFilter(table: string, columns: readonly string[], fence = false) {
  return (value: unknown, alias: string): Prisma.Sql => {
    const some = (value as { some?: unknown } | null)?.some as Record<string, unknown> | undefined;
    if (Object.keys(value as object).length !== 1 || !some) unsupported(`this filter on ${table}`);
    const conditions = Object.entries(some)
      .filter(([, wanted]) => wanted !== undefined)
      .map(([column, wanted]) => {
        if (!columns.includes(column) || typeof wanted !== "string") unsupported(`${table}.${column}`);
        return Prisma.sql` AND i.${Prisma.raw(`"${column}"`)} = ${wanted}`;
      });
    if (conditions.length === 0) unsupported(`an empty filter on ${table}`);
    return Prisma.sql`EXISTS (SELECT 1 FROM ${Prisma.raw(`"${table}"`)} AS i WHERE i."providerId" = ${Prisma.raw(`"${alias}"."id"`)}${Prisma.join(conditions, "")}${fence ? Prisma.raw(" OFFSET 0") : Prisma.empty})`;
  };
}

/**
 * The endpoint's protocol, a member of its JSON column: `->>` reads it on both dialects (SQLite
 * 3.38 and later, PostgreSQL's jsonb), NULL for an agent without an endpoint. The facets' index
 * (provider.facets.store.ts) is on this very expression.
 */
export const protocolSql = (alias: string) => Prisma.raw(`("${alias}"."endpoint" ->> 'protocol')`);

/**
 * The providers table as `p`; `labelIndex: { some: { label } }` is the labels-all-of filter,
 * `packageIndex: { some: { registryType } }` (or `transport`) a package filter, `protocol` the endpoint's.
 *
 * `walk` (PostgreSQL, a page of the list): each label's EXISTS stays a check of the rows
 * the list's index walks (`OFFSET 0` keeps PostgreSQL from turning it into a join). The list runs
 * on a generic plan (db/postgres.ts), which does not know the label, and would otherwise hash-join
 * every row of a common label with the other filters' providers and sort them all, where walking
 * newest first and checking each reads a page's worth (docs/performance.md).
 */
export function providersTable(alias = "p", walk = false): SqlTable {
  return {
    alias,
    columns: new Set([
      "id",
      "providerCode",
      "agentType",
      "visibility",
      "trustTier",
      "reviewStage",
      // includeRetired and updatedSince (provider.changes.ts)
      "lifecycle",
      "updatedAt",
      "healthState",
      "publisherVerified",
    ]),
    expressions: { protocol: protocolSql },
    relations: {
      labelIndex: indexFilter("provider_labels", ["label"], walk),
      packageIndex: indexFilter("provider_packages", ["registryType", "transport"]),
    },
  };
}

// ── The providers list ──────────────────────────────────────────────────────────────────────
/**
 * The orders of the list: RELEVANCE (best match first, searchProviders; without a search it is
 * UPDATED), UPDATED (most recently updated first) and NAME (by name, case folded as the database's
 * lower() folds it, byte order on both dialects, then by id).
 */
export const PROVIDER_SORTS = ["RELEVANCE", "UPDATED", "NAME"] as const;
export type ProviderSort = (typeof PROVIDER_SORTS)[number];

/** The marker of a NAME cursor (its first element), so that one of another order is refused. */
const BY_NAME = "N";
/** A name is at most 120 characters (provider.rules.ts) and a cursor's text at most 64: it is kept in two halves. */
const NAME_PART = 64;

/** The sort key of NAME: the name folded, in byte order on PostgreSQL too (SQLite's default is binary). */
function nameKeySql(dialect: Dialect, name: Prisma.Sql): Prisma.Sql {
  return dialect === "postgresql" ? Prisma.sql`(lower(${name}) COLLATE "C")` : Prisma.sql`lower(${name})`;
}

export interface ListOptions {
  /** UPDATED (the default) or NAME. */
  sort?: Exclude<ProviderSort, "RELEVANCE">;
  /** A condition the filters cannot express as a `where` (a search's match), ANDed with them. */
  match?: Prisma.Sql;
}

/**
 * One page of the providers list without ranking: newest change first on an `(updatedAt, id)`
 * keyset, or by name on a `(lower(name), id)` one, in one raw statement (through Prisma's
 * `findMany` its client-side work was most of the read). The name order has no index of its own:
 * it sorts the rows passing the filters.
 */
export async function listProviders(
  db: Db,
  filters: readonly Prisma.ProviderWhereInput[],
  limit: number,
  cursor: string | null | undefined,
  options: ListOptions = {},
): Promise<{ items: SummaryRow[]; nextCursor: string | null }> {
  const match = options.match ? Prisma.sql` AND ${options.match}` : Prisma.empty;
  if (options.sort === "NAME") {
    const dialect = dialectIn(db);
    const key = nameKeySql(dialect, Prisma.raw('p."name"'));
    const after = cursor ? decodeCursor(cursor, ["string", "int", "string", "string"] as const) : null;
    if (after && after[0] !== BY_NAME) throw wrongOrderCursor();
    const last = after ? nameKeySql(dialect, Prisma.sql`CAST(${after[2] + after[3]} AS TEXT)`) : null;
    const keyset =
      after && last ? Prisma.sql` AND (${key} > ${last} OR (${key} = ${last} AND p."id" > ${after[1]}))` : Prisma.empty;
    const rows = await queryRows(
      db,
      Prisma.sql`SELECT ${SUMMARY_SQL} FROM "providers" AS p
        WHERE ${whereSql({ AND: [...filters] }, providersTable("p"))}${match}${keyset}
        ORDER BY ${key} ASC, p."id" ASC LIMIT ${limit + 1}`,
    );
    return page(rows.map(summaryRow), limit, (r) => [
      BY_NAME,
      r.id,
      r.name.slice(0, NAME_PART),
      r.name.slice(NAME_PART, 2 * NAME_PART),
    ]);
  }
  const after = decodeCursor(cursor, ["date", "int"] as const);
  const keyset: Prisma.ProviderWhereInput[] = after
    ? [{ OR: [{ updatedAt: { lt: after[0] } }, { updatedAt: after[0], id: { lt: after[1] } }] }]
    : [];
  const walk = dialectIn(db) === "postgresql";
  const rows = await queryRows(
    db,
    Prisma.sql`SELECT ${SUMMARY_SQL} FROM "providers" AS p
      WHERE ${whereSql({ AND: [...filters, ...keyset] }, providersTable("p", walk))}${match}
      ORDER BY p."updatedAt" DESC, p."id" DESC LIMIT ${limit + 1}`,
  );
  return page(rows.map(summaryRow), limit, (r) => [r.updatedAt.toISOString(), r.id]);
}

function wrongOrderCursor() {
  return badInput("cursor was issued under another sort; use the nextCursor of a page in this sort", [
    { path: "cursor", message: "not a cursor of this sort" },
  ]);
}

/** The marker of a change-feed cursor, so that a cursor of the newest-first order is refused there. */
const ASCENDING = 1;

/**
 * One page of the change feed (`updatedSince`, provider.changes.ts): oldest change first,
 * `(updatedAt, id)` keyset, with the same filters and statement shape as the list.
 */
export async function listChanges(
  db: Db,
  filters: readonly Prisma.ProviderWhereInput[],
  limit: number,
  cursor: string | null | undefined,
): Promise<{ items: SummaryRow[]; nextCursor: string | null }> {
  const after = decodeCursor(cursor, ["date", "int", "int"] as const);
  if (after && after[2] !== ASCENDING) {
    throw badInput("cursor is not valid; use the nextCursor of a previous page", [
      { path: "cursor", message: "not a cursor this list issued" },
    ]);
  }
  const keyset: Prisma.ProviderWhereInput[] = after
    ? [{ OR: [{ updatedAt: { gt: after[0] } }, { updatedAt: after[0], id: { gt: after[1] } }] }]
    : [];
  const rows = await queryRows(
    db,
    Prisma.sql`SELECT ${SUMMARY_SQL} FROM "providers" AS p
      WHERE ${whereSql({ AND: [...filters, ...keyset] }, providersTable("p"))}
      ORDER BY p."updatedAt" ASC, p."id" ASC LIMIT ${limit + 1}`,
  );
  return page(rows.map(summaryRow), limit, (r) => [r.updatedAt.toISOString(), r.id, ASCENDING]);
}

// ── The providers list, searched ────────────────────────────────────────────────────────────
/**
 * Search pages use an OFFSET cursor, `[offset, fingerprint]`, not a keyset on the rank: a row's
 * place depends on the other matches (which block it falls in, below), so it moves when any
 * provider is written, and a keyset `(score, id) > last` would then skip or repeat rows. The fingerprint ties a cursor to its search and filters: reused
 * with another search it is a 400, like any cursor the list did not issue.
 *
 * Bounded ranking. Ranking every match made a common word cost O(matches) per page
 * (831 ms at 1,000,000 agents for a word in a fifth of them). Instead the matches that pass the
 * filters are walked newest first (descending id — served by the FTS5 index on SQLite, by the
 * primary key on PostgreSQL) and cut into consecutive BLOCKS of `searchTuning.window` rows (250):
 * block 0 is the newest 250 filtered matches, block 1 the next 250, and so on. The result order is (block, rank, id desc): best match first within each block.
 * A page only ranks the one or two blocks it overlaps, so its cost is bounded by the window plus
 * the offset walked, not by the number of matches. Consequences:
 * - A search with at most `window` filtered matches has one block: its ranking is exact, best match
 *   of all matches first.
 * - A search with more puts first the best matches among the `window` most recently created
 *   matching agents; an older, better match comes later (in its own block), never lost.
 * - The order is a fixed total order of the matches (it does not depend on the page size or the
 *   offset), so with the data unchanged consecutive pages neither skip nor repeat. While providers
 *   are written between two requests a row may move across a page boundary — as before, the
 *   documented price of ranked results.
 */
export interface SearchRequest {
  words: readonly string[];
  /** The filters, as for the Prisma path (listableWhere included); all must hold. */
  filters: readonly Prisma.ProviderWhereInput[];
  /** What else identifies this list (its filter arguments), for the cursor's fingerprint. */
  context: unknown;
  limit: number;
  cursor: string | null | undefined;
}

/**
 * The ranking block size (see above); mutable only so tests and the benchmark can change it.
 * 250 is about as many matches as a common word has in a registry of 1,000 agents, so a page costs
 * the same at 1,000,000 (measured with `npm run bench:search -- --window N`, docs/performance.md): with 1000 a
 * common-word search at 1,000,000 agents took 1.8× as long as at 1,000, with 250 about 1×. The price
 * is that a search with more than 250 matches ranks them 250 at a time, newest first.
 */
export const searchTuning = { window: 250 };

/**
 * How well a row matches, on SQLite: for every word, the weight of each field it starts a word in —
 * code or name 10, labels 5, summary 2 (a description-only match scores 0, below all of them) —
 * summed. bm25() is not used: it reads the whole doclist of every term for its statistics on every
 * query, a cost that grows with the registry. The score reads the candidate row itself (the filters
 * read it anyway). It compares letters as stored, with ASCII case folded; the FTS5 index decides
 * what matches (accents folded too), this only orders the matches.
 */
const SCORED_FIELDS = [
  ["providerCode", 10],
  ["name", 10],
  ["labels", 5],
  ["summary", 2],
] as const;

function scoreSql(words: readonly string[], alias: string): Prisma.Sql {
  const terms = words.flatMap((word) => {
    // A word start: the word after any character that is not a letter or digit (the text is
    // prefixed with a space so that its first word counts). Words hold letters and digits only,
    // so nothing in them is GLOB syntax.
    const pattern = `*[^a-z0-9]${word}*`;
    return SCORED_FIELDS.map(
      ([field, weight]) =>
        Prisma.sql`${Prisma.raw(String(weight))} * ((' ' || lower(${Prisma.raw(`"${alias}"."${field}"`)})) GLOB ${pattern})`,
    );
  });
  return Prisma.join(terms, " + ");
}

// ts_rank_cd weights {D, C, B, A}: description, summary, labels, code and name. ts_rank_cd reads
// only the row's own tsvector, so on PostgreSQL the index's ranking is used as it is.
const TS_WEIGHTS = "{0.05, 0.2, 0.5, 1.0}";

/**
 * One page of provider summaries matching the search and the filters, best match first per block,
 * read in one statement (the page's rows come with the ranking, not in a second query).
 */
export async function searchProviders(
  db: Db,
  request: SearchRequest,
): Promise<{ rows: SummaryRow[]; nextCursor: string | null }> {
  const fingerprint = createHash("sha256")
    .update(JSON.stringify([request.words, request.context]))
    .digest("base64url")
    .slice(0, 16);
  const after = decodeCursor(request.cursor, ["int", "string"] as const);
  if (after && after[1] !== fingerprint) {
    throw badInput("cursor is not valid for this search; use the nextCursor of a previous page", [
      { path: "cursor", message: "not a cursor of this search" },
    ]);
  }
  const offset = after?.[0] ?? 0;
  const filters = whereSql({ AND: [...request.filters] }, providersTable("p"));
  const take = request.limit + 1;
  // The blocks rows offset … offset+limit (the extra one tells whether a next page exists) fall in.
  const window = Math.max(1, Math.floor(searchTuning.window));
  const firstBlock = Math.floor(offset / window);
  const lastBlock = Math.floor((offset + request.limit) / window);
  const skip = firstBlock * window;
  const walk = (lastBlock - firstBlock + 1) * window;
  const within = offset - skip;
  const rows =
    dialectIn(db) === "postgresql"
      ? // As on SQLite, the score is computed in the walk and only the page's rows are read whole.
        await queryRows(
          db,
          Prisma.sql`
          WITH "c" AS MATERIALIZED (
            SELECT p."id", ts_rank_cd(${TS_WEIGHTS}::float4[], p."searchVector", q) AS "score"
            FROM "providers" AS p, to_tsquery('simple', provider_search_fold(${tsQuery(request.words, "all")})) AS q
            WHERE p."searchVector" @@ q AND ${filters}
            ORDER BY p."id" DESC
            LIMIT ${walk} OFFSET ${skip}
          ), "top" AS MATERIALIZED (
            SELECT "id", "block", "score" FROM (
              SELECT "id", "score", (row_number() OVER (ORDER BY "id" DESC) - 1) / CAST(${window} AS INTEGER) AS "block"
              FROM "c"
            ) AS "n"
            ORDER BY "block" ASC, "score" DESC, "id" DESC
            LIMIT ${take} OFFSET ${within}
          )
          SELECT ${SUMMARY_SQL}
          FROM "top" JOIN "providers" AS p ON p."id" = "top"."id"
          ORDER BY "top"."block" ASC, "top"."score" DESC, "top"."id" DESC`,
          // A common word is best walked newest first, a rare one looked up in the index.
          { planEach: true },
        )
      : // The score is computed in the walk itself: OFFSET skips rows before their columns are read.
        await queryRows(
          db,
          Prisma.sql`
          WITH "c" AS MATERIALIZED (
            SELECT "provider_search"."rowid" AS "id", ${scoreSql(request.words, "p")} AS "score"
            FROM "provider_search" JOIN "providers" AS p ON p."id" = "provider_search"."rowid"
            WHERE "provider_search" MATCH ${ftsMatch(request.words, "all")} AND ${filters}
            ORDER BY "provider_search"."rowid" DESC
            LIMIT ${walk} OFFSET ${skip}
          )
          SELECT ${SUMMARY_SQL} FROM (
            SELECT "id", "block", "score" FROM (
              SELECT "id", "score", (row_number() OVER (ORDER BY "id" DESC) - 1) / CAST(${window} AS INTEGER) AS "block"
              FROM "c"
            )
            ORDER BY "block" ASC, "score" DESC, "id" DESC
            LIMIT ${take} OFFSET ${within}
          ) AS "top" JOIN "providers" AS p ON p."id" = "top"."id"
          ORDER BY "top"."block" ASC, "top"."score" DESC, "top"."id" DESC`,
        );
  return {
    rows: rows.slice(0, request.limit).map(summaryRow),
    nextCursor: rows.length > request.limit ? encodeCursor([offset + request.limit, fingerprint]) : null,
  };
}
