/**
 * Key rotation (`npm run keys:rotate`, signing.rotate.cli.ts): a new ES256 and Ed25519 pair signs
 * from then on; the keys that signed until now stay published for the grace period, so the cards
 * they signed keep verifying; keys whose grace period is over are pruned.
 */
import { readFileSync } from "node:fs";
import { generateKeys, parseKeySet, type StoredKey, type StoredKeySet, writeKeyFile } from "./signing.keys.ts";

export interface Rotation {
  /** The set after the rotation: the new keys first, then those in their grace period. */
  set: StoredKeySet;
  /** The kids that sign from now on. */
  newKids: string[];
  /** The kids rotated out now, published until `retiresAt`. */
  retiredKids: string[];
  retiresAt: string;
  /** The kids whose grace period was over, now gone. */
  prunedKids: string[];
}

/** Rotates a key set (pure but for the new keys' randomness). */
export function rotateKeySet(set: StoredKeySet, options: { graceDays: number; now?: Date }): Rotation {
  const now = options.now ?? new Date();
  const retiresAt = new Date(now.getTime() + options.graceDays * 86_400_000).toISOString();
  const fresh = generateKeys(now);
  const kept: StoredKey[] = [];
  const retiredKids: string[] = [];
  const prunedKids: string[] = [];
  for (const key of set.keys) {
    const retiring = key.retiresAt === undefined ? { ...key, retiresAt } : key;
    if (key.retiresAt === undefined) retiredKids.push(key.kid);
    // With no grace period (0 days) the keys rotated out now go at once.
    if (Date.parse(retiring.retiresAt as string) > now.getTime()) kept.push(retiring);
    else if (key.retiresAt !== undefined) prunedKids.push(key.kid);
  }
  return {
    set: { keys: [...fresh, ...kept] },
    newKids: fresh.map((k) => k.kid),
    retiredKids,
    retiresAt,
    prunedKids,
  };
}

/**
 * Rotates the key file in place (written in one step, owner-only); a missing file gets its first
 * keys. Running replicas notice the new file within signing.keys.ts's RECHECK_MS.
 */
export function rotateKeyFile(file: string, options: { graceDays: number; now?: Date }): Rotation {
  let set: StoredKeySet = { keys: [] };
  try {
    set = parseKeySet(readFileSync(file, "utf8"), `SIGNING_KEYS_FILE (${file})`).stored;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== "ENOENT") throw error;
  }
  const rotation = rotateKeySet(set, options);
  writeKeyFile(file, rotation.set);
  return rotation;
}

/** Rotates an inline SIGNING_KEYS value: the operator deploys the answer's set in its place. */
export function rotateInline(value: string, options: { graceDays: number; now?: Date }): Rotation {
  return rotateKeySet(parseKeySet(value, "SIGNING_KEYS").stored, options);
}
