/**
 * The facets' statement: how many providers of the list each value of each facet would answer, in
 * one round trip. The filters are the list's own `where` objects (provider.filters.ts), turned into
 * SQL by the list's whereSql, so a count and the list cannot disagree.
 *
 * Two ways to the same answer. When the filters are columns only (the directory's first page, a
 * type, a tier), `fromCounts` sums the counts the database keeps by triggers (facet_groups and the
 * label and package tables, migrations 20261211000000_facet_counts and 20261211000100_facet_labels):
 * a few hundred rows, whatever the registry's size. Any other filter (search, labels, a package,
 * updatedSince, an agent's own row) is counted from the providers by `facetScan`, which the tests
 * also hold the counts to.
 *
 * The scan: the column facets are counted from one pass over the providers that pass the filters no column
 * facet owns (visibility rule, labels, packages, search, updatedSince): the pass groups them by every
 * facet column at once (a few hundred groups, where the rows are tens of thousands), and each facet
 * then sums those groups under every column filter but its own — the same whereSql, on the groups.
 * The index `providers_facets_idx` holds those columns, so on both dialects the pass reads the index,
 * not the rows (migrations 20261209000000_facets and 20261209000100_facets_index_partial). Labels and
 * packages are counted from their index tables, joined to the providers that pass every filter
 * (packages: all but their own).
 */
import { type Db, dialectIn, queryRows } from "../db/client.ts";
import { Prisma } from "../generated/prisma/client.ts";
import {
  COLUMN_FACETS,
  type ColumnFacet,
  filterWheres,
  type ListFilters,
  type PackageFilter,
} from "./provider.filters.ts";
import { protocolSql, providerMatchSql, providersTable, type SqlTable, whereSql } from "./provider.search.store.ts";

/** The most used labels a facet answers. */
export const TOP_LABELS = 20;

/** The group columns of the pass, as the column filters name them (healthState is the health facet's). */
const GROUP_COLUMNS = [
  "visibility",
  "reviewStage",
  "lifecycle",
  "agentType",
  "trustTier",
  "publisherVerified",
  "healthState",
  "protocol",
] as const;

/** The column each column facet counts, in the pass's groups. */
const FACET_COLUMN: Record<ColumnFacet, (typeof GROUP_COLUMNS)[number]> = {
  agentType: "agentType",
  protocol: "protocol",
  trustTier: "trustTier",
  health: "healthState",
  publisherVerified: "publisherVerified",
  lifecycle: "lifecycle",
  visibility: "visibility",
  reviewStage: "reviewStage",
};

/** A table of rows grouped by these columns, on which the column filters can be read: `protocol` is a column there. */
function countTable(columns: readonly string[]): SqlTable {
  return { alias: "p", columns: new Set(columns), relations: {} };
}

/** The pass's groups (and facet_groups). */
const GROUPS = countTable(GROUP_COLUMNS);

export interface FacetRow {
  facet: string;
  value: string | null;
  count: number;
}

/**
 * Every facet's counts and the list's total (facet `""`), one row per value that has any; values
 * are text (`true`/`false` for publisherVerified), null where a provider has none (no endpoint, not probed).
 */
export async function facetCounts(db: Db, filters: ListFilters): Promise<FacetRow[]> {
  return countable(filters) ? fromCounts(db, filters) : facetScan(db, filters);
}

/**
 * Whether the counts kept by the database answer these filters: columns only — no search, labels,
 * package or updatedSince filter — and a visibility rule on columns (an agent's own row is not one).
 */
export function countable(filters: ListFilters): boolean {
  return (
    filters.words.length === 0 &&
    filters.labels.length === 0 &&
    filters.packages === null &&
    filters.since === null &&
    onColumns(filters.visible)
  );
}

/** Whether a `where` reads these columns alone (by default the group columns). */
function onColumns(where: unknown, columns: readonly string[] = GROUP_COLUMNS): boolean {
  if (where === null || typeof where !== "object") return false;
  return Object.entries(where).every(([key, value]) =>
    key === "AND" || key === "OR" || key === "NOT"
      ? (Array.isArray(value) ? value : [value]).every((w) => onColumns(w, columns))
      : columns.includes(key),
  );
}

