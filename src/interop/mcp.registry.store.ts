/**
 * The MCP registry's read API in SQL: `mcp_server_versions`, one row per release of an MCP server,
 * which the provider writes keep in their own transaction (as `provider_packages`), and the reads
 * of the three routes. A list is one statement that walks the rows by (name, version), never the
 * profile versions: only the snapshots of the page's entries are read.
 *
 * A server's name is its declared `serverName`, else `<the registry's namespace>/<providerCode>`,
 * and the namespace comes from the request's base URL. So the rows keep the declared name (null
 * when none) and the code, each with an index in (name, version) order, and a page merges the two
 * walks: the derived names share one prefix, so among them the order of names is that of codes.
 * PostgreSQL compares them byte by byte (`COLLATE "C"`), as SQLite does, whatever the database's
 * collation: the order, the cursor and the indexes agree.
 */
import { type Dialect, dialectIn, type Queryable, queryRows } from "../db/client.ts";
import { asJson, pickColumns, rowReader } from "../db/model.ts";
import { Prisma } from "../generated/prisma/client.ts";
import type { Profile } from "../providers/provider.rules.ts";
import {
  derivedAfter,
  type EntryFacts,
  isMcpServer,
  type RegistryFacts,
  releaseOf,
  type ServerKey,
} from "./mcp.registry.rules.ts";

// ── Writes ──────────────────────────────────────────────────────────────────────────────────────

/** What a write left a provider as, for its MCP releases. */
export interface ReleaseWrite {
  providerId: number;
  providerCode: string;
  /** The profile as the write left it, and whether the provider was an MCP server before it. */
  profile: Pick<Profile, "serverName" | "releaseVersion" | "endpoint" | "packages">;
  wasMcpServer: boolean;
  /** The profile version the write made. */
  version: number;
  now: Date;
  /**
   * The write changed what every entry of the server shows, or whether it is listed (its name, its
   * visibility, its lifecycle): each entry is stamped updated, so `updated_since` readers see it.
   */
  all: boolean;
  /** The lifecycle changed: each entry's status changed now. */
  statusChanged?: boolean;
  /** The write made the provider: it has no entries yet to change. */
  created?: boolean;
}

/**
 * Records the release a provider's new profile version describes: a new release is a new row, a
 * release seen before is updated (its newest profile version, its updatedAt); `isLatest` moves to
 * it. A profile that is no MCP server makes no release, and leaves no row latest: its entries are
 * not listed until it is one again.
 */
export async function recordRelease(tx: Queryable, write: ReleaseWrite): Promise<void> {
  const { providerId, now } = write;
  const isMcp = isMcpServer(write.profile);
  if (!isMcp && !write.wasMcpServer) return;
  const serverName = write.profile.serverName ?? null;
  // Becoming an MCP server, or ceasing to be one, lists or hides every entry.
  if (!write.created && (write.all || write.statusChanged || isMcp !== write.wasMcpServer)) {
    const status = write.statusChanged ? Prisma.sql`, "statusChangedAt" = ${now}` : Prisma.empty;
    await queryRows(
      tx,
      Prisma.sql`UPDATE "mcp_server_versions" SET "serverName" = ${serverName}, "updatedAt" = ${now}${status}
        WHERE "providerId" = ${providerId}`,
    );
  }
  const release = isMcp ? releaseOf(write.profile, write.version) : null;
  if (!write.created) {
    await queryRows(
      tx,
      Prisma.sql`UPDATE "mcp_server_versions" SET "isLatest" = ${false}
        WHERE "providerId" = ${providerId} AND "isLatest" = ${true}`,
    );
  }
  if (release === null) return;
  await queryRows(
    tx,
    Prisma.sql`INSERT INTO "mcp_server_versions"
        ("providerId", "version", "serverName", "providerCode", "profileVersion", "isLatest", "publishedAt", "updatedAt", "statusChangedAt")
      VALUES (${providerId}, ${release}, ${serverName}, ${write.providerCode}, ${write.version}, ${true}, ${now}, ${now}, ${now})
      ON CONFLICT ("providerId", "version") DO UPDATE SET "profileVersion" = excluded."profileVersion",
        "isLatest" = excluded."isLatest", "updatedAt" = excluded."updatedAt", "serverName" = excluded."serverName"`,
  );
}

/**
 * Stamps every entry of a provider updated: a review move changed whether it is listed (an approval,
 * a suspension, a reinstatement), so `updated_since` readers must see it come or go.
 */
export async function touchReleases(tx: Queryable, providerId: number, now: Date): Promise<void> {
  await queryRows(
    tx,
    Prisma.sql`UPDATE "mcp_server_versions" SET "updatedAt" = ${now} WHERE "providerId" = ${providerId}`,
  );
}

// ── Reads ───────────────────────────────────────────────────────────────────────────────────────

