/**
 * The provider's GraphQL types: enumerations, the profile and its sections, the list form, the
 * inputs, and the owner-settable fields as arguments (shared by intake and PATCH). The operations
 * that answer them are in provider.schema.ts.
 */
import type { InputFieldMap } from "@pothos/core";
import { builder } from "../builder.ts";
import { TIMELINE_KINDS } from "../reviews/review.rules.ts";
import { type Package, type PackageArgument, type PackageVariable, runCommand } from "./package.rules.ts";
import {
  ARGUMENT_KINDS,
  ENDPOINT_TRANSPORTS,
  INPUT_FORMATS,
  PACKAGE_REGISTRIES,
  PACKAGE_TRANSPORTS,
} from "./provider.enums.ts";
import { LIFECYCLES } from "./provider.lifecycle.ts";
import {
  AGENT_TYPES,
  AUTH_SCHEMES,
  HUMAN_OVERSIGHT,
  MODEL_ROLES,
  PROTOCOLS,
  type Profile,
  REVIEW_STAGES,
  ROLE_KINDS,
  TOOL_KINDS,
  TOOL_SCOPES,
  TRUST_TIERS,
  VISIBILITIES,
} from "./provider.rules.ts";
import type { SummaryRow } from "./provider.store.ts";
import { isPrivileged, shownActor } from "./provider.visibility.ts";

// ── Enumerations ────────────────────────────────────────────────────────────────────────────
export const AgentType = builder.enumType("AgentType", { values: AGENT_TYPES });
export const Visibility = builder.enumType("Visibility", { values: VISIBILITIES });
export const TrustTier = builder.enumType("TrustTier", { values: TRUST_TIERS });
export const ReviewStage = builder.enumType("ReviewStage", { values: REVIEW_STAGES });
const ModelRole = builder.enumType("ModelRole", { values: MODEL_ROLES });
const ToolKind = builder.enumType("ToolKind", { values: TOOL_KINDS });
const ToolScope = builder.enumType("ToolScope", { values: TOOL_SCOPES });
export const Protocol = builder.enumType("EndpointProtocol", { values: PROTOCOLS });
const AuthScheme = builder.enumType("AuthScheme", { values: AUTH_SCHEMES });
const HumanOversight = builder.enumType("HumanOversight", { values: HUMAN_OVERSIGHT });
const EndpointTransport = builder.enumType("EndpointTransport", {
  description: "How an MCP client talks to an MCP endpoint: Streamable HTTP, or the older HTTP+SSE",
  values: ENDPOINT_TRANSPORTS,
});
export const PackageRegistryEnum = builder.enumType("PackageRegistry", {
  description: "Where an MCP server's package is published (server.json's registryType)",
  values: PACKAGE_REGISTRIES,
});
export const PackageTransportEnum = builder.enumType("TransportType", {
  description: "How a client talks to the package it started: over stdio, or over HTTP at the transport's url",
  values: PACKAGE_TRANSPORTS,
});
const InputFormat = builder.enumType("InputFormat", { values: INPUT_FORMATS });
const ArgumentKind = builder.enumType("ArgumentKind", {
  description: "NAMED: `--flag value`; POSITIONAL: a value in its place",
  values: ARGUMENT_KINDS,
});
export const LifecycleEnum = builder.enumType("Lifecycle", {
  description: "ACTIVE; DEPRECATED (still served, use the successor); RETIRED (gone; hidden from lists unless asked)",
  values: LIFECYCLES,
});
const RoleKind = builder.enumType("RoleKind", { values: ROLE_KINDS });
const TimelineKind = builder.enumType("TimelineKind", { values: TIMELINE_KINDS });

// ── Profile sections (JSON documents on the provider row) ───────────────────────────────────
type Capability = Profile["capabilities"][number];
type Model = Profile["models"][number];
type Tool = Profile["tools"][number];
type Endpoint = NonNullable<Profile["endpoint"]>;
type Policy = NonNullable<Profile["policy"]>;
type Role = Profile["roles"][number];
type Repository = NonNullable<Profile["repository"]>;