/** The column facets facet_labels can answer the labels under. */
const LISTING_FACETS: readonly ColumnFacet[] = ["visibility", "reviewStage", "lifecycle"];
/** The count tables (migrations 20261211000000_facet_counts, 20261211000100_facet_labels) as `p`; '' where a provider has none. */
const LABEL_GROUPS = countTable([...GROUP_COLUMNS, "label"]);
/** facet_labels: the labels by the three columns of the directory's own filters only. */
const LABELS_BY_LISTING = countTable([...LISTING_FACETS, "label"]);
const PACKAGE_GROUPS = countTable([...GROUP_COLUMNS, "facet", "value"]);

/**
 * The facets from the counts the database keeps (facet_groups, facet_label_groups or facet_labels,
 * facet_package_groups): the same parts as the scan's, summed over a few hundred or thousand rows of
 * counts instead of counted from the providers. Rows of 0 are left by the triggers and skipped here.
 */
export async function fromCounts(db: Db, filters: ListFilters): Promise<FacetRow[]> {
  const postgres = dialectIn(db) === "postgresql";
  const columns = (without?: ColumnFacet) =>
    Object.entries(filters.columns)
      .filter(([facet]) => facet !== without)
      .map(([, w]) => w);
  const where = (wheres: Prisma.ProviderWhereInput[], on: SqlTable) => whereSql({ AND: wheres }, on);
  const count = Prisma.raw(`CAST(SUM(p."n") AS INTEGER)`);
  const byLabel = Prisma.raw(postgres ? `p."label" COLLATE "C"` : `p."label"`);
  const verified = Prisma.raw(postgres ? `p."publisherVerified"` : `p."publisherVerified" <> 0`);
  const all = [filters.visible, ...columns()];
  // The labels of the directory's own filters come from the few hundred rows of facet_labels.
  const listing =
    onColumns(filters.visible, LISTING_FACETS) &&
    Object.keys(filters.columns).every((facet) => LISTING_FACETS.includes(facet as ColumnFacet));
  const labels = Prisma.raw(listing ? `"facet_labels"` : `"facet_label_groups"`);
  const labelTable = listing ? LABELS_BY_LISTING : LABEL_GROUPS;
  const rows = await queryRows(
    db,
    Prisma.sql`WITH "groups" AS MATERIALIZED (
        SELECT p."visibility", p."reviewStage", p."lifecycle", p."agentType", p."trustTier", p."publisherVerified",
          NULLIF(p."healthState", '') AS "healthState", NULLIF(p."protocol", '') AS "protocol", p."n"
        FROM "facet_groups" AS p WHERE p."n" > 0 AND ${where([filters.visible], GROUPS)}
      )
      SELECT '' AS "facet", NULL AS "value", ${count} AS "count" FROM "groups" AS p WHERE ${where(columns(), GROUPS)}
      ${Prisma.join(
        COLUMN_FACETS.map((facet) => {
          const column = Prisma.raw(`p."${FACET_COLUMN[facet]}"`);
          const value =
            facet === "publisherVerified" ? Prisma.sql`CASE WHEN ${verified} THEN 'true' ELSE 'false' END` : column;
          return Prisma.sql` UNION ALL SELECT ${Prisma.raw(`'${facet}'`)} AS "facet", ${value} AS "value", ${count} AS "count"
            FROM "groups" AS p WHERE ${where(columns(facet), GROUPS)} GROUP BY ${column}`;
        }),
        "",
      )}
      UNION ALL SELECT * FROM (SELECT 'labels' AS "facet", p."label" AS "value", ${count} AS "count"
        FROM ${labels} AS p WHERE ${where(all, labelTable)}
        GROUP BY p."label" HAVING SUM(p."n") > 0 ORDER BY 3 DESC, ${byLabel} ASC LIMIT ${TOP_LABELS}) AS "top"
      UNION ALL SELECT p."facet" AS "facet", p."value" AS "value", ${count} AS "count"
        FROM "facet_package_groups" AS p WHERE ${where(all, PACKAGE_GROUPS)}
        GROUP BY p."facet", p."value" HAVING SUM(p."n") > 0`,
  );
  return rows.map((r) => ({
    facet: String(r.facet),
    value: r.value === null ? null : String(r.value),
    count: Number(r.count),
  }));
}