const RELEASE = pickColumns("McpServerVersion", [
  "providerId",
  "version",
  "serverName",
  "providerCode",
  "profileVersion",
  "isLatest",
  "publishedAt",
  "updatedAt",
  "statusChangedAt",
]);
/** Of the provider, joined anyway: its lifecycle (the official `_meta`) and what this registry's own says. */
const PROVIDER = pickColumns("Provider", [
  "lifecycle",
  "lifecycleMessage",
  "trustTier",
  "reviewStage",
  "publisherVerified",
  "healthState",
]);
type ReleaseColumns = {
  providerId: number;
  version: string;
  serverName: string | null;
  providerCode: string;
  profileVersion: number;
  isLatest: boolean;
  publishedAt: Date;
  updatedAt: Date;
  statusChangedAt: Date;
  lifecycle: string;
  lifecycleMessage: string | null;
  trustTier: string;
  reviewStage: string;
  publisherVerified: boolean;
  healthState: string | null;
};
const releaseColumns = rowReader<ReleaseColumns>([...RELEASE, ...PROVIDER]);

/**
 * An entry as the routes answer it: the row, what its provider is (lifecycle, review, publisher,
 * health), the snapshot of its newest profile version, and, for the release a mirror source made
 * from an upstream entry, that entry's `_meta`.
 */
export type ReleaseRow = ReleaseColumns &
  EntryFacts &
  RegistryFacts & { snapshot: Profile; upstreamMeta: Record<string, unknown> | null };

function releaseRow(raw: Record<string, unknown>): ReleaseRow {
  return Object.assign(releaseColumns(raw), {
    snapshot: asJson(raw.snapshot) as unknown as Profile,
    upstreamMeta: (asJson(raw.upstreamMeta) as Record<string, unknown> | null) ?? null,
  });
}

/** The mirror entry of a release (src/mirror), when a source made it from that upstream version. */
const UPSTREAM_META = (release: string) =>
  Prisma.raw(
    `LEFT JOIN "mirror_entries" AS m ON m."providerId" = ${release}."providerId" AND m."upstreamVersion" = ${release}."version"`,
  );

const SELECTED = Prisma.raw(
  [...RELEASE.map((c) => `r."${c.name}"`), ...PROVIDER.map((c) => `p."${c.name}"`)].join(", "),
);

/** Text compared byte by byte on PostgreSQL, as SQLite compares it. */
function bytewise(dialect: Dialect, expression: string): Prisma.Sql {
  return Prisma.raw(dialect === "postgresql" ? `${expression} COLLATE "C"` : expression);
}

/** Where `needle` (lower case) occurs in the lower-cased `expression`. */
function contains(dialect: Dialect, expression: Prisma.Sql, needle: string): Prisma.Sql {
  return dialect === "postgresql"
    ? Prisma.sql`strpos(lower(${expression}), ${needle}) > 0`
    : Prisma.sql`instr(lower(${expression}), ${needle}) > 0`;
}

/**
 * A walk's rows in its index's order, each joined to its provider. SQLite's planner, without
 * statistics, would start from the providers instead (their directory index holds both equalities)
 * and sort every public server for each page: the walk's table and index are fixed there. PostgreSQL
 * plans each execution with its statistics (`planEach`).
 */
function walkFrom(dialect: Dialect, index: string): Prisma.Sql {
  return Prisma.raw(
    dialect === "postgresql"
      ? `"mcp_server_versions" AS r JOIN "providers" AS p`
      : `"mcp_server_versions" AS r INDEXED BY "${index}" CROSS JOIN "providers" AS p`,
  );
}

/** A provider whose current profile is an MCP server: one of its releases is the latest. */
const IS_MCP_SERVER = Prisma.sql`EXISTS (SELECT 1 FROM "mcp_server_versions" AS l
  WHERE l."providerId" = r."providerId" AND l."isLatest" = ${true})`;

export interface ListQuery {
  /** `<the registry's namespace>/`: what derived names start with. */
  prefix: string;
  /** The entry the page starts after. */
  after: ServerKey | null;
  limit: number;
  /** Lower case; a substring of the name. */
  search: string | null;
  updatedSince: Date | null;
  /** `latest`, or one release. */
  version: string | null;
  includeDeleted: boolean;
}

/**
 * A page of the list: the entries of approved, public MCP servers in (name, version) order, after
 * the cursor, with every filter given. Each of the two walks (declared names, derived names) reads
 * at most a page in index order; the database merges them and reads the page's snapshots.
 */
