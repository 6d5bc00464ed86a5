/**
 * The MCP registry's read API (tests/interop/mcp-registry/openapi.yaml) as pure rules: which release
 * a profile version is, the list's cursor and page size, a server's status, and the shape of an
 * entry (`ServerResponse`). No database, no network.
 */
import { badInput } from "../errors.ts";
import type { Profile } from "../providers/provider.rules.ts";
import { derivedReleaseVersion } from "./server.json.ts";

/** The `_meta` key under which the official MCP registry says what it knows of an entry. */
export const OFFICIAL_META = "io.modelcontextprotocol.registry/official";

/**
 * The `_meta` key under which this registry says what it knows of an entry, for the subregistries
 * that read it: `<its namespace>/registry`, in its own reverse-DNS namespace (that of the names it
 * derives), beside the official key, as the MCP registry has subregistries annotate.
 */
export function registryMetaKey(namespace: string): string {
  return `${namespace}/registry`;
}

/** The official registry's page size unless one is asked for (at most 100, as every list here). */
export const MCP_DEFAULT_LIMIT = 30;

/** A server name as server.json allows it: one slash, no `:` (so a cursor splits at its first `:`). */
const SERVER_NAME = /^[a-zA-Z0-9.-]+\/[a-zA-Z0-9._-]+$/;
/** A name (≤ 200) and a release (≤ 255), a colon between: nothing longer was issued. */
const MAX_CURSOR_LENGTH = 456;

export type McpStatus = "active" | "deprecated" | "deleted";

/** Whether a profile is an MCP server: it has an MCP endpoint, or a package a client starts. */
export function isMcpServer(profile: Pick<Profile, "endpoint" | "packages">): boolean {
  return profile.endpoint?.protocol === "MCP" || (profile.packages?.length ?? 0) > 0;
}

/** The release a profile version describes: its own `releaseVersion`, else the profile version as `N.0.0`. */
export function releaseOf(profile: Pick<Profile, "releaseVersion">, profileVersion: number): string {
  return profile.releaseVersion ?? derivedReleaseVersion(profileVersion);
}

/** Where a page ends: its last entry's name and version. */
export interface ServerKey {
  name: string;
  version: string;
}

/**
 * The cursor after an entry, as the official registry writes it: `name:version`. Clients treat it as
 * opaque; tools written against the official registry read it no more than this one does.
 */
export function encodeServerCursor(key: ServerKey): string {
  return `${key.name}:${key.version}`;
}

/** The entry a cursor names; a 400 naming `cursor` for anything this list did not issue. */
export function decodeServerCursor(cursor: string | null | undefined): ServerKey | null {
  if (cursor === null || cursor === undefined) return null;
  const colon = cursor.indexOf(":");
  const name = cursor.slice(0, colon);
  const version = cursor.slice(colon + 1);
  if (colon < 0 || cursor.length > MAX_CURSOR_LENGTH || !SERVER_NAME.test(name) || version === "") {
    throw badInput("cursor is not valid; use the nextCursor of a previous page", [
      { path: "cursor", message: "not a cursor this list issued" },
    ]);
  }
  return { name, version };
}

/**
 * Where the names the registry derives (`<namespace>/<providerCode>`) stand against a cursor's
 * name: all after it, all at or before it, or those after `code`. They share one prefix, so among
 * them the order of names is the order of codes.
 */
export function derivedAfter(prefix: string, name: string): { all: true } | { none: true } | { code: string } {
  if (name.startsWith(prefix)) return { code: name.slice(prefix.length) };
  return name < prefix ? { all: true } : { none: true };
}

/** What the registry knows of an entry beside its document. */
export interface EntryFacts {
  lifecycle: string;
  lifecycleMessage: string | null;
  isLatest: boolean;
  publishedAt: Date;
  updatedAt: Date;
  statusChangedAt: Date;
}

/** What this registry knows of an entry's provider: its review, its publisher, its health. */
export interface RegistryFacts {
  trustTier: string;
  reviewStage: string;
  publisherVerified: boolean;
  /**
   * The confirmed health state; null while nothing is probed (or probing is off). `UNKNOWN` (not
   * checked yet, or a check that could not tell) is not shown either: the annotation says only what is known.
   */
  healthState: string | null;
}

/** A provider's lifecycle as the MCP registry's status: a retired server is a deleted one. */
export function statusOf(lifecycle: string): McpStatus {
  if (lifecycle === "RETIRED") return "deleted";
  return lifecycle === "DEPRECATED" ? "deprecated" : "active";
}

/**
 * An entry of the MCP registry's API (`ServerResponse`): the server.json, the official `_meta`, and
 * this registry's own under `registry.key` (`healthState` only when a state is known).
 *
 * A release mirrored from an upstream keeps the upstream entry's `_meta` (publisher-provided, other
 * registries' annotations) as it was; the two keys this registry writes are its own, since the
 * official one's times and `isLatest` are what paging this registry by `updated_since` relies on, and
 * the upstream's official block goes under this registry's key as `upstream`.
 */
export function serverResponse(
  server: Record<string, unknown>,
  facts: EntryFacts,
  registry: { key: string; facts: RegistryFacts; upstreamMeta?: Record<string, unknown> | null },
): Record<string, unknown> {
  const own = registry.facts;
  const { [OFFICIAL_META]: upstreamOfficial, [registry.key]: _theirs, ...kept } = registry.upstreamMeta ?? {};
  return {
    server,
    _meta: {
      ...kept,
      [OFFICIAL_META]: {
        status: statusOf(facts.lifecycle),
        ...(facts.lifecycleMessage ? { statusMessage: facts.lifecycleMessage } : {}),
        statusChangedAt: facts.statusChangedAt.toISOString(),
        publishedAt: facts.publishedAt.toISOString(),
        updatedAt: facts.updatedAt.toISOString(),
        isLatest: facts.isLatest,
      },
      [registry.key]: {
        trustTier: own.trustTier,
        reviewStage: own.reviewStage,
        publisherVerified: own.publisherVerified,
        ...(own.healthState !== null && own.healthState !== "UNKNOWN" ? { healthState: own.healthState } : {}),
        ...(upstreamOfficial !== undefined ? { upstream: upstreamOfficial } : {}),
      },
    },
  };
}

/**
 * A path segment as the official registry reads it: decoded once by the router, and once more by
 * the handler, so a name sent encoded twice (`io.x%252Fy`) is found as well. Names and releases
 * hold no `%` of their own, so the second decoding changes nothing else.
 */
export function decodedAgain(segment: string): string {
  if (!segment.includes("%")) return segment;
  try {
    return decodeURIComponent(segment);
  } catch {
    return segment;
  }
}
