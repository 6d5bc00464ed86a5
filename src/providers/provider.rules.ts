/**
 * What a provider profile may hold, as pure functions: the enumerations, validation and
 * normalisation of intake and PATCH bodies, the derived provider code, the version snapshot and
 * the list of changed fields. No database, no GraphQL.
 */
import { z } from "zod";
import type { FieldError } from "../errors.ts";
import { noDuplicate as noDuplicateIn, packagesSchema, variables, versionProblem } from "./package.rules.ts";
import {
  AGENT_TYPES,
  AUTH_SCHEMES,
  ENDPOINT_TRANSPORTS,
  HUMAN_OVERSIGHT,
  MODEL_ROLES,
  PROTOCOLS,
  ROLE_KINDS,
  TOOL_KINDS,
  TOOL_SCOPES,
  VISIBILITIES,
} from "./provider.enums.ts";

export {
  AGENT_TYPES,
  AUTH_SCHEMES,
  ENDPOINT_TRANSPORTS,
  HUMAN_OVERSIGHT,
  MODEL_ROLES,
  PROTOCOLS,
  REVIEW_STAGES,
  ROLE_KINDS,
  TOOL_KINDS,
  TOOL_SCOPES,
  TRUST_TIERS,
  VISIBILITIES,
} from "./provider.enums.ts";

