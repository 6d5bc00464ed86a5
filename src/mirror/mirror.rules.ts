/**
 * The mirror's rules, pure: what a source is (validated as the API and MIRROR_SOURCES give it), which
 * upstream entries its filter takes, what an MCP registry entry becomes (through the server.json
 * import) and what another registry's provider and events become, the provider code an upstream name
 * gets, which fields an upstream change touches, and when a failed source is tried again. No
 * database, no network.
 */
import { createHash } from "node:crypto";
import { applyPatch, type Operation } from "rfc6902";
import { z } from "zod";
import type { FieldError } from "../errors.ts";
import {
  inDirectory,
  PROVIDER_EVENT_KINDS,
  type ProviderState,
  type PublicSnapshot,
  publicSnapshot,
} from "../events/event.rules.ts";
import { mapDocument } from "../interop/import.ts";
import { OFFICIAL_META } from "../interop/mcp.registry.rules.ts";
import {
  deriveProviderCode,
  type Intake,
  OWNER_FIELDS,
  type OwnerField,
  PROVIDER_CODE_PATTERN,
  TRUST_TIERS,
  type Validated,
  validateIntake,
} from "../providers/provider.rules.ts";

export const MIRROR_KINDS = ["MCP_REGISTRY", "AGENT_REGISTRY"] as const;
export type MirrorKind = (typeof MIRROR_KINDS)[number];
export const MIRROR_POLICIES = ["REVIEW", "TRUSTED"] as const;
export type MirrorPolicy = (typeof MIRROR_POLICIES)[number];
/** Which entries of an MCP registry to take: any, those with remotes, or those with packages. */
export const MIRROR_ONLY = ["ANY", "REMOTES", "PACKAGES"] as const;
export const MIRROR_STATES = ["IDLE", "SYNCING", "FAILED"] as const;

/** The expected rhythm of a subregistry's pull (the MCP registry's aggregators guide: hourly). */
export const DEFAULT_INTERVAL_SECONDS = 3600;
const MIN_INTERVAL_SECONDS = 60;
const MAX_PATTERNS = 50;
/** The last errors and skipped entries a source keeps to show. */
export const KEPT_ERRORS = 10;
export const KEPT_SKIPS = 50;

export interface MirrorFilter {
  /** Server-name patterns (`*` any run of characters); none: every name. */
  include: string[];
  exclude: string[];
  /** Package registry types (`NPM`, `PYPI`, …) an entry must ship one of; none: any. */
  registryTypes: string[];
  only: (typeof MIRROR_ONLY)[number];
}

export interface SourceInput {
  url: string;
  kind: MirrorKind;
  filter: MirrorFilter;
  policy: MirrorPolicy;
  trustTier: (typeof TRUST_TIERS)[number] | null;
  intervalSeconds: number;
  contactEmail: string;
  /**
   * Sent as `Authorization: Bearer <credential>` to the upstream (an API key of a registry whose
   * reads need one, an MCP registry's token): a string sets or replaces it, null clears it, absent
   * (an update that does not name it) leaves it as it is.
   */
  credential?: string | null;
}

/** The longest credential taken: a long JWT fits, a header no upstream would accept does not. */
export const MAX_CREDENTIAL_LENGTH = 4096;

/**
 * A credential is one header value's token: visible ASCII without spaces, so no CR or LF can split
 * the request, and nothing the header could not carry. Its messages never quote it.
 */
const credentialSchema = z
  .string()
  .min(1, "a credential is not empty (null clears it)")
  .max(MAX_CREDENTIAL_LENGTH, `at most ${MAX_CREDENTIAL_LENGTH} characters`)
  .regex(/^[\x21-\x7e]+$/, "visible ASCII characters only: no spaces, line breaks or control characters")
  .nullable();

const pattern = z
  .string()
  .min(1)
  .max(200)
  .regex(/^[a-zA-Z0-9.*_/-]+$/, "letters, digits, . _ - / and * only");

const filterSchema = z
  .object({
    include: z.array(pattern).max(MAX_PATTERNS).default([]),
    exclude: z.array(pattern).max(MAX_PATTERNS).default([]),
    registryTypes: z
      .array(z.string().transform((s) => s.toUpperCase()))
      .max(10)
      .default([]),
    only: z.enum(MIRROR_ONLY).default("ANY"),
  })
  .strict();

