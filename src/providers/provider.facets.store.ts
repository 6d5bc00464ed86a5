/**
 * The facets' statement: how many providers of the list each value of each facet would answer, in
 * one round trip. The filters are the list's own `where` objects (provider.filters.ts), turned into
 * SQL by the list's whereSql, so a count and the list cannot disagree.
 *
 * The column facets are counted from one pass over the providers that pass the filters no column
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

/** The pass's groups as a table the column filters can be read on: `protocol` is a column there. */
const GROUPS: SqlTable = { alias: "p", columns: new Set(GROUP_COLUMNS), relations: {} };

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
