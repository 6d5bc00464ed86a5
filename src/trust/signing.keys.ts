/**
 * The registry's signing keys (ES256 and Ed25519), with which it signs the agent cards of approved
 * agents, and their public half, served at /.well-known/jwks.json.
 *
 * Keys come from SIGNING_KEYS (a private JWK set) or from the key file (SIGNING_KEYS_FILE), which
 * is generated at first start, owner-only. Both have one format: a JWK set whose keys carry `kid`,
 * `alg` and, beside the JWK members, `createdAt` and, once rotated out, `retiresAt`. A key without
 * `retiresAt` signs; one whose `retiresAt` is still ahead is only published, so the cards it signed
 * keep verifying; one past it is dropped. Rotation is signing.rotate.cli.ts.
 *
 * Everything here is synchronous except signing itself, so a bad key set refuses `createApp`.
 */
import {
  createHash,
  createPrivateKey,
  createPublicKey,
  generateKeyPairSync,
  type KeyObject,
  randomBytes,
  sign,
  verify,
} from "node:crypto";
import { chmodSync, linkSync, mkdirSync, readFileSync, renameSync, statSync, unlinkSync, writeFileSync } from "node:fs";
import { basename, dirname, join, resolve } from "node:path";
import { FlattenedSign } from "jose";
import type { Config } from "../config.ts";
import type { AgentCardSignature } from "../interop/agent.card.ts";

export type SigningAlg = "ES256" | "EdDSA";

/** A key as kept in the file or in SIGNING_KEYS: a private JWK plus its dates (RFC 3339). */
export interface StoredKey {
  kty: string;
  crv: string;
  x: string;
  y?: string;
  d: string;
  kid: string;
  alg: SigningAlg;
  use?: "sig";
  createdAt?: string;
  retiresAt?: string;
}

export interface StoredKeySet {
  keys: StoredKey[];
}

/** A public key as /.well-known/jwks.json serves it. */
export interface PublicJwk {
  kty: string;
  crv: string;
  x: string;
  y?: string;
  kid: string;
  alg: SigningAlg;
  use: "sig";
}

export interface KeySet {
  /** One detached JWS per active key (ES256 first), over `payload` (the card's canonical bytes). */
  sign(payload: Uint8Array): Promise<AgentCardSignature[]>;
  /** The public keys of every key not yet retired: the active ones and those in their grace period. */
  jwks(): { keys: PublicJwk[] };
  /** The kids that sign now, in signing order (a change re-signs the cards: card.signature.ts). */
  activeKids(): string[];
}

/** How often a running process looks at the key file's modification time, so a rotation reaches it. */
export const RECHECK_MS = 10_000;

const CURVES: Record<SigningAlg, { kty: string; crv: string }> = {
  ES256: { kty: "EC", crv: "P-256" },
  EdDSA: { kty: "OKP", crv: "Ed25519" },
};

/** The order of a card's signatures: ES256, which every JOSE library verifies, first. */
const ORDER: Record<SigningAlg, number> = { ES256: 0, EdDSA: 1 };

/** A loaded key: what the JWK set said, its private KeyObject and its public JWK. */
interface LoadedKey {
  stored: StoredKey;
  privateKey: KeyObject;
  publicJwk: PublicJwk;
  retiresAt: number | undefined;
}

/** RFC 7638 thumbprint (SHA-256, base64url) of a public EC or OKP key: the kid of a generated key. */
export function jwkThumbprint(jwk: { kty: string; crv: string; x: string; y?: string }): string {
  // The required members only, in lexicographic order, no white space (RFC 7638 §3.2).
  const members =
    jwk.kty === "EC"
      ? JSON.stringify({ crv: jwk.crv, kty: jwk.kty, x: jwk.x, y: jwk.y })
      : JSON.stringify({ crv: jwk.crv, kty: jwk.kty, x: jwk.x });
  return createHash("sha256").update(members).digest("base64url");
}

/** A new ES256 and Ed25519 pair, kids from their thumbprints, created `now`. */
export function generateKeys(now: Date = new Date()): StoredKey[] {
  const made = [
    ["ES256", generateKeyPairSync("ec", { namedCurve: "P-256" }).privateKey],
    ["EdDSA", generateKeyPairSync("ed25519").privateKey],
  ] as const;
  return made.map(([alg, privateKey]) => {
    const jwk = privateKey.export({ format: "jwk" }) as { kty: string; crv: string; x: string; y?: string; d: string };
    return { ...jwk, kid: jwkThumbprint(jwk), alg, use: "sig", createdAt: now.toISOString() };
  });
}