const sourceSchema = z
  .object({
    url: z
      .string()
      .max(500)
      .url()
      .refine((u) => u.startsWith("https://"), "an https: URL (the registry fetches through its outbound rules)")
      .transform((u) => u.replace(/\/+$/, "")),
    kind: z.enum(MIRROR_KINDS).default("MCP_REGISTRY"),
    filter: filterSchema.default({ include: [], exclude: [], registryTypes: [], only: "ANY" }),
    policy: z.enum(MIRROR_POLICIES).default("REVIEW"),
    trustTier: z.enum(TRUST_TIERS).nullable().default(null),
    intervalSeconds: z
      .number()
      .int()
      .min(MIN_INTERVAL_SECONDS)
      .max(7 * 86_400)
      .default(DEFAULT_INTERVAL_SECONDS),
    contactEmail: z.string().email().max(254).optional(),
  })
  .strict();

function issues(error: z.ZodError): FieldError[] {
  return error.issues.map((i) => ({ path: i.path.join(".") || "(body)", message: i.message }));
}

/**
 * A source as created or updated: defaults filled, a TRUSTED source naming its tier (and a REVIEW
 * one none, since its reviewers set it). `contactEmail` defaults to `mirror@<the source's host>`.
 */
export function validateSource(input: Record<string, unknown>): Validated<SourceInput> {
  // The credential is apart: its null means "clear it", where the other fields' null means "the default".
  const { credential: given, ...rest } = input;
  const clean = Object.fromEntries(Object.entries(rest).filter(([, v]) => v !== undefined && v !== null));
  const parsed = sourceSchema.safeParse(clean);
  const credential = given === undefined ? undefined : credentialSchema.safeParse(given);
  if (!parsed.success || credential?.success === false) {
    return {
      ok: false,
      errors: [
        ...(parsed.success ? [] : issues(parsed.error)),
        ...(credential?.success === false
          ? credential.error.issues.slice(0, 1).map((i) => ({ path: "credential", message: i.message }))
          : []),
      ],
    };
  }
  const value = parsed.data;
  if (value.policy === "TRUSTED" && value.trustTier === null) {
    return { ok: false, errors: [{ path: "trustTier", message: "a TRUSTED source names the tier its agents get" }] };
  }
  if (value.policy === "REVIEW" && value.trustTier !== null) {
    return { ok: false, errors: [{ path: "trustTier", message: "only a TRUSTED source names a tier" }] };
  }
  if (value.kind === "AGENT_REGISTRY" && (value.filter.registryTypes.length > 0 || value.filter.only !== "ANY")) {
    return { ok: false, errors: [{ path: "filter", message: "an AGENT_REGISTRY source filters by name only" }] };
  }
  return {
    ok: true,
    value: {
      ...value,
      contactEmail: value.contactEmail ?? `mirror@${new URL(value.url).hostname}`,
      ...(credential && { credential: credential.data }),
    },
  };
}

/** MIRROR_SOURCES: a JSON list of sources, or URLs of MCP registries separated by commas. */
export function sourcesOfEnv(text: string | undefined): Record<string, unknown>[] {
  const trimmed = text?.trim() ?? "";
  if (trimmed === "") return [];
  if (trimmed.startsWith("[")) {
    const list = JSON.parse(trimmed) as unknown;
    if (!Array.isArray(list) || list.some((s) => typeof s !== "object" || s === null)) {
      throw new Error("MIRROR_SOURCES must be a JSON list of sources, or URLs separated by commas");
    }
    return list as Record<string, unknown>[];
  }
  return trimmed
    .split(",")
    .map((url) => url.trim())
    .filter(Boolean)
    .map((url) => ({ url }));
}

function globOf(p: string): RegExp {
  return new RegExp(`^${p.replace(/[.+?^${}()|[\]\\/]/g, "\\$&").replaceAll("*", ".*")}$`, "i");
}

/** Whether a name passes the filter's patterns: included (or no includes), and not excluded. */
function nameWanted(filter: MirrorFilter, name: string): boolean {
  if (filter.include.length > 0 && !filter.include.some((p) => globOf(p).test(name))) return false;
  return !filter.exclude.some((p) => globOf(p).test(name));
}

/** Why the filter leaves an MCP server out, or null when it takes it. */
export function filteredOut(filter: MirrorFilter, server: Record<string, unknown>): string | null {
  const name = typeof server.name === "string" ? server.name : "";
  if (!nameWanted(filter, name)) return "not in the source's name filter";
  const remotes = Array.isArray(server.remotes) ? server.remotes : [];
  const packages = Array.isArray(server.packages) ? (server.packages as Record<string, unknown>[]) : [];
  if (filter.only === "REMOTES" && remotes.length === 0) return "has no remotes (the source takes remotes only)";
  if (filter.only === "PACKAGES" && packages.length === 0) return "has no packages (the source takes packages only)";
  if (filter.registryTypes.length > 0) {
    const types = packages.map((p) => String(p.registryType ?? "").toUpperCase());
    if (!types.some((t) => filter.registryTypes.includes(t))) {
      return `ships no package of ${filter.registryTypes.join(", ")}`;
    }
  }
  return null;
}