const CapabilityRef = builder.objectRef<Capability>("Capability").implement({
  fields: (t) => ({
    key: t.exposeString("key"),
    name: t.exposeString("name"),
    description: t.exposeString("description", { nullable: true }),
    tags: t.exposeStringList("tags"),
    inputModes: t.exposeStringList("inputModes", { description: "Media types the capability accepts" }),
    outputModes: t.exposeStringList("outputModes", { description: "Media types the capability produces" }),
  }),
});
const ModelRef = builder.objectRef<Model>("Model").implement({
  fields: (t) => ({
    vendor: t.exposeString("vendor"),
    model: t.exposeString("model"),
    role: t.expose("role", { type: ModelRole }),
    contextWindow: t.exposeInt("contextWindow", { nullable: true }),
  }),
});
const ToolRef = builder.objectRef<Tool>("Tool").implement({
  fields: (t) => ({
    name: t.exposeString("name"),
    kind: t.expose("kind", { type: ToolKind }),
    description: t.exposeString("description", { nullable: true }),
    scopes: t.expose("scopes", { type: [ToolScope] }),
  }),
});
const EndpointSummaryRef = builder.objectRef<Endpoint>("EndpointSummary").implement({
  fields: (t) => ({ protocol: t.expose("protocol", { type: Protocol }) }),
});
/** What a variable and an argument share: how a client asks the user for a value, never a secret's value. */
function inputFields(t: FieldBuilder) {
  const of = (parent: unknown) => parent as PackageVariable;
  return {
    description: t.string({ nullable: true, resolve: (v) => of(v).description }),
    isRequired: t.boolean({ resolve: (v) => of(v).isRequired }),
    isSecret: t.boolean({
      description:
        "A secret (a password, a token): clients ask for it and keep it safe; the registry never holds its value",
      resolve: (v) => of(v).isSecret,
    }),
    format: t.field({ type: InputFormat, resolve: (v) => of(v).format }),
    default: t.string({ nullable: true, resolve: (v) => of(v).default }),
    placeholder: t.string({ nullable: true, resolve: (v) => of(v).placeholder }),
    choices: t.stringList({ resolve: (v) => of(v).choices }),
  };
}
const PackageVariableRef = builder.objectRef<PackageVariable>("PackageVariable").implement({
  description: "An environment variable or an HTTP header the client sets: its name and what it is for",
  fields: (t) => ({ name: t.exposeString("name"), ...inputFields(t as unknown as FieldBuilder) }),
});
const EndpointRef = builder.objectRef<Endpoint>("Endpoint").implement({
  fields: (t) => ({
    url: t.exposeString("url", { description: "{name} marks one of `variables`, which the client fills in" }),
    protocol: t.expose("protocol", { type: Protocol }),
    authScheme: t.expose("authScheme", { type: AuthScheme }),
    healthUrl: t.exposeString("healthUrl", { nullable: true }),
    // A version's snapshot from before these members existed has none of them.
    transport: t.field({
      type: EndpointTransport,
      nullable: true,
      description: "MCP only: null is STREAMABLE_HTTP",
      resolve: (e) => e.transport ?? null,
    }),
    headers: t.field({
      type: [PackageVariableRef],
      description: "HTTP headers a client sends (an API key's header, say): names and purposes, never values",
      resolve: (e) => e.headers ?? [],
    }),
    variables: t.field({
      type: [PackageVariableRef],
      description: "The values a client fills into the URL's {name}s",
      resolve: (e) => e.variables ?? [],
    }),
  }),
});
const RepositoryRef = builder.objectRef<Repository>("Repository").implement({
  description: "Where the agent's source is kept, for anyone who wants to inspect it",
  fields: (t) => ({
    url: t.exposeString("url"),
    source: t.exposeString("source", { description: "The hosting service: github, gitlab, …" }),
    id: t.exposeString("id", {
      nullable: true,
      description: "The service's own id of the repository, which a re-created repository does not keep",
    }),
    subfolder: t.exposeString("subfolder", { nullable: true, description: "Where in the repository the agent is" }),
  }),
});
const PackageArgumentRef = builder.objectRef<PackageArgument>("PackageArgument").implement({
  description: "A command-line argument: `name value` (NAMED) or a value in its place (POSITIONAL)",
  fields: (t) => ({
    type: t.expose("type", { type: ArgumentKind }),
    name: t.exposeString("name", { nullable: true, description: "The flag, with its dashes (NAMED)" }),
    valueHint: t.exposeString("valueHint", { nullable: true, description: "What the value is (POSITIONAL)" }),
    value: t.exposeString("value", { nullable: true, description: "A fixed value, never a secret's" }),
    isRepeated: t.exposeBoolean("isRepeated"),
    ...inputFields(t as unknown as FieldBuilder),
  }),
});
const PackageTransportRef = builder.objectRef<Package["transport"]>("PackageTransport").implement({
  fields: (t) => ({
    type: t.expose("type", { type: PackageTransportEnum }),
    url: t.exposeString("url", {
      nullable: true,
      description: "STREAMABLE_HTTP and SSE: where the started package listens",
    }),
    headers: t.field({ type: [PackageVariableRef], resolve: (tr) => tr.headers }),
  }),
});
export const PackageRef = builder.objectRef<Package>("Package").implement({
  description: "A package an MCP client starts (npm, PyPI, OCI, NuGet, MCPB, Cargo), as server.json describes it",
  fields: (t) => ({
    registryType: t.expose("registryType", { type: PackageRegistryEnum }),
    registryBaseUrl: t.exposeString("registryBaseUrl", {
      nullable: true,
      description: "null: the registry's public one",
    }),
    identifier: t.exposeString("identifier"),
    version: t.exposeString("version", {
      nullable: true,
      description: "null for OCI (the tag pins it) and optional for MCPB",
    }),
    fileSha256: t.exposeString("fileSha256", {
      nullable: true,
      description: "MCPB: the bundle's SHA-256, to check before running it",
    }),
    runtimeHint: t.exposeString("runtimeHint", { nullable: true }),
    transport: t.field({ type: PackageTransportRef, resolve: (p) => p.transport }),
    environmentVariables: t.field({ type: [PackageVariableRef], resolve: (p) => p.environmentVariables }),
    runtimeArguments: t.field({ type: [PackageArgumentRef], resolve: (p) => p.runtimeArguments }),
    packageArguments: t.field({ type: [PackageArgumentRef], resolve: (p) => p.packageArguments }),
    runCommand: t.string({
      nullable: true,
      description:
        "How to start it, e.g. `npx -y @scope/name@1.2.3`; values the user supplies show as <name>. null for MCPB (download, check fileSha256, then open it) and CARGO (`cargo install` it first)",
      resolve: (p) => runCommand(p),
    }),
  }),
});
const PolicyRef = builder.objectRef<Policy>("Policy").implement({
  fields: (t) => ({
    dataRetentionDays: t.exposeInt("dataRetentionDays", { nullable: true }),
    humanOversight: t.expose("humanOversight", { type: HumanOversight }),
    allowedUseCases: t.exposeStringList("allowedUseCases"),
    prohibitedUseCases: t.exposeStringList("prohibitedUseCases"),
    termsUrl: t.exposeString("termsUrl", { nullable: true }),
    privacyUrl: t.exposeString("privacyUrl", { nullable: true }),
  }),
});
const RoleRef = builder.objectRef<Role>("Role").implement({
  fields: (t) => ({
    subject: t.exposeString("subject", { description: "An email address or a handle" }),
    role: t.expose("role", { type: RoleKind }),
  }),
});