export const PROVIDER_CODE_PATTERN = /^[a-z0-9](?:[a-z0-9-]{1,61}[a-z0-9])$/;
/** Codes that are a route of their own (`POST /api/v1/providers/import`, `GET …/facets`), so never a provider's. */
export const RESERVED_PROVIDER_CODES: ReadonlySet<string> = new Set(["import", "facets"]);
const LABEL_PATTERN = /^[a-z0-9._-]{1,40}$/;
/** At most this many labels on a profile, and in one list filter. */
export const MAX_LABELS = 20;
const MEDIA_TYPE_PATTERN = /^[a-z0-9][a-z0-9!#$&^_.+-]{0,63}\/[a-z0-9*][a-z0-9!#$&^_.+*-]{0,126}$/i;
const HANDLE_PATTERN = /^@?[A-Za-z0-9][A-Za-z0-9._-]{0,63}$/;
const LOOPBACK_HOSTS = new Set(["localhost", "[::1]"]);

/** The fields an owner may set, in the order they appear in a snapshot. */
export const OWNER_FIELDS = [
  "name",
  "summary",
  "description",
  "homepageUrl",
  "serverName",
  "releaseVersion",
  "repository",
  "labels",
  "agentType",
  "visibility",
  "contactEmail",
  "capabilities",
  "models",
  "tools",
  "endpoint",
  "packages",
  "policy",
  "roles",
] as const;
export type OwnerField = (typeof OWNER_FIELDS)[number];

/** Fields of a provider a caller may read but never set (named in the 400 for a PATCH that tries). */
export const READ_ONLY_FIELDS = [
  "providerCode",
  "trustTier",
  "reviewStage",
  "version",
  "tokens",
  "reviewTimeline",
  "createdAt",
  "updatedAt",
] as const;

const text = (max: number) =>
  z.string().trim().min(1, "must not be empty").max(max, `must be at most ${max} characters`);
const optionalText = (max: number) =>
  z
    .string()
    .trim()
    .max(max, `must be at most ${max} characters`)
    .nullish()
    .transform((v) => (v ? v : null));

/**
 * The scheme, then `//` and an authority, as written: the URL parser also reads `https:host`,
 * `https:/host` and `https:\\host` as https://host, forms other clients read differently.
 */
const URL_START = /^https?:\/\/[^/\\?#]/i;
const URL_UNSAFE = /[\s\\\p{Cc}]/u;

function isAllowedUrl(value: string): boolean {
  if (!URL_START.test(value) || URL_UNSAFE.test(value)) return false;
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    return false;
  }
  if (url.username || url.password) return false;
  if (url.protocol === "https:") return true;
  return url.protocol === "http:" && (LOOPBACK_HOSTS.has(url.hostname) || /^127\.\d+\.\d+\.\d+$/.test(url.hostname));
}
const httpsUrl = z
  .string()
  .trim()
  .max(2048, "must be at most 2048 characters")
  .refine(isAllowedUrl, "must be an absolute https: URL (http: only for localhost or loopback)");
const optionalUrl = httpsUrl.nullish().transform((v) => v ?? null);

/** Keeps the first of equal items, in order. */
function unique<T>(items: T[]): T[] {
  return [...new Set(items)];
}
function noDuplicate<T>(items: T[], key: (item: T) => string, ctx: z.RefinementCtx, what: string) {
  const seen = new Set<string>();
  items.forEach((item, index) => {
    const k = key(item);
    if (seen.has(k)) ctx.addIssue({ code: "custom", path: [index, what], message: `duplicate ${what} "${k}"` });
    seen.add(k);
  });
}

const labels = z
  .array(z.string())
  .max(MAX_LABELS, `at most ${MAX_LABELS} labels`)
  .transform((list) => unique(list.map((l) => l.trim().toLowerCase())))
  .superRefine((list, ctx) => {
    list.forEach((label, index) => {
      if (!LABEL_PATTERN.test(label)) {
        ctx.addIssue({ code: "custom", path: [index], message: "must be 1–40 characters of a-z 0-9 . _ -" });
      }
    });
  });

const words = (maxItems: number, maxLength: number) =>
  z
    .array(text(maxLength))
    .max(maxItems, `at most ${maxItems} items`)
    .nullish()
    .transform((v) => unique(v ?? []));
const mediaTypes = z
  .array(z.string().trim().regex(MEDIA_TYPE_PATTERN, "must be a media type such as text/plain"))
  .max(20, "at most 20 media types")
  .nullish()
  .transform((v) => unique((v ?? []).map((m) => m.toLowerCase())));

const capability = z
  .object({
    key: z
      .string()
      .trim()
      .regex(/^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$/, "must be 1–64 characters of letters, digits . _ -"),
    name: text(120),
    description: optionalText(2000),
    tags: words(20, 40),
    inputModes: mediaTypes,
    outputModes: mediaTypes,
  })
  .strict();

const model = z
  .object({
    vendor: text(80),
    model: text(120),
    role: z.enum(MODEL_ROLES),
    contextWindow: z
      .number()
      .int()
      .positive()
      .max(100_000_000)
      .nullish()
      .transform((v) => v ?? null),
  })
  .strict();

const tool = z
  .object({
    name: text(120),
    kind: z.enum(TOOL_KINDS),
    description: optionalText(2000),
    scopes: z
      .array(z.enum(TOOL_SCOPES))
      .nullish()
      .transform((v) => unique(v ?? [])),
  })
  .strict();

/** The endpoint's members, without the rules that tie them together (a PATCH's part of it has them partial). */
const endpointMembers = z
  .object({
    url: httpsUrl,
    protocol: z.enum(PROTOCOLS),
    authScheme: z.enum(AUTH_SCHEMES),
    healthUrl: optionalUrl,
    transport: z
      .enum(ENDPOINT_TRANSPORTS)
      .nullish()
      .transform((v) => v ?? null),
    headers: variables("headers"),
    variables: variables("variables"),
  })
  .strict();

const endpoint = endpointMembers.superRefine((e, ctx) => {
  if (e.transport && e.protocol !== "MCP") {
    ctx.addIssue({ code: "custom", path: ["transport"], message: "is only for an MCP endpoint" });
  }
  noDuplicateIn(e.headers, (v) => v.name.toLowerCase(), ctx, ["headers"], "name", "header");
  noDuplicateIn(e.variables, (v) => v.name, ctx, ["variables"], "name", "variable");
  // A {name} in the URL is a value the client fills in: it must say which (of a URL at all).
  if (!isAllowedUrl(e.url)) return;
  const declared = new Set(e.variables.map((v) => v.name));
  for (const [, name] of e.url.matchAll(/\{([^{}]*)\}/g)) {
    if (!declared.has(name as string)) {
      ctx.addIssue({ code: "custom", path: ["url"], message: `{${name}} names none of the endpoint's variables` });
    }
  }
});

/** An MCP server's name: reverse-DNS, one slash (the MCP registry's own rule). */
const SERVER_NAME = /^[a-zA-Z0-9.-]+\/[a-zA-Z0-9._-]+$/;

/** Where the agent's source is kept (server.json's `repository`). */
const repository = z
  .object({
    url: httpsUrl,
    source: z
      .string()
      .trim()
      .regex(/^[a-z0-9][a-z0-9._-]{0,39}$/, "must be the hosting service, e.g. github or gitlab (a-z 0-9 . _ -)"),
    id: optionalText(200),
    subfolder: z
      .string()
      .trim()
      .max(500, "must be at most 500 characters")
      .refine(
        (path) =>
          path.split("/").every((segment) => segment !== "" && segment !== "." && segment !== "..") &&
          !path.includes("\\"),
        "must be a relative path inside the repository, such as src/server",
      )
      .nullish()
      .transform((v) => v ?? null),
  })
  .strict();

const policy = z
  .object({
    dataRetentionDays: z
      .number()
      .int()
      .min(0)
      .max(36_500)
      .nullish()
      .transform((v) => v ?? null),
    humanOversight: z.enum(HUMAN_OVERSIGHT),
    allowedUseCases: words(50, 200),
    prohibitedUseCases: words(50, 200),
    termsUrl: optionalUrl,
    privacyUrl: optionalUrl,
  })
  .strict();

const role = z
  .object({
    subject: z
      .string()
      .trim()
      .max(254)
      .refine((s) => z.email().safeParse(s).success || HANDLE_PATTERN.test(s), "must be an email address or a handle"),
    role: z.enum(ROLE_KINDS),
  })
  .strict();

/** Each owner-settable field, validated and normalised. */
const fields = {
  name: text(120),
  summary: text(280).refine((s) => !/[\r\n]/.test(s), "must be one line"),
  description: optionalText(10_000),
  homepageUrl: optionalUrl,
  serverName: z
    .string()
    .trim()
    .min(3, "must be at least 3 characters")
    .max(200, "must be at most 200 characters")
    .regex(SERVER_NAME, "must be a reverse-DNS name with one slash, such as io.github.owner/weather")
    .nullish()
    .transform((v) => v ?? null),
  releaseVersion: z
    .string()
    .trim()
    .min(1, "must not be empty")
    .max(255, "must be at most 255 characters")
    .superRefine((v, ctx) => {
      const problem = versionProblem(v);
      if (problem) ctx.addIssue({ code: "custom", message: problem });
    })
    .nullish()
    .transform((v) => v ?? null),
  repository: repository.nullable(),
  labels,
  agentType: z.enum(AGENT_TYPES),
  visibility: z.enum(VISIBILITIES),
  contactEmail: z.string().trim().max(254).pipe(z.email("must be an email address")),
  capabilities: z
    .array(capability)
    .max(50, "at most 50 capabilities")
    .superRefine((list, ctx) => noDuplicate(list, (c) => c.key, ctx, "key")),
  models: z.array(model).max(20, "at most 20 models"),
  tools: z
    .array(tool)
    .max(100, "at most 100 tools")
    .superRefine((list, ctx) => noDuplicate(list, (t) => t.name, ctx, "name")),
  endpoint: endpoint.nullable(),
  packages: packagesSchema,
  policy: policy.nullable(),
  roles: z.array(role).max(20, "at most 20 roles"),
};

/** How a client reaches the agent: at its endpoint, or by starting one of its packages. */
const UNREACHABLE: FieldError = {
  path: "endpoint",
  message: "is required unless the agent ships as at least one package",
};
const reachable = (p: { endpoint?: unknown; packages?: unknown }) =>
  (p.endpoint !== null && p.endpoint !== undefined) || (Array.isArray(p.packages) && p.packages.length > 0);

const intakeSchema = z
  .object({
    providerCode: z
      .string()
      .trim()
      .regex(
        PROVIDER_CODE_PATTERN,
        "must be 3–63 characters of a-z 0-9 and -, starting and ending with a letter or digit",
      )
      .refine((code) => !RESERVED_PROVIDER_CODES.has(code), "is reserved")
      .nullish(),
    ...fields,
    description: fields.description.optional(),
    repository: fields.repository.optional().transform((v) => v ?? null),
    labels: fields.labels.nullish().transform((v) => v ?? []),
    visibility: fields.visibility.nullish().transform((v) => v ?? "PUBLIC"),
    capabilities: fields.capabilities.nullish().transform((v) => v ?? []),
    models: fields.models.nullish().transform((v) => v ?? []),
    tools: fields.tools.nullish().transform((v) => v ?? []),
    endpoint: fields.endpoint.optional().transform((v) => v ?? null),
    packages: fields.packages.nullish().transform((v) => v ?? []),
    policy: fields.policy.optional().transform((v) => v ?? null),
    roles: fields.roles.nullish().transform((v) => v ?? []),
  })
  .strict()
  .refine(reachable, {
    path: [UNREACHABLE.path],
    message: UNREACHABLE.message,
    // Said beside the other fields' problems, not only once they are fixed: an object is enough.
    when: ({ value }) => typeof value === "object" && value !== null && !Array.isArray(value),
  });

const profileSchema = z.object(fields);
/** A PATCH's fields; its sections may be partial (applyPatch merges them onto the current ones). */
const patchSchema = profileSchema
  .extend({ endpoint: endpointMembers.partial().nullable(), policy: policy.partial().nullable() })
  .partial()
  .strict();
/** The sections a PATCH merges member by member, each checked whole once merged. */
const SECTIONS = ["endpoint", "policy"] as const;
const sectionsSchema = profileSchema.pick({ endpoint: true, policy: true }).partial();

/** The owner-editable profile, normalised. */
export type Profile = z.output<typeof profileSchema>;
export type Intake = Profile & { providerCode: string | null | undefined };
export type Patch = z.output<typeof patchSchema>;

/** What zod says in words of its own, in the plain words of the API's other messages; the rules' own messages come first. */
const AS_A: Record<string, string> = {
  string: "a string",
  number: "a number",
  int: "a whole number",
  boolean: "true or false",
  array: "a list",
  object: "an object",
};
function plainWords(issue: z.core.$ZodRawIssue): string | undefined {
  if (issue.input === null) return "must not be null";
  switch (issue.code) {
    case "invalid_type":
      return issue.input === undefined ? "is required" : AS_A[issue.expected] && `must be ${AS_A[issue.expected]}`;
    case "invalid_value":
      return issue.input === undefined ? "is required" : `must be one of: ${issue.values.join(", ")}`;
    case "too_small":
    case "too_big": {
      const small = issue.code === "too_small";
      const bound = small ? issue.minimum : issue.maximum;
      const limit = `${issue.inclusive ? (small ? "at least" : "at most") : small ? "more than" : "less than"} ${bound}`;
      if (issue.origin === "string") return `must be ${limit} characters`;
      return issue.origin === "array" ? `must have ${limit} items` : `must be ${limit}`;
    }
  }
  return undefined;
}

function fieldErrors(error: z.ZodError): FieldError[] {
  return error.issues.map((issue) => ({
    path: issue.path.map(String).join(".") || "(body)",
    message: issue.code === "unrecognized_keys" ? `unknown field(s): ${issue.keys.join(", ")}` : issue.message,
  }));
}

export type Validated<T> = { ok: true; value: T } | { ok: false; errors: FieldError[] };

/** Validates and normalises an intake (every owner-settable field, plus an optional code). */
export function validateIntake(input: Record<string, unknown>): Validated<Intake> {
  const result = intakeSchema.safeParse(dropUndefined(input), { error: plainWords });
  return result.success
    ? { ok: true, value: { ...result.data, description: result.data.description ?? null } as Intake }
    : { ok: false, errors: fieldErrors(result.error) };
}

/** Validates and normalises a PATCH: only the keys present; `null` clears the nullable ones. */
export function validatePatch(input: Record<string, unknown>): Validated<Patch> {
  const present = dropUndefined(input);
  if (Object.keys(present).length === 0) {
    return { ok: false, errors: [{ path: "(body)", message: "name at least one field to change" }] };
  }
  const result = patchSchema.safeParse(present, { error: plainWords });
  return result.success ? { ok: true, value: result.data } : { ok: false, errors: fieldErrors(result.error) };
}

/**
 * The profile a valid PATCH leaves, as JSON Merge Patch (RFC 7396) says: a field replaces the current
 * one (lists whole), but a section's members merge onto the current section (none: onto {}) — a
 * present member sets, null clears, an absent one keeps; a section given as null is cleared. A merged
 * section must be a complete, valid one; its errors are named by their path (`endpoint.protocol`).
 */
export function applyPatch(before: Profile, patch: Patch): Validated<Profile> {
  const merged: Record<string, unknown> = {};
  for (const section of SECTIONS) {
    const members = patch[section];
    if (members) merged[section] = { ...before[section], ...members };
  }
  const result = sectionsSchema.safeParse(merged, { error: plainWords });
  if (!result.success) return { ok: false, errors: fieldErrors(result.error) };
  const after = { ...before, ...patch, ...result.data } as Profile;
  return reachable(after) ? { ok: true, value: after } : { ok: false, errors: [UNREACHABLE] };
}

function dropUndefined(input: Record<string, unknown>): Record<string, unknown> {
  return Object.fromEntries(Object.entries(input).filter(([, v]) => v !== undefined));
}

/**
 * The labels a list is filtered by: given as a list whose items may be comma-separated
 * (`?labels=a,b`), trimmed, lower-cased and de-duplicated; each must be a label, at most MAX_LABELS
 * (each adds a condition to the list's query).
 */
export function labelFilter(labels: readonly string[] | null | undefined): Validated<string[]> {
  const list = unique((labels ?? []).flatMap((l) => l.split(",")).map((l) => l.trim().toLowerCase())).filter(Boolean);
  if (list.length > MAX_LABELS) {
    return { ok: false, errors: [{ path: "labels", message: `at most ${MAX_LABELS} labels` }] };
  }
  const bad = list.find((label) => !LABEL_PATTERN.test(label));
  if (bad !== undefined) {
    return {
      ok: false,
      errors: [{ path: "labels", message: `"${bad.slice(0, 40)}" is not a label (1–40 of a-z 0-9 . _ -)` }],
    };
  }
  return { ok: true, value: list };
}

/** The owner-editable part of a profile, in a fixed key order: what a version snapshot holds. */
export function snapshotOf(profile: Profile): Profile {
  return Object.fromEntries(OWNER_FIELDS.map((f) => [f, profile[f]])) as Profile;
}

/** The owner fields whose value differs between two profiles. */
export function changedFields(before: Profile, after: Profile): OwnerField[] {
  return OWNER_FIELDS.filter((f) => !sameJson(before[f], after[f]));
}

/**
 * Whether two JSON values are equal, objects compared member by member whatever their key order
 * (PostgreSQL's jsonb gives a section's keys back in an order of its own). This module also runs in
 * the browser (the intake page), so no `node:util`.
 */
function sameJson(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (typeof a !== "object" || typeof b !== "object" || a === null || b === null) return false;
  if (Array.isArray(a) !== Array.isArray(b)) return false;
  const keysOfA = Object.keys(a).filter((k) => (a as Record<string, unknown>)[k] !== undefined);
  const keysOfB = Object.keys(b).filter((k) => (b as Record<string, unknown>)[k] !== undefined);
  return (
    keysOfA.length === keysOfB.length &&
    keysOfA.every((k) => sameJson((a as Record<string, unknown>)[k], (b as Record<string, unknown>)[k]))
  );
}

/** A provider code derived from a display name: lower-case ASCII words joined by hyphens. */
export function deriveProviderCode(name: string): string {
  const slug = name
    .normalize("NFKD")
    .replace(/[\u0300-\u036f]/g, "")
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, "-")
    .replace(/^-+|-+$/g, "")
    .slice(0, 56)
    .replace(/-+$/g, "");
  if (RESERVED_PROVIDER_CODES.has(slug)) return `${slug}-agent`;
  return slug.length >= 3 ? slug : `agent-${slug || "x"}`.replace(/-+$/g, "");
}

/** The changes that make an approved provider need a new review (API.md §1). */
export const REVIEWED_FIELDS: readonly OwnerField[] = [
  "serverName",
  "repository",
  "endpoint",
  "packages",
  "tools",
  "policy",
];
