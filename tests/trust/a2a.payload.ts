/**
 * The payload of an A2A card's signatures as a consumer or a publisher computes it from the
 * specification (§8.4.1), with `canonicalize` alone — written here, not imported from src, so the
 * tests check the service against the specification rather than against itself.
 */
import canonicalize from "canonicalize";

/** Default values removed: empty lists and objects (recursively); `false` is kept. */
function removeDefaults(value: unknown): unknown {
  if (Array.isArray(value)) {
    const kept = value.map(removeDefaults).filter((v) => v !== undefined);
    return kept.length > 0 ? kept : undefined;
  }
  if (typeof value === "object" && value !== null) {
    const kept = Object.entries(value)
      .map(([k, v]) => [k, removeDefaults(v)])
      .filter(([, v]) => v !== undefined);
    return kept.length > 0 ? Object.fromEntries(kept) : undefined;
  }
  return value;
}

/** JCS of the card without `signatures` and its default values. */
export function signedPayload(card: Record<string, unknown>): string {
  const { signatures: _, ...content } = card;
  return canonicalize(removeDefaults(content)) as string;
}