const CapabilityInput = builder.inputType("CapabilityInput", {
  fields: (t) => ({
    key: t.string({ required: true }),
    name: t.string({ required: true }),
    description: t.string(),
    tags: t.stringList(),
    inputModes: t.stringList(),
    outputModes: t.stringList(),
  }),
});
const ModelInput = builder.inputType("ModelInput", {
  fields: (t) => ({
    vendor: t.string({ required: true }),
    model: t.string({ required: true }),
    role: t.field({ type: ModelRole, required: true }),
    contextWindow: t.int(),
  }),
});
const ToolInput = builder.inputType("ToolInput", {
  fields: (t) => ({
    name: t.string({ required: true }),
    kind: t.field({ type: ToolKind, required: true }),
    description: t.string(),
    scopes: t.field({ type: [ToolScope] }),
  }),
});
const INPUT_FIELDS = (t: InputFieldBuilder) => ({
  description: t.string(),
  isRequired: t.boolean({ description: "Default false" }),
  isSecret: t.boolean({ description: "Default false; a secret takes no default or value" }),
  format: t.field({ type: InputFormat, description: "Default STRING" }),
  default: t.string(),
  placeholder: t.string(),
  choices: t.stringList(),
});
const PackageVariableInput = builder.inputType("PackageVariableInput", {
  fields: (t) => ({ name: t.string({ required: true }), ...INPUT_FIELDS(t) }),
});
const PackageArgumentInput = builder.inputType("PackageArgumentInput", {
  fields: (t) => ({
    type: t.field({ type: ArgumentKind, required: true }),
    name: t.string({ description: "NAMED: the flag with its dashes" }),
    valueHint: t.string({ description: "POSITIONAL: what the value is" }),
    value: t.string({ description: "A fixed value" }),
    isRepeated: t.boolean(),
    ...INPUT_FIELDS(t),
  }),
});
const PackageTransportInput = builder.inputType("PackageTransportInput", {
  fields: (t) => ({
    type: t.field({ type: PackageTransportEnum, required: true }),
    url: t.string({ description: "Required for STREAMABLE_HTTP and SSE; {name} marks a value the client fills in" }),
    headers: t.field({ type: [PackageVariableInput] }),
  }),
});
const PackageInput = builder.inputType("PackageInput", {
  fields: (t) => ({
    registryType: t.field({ type: PackageRegistryEnum, required: true }),
    registryBaseUrl: t.string({ description: "Only for a registry other than the public one (NPM, PYPI, NUGET)" }),
    identifier: t.string({
      required: true,
      description:
        "The package's name in its registry (an OCI image reference with its tag; an MCPB bundle's https URL)",
    }),
    version: t.string({ description: "One release, not a range: required for NPM, PYPI, NUGET, CARGO; not for OCI" }),
    fileSha256: t.string({ description: "MCPB only, required: the bundle's SHA-256 in hex" }),
    runtimeHint: t.string({ description: "The command that starts it (npx, uvx, docker, dnx)" }),
    transport: t.field({ type: PackageTransportInput, required: true }),
    environmentVariables: t.field({
      type: [PackageVariableInput],
      description: "At most 50; names and purposes, never values",
    }),
    runtimeArguments: t.field({ type: [PackageArgumentInput], description: "Arguments of the runtime (docker run …)" }),
    packageArguments: t.field({ type: [PackageArgumentInput], description: "Arguments of the package itself" }),
  }),
});
/** The field builder of an input type. */
type InputFieldBuilder = Parameters<Parameters<typeof builder.inputType>[1]["fields"]>[0];

