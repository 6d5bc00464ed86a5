/** The contract between the seed and a database writer, and what the SQLite and PostgreSQL writers share. */
import { isMcpServer, releaseOf } from "../../src/interop/mcp.registry.rules.ts";
import { OWNER_FIELDS, type Profile } from "../../src/providers/provider.rules.ts";
import type { SyntheticAgent } from "./agent.ts";

/** The tables the seed writes; their plain (non-unique) indexes may be rebuilt around a big load. */
export const TABLES = ["providers", "provider_labels", "provider_versions", "reviews", "review_events"];

export interface Writer {
  /**
   * Drops the plain indexes of the seeded tables (kept: primary keys and unique indexes), to be
   * built again in one pass by `restoreIndexes` — much faster than growing them row by row.
   */
  dropIndexes(): Promise<void>;
  restoreIndexes(): Promise<void>;
  /** The first free provider and review ids: the seed reserves the next `count` of each. */
  nextIds(): Promise<{ provider: number; review: number }>;
  write(batch: SyntheticAgent[]): Promise<void>;
  /** The search index merged (SQLite), statistics for the planner, sequences, checkpoint. */
  finish(): Promise<void>;
  close(): Promise<void>;
}

/** The owner fields in the order a version snapshot lists them. */
export const SNAPSHOT_FIELDS = [...OWNER_FIELDS];

/**
 * The release an agent's version 1 is in the MCP registry's API (`mcp_server_versions`, which the
 * service's own writes keep), when the agent is an MCP server; null when it is not.
 */
export function mcpReleaseOf(a: SyntheticAgent): string | null {
  const profile = { endpoint: null, packages: [], releaseVersion: null, ...a.profile } as unknown as Profile;
  return isMcpServer(profile) ? releaseOf(profile, 1) : null;
}
