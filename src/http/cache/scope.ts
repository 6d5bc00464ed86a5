/**
 * Which kept answers a committed change can make untrue. Most changes empty the whole cache (the
 * generation moves), but a change made outside a request to a provider that is in no list — one a
 * mirror's sync brings in for review, or whose health moved — can change only the answers that
 * name that provider by its code: anonymous lists, facets and the MCP registry's pages hold the
 * public directory only (API.md §2). Such a change forgets those answers and keeps the rest, so
 * reads stay cached through a long sync.
 */
import { type FieldNode, Kind, type ValueNode } from "graphql";
import type { FeedNote } from "../../feed/feed.outbox.ts";

/** Root fields whose anonymous answers hold the public directory only. */
const DIRECTORY_FIELDS = new Set(["providers", "providerFacets", "mcpServers"]);
/** Root fields that read one provider by its `providerCode` argument. */
const BY_CODE_FIELDS = new Set(["provider", "providerVersions", "providerVersion", "agentCard"]);

/**
 * The provider codes whose unlisted changes make an answer of these root fields untrue: none for the
 * directory's reads (only a listed change touches them, and that empties everything), the code of a
 * by-code read; null when any change may (a field not known here, a code not given as a string —
 * the MCP registry's reads by server name, which an approved unlisted provider answers).
 */
export function dependsOn(
  fields: readonly FieldNode[],
  variables: Record<string, unknown> | undefined,
): string[] | null {
  const codes: string[] = [];
  for (const field of fields) {
    const name = field.name.value;
    if (DIRECTORY_FIELDS.has(name)) continue;
    if (!BY_CODE_FIELDS.has(name)) return null;
    const code = stringOf(field.arguments?.find((a) => a.name.value === "providerCode")?.value, variables);
    if (code === null) return null;
    codes.push(code);
  }
  return codes;
}

function stringOf(value: ValueNode | undefined, variables: Record<string, unknown> | undefined): string | null {
  if (value?.kind === Kind.STRING) return value.value;
  if (value?.kind === Kind.VARIABLE) {
    const given = variables?.[value.name.value];
    return typeof given === "string" ? given : null;
  }
  return null;
}

/**
 * The codes of the providers whose by-code answers these notes change, when that is all they
 * change; null when they may change any answer. A change reaches further than its provider's own
 * answers when the provider is (or was) in the directory, or when it may change whose
 * `predecessors` it is among: its successor, visibility or review stage moved (a creation, from
 * nothing, only by naming a successor). Tokens revoked are treated as reaching anything.
 */
export function touchedBy(notes: readonly FeedNote[]): string[] | null {
  const codes = new Set<string>();
  for (const note of notes) {
    if (note.kind !== "APPENDED") return null;
    for (const event of note.events) {
      if (event.listed) return null;
      const ops = event.patch as { op: string; path: string; value?: unknown }[];
      const reaching =
        event.kind === "PROVIDER_CREATED"
          ? ops.some((op) => op.path === "/successorCode" && op.value != null)
          : ops.some(
              (op) => op.path === "" || REACHING.some((path) => op.path === path || op.path.startsWith(`${path}/`)),
            );
      if (reaching) return null;
      if (event.providerCode !== null) codes.add(event.providerCode);
    }
  }
  return [...codes];
}

/** Parts of a provider's public snapshot that decide who sees it, and whose predecessor it is. */
const REACHING = ["/successorCode", "/visibility", "/reviewStage"];