/**
 * A profile section's two inputs from one list of members: `<Name>Input`, complete, for intake, and
 * `<Name>PatchInput`, every member optional, for a PATCH, which merges it member by member onto the
 * current section (RFC 7396). `required` marks the members a complete section must have.
 */
function sectionInputs<Fields extends InputFieldMap>(
  name: string,
  fields: (t: InputFieldBuilder, required: boolean) => Fields,
) {
  return {
    complete: builder.inputType(`${name}Input`, { fields: (t) => fields(t, true) }),
    patch: builder.inputType(`${name}PatchInput`, {
      description: `Members of the ${name.toLowerCase()} to change: an absent member keeps its value, null clears it`,
      fields: (t) => fields(t, false),
    }),
  };
}
const EndpointInput = sectionInputs("Endpoint", (t, required) => ({
  url: t.string({ required, description: "{name} marks one of `variables`" }),
  protocol: t.field({ type: Protocol, required }),
  authScheme: t.field({ type: AuthScheme, required }),
  healthUrl: t.string(),
  transport: t.field({ type: EndpointTransport, description: "MCP only; default STREAMABLE_HTTP" }),
  headers: t.field({ type: [PackageVariableInput], description: "At most 50; names and purposes, never values" }),
  variables: t.field({ type: [PackageVariableInput], description: "At most 50: each {name} of the URL" }),
}));
const RepositoryInput = builder.inputType("RepositoryInput", {
  fields: (t) => ({
    url: t.string({ required: true, description: "An https: URL" }),
    source: t.string({ required: true, description: "The hosting service: github, gitlab, …" }),
    id: t.string(),
    subfolder: t.string({ description: "A relative path inside the repository" }),
  }),
});
const PolicyInput = sectionInputs("Policy", (t, required) => ({
  dataRetentionDays: t.int(),
  humanOversight: t.field({ type: HumanOversight, required }),
  allowedUseCases: t.stringList(),
  prohibitedUseCases: t.stringList(),
  termsUrl: t.string(),
  privacyUrl: t.string(),
}));
const RoleInput = builder.inputType("RoleInput", {
  fields: (t) => ({
    subject: t.string({ required: true }),
    role: t.field({ type: RoleKind, required: true }),
  }),
});