const hash8 = (text: string) => createHash("sha256").update(text).digest("hex").slice(0, 8);

/**
 * The provider code of an upstream name: the name's words joined by hyphens
 * (`io.github.acme/weather` → `io-github-acme-weather`), cut to fit. A name whose code is taken by
 * another gets `-` and 8 hex digits of its name's SHA-256: the same name always gets the same code.
 */
export function codeOfName(name: string, taken = false): string {
  const slug = deriveProviderCode(name);
  const whole = slug.length <= 63 && !taken && slug.replace(/-/g, "").length > 0;
  if (whole && PROVIDER_CODE_PATTERN.test(slug)) return slug;
  return `${slug.slice(0, 54).replace(/-+$/, "")}-${hash8(name)}`;
}

/** The fields a mirror writes from upstream: what the import maps, never what curators set. */
export const MIRRORED_FIELDS: readonly OwnerField[] = OWNER_FIELDS.filter(
  (f) => f !== "contactEmail" && f !== "labels" && f !== "visibility",
);

export interface McpEntry {
  name: string;
  version: string | null;
  status: "active" | "deprecated" | "deleted";
  statusMessage: string | null;
  updatedAt: string | null;
  isLatest: boolean;
  meta: Record<string, unknown> | null;
}

/** What an MCP registry's list entry says of itself; null when it is not one (no server object or name). */
export function readMcpEntry(item: unknown): McpEntry | null {
  if (typeof item !== "object" || item === null) return null;
  const { server, _meta } = item as { server?: unknown; _meta?: unknown };
  if (typeof server !== "object" || server === null) return null;
  const s = server as Record<string, unknown>;
  if (typeof s.name !== "string" || s.name === "") return null;
  const meta = typeof _meta === "object" && _meta !== null ? (_meta as Record<string, unknown>) : null;
  const official = (meta?.[OFFICIAL_META] ?? {}) as Record<string, unknown>;
  const status = official.status === "deprecated" || official.status === "deleted" ? official.status : "active";
  return {
    name: s.name,
    version: typeof s.version === "string" ? s.version : null,
    status,
    statusMessage: typeof official.statusMessage === "string" ? official.statusMessage : null,
    updatedAt: typeof official.updatedAt === "string" ? official.updatedAt : null,
    // An upstream that says nothing of it lists one version a name.
    isLatest: official.isLatest !== false,
    meta,
  };
}

/** An upstream entry as a mirror writes it; `unmapped` names (JSON Pointers) what the import could not map. */
export type Mapped =
  | { ok: true; fields: Record<string, unknown>; intake?: Intake; unmapped: string[] }
  | { ok: false; reason: string };

/**
 * An MCP server.json as the fields a mirror writes, through the same import as `importProvider`:
 * valid as an intake, or the reason it is skipped (its first problems, in plain words).
 */
export function mapMcpServer(server: unknown, contactEmail: string): Mapped {
  const mapping = mapDocument("mcp", server);
  const problems = mapping.errors.map((e) => `${e.path}: ${e.message}`);
  if (problems.length === 0) {
    const intake = validateIntake({ ...mapping.input, contactEmail });
    if (intake.ok) {
      const fields = Object.fromEntries(MIRRORED_FIELDS.map((f) => [f, intake.value[f] ?? null]));
      return { ok: true, fields, intake: intake.value, unmapped: mapping.unmapped };
    }
    problems.push(...intake.errors.map((e) => `${e.path}: ${e.message}`));
  }
  return { ok: false, reason: `not a valid server.json: ${problems.slice(0, 3).join("; ")}` };
}

/** The mirrored fields an upstream change touched: those that differ from the upstream's last. */
export function changedUpstream(before: Record<string, unknown> | null, after: Record<string, unknown>): string[] {
  return Object.keys(after).filter((f) => JSON.stringify(before?.[f] ?? null) !== JSON.stringify(after[f] ?? null));
}

/**
 * The PATCH that writes those fields whole: a section (an object the PATCH merges member by member)
 * gets a null for every member the upstream no longer has, so what the upstream dropped goes too.
 */
export function wholePatch(
  current: Record<string, unknown>,
  wanted: Record<string, unknown>,
  fields: readonly string[],
): Record<string, unknown> {
  const patch: Record<string, unknown> = {};
  for (const f of fields) {
    const now = current[f];
    const next = wanted[f] ?? null;
    const section = (v: unknown) => typeof v === "object" && v !== null && !Array.isArray(v);
    if (section(now) && section(next) && (f === "endpoint" || f === "policy")) {
      const members: Record<string, unknown> = { ...(next as object) };
      for (const key of Object.keys(now as object)) if (!(key in members)) members[key] = null;
      patch[f] = members;
    } else patch[f] = next;
  }
  return patch;
}

