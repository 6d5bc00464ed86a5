/**
 * The MCP registry's read API (the generic API of modelcontextprotocol/registry, its OpenAPI in
 * tests/interop/mcp-registry/openapi.yaml) as three operations of the one schema: the server list,
 * a server's versions, one version. REST serves them under /v0.1 (src/http/rest/rest.routes.ts),
 * with the official registry's paths and parameter names, so MCP clients and subregistry tools
 * point at this registry unchanged; their answers are JSON because `_meta`'s keys are no GraphQL names.
 *
 * The servers are the approved, public providers that are MCP servers (an MCP endpoint or a
 * package); by name also the unlisted ones, as profiles are by code. Their entries are kept in
 * `mcp_server_versions` by the writes (mcp.registry.store.ts); the rules are in mcp.registry.rules.ts.
 */
import { builder, type Context, publicBase } from "../builder.ts";
import { badInput, notFound } from "../errors.ts";
import { MAX_LIMIT, pageSize } from "../pagination.ts";
import {
  decodedAgain,
  decodeServerCursor,
  encodeServerCursor,
  MCP_DEFAULT_LIMIT,
  registryMetaKey,
  serverResponse,
} from "./mcp.registry.rules.ts";
import { listReleases, type ReleaseRow, serverReleases } from "./mcp.registry.store.ts";
import { registryNamespace, serverJsonOf } from "./server.json.ts";

type Json = Record<string, unknown>;

/**
 * What every entry of one request is written with: the base URL, the prefix of the names derived
 * from it, and the `_meta` key of this registry's own annotation, both of the one namespace, computed
 * once; and whether health is shown (not when probing is off, as everywhere else).
 */
interface EntryView {
  base: string;
  prefix: string;
  metaKey: string;
  health: boolean;
}

function viewOf(ctx: Context): EntryView {
  const base = publicBase(ctx);
  const namespace = registryNamespace(base);
  return { base, prefix: `${namespace}/`, metaKey: registryMetaKey(namespace), health: ctx.config.health.enabled };
}

/**
 * An entry: the server.json of the newest profile version of its release, under the server's
 * current name, with what the registry knows of it.
 */
function entryOf(row: ReleaseRow, view: EntryView): Json {
  const profile = Object.assign({}, row.snapshot, {
    // Snapshots written before packages existed have none.
    packages: row.snapshot.packages ?? [],
    serverName: row.serverName,
    providerCode: row.providerCode,
    version: row.profileVersion,
  });
  return serverResponse(serverJsonOf(profile, view.base), row, {
    key: view.metaKey,
    facts: {
      trustTier: row.trustTier,
      reviewStage: row.reviewStage,
      publisherVerified: row.publisherVerified,
      healthState: view.health ? row.healthState : null,
    },
    upstreamMeta: row.upstreamMeta,
  });
}

/** The entries of the server a (path-encoded) name names, one release or all; 404 when there is none to show. */
async function entriesOf(
  ctx: Context,
  args: { serverName: string; version?: string | null; include_deleted?: boolean | null },
): Promise<{ rows: ReleaseRow[]; view: EntryView }> {
  const view = viewOf(ctx);
  const name = decodedAgain(args.serverName);
  const version = args.version === undefined || args.version === null ? null : decodedAgain(args.version);
  const rows = await serverReleases(ctx.db, {
    name,
    code: name.startsWith(view.prefix) ? name.slice(view.prefix.length) : null,
    version,
  });
  // A retired server is deleted: found only when deleted entries are asked for, as the official registry does.
  const shown = args.include_deleted ? rows : rows.filter((row) => row.lifecycle !== "RETIRED");
  if (shown.length === 0) throw notFound("Server not found");
  return { rows: shown, view };
}

const LIST_DELETED =
  "Include deleted (retired) servers (default false; always true with updated_since, and false together with it is a 400)";
const INCLUDE_DELETED = "Find a deleted (retired) server too (default false)";
const SERVER_NAME = "The server's name, percent-encoded in a path (`io.github.owner%2Fweather`)";

builder.queryFields((t) => ({
  mcpServers: t.field({
    type: "JSON",
    description:
      "The MCP registry's server list (GET /v0.1/servers, `ServerList`): one entry per version of each approved, public MCP server, in (name, version) order, paged with `metadata.nextCursor`.",
    args: {
      cursor: t.arg.string({ description: "The metadata.nextCursor of the previous page (opaque)" }),
      limit: t.arg.int({ description: `Page size, 1–${MAX_LIMIT} (default ${MCP_DEFAULT_LIMIT})` }),
      search: t.arg.string({ description: "A part of the server's name, case ignored" }),
      updated_since: t.arg({
        type: "DateTime",
        description: "Only entries updated after this instant (RFC 3339); deleted ones included",
      }),
      version: t.arg.string({ description: "`latest` for each server's latest version only, or one exact version" }),
      include_deleted: t.arg.boolean({ description: LIST_DELETED }),
    },
    resolve: async (_root, args, ctx) => {
      const limit = pageSize(args.limit, MCP_DEFAULT_LIMIT);
      const after = decodeServerCursor(args.cursor);
      const since = args.updated_since ?? null;
      // Incremental sync must learn of deletions, so it always sees them (as the official registry).
      if (since && args.include_deleted === false) {
        throw badInput("include_deleted cannot be false with updated_since: a sync must see deleted servers", [
          { path: "include_deleted", message: "must not be false when updated_since is given" },
        ]);
      }
      const view = viewOf(ctx);
      const rows = await listReleases(ctx.db, {
        prefix: view.prefix,
        after,
        limit,
        search: args.search ? args.search.toLowerCase() : null,
        updatedSince: since,
        version: args.version || null,
        includeDeleted: since !== null || args.include_deleted === true,
      });
      const last = rows[rows.length - 1];
      // Whenever the page is full, as the official registry: the page after it may be empty.
      const nextCursor = rows.length === limit && last ? encodeServerCursor(last) : undefined;
      return {
        servers: rows.map((row) => entryOf(row, view)),
        metadata: { ...(nextCursor ? { nextCursor } : {}), count: rows.length },
      };
    },
  }),

  mcpServerVersions: t.field({
    type: "JSON",
    nullable: true,
    description:
      "Every version of one MCP server (GET /v0.1/servers/{serverName}/versions, `ServerList`), newest first; null, with a NOT_FOUND error, when there is no such server to show.",
    args: {
      serverName: t.arg.string({ required: true, description: SERVER_NAME }),
      include_deleted: t.arg.boolean({ description: INCLUDE_DELETED }),
    },
    resolve: async (_root, args, ctx) => {
      const { rows, view } = await entriesOf(ctx, args);
      return { servers: rows.map((row) => entryOf(row, view)), metadata: { count: rows.length } };
    },
  }),

  mcpServerVersion: t.field({
    type: "JSON",
    nullable: true,
    description:
      "One version of an MCP server (GET /v0.1/servers/{serverName}/versions/{version}, `ServerResponse`), `latest` for its latest; null, with a NOT_FOUND error, when there is none to show.",
    args: {
      serverName: t.arg.string({ required: true, description: SERVER_NAME }),
      version: t.arg.string({
        required: true,
        description: "The version, percent-encoded in a path (`1.0.0%2B20130313144700`), or `latest`",
      }),
      include_deleted: t.arg.boolean({ description: INCLUDE_DELETED }),
    },
    resolve: async (_root, args, ctx) => {
      const { rows, view } = await entriesOf(ctx, args);
      return entryOf(rows[0] as ReleaseRow, view);
    },
  }),
}));