// ── Provider ────────────────────────────────────────────────────────────────────────────────
const json = <T>(value: unknown) => value as T;

export const AccessTokenRef = builder.prismaObject("AccessToken", {
  description: "Metadata of an agent access token; the secret itself is never stored or shown again.",
  fields: (t) => ({
    tokenId: t.exposeString("tokenId"),
    prefix: t.exposeString("prefix", { description: "The first characters of the token, to tell tokens apart" }),
    label: t.exposeString("label", { nullable: true }),
    createdAt: t.expose("createdAt", { type: "DateTime" }),
    lastUsedAt: t.expose("lastUsedAt", { type: "DateTime", nullable: true }),
    expiresAt: t.expose("expiresAt", { type: "DateTime", nullable: true }),
    revokedAt: t.expose("revokedAt", { type: "DateTime", nullable: true }),
  }),
});

builder.prismaObject("ReviewEvent", {
  name: "TimelineEvent",
  fields: (t) => ({
    at: t.expose("at", { type: "DateTime" }),
    kind: t.field({ type: TimelineKind, resolve: (e) => e.kind as (typeof TIMELINE_KINDS)[number] }),
    actor: t.string({
      description: "Who did it: `agent:<code>`, `reviewer:<subject>` (just `reviewer` for the public) or `system`",
      resolve: (e, _args, ctx) => shownActor(ctx.viewer, e.providerId, e.actor),
    }),
    note: t.string({
      nullable: true,
      description: "Shown to the provider's owner and to reviewers only",
      resolve: (e, _args, ctx) => (isPrivileged(ctx.viewer, e.providerId) ? e.note : null),
    }),
  }),
});

/** A field builder of any object type: what the owner-settable fields are declared on. */
type FieldBuilder = Parameters<Parameters<typeof builder.objectFields>[1]>[0];

/**
 * The owner-settable fields as output, declared once for the profile and for a version's snapshot,
 * which hold them by the same names. `contactEmail` is declared by each: who may see it differs.
 */