export async function listReleases(db: Queryable, q: ListQuery): Promise<(ReleaseRow & { name: string })[]> {
  const dialect = dialectIn(db);
  const shared = [
    Prisma.sql`p."reviewStage" = 'APPROVED' AND p."visibility" = 'PUBLIC'`,
    IS_MCP_SERVER,
    ...(q.includeDeleted ? [] : [Prisma.sql`p."lifecycle" <> 'RETIRED'`]),
    ...(q.version === "latest" ? [Prisma.sql`r."isLatest" = ${true}`] : []),
    ...(q.version !== null && q.version !== "latest" ? [Prisma.sql`r."version" = ${q.version}`] : []),
    ...(q.updatedSince ? [Prisma.sql`r."updatedAt" > ${q.updatedSince}`] : []),
  ];
  const version = bytewise(dialect, `r."version"`);

  // Declared names, in (serverName, version) order.
  const declaredName = bytewise(dialect, `r."serverName"`);
  const declared = [
    Prisma.sql`r."serverName" IS NOT NULL`,
    ...(q.after ? [Prisma.sql`(${declaredName}, ${version}) > (${q.after.name}, ${q.after.version})`] : []),
    ...(q.search ? [contains(dialect, Prisma.sql`r."serverName"`, q.search)] : []),
  ];

  // Derived names, in (providerCode, version) order, which is their names' order.
  const derivedName = Prisma.sql`CAST(${q.prefix} AS TEXT) || r."providerCode"`;
  const code = bytewise(dialect, `r."providerCode"`);
  const where = q.after ? derivedAfter(q.prefix, q.after.name) : { all: true as const };
  const derived = [
    Prisma.sql`r."serverName" IS NULL`,
    ...("none" in where ? [Prisma.sql`1 = 0`] : []),
    ...("code" in where && q.after ? [Prisma.sql`(${code}, ${version}) > (${where.code}, ${q.after.version})`] : []),
    ...(q.search ? [contains(dialect, derivedName, q.search)] : []),
  ];

  const walk = (name: Prisma.Sql, index: string, own: Prisma.Sql[], order: Prisma.Sql) => Prisma.sql`
    SELECT * FROM (SELECT ${SELECTED}, ${name} AS "name"
      FROM ${walkFrom(dialect, index)} ON p."id" = r."providerId"
      WHERE ${Prisma.join([...own, ...shared], " AND ")}
      ORDER BY ${order}, ${version} LIMIT ${q.limit}) AS w`;
  // The merge orders the union from outside it: PostgreSQL orders a UNION by plain column names only.
  const rows = await queryRows(
    db,
    Prisma.sql`
    SELECT page.*, s."snapshot", m."upstreamMeta" FROM (
      SELECT * FROM (
        ${walk(Prisma.sql`r."serverName"`, "mcp_server_versions_serverName_version_key", declared, declaredName)}
        UNION ALL
        ${walk(derivedName, "mcp_server_versions_derived_idx", derived, code)}
      ) AS u ORDER BY ${bytewise(dialect, `u."name"`)}, ${bytewise(dialect, `u."version"`)} LIMIT ${q.limit}
    ) AS page
    JOIN "provider_versions" AS s ON s."providerId" = page."providerId" AND s."version" = page."profileVersion"
    ${UPSTREAM_META("page")}
    ORDER BY ${bytewise(dialect, `page."name"`)}, ${bytewise(dialect, `page."version"`)}`,
    { planEach: true },
  );
  return rows.map((raw) => Object.assign(releaseRow(raw), { name: String(raw.name) }));
}

/**
 * The entries of the server of a name (one release, the latest, or all), newest first, when it is
 * an approved MCP server that is not private: its declared name, else a derived one (`code`, the
 * name without the registry's prefix). Should a declared name and a derived one coincide, the
 * declared one is the server's.
 */
export async function serverReleases(
  db: Queryable,
  q: { name: string; code: string | null; version: string | null },
): Promise<ReleaseRow[]> {
  // Compared as the indexes are (byte by byte), so that PostgreSQL finds them there.
  const dialect = dialectIn(db);
  const declared = Prisma.sql`${bytewise(dialect, `r."serverName"`)} = ${q.name}`;
  const byName = q.code
    ? Prisma.sql`(${declared} OR (r."serverName" IS NULL AND ${bytewise(dialect, `r."providerCode"`)} = ${q.code}))`
    : declared;
  const version =
    q.version === null
      ? Prisma.empty
      : q.version === "latest"
        ? Prisma.sql`AND r."isLatest" = ${true}`
        : Prisma.sql`AND r."version" = ${q.version}`;
  const rows = await queryRows(
    db,
    Prisma.sql`SELECT ${SELECTED}, s."snapshot", m."upstreamMeta"
      FROM "mcp_server_versions" AS r JOIN "providers" AS p ON p."id" = r."providerId"
      JOIN "provider_versions" AS s ON s."providerId" = r."providerId" AND s."version" = r."profileVersion"
      ${UPSTREAM_META("r")}
      WHERE ${byName} ${version}
        AND p."reviewStage" = 'APPROVED' AND p."visibility" IN ('PUBLIC', 'UNLISTED') AND ${IS_MCP_SERVER}
      ORDER BY CASE WHEN r."serverName" IS NULL THEN 1 ELSE 0 END, r."publishedAt" DESC, r."profileVersion" DESC`,
  );
  const found = rows.map(releaseRow);
  const server = found[0]?.providerId;
  return found.filter((row) => row.providerId === server);
}