/** Names a key in an error without showing any of its material. */
function nameOf(source: string, index: number, kid: unknown): string {
  return `${source}: key ${index + 1}${typeof kid === "string" ? ` ("${kid}")` : ""}`;
}

function date(source: string, value: unknown, what: string): number | undefined {
  if (value === undefined) return undefined;
  const time = typeof value === "string" ? Date.parse(value) : Number.NaN;
  if (Number.isNaN(time)) throw new Error(`${source}: ${what} must be an RFC 3339 date`);
  return time;
}

/**
 * Reads and checks a key set (the file's text or SIGNING_KEYS). Refuses, with a message that names
 * the key but never its material: anything but private ES256 (P-256) and EdDSA (Ed25519) JWKs with a
 * `kid`, duplicate kids, and a set without a key that signs.
 */
export function parseKeySet(text: string, source: string): { stored: StoredKeySet; loaded: LoadedKey[] } {
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    throw new Error(`${source} is not JSON: it must be a JWK set, {"keys":[…]}`);
  }
  const keys = (parsed as { keys?: unknown } | null)?.keys;
  if (!Array.isArray(keys) || keys.length === 0) {
    throw new Error(`${source} must be a JWK set with at least one key, {"keys":[…]}`);
  }
  const kids = new Set<string>();
  const loaded = keys.map((key: Record<string, unknown>, index): LoadedKey => {
    const name = nameOf(source, index, key?.kid);
    if (typeof key !== "object" || key === null) throw new Error(`${name} is not a JWK`);
    if (typeof key.kid !== "string" || key.kid === "") throw new Error(`${name} needs a "kid"`);
    if (kids.has(key.kid)) throw new Error(`${name}: the kid is used twice`);
    kids.add(key.kid);
    const alg = key.alg as SigningAlg;
    const curve = CURVES[alg];
    if (!Object.hasOwn(CURVES, alg) || !curve) throw new Error(`${name} must have "alg" ES256 or EdDSA`);
    if (key.kty !== curve.kty || key.crv !== curve.crv) {
      throw new Error(`${name}: alg ${alg} needs a ${curve.kty} key on ${curve.crv}`);
    }
    if (typeof key.d !== "string") throw new Error(`${name} must be a private key (with "d")`);
    if (key.use !== undefined && key.use !== "sig") throw new Error(`${name}: "use" must be "sig"`);
    let privateKey: KeyObject;
    try {
      privateKey = createPrivateKey({ key: key as never, format: "jwk" });
    } catch {
      throw new Error(`${name} is not a valid ${alg} private key`);
    }
    // A JWK whose public members do not belong to its private one would sign what nothing verifies.
    const probe = Buffer.from("agent-registry signing key check");
    const digest = alg === "ES256" ? "sha256" : null;
    if (!verify(digest, probe, createPublicKey(privateKey), sign(digest, probe, privateKey))) {
      throw new Error(`${name}: its public members do not match its private key`);
    }
    date(name, key.createdAt, "createdAt");
    const retiresAt = date(name, key.retiresAt, "retiresAt");
    // The public half is derived from the private key, so the JWKS cannot publish a key that did not sign.
    const pub = createPublicKey(privateKey).export({ format: "jwk" }) as {
      kty: string;
      crv: string;
      x: string;
      y?: string;
    };
    const publicJwk: PublicJwk = {
      kty: pub.kty,
      crv: pub.crv,
      x: pub.x,
      ...(pub.y === undefined ? {} : { y: pub.y }),
      kid: key.kid,
      alg,
      use: "sig",
    };
    return { stored: key as unknown as StoredKey, privateKey, publicJwk, retiresAt };
  });
  if (!loaded.some((k) => k.retiresAt === undefined)) {
    throw new Error(`${source} has no active key: at least one key must be without "retiresAt"`);
  }
  return { stored: { keys: loaded.map((k) => k.stored) }, loaded };
}