export function ownerFields(t: FieldBuilder) {
  const of = (parent: unknown) => parent as Profile;
  return {
    name: t.string({ resolve: (p) => of(p).name }),
    summary: t.string({ resolve: (p) => of(p).summary }),
    description: t.string({ nullable: true, description: "Markdown", resolve: (p) => of(p).description ?? null }),
    homepageUrl: t.string({
      nullable: true,
      description: "The agent's home page",
      resolve: (p) => of(p).homepageUrl ?? null,
    }),
    serverName: t.string({
      nullable: true,
      description: "The MCP server's name, reverse-DNS (io.github.owner/weather); unique in the registry",
      resolve: (p) => of(p).serverName ?? null,
    }),
    releaseVersion: t.string({
      nullable: true,
      description: "The version of the software the profile describes, as its publisher numbers it (1.4.2)",
      resolve: (p) => of(p).releaseVersion ?? null,
    }),
    repository: t.field({ type: RepositoryRef, nullable: true, resolve: (p) => of(p).repository ?? null }),
    labels: t.stringList({ resolve: (p) => of(p).labels }),
    agentType: t.field({ type: AgentType, resolve: (p) => of(p).agentType }),
    visibility: t.field({ type: Visibility, resolve: (p) => of(p).visibility }),
    capabilities: t.field({ type: [CapabilityRef], resolve: (p) => of(p).capabilities }),
    models: t.field({ type: [ModelRef], resolve: (p) => of(p).models }),
    tools: t.field({ type: [ToolRef], resolve: (p) => of(p).tools }),
    endpoint: t.field({
      type: EndpointRef,
      nullable: true,
      description: "Where the agent is served; null when it ships only as packages",
      resolve: (p) => of(p).endpoint ?? null,
    }),
    packages: t.field({ type: [PackageRef], resolve: (p) => of(p).packages ?? [] }),
    policy: t.field({ type: PolicyRef, nullable: true, resolve: (p) => of(p).policy ?? null }),
    roles: t.field({ type: [RoleRef], resolve: (p) => of(p).roles }),
  };
}

export const ProviderRef = builder.prismaObject("Provider", {
  description: "An AI agent's full profile.",
  fields: (t) => ({
    providerCode: t.exposeString("providerCode"),
    ...ownerFields(t as unknown as FieldBuilder),
    trustTier: t.field({ type: TrustTier, resolve: (p) => p.trustTier as never }),
    reviewStage: t.field({ type: ReviewStage, resolve: (p) => p.reviewStage as never }),
    contactEmail: t.string({
      nullable: true,
      description: "Shown to the provider's owner and to reviewers only",
      resolve: (p, _args, ctx) => (isPrivileged(ctx.viewer, p.id) ? p.contactEmail : null),
    }),
    tokens: t.field({
      type: [AccessTokenRef],
      nullable: true,
      description: "Token metadata; shown to the provider's owner and to reviewers only, null for others",
      // Loaded with the profile in the same query; who may see it is decided on the row.
      select: (_args, _ctx, nested) => ({ tokens: nested({ orderBy: { id: "asc" } }) }),
      resolve: (p, _args, ctx) => (isPrivileged(ctx.viewer, p.id) ? p.tokens : null),
    }),
    reviewTimeline: t.relation("events", {
      description: "Review events, oldest first",
      query: { orderBy: { id: "asc" } },
    }),
    version: t.exposeInt("version", { description: "The current profile version; 1 after intake" }),
    createdAt: t.expose("createdAt", { type: "DateTime" }),
    updatedAt: t.expose("updatedAt", { type: "DateTime" }),
  }),
});

export const ProviderSummaryRef = builder.objectRef<SummaryRow>("ProviderSummary").implement({
  description: "The list form of a provider: what filters and cards need, nothing that costs a query per row.",
  fields: (t) => ({
    providerCode: t.exposeString("providerCode"),
    name: t.exposeString("name"),
    summary: t.exposeString("summary"),
    agentType: t.field({ type: AgentType, resolve: (p) => p.agentType as never }),
    visibility: t.field({ type: Visibility, resolve: (p) => p.visibility as never }),
    trustTier: t.field({ type: TrustTier, resolve: (p) => p.trustTier as never }),
    reviewStage: t.field({ type: ReviewStage, resolve: (p) => p.reviewStage as never }),
    labels: t.stringList({ resolve: (p) => json<string[]>(p.labels) }),
    endpoint: t.field({ type: EndpointSummaryRef, nullable: true, resolve: (p) => json<Endpoint | null>(p.endpoint) }),
    updatedAt: t.expose("updatedAt", { type: "DateTime" }),
  }),
});