/** When a source that failed `failures` times in a row is tried again: 30 s doubling, at most its interval. */
export function retryDelaySeconds(failures: number, intervalSeconds: number): number {
  return Math.min(intervalSeconds, 30 * 2 ** Math.min(Math.max(failures - 1, 0), 16));
}

/** The lifecycle an upstream status asks for, with its message. */
export function lifecycleOfStatus(
  status: string,
  message: string | null,
): { state: "ACTIVE" | "DEPRECATED" | "RETIRED"; message: string | null } {
  if (status === "deleted" || status === "retired" || status === "withdrawn") {
    return { state: "RETIRED", message: message ?? "removed from its source registry" };
  }
  if (status === "deprecated") return { state: "DEPRECATED", message: message ?? "deprecated by its source registry" };
  return { state: "ACTIVE", message: null };
}

/** An event of another registry of this kind, as its `/api/v1/events` answers it. */
export interface PeerEvent {
  seq: number;
  kind: string;
  providerCode: string;
  version: number | null;
  patch: unknown[];
  stateHash: string;
}

/** What a peer's event list item says of itself; null when it is not a provider event. */
export function readPeerEvent(item: unknown): PeerEvent | null {
  if (typeof item !== "object" || item === null) return null;
  const e = item as Record<string, unknown>;
  if (!Number.isSafeInteger(e.seq) || !(PROVIDER_EVENT_KINDS as readonly unknown[]).includes(e.kind)) return null;
  if (typeof e.providerCode !== "string" || typeof e.stateHash !== "string" || !Array.isArray(e.patch)) return null;
  return {
    seq: e.seq as number,
    kind: e.kind as string,
    providerCode: e.providerCode,
    version: Number.isSafeInteger(e.version) ? (e.version as number) : null,
    patch: e.patch,
    stateHash: e.stateHash,
  };
}

/** A peer's profile (as anyone may read it) as its public snapshot: what its events' hashes are of. */
export function snapshotOfProfile(profile: Record<string, unknown>): PublicSnapshot {
  return publicSnapshot(profile as unknown as ProviderState);
}

/** A snapshot with an event's patch applied, or null when the patch does not apply to it. */
export function patched(snapshot: PublicSnapshot, patch: unknown[]): PublicSnapshot | null {
  const copy = structuredClone(snapshot);
  try {
    const results = applyPatch(copy, patch as Operation[]);
    return results.every((r) => r === null) ? copy : null;
  } catch {
    return null;
  }
}

/**
 * A peer's provider as the status a mirrored provider follows: out of its directory (rejected,
 * suspended, made private) is "withdrawn", which retires the mirrored one as a deletion does.
 */
export function statusOfSnapshot(snapshot: PublicSnapshot): { status: string; message: string | null } {
  if (!inDirectory(snapshot)) return { status: "withdrawn", message: null };
  return {
    status: String(snapshot.lifecycle).toLowerCase(),
    message: (snapshot.lifecycleMessage as string | null) ?? null,
  };
}

/** A peer's provider as an intake of this registry: its mirrored fields, through the same rules. */
export function mapPeerProvider(snapshot: PublicSnapshot, contactEmail: string): Mapped {
  const fields = Object.fromEntries(MIRRORED_FIELDS.map((f) => [f, snapshot[f] ?? null]));
  const input = Object.fromEntries(Object.entries(fields).filter(([, v]) => v !== null));
  const intake = validateIntake({ ...input, visibility: "PUBLIC", contactEmail });
  if (intake.ok) return { ok: true, fields, intake: intake.value, unmapped: [] };
  const problems = intake.errors.slice(0, 3).map((e) => `${e.path}: ${e.message}`);
  return { ok: false, reason: `not a valid profile here: ${problems.join("; ")}` };
}

/**
 * Where a run over a peer stands: following its event log, or listing its directory (after a first
 * sync, a hash that did not match, or a 410), with the seq its log had before the listing began and
 * when the listing began (entries not seen since are looked up one by one at its end).
 */
export type PeerRun = { phase: "follow" } | { phase: "list"; head: number | null; since: Date };

export function encodePeerRun(run: PeerRun): string {
  return run.phase === "follow" ? "follow" : `list:${run.head ?? ""}:${run.since.toISOString()}`;
}

export function decodePeerRun(text: string): PeerRun {
  const list = /^list:(\d*):(.+)$/.exec(text);
  if (!list) return { phase: "follow" };
  return { phase: "list", head: list[1] ? Number(list[1]) : null, since: new Date(list[2] as string) };
}