/** A key set written beside `file` under a temporary name, owner-only (its folder created): the path. */
function writeBeside(file: string, set: StoredKeySet): string {
  mkdirSync(dirname(file), { recursive: true, mode: 0o700 });
  const temporary = join(dirname(file), `.${basename(file)}.${process.pid}.${randomBytes(4).toString("hex")}.tmp`);
  writeFileSync(temporary, `${JSON.stringify(set, null, 2)}\n`, { mode: 0o600, flag: "wx" });
  chmodSync(temporary, 0o600); // whatever the umask
  return temporary;
}

/** Replaces a key file in one step (a rename), so a reader sees the old set or the new one, never half. */
export function writeKeyFile(file: string, set: StoredKeySet): void {
  renameSync(writeBeside(file, set), file);
}

/**
 * The key file's set, generated when there is no file. The new file is linked into place, which
 * fails if another process (a replica, a parallel test) made it first: then that one is read.
 */
function readOrCreate(file: string): string {
  try {
    return readFileSync(file, "utf8");
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== "ENOENT") throw error;
  }
  const temporary = writeBeside(file, { keys: generateKeys() });
  try {
    linkSync(temporary, file);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== "EEXIST") throw error;
  } finally {
    unlinkSync(temporary);
  }
  return readFileSync(file, "utf8");
}

/** What identifies a version of the file: a rotation replaces it (a new inode), an edit changes its time or size. */
function stamp(file: string): string {
  const s = statSync(file);
  return `${s.ino}:${s.mtimeMs}:${s.size}`;
}

function keySetOf(load: () => LoadedKey[], stampOf?: () => string): KeySet {
  let keys = load();
  let version = stampOf?.();
  let checkedAt = Date.now();
  const current = (): LoadedKey[] => {
    const now = Date.now();
    if (stampOf && now - checkedAt >= RECHECK_MS) {
      checkedAt = now;
      // A file that cannot be read or parsed now (an operator mid-edit) leaves the keys as they were.
      try {
        const seen = stampOf();
        if (seen !== version) {
          keys = load();
          version = seen;
        }
      } catch {}
    }
    return keys.filter((k) => k.retiresAt === undefined || k.retiresAt > now);
  };
  const active = () =>
    current()
      .filter((k) => k.retiresAt === undefined)
      .sort((a, b) => ORDER[a.publicJwk.alg] - ORDER[b.publicJwk.alg]);
  return {
    async sign(payload) {
      return Promise.all(
        active().map(async (k) => {
          const jws = await new FlattenedSign(payload)
            .setProtectedHeader({ alg: k.publicJwk.alg, typ: "JOSE", kid: k.publicJwk.kid })
            .sign(k.privateKey);
          return { protected: jws.protected as string, signature: jws.signature };
        }),
      );
    },
    jwks: () => ({ keys: current().map((k) => k.publicJwk) }),
    activeKids: () => active().map((k) => k.publicJwk.kid),
  };
}

/** The default key file of a configuration: in the data folder, which on PostgreSQL is each replica's own. */
function isDefaultFile(config: Config): boolean {
  return resolve(config.trust.signingKeysFile) === resolve("data", "signing-keys.json");
}

const sets = new Map<string, KeySet>();

/**
 * The key set of a configuration, loaded (or generated) once per process per SIGNING_KEYS value or
 * key file. Throws at once, naming the setting, when the keys cannot be used: createApp calls it,
 * so the service refuses to start.
 */
export function signingKeys(config: Config): KeySet {
  const { signingKeys: inline, signingKeysFile } = config.trust;
  if (inline === undefined && config.production && config.databaseUrl.startsWith("postgres") && isDefaultFile(config)) {
    throw new Error(
      "SIGNING_KEYS must be set in production with PostgreSQL: replicas must sign with the same keys, and a key file generated in each replica's data folder would differ (or set SIGNING_KEYS_FILE to a file all replicas share)",
    );
  }
  const memo = inline === undefined ? `file:${resolve(signingKeysFile)}` : `inline:${inline}`;
  let set = sets.get(memo);
  if (!set) {
    set =
      inline === undefined
        ? keySetOf(
            () => parseKeySet(readOrCreate(signingKeysFile), `SIGNING_KEYS_FILE (${signingKeysFile})`).loaded,
            () => stamp(signingKeysFile),
          )
        : keySetOf(() => parseKeySet(inline, "SIGNING_KEYS").loaded);
    sets.set(memo, set);
  }
  return set;
}