/** The facets counted from the providers that pass the filters: any filters, the oracle of the counts. */
export async function facetScan(db: Db, filters: ListFilters): Promise<FacetRow[]> {
  const postgres = dialectIn(db) === "postgresql";
  const table = providersTable("p");
  const search = filters.words.length > 0 ? [providerMatchSql(dialectIn(db), "p", filters.words, "all")] : [];
  // `p."id" > 0` holds for every row: it is the condition of providers_facets_idx, partial so that the
  // list's own pages never take it (its migration says why), stated as a literal so a plan may use it.
  const where = (wheres: Prisma.ProviderWhereInput[], on: SqlTable = table) =>
    Prisma.join(
      [whereSql({ AND: wheres }, on), ...(on === table ? [Prisma.raw(`p."id" > 0`), ...search] : [])],
      " AND ",
    );
  const ownsNoColumn = filterWheres(filters, { columns: true });
  const columns = (without?: ColumnFacet) =>
    Object.entries(filters.columns)
      .filter(([facet]) => facet !== without)
      .map(([, w]) => w);
  const count = (sql: string) => Prisma.raw(`CAST(${sql} AS INTEGER)`);
  // Labels compare byte by byte on both dialects, so ties are broken alike.
  const byLabel = Prisma.raw(postgres ? `l."label" COLLATE "C"` : `l."label"`);
  const verified = Prisma.raw(postgres ? `p."publisherVerified"` : `p."publisherVerified" <> 0`);

  const parts: Prisma.Sql[] = [
    Prisma.sql`SELECT '' AS "facet", NULL AS "value", ${count(`SUM(p."n")`)} AS "count" FROM "groups" AS p WHERE ${where(columns(), GROUPS)}`,
    ...COLUMN_FACETS.map((facet) => {
      const column = Prisma.raw(`p."${FACET_COLUMN[facet]}"`);
      // A boolean is answered as text, as every other value: SQLite keeps 0/1, PostgreSQL a boolean.
      const value =
        facet === "publisherVerified" ? Prisma.sql`CASE WHEN ${verified} THEN 'true' ELSE 'false' END` : column;
      return Prisma.sql`SELECT ${Prisma.raw(`'${facet}'`)} AS "facet", ${value} AS "value", ${count(`SUM(p."n")`)} AS "count"
        FROM "groups" AS p WHERE ${where(columns(facet), GROUPS)} GROUP BY ${column}`;
    }),
    Prisma.sql`SELECT * FROM (SELECT 'labels' AS "facet", l."label" AS "value", ${count("COUNT(*)")} AS "count"
      FROM "provider_labels" AS l JOIN "providers" AS p ON p."id" = l."providerId"
      WHERE ${where(filterWheres(filters))}
      GROUP BY l."label" ORDER BY 3 DESC, ${byLabel} ASC LIMIT ${TOP_LABELS}) AS "top"`,
    packageFacet(filters, "registryType", "packageRegistry", where),
    packageFacet(filters, "transport", "transport", where),
  ];
  const rows = await queryRows(
    db,
    Prisma.sql`WITH "groups" AS MATERIALIZED (
        SELECT p."visibility", p."reviewStage", p."lifecycle", p."agentType", p."trustTier",
          p."publisherVerified", p."healthState", ${protocolSql("p")} AS "protocol", COUNT(*) AS "n"
        FROM "providers" AS p WHERE ${where(ownsNoColumn)}
        GROUP BY p."visibility", p."reviewStage", p."lifecycle", p."agentType", p."trustTier",
          p."publisherVerified", p."healthState", ${protocolSql("p")}
      )
      ${Prisma.join(parts, " UNION ALL ")}`,
  );
  return rows.map((r) => ({
    facet: String(r.facet),
    value: r.value === null ? null : String(r.value),
    count: Number(r.count),
  }));
}

/**
 * A package facet: providers with a package of each registry (or transport) among those passing every
 * filter but the package one; with the other half of that filter given, the same package must hold it.
 */
function packageFacet(
  filters: ListFilters,
  column: keyof PackageFilter,
  facet: string,
  where: (wheres: Prisma.ProviderWhereInput[]) => Prisma.Sql,
): Prisma.Sql {
  const other = column === "registryType" ? "transport" : "registryType";
  const wanted = filters.packages?.[other];
  const same = wanted ? Prisma.sql` AND i.${Prisma.raw(`"${other}"`)} = ${wanted}` : Prisma.empty;
  const grouped = Prisma.raw(`i."${column}"`);
  return Prisma.sql`SELECT ${Prisma.raw(`'${facet}'`)} AS "facet", ${grouped} AS "value", ${Prisma.raw(`CAST(COUNT(DISTINCT i."providerId") AS INTEGER)`)} AS "count"
    FROM "provider_packages" AS i JOIN "providers" AS p ON p."id" = i."providerId"
    WHERE ${where(filterWheres(filters, { packages: true }))}${same} GROUP BY ${grouped}`;
}