export const ProviderPageRef = builder
  .objectRef<{ items: SummaryRow[]; nextCursor: string | null }>("ProviderPage")
  .implement({
    fields: (t) => ({
      items: t.field({ type: [ProviderSummaryRef], resolve: (p) => p.items }),
      nextCursor: t.exposeString("nextCursor", { nullable: true, description: "null on the last page" }),
    }),
  });

/** What every intake answers, whatever it was made from (createProvider, importProvider). */
export interface IntakeAnswer {
  providerId: number;
  providerCode: string;
  reviewCode: string;
  accessToken: string | null;
  notice?: string | null;
}

export const IntakeAnswerRef = builder.interfaceRef<IntakeAnswer>("IntakeAnswer").implement({
  description: "What an intake answers: its codes, the agent's token (once) and the profile.",
  fields: (t) => ({
    providerCode: t.exposeString("providerCode"),
    reviewCode: t.exposeString("reviewCode"),
    accessToken: t.exposeString("accessToken", {
      nullable: true,
      description:
        "The agent's access token in plaintext. Shown this once only; keep it secret. Null only when this answer replays an earlier intake (Idempotency-Key): see notice.",
    }),
    notice: t.string({
      nullable: true,
      description:
        "Null, except when this answer replays the intake first made with the same Idempotency-Key: then it says so and why accessToken is null.",
      resolve: (r) => r.notice ?? null,
    }),
    provider: t.prismaField({
      type: ProviderRef,
      resolve: (query, result, _args, ctx) =>
        ctx.db.provider.findUniqueOrThrow({ ...query, where: { id: result.providerId } }),
    }),
  }),
});

export const IntakeResultRef = builder.objectRef<IntakeAnswer>("IntakeResult").implement({
  description: "The answer to an intake.",
  interfaces: [IntakeAnswerRef],
  isTypeOf: (answer) => !("mapped" in (answer as object)),
});

/** The owner-settable fields as GraphQL arguments; `required` names those an intake must carry. */
export function profileArgs(t: Parameters<Parameters<typeof builder.mutationField>[1]>[0], required: boolean) {
  return {
    name: t.arg.string({ required, description: "Display name, 1–120 characters" }),
    summary: t.arg.string({ required, description: "One line, 1–280 characters" }),
    description: t.arg.string({ description: "Markdown, at most 10 000 characters" }),
    homepageUrl: t.arg.string({
      description: "The agent's home page: an absolute https: URL, at most 2048 characters",
    }),
    serverName: t.arg.string({
      description: "An MCP server's reverse-DNS name (io.github.owner/weather), unique in the registry",
    }),
    releaseVersion: t.arg.string({ description: "One release (1.4.2), not a range; at most 255 characters" }),
    repository: t.arg({ type: RepositoryInput }),
    labels: t.arg.stringList({ description: "At most 20; each 1–40 of a-z 0-9 . _ - (lower-cased, de-duplicated)" }),
    agentType: t.arg({ type: AgentType, required }),
    visibility: t.arg({ type: Visibility, description: "Default PUBLIC" }),
    contactEmail: t.arg.string({ required, description: "Shown only to the owner and reviewers" }),
    capabilities: t.arg({ type: [CapabilityInput], description: "At most 50; `key` unique" }),
    models: t.arg({ type: [ModelInput], description: "At most 20" }),
    tools: t.arg({ type: [ToolInput], description: "At most 100; `name` unique" }),
    // A PATCH's sections are partial: merged onto the current ones (provider.write.ts).
    endpoint: t.arg({
      type: required ? EndpointInput.complete : EndpointInput.patch,
      description: "Required unless the agent ships as at least one package",
    }),
    packages: t.arg({ type: [PackageInput], description: `At most 10 packages an MCP client starts` }),
    policy: t.arg({ type: required ? PolicyInput.complete : PolicyInput.patch }),
    roles: t.arg({ type: [RoleInput], description: "At most 20" }),
  };
}
