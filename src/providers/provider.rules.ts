/**
 * What a provider profile may hold, as pure functions: the enumerations, validation and
 * normalisation of intake and PATCH bodies, the derived provider code, the version snapshot and
 * the list of changed fields. No database, no GraphQL.
 */
import { z } from "zod";
import type { FieldError } from "../errors.ts";
import {
  AGENT_TYPES,
  AUTH_SCHEMES,
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
/** Codes that are a route of their own (`POST /api/v1/providers/import`), so never a provider's. */
export const RESERVED_PROVIDER_CODES: ReadonlySet<string> = new Set(["import"]);
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
  "labels",
  "agentType",
  "visibility",
  "contactEmail",
  "capabilities",
  "models",
  "tools",
  "endpoint",
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

const endpoint = z
  .object({
    url: httpsUrl,
    protocol: z.enum(PROTOCOLS),
    authScheme: z.enum(AUTH_SCHEMES),
    healthUrl: optionalUrl,
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
  endpoint,
  policy: policy.nullable(),
  roles: z.array(role).max(20, "at most 20 roles"),
};

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
    labels: fields.labels.nullish().transform((v) => v ?? []),
    visibility: fields.visibility.nullish().transform((v) => v ?? "PUBLIC"),
    capabilities: fields.capabilities.nullish().transform((v) => v ?? []),
    models: fields.models.nullish().transform((v) => v ?? []),
    tools: fields.tools.nullish().transform((v) => v ?? []),
    policy: fields.policy.optional().transform((v) => v ?? null),
    roles: fields.roles.nullish().transform((v) => v ?? []),
  })
  .strict();

const profileSchema = z.object(fields);
const patchSchema = profileSchema.partial().strict();

/** The owner-editable profile, normalised. */
export type Profile = z.output<typeof profileSchema>;
export type Intake = Profile & { providerCode: string | null | undefined };
export type Patch = z.output<typeof patchSchema>;

function fieldErrors(error: z.ZodError): FieldError[] {
  return error.issues.map((issue) => ({
    path: issue.path.map(String).join(".") || "(body)",
    message: issue.code === "unrecognized_keys" ? `unknown field(s): ${issue.keys.join(", ")}` : issue.message,
  }));
}

export type Validated<T> = { ok: true; value: T } | { ok: false; errors: FieldError[] };

/** Validates and normalises an intake (every owner-settable field, plus an optional code). */
export function validateIntake(input: Record<string, unknown>): Validated<Intake> {
  const result = intakeSchema.safeParse(dropUndefined(input));
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
  const result = patchSchema.safeParse(present);
  return result.success ? { ok: true, value: result.data } : { ok: false, errors: fieldErrors(result.error) };
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
  return OWNER_FIELDS.filter((f) => JSON.stringify(before[f]) !== JSON.stringify(after[f]));
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
export const REVIEWED_FIELDS: readonly OwnerField[] = ["endpoint", "tools", "policy"];
