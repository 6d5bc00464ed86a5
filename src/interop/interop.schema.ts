/**
 * Interoperability on the GraphQL schema (and so on REST, through SOFA): a provider as an A2A agent
 * card (`agentCard`) or an MCP server.json (`serverJson`), an intake from an A2A card or an MCP `server.json` (`importProvider`), and the
 * JSON Patch between two profile versions (`versionDiff`). The logic lives beside this file
 * (agent.card.ts, import.ts) and in providers/version.diff.ts; this file only registers it.
 */
import { builder, publicBase } from "../builder.ts";
import { badInput, notFound } from "../errors.ts";
import { idempotencyOf, REPLAY_NOTICE } from "../idempotency/idempotency.plugin.ts";
import { OWNER_FIELDS, type Profile, validateIntake } from "../providers/provider.rules.ts";
import { submitIntake } from "../providers/provider.schema.ts";
import { AgentType, type IntakeAnswer, IntakeAnswerRef, Visibility } from "../providers/provider.types.ts";
import { assertVisible, isPrivileged } from "../providers/provider.visibility.ts";
import { profileOf } from "../providers/provider.write.ts";
import { type PatchOperation, shownSnapshot, snapshotPatch } from "../providers/version.diff.ts";
import { signCard } from "../trust/card.signature.ts";
import { importedCardSignature } from "../trust/card.trust.ts";
import { signingKeys } from "../trust/signing.keys.ts";
import {
  A2A_PROTOCOL_VERSION,
  type AgentCard,
  type AgentCardSignature,
  type AgentInterface,
  type AgentSkill,
  agentCardOf,
  type SecurityRequirement,
} from "./agent.card.ts";
import { type ImportError, type MappedField, type Mapping, mapDocument } from "./import.ts";
import { SERVER_SCHEMA_URL, serverJsonOf } from "./server.json.ts";

/** The profile's columns, to select. */
const PROFILE_COLUMNS = Object.fromEntries(OWNER_FIELDS.map((f) => [f, true])) as Record<
  (typeof OWNER_FIELDS)[number],
  true
>;

// ── Agent card ──────────────────────────────────────────────────────────────────────────────────

const AgentCardInterfaceRef = builder.objectRef<AgentInterface>("AgentCardInterface").implement({
  description: "A2A `AgentInterface`: where and how the agent is reached.",
  fields: (t) => ({
    url: t.exposeString("url"),
    protocolBinding: t.exposeString("protocolBinding", {
      description: "JSONRPC for an A2A endpoint; for other protocols their own name (MCP, HTTP_JSON, …)",
    }),
    protocolVersion: t.exposeString("protocolVersion", { description: `The A2A version, ${A2A_PROTOCOL_VERSION}` }),
  }),
});

const AgentCardProviderRef = builder.objectRef<AgentCard["provider"]>("AgentCardProvider").implement({
  description: "A2A `AgentProvider`.",
  fields: (t) => ({
    organization: t.exposeString("organization", {
      description: "The owner's handle when the profile lists one, else the agent's name",
    }),
    url: t.exposeString("url", { description: "The origin of the agent's endpoint" }),
  }),
});

const AgentCardCapabilitiesRef = builder.objectRef<AgentCard["capabilities"]>("AgentCardCapabilities").implement({
  description: "A2A `AgentCapabilities`. The registry records none of them: each is what A2A assumes when absent.",
  fields: (t) => ({
    streaming: t.exposeBoolean("streaming"),
    pushNotifications: t.exposeBoolean("pushNotifications"),
    extensions: t.field({ type: ["JSON"], resolve: (c) => c.extensions }),
  }),
});

const AgentCardSkillRef = builder.objectRef<AgentSkill>("AgentCardSkill").implement({
  description: "A2A `AgentSkill`, from one of the profile's capabilities.",
  fields: (t) => ({
    id: t.exposeString("id", { description: "The capability's key" }),
    name: t.exposeString("name"),
    description: t.exposeString("description", { description: "The capability's description, else its name" }),
    tags: t.exposeStringList("tags"),
    examples: t.exposeStringList("examples"),
    inputModes: t.exposeStringList("inputModes"),
    outputModes: t.exposeStringList("outputModes"),
  }),
});

const AgentCardSecurityRequirementRef = builder
  .objectRef<SecurityRequirement>("AgentCardSecurityRequirement")
  .implement({
    description: "A2A `SecurityRequirement`: `schemes` maps a security scheme's name to `{ list: [scopes] }`.",
    fields: (t) => ({ schemes: t.field({ type: "JSON", resolve: (r) => r.schemes }) }),
  });

const AgentCardSignatureRef = builder.objectRef<AgentCardSignature>("AgentCardSignature").implement({
  description:
    "A2A `AgentCardSignature`: a detached JWS (RFC 7515, flattened JSON serialization without `payload`) over the card without `signatures`, its default values removed, canonicalized by RFC 8785 (A2A §8.4). The key is in /.well-known/jwks.json under the protected header's `kid`. The registry sets no unprotected `header`.",
  fields: (t) => ({
    protected: t.exposeString("protected", {
      description: 'The base64url-encoded protected header: `{"alg":"ES256"|"EdDSA","typ":"JOSE","kid":…}`',
    }),
    signature: t.exposeString("signature", { description: "The base64url-encoded signature" }),
  }),
});

const AgentCardRef = builder.objectRef<AgentCard>("AgentCard").implement({
  description: `The agent as an A2A agent card (A2A specification v${A2A_PROTOCOL_VERSION}, proto3 JSON form).`,
  fields: (t) => ({
    name: t.exposeString("name"),
    description: t.exposeString("description", { description: "The profile's description, else its summary" }),
    supportedInterfaces: t.field({ type: [AgentCardInterfaceRef], resolve: (c) => c.supportedInterfaces }),
    provider: t.field({ type: AgentCardProviderRef, resolve: (c) => c.provider }),
    version: t.exposeString("version", { description: "The profile version" }),
    documentationUrl: t.exposeString("documentationUrl", { description: "The agent's page in this registry" }),
    capabilities: t.field({ type: AgentCardCapabilitiesRef, resolve: (c) => c.capabilities }),
    securitySchemes: t.field({
      type: "JSON",
      description:
        "A2A `map<string, SecurityScheme>`: at most one scheme, from endpoint.authScheme (`bearer`, `apiKey`, `oauth2` or `mtls`), e.g. `{ bearer: { httpAuthSecurityScheme: { scheme: 'Bearer' } } }`",
      resolve: (c) => c.securitySchemes,
    }),
    securityRequirements: t.field({
      type: [AgentCardSecurityRequirementRef],
      description: "The scheme above, required; empty when endpoint.authScheme is NONE",
      resolve: (c) => c.securityRequirements,
    }),
    defaultInputModes: t.exposeStringList("defaultInputModes"),
    defaultOutputModes: t.exposeStringList("defaultOutputModes"),
    skills: t.field({ type: [AgentCardSkillRef], resolve: (c) => c.skills }),
    signatures: t.field({
      type: [AgentCardSignatureRef],
      description:
        "The registry's signatures, one per signing key (ES256, EdDSA), when the agent is APPROVED; empty otherwise. They sign the whole card: select every field to verify it, or read the REST card.",
      resolve: (c) => c.signatures,
    }),
  }),
});

// ── JSON Patch ──────────────────────────────────────────────────────────────────────────────────

const JsonPatchOp = builder.enumType("JsonPatchOp", {
  values: ["add", "remove", "replace", "move", "copy", "test"] as const,
});

export const JsonPatchOperationRef = builder.objectRef<PatchOperation>("JsonPatchOperation").implement({
  description: "One RFC 6902 operation. Members an operation does not define are null (RFC 6902 §4: they are ignored).",
  fields: (t) => ({
    op: t.field({ type: JsonPatchOp, resolve: (o) => o.op }),
    path: t.exposeString("path", { description: "A JSON pointer (RFC 6901) into the snapshot" }),
    from: t.string({
      nullable: true,
      description: "move and copy only",
      resolve: (o) => ("from" in o ? o.from : null),
    }),
    value: t.field({
      type: "JSON",
      nullable: true,
      description: "add, replace and test only",
      resolve: (o) => ("value" in o ? (o.value as unknown) : null),
    }),
  }),
});

// ── Import ──────────────────────────────────────────────────────────────────────────────────────

const ImportFormatRef = builder.enumType("ImportFormat", {
  values: {
    a2a: { description: "An A2A v1.0 agent card (JSON)" },
    mcp: { description: "An MCP registry server.json (schema 2025-12-11 or newer)" },
  },
});

const ImportMappedFieldRef = builder.objectRef<MappedField>("ImportMappedField").implement({
  fields: (t) => ({
    from: t.exposeString("from", { description: "A JSON pointer into the document" }),
    to: t.exposeString("to", { description: "The intake field it went to, e.g. `capabilities.0.key`" }),
  }),
});

interface ImportAnswer extends IntakeAnswer {
  mapped: MappedField[];
  unmapped: string[];
}

const ImportResultRef = builder.objectRef<ImportAnswer>("ImportResult").implement({
  description: "The intake's answer, and where the document's fields went.",
  interfaces: [IntakeAnswerRef],
  isTypeOf: (answer) => "mapped" in (answer as object),
  fields: (t) => ({
    mapped: t.field({
      type: [ImportMappedFieldRef],
      description: "Each field of the document that went into the intake, and where",
      resolve: (r) => r.mapped,
    }),
    unmapped: t.stringList({
      description: "JSON pointers of the document's fields that have no home in a profile (outermost first)",
      resolve: (r) => r.unmapped,
    }),
  }),
});

// ── Fields ──────────────────────────────────────────────────────────────────────────────────────

builder.queryFields((t) => ({
  agentCard: t.field({
    type: AgentCardRef,
    nullable: true,
    description:
      "A provider as an A2A v1.0 agent card, for whoever may see the provider; null, with a NOT_FOUND error, for anyone else.",
    args: { providerCode: t.arg.string({ required: true }) },
    resolve: async (_root, args, ctx) => {
      const provider = await ctx.db.provider.findUnique({
        where: { providerCode: args.providerCode },
        select: {
          id: true,
          visibility: true,
          reviewStage: true,
          providerCode: true,
          name: true,
          summary: true,
          description: true,
          capabilities: true,
          endpoint: true,
          roles: true,
          version: true,
        },
      });
      assertVisible(ctx.viewer, provider, args.providerCode);
      const endpoint = provider.endpoint as unknown as Profile["endpoint"];
      // An A2A card names where the agent is served: one that ships only as packages has none.
      if (endpoint === null) {
        throw notFound(`Provider "${args.providerCode}" has no endpoint (it ships as packages), so no A2A card`);
      }
      const base = publicBase(ctx);
      const card = agentCardOf(
        {
          ...provider,
          capabilities: provider.capabilities as unknown as Profile["capabilities"],
          endpoint,
          roles: provider.roles as unknown as Profile["roles"],
        },
        base,
      );
      // Only a reviewed agent's card carries the registry's signature; signCard signs each distinct
      // card once. In production the registry signs only under its configured origin (PUBLIC_URL):
      // an origin taken from the request's Host would let a caller have it sign any documentationUrl.
      const ownOrigin = ctx.config.publicUrl !== undefined || !ctx.config.production;
      if (provider.reviewStage === "APPROVED" && ownOrigin) {
        card.signatures = await signCard(card, signingKeys(ctx.config));
      }
      return card;
    },
  }),

  serverJson: t.field({
    type: "JSON",
    nullable: true,
    description: `A provider as an MCP registry server.json (${SERVER_SCHEMA_URL}), for whoever may see the provider; null, with a NOT_FOUND error, for anyone else and for an agent that is not an MCP server (no MCP endpoint, no packages).`,
    args: { providerCode: t.arg.string({ required: true }) },
    resolve: async (_root, args, ctx) => {
      const provider = await ctx.db.provider.findUnique({
        where: { providerCode: args.providerCode },
        select: { id: true, reviewStage: true, providerCode: true, version: true, ...PROFILE_COLUMNS },
      });
      assertVisible(ctx.viewer, provider, args.providerCode);
      const profile = profileOf(provider as never);
      if (profile.endpoint?.protocol !== "MCP" && profile.packages.length === 0) {
        throw notFound(`Provider "${args.providerCode}" is not an MCP server: it has no MCP endpoint and no packages`);
      }
      const base = publicBase(ctx);
      return serverJsonOf({ ...profile, providerCode: provider.providerCode, version: provider.version }, base);
    },
  }),

  versionDiff: t.field({
    type: [JsonPatchOperationRef],
    description:
      "The RFC 6902 JSON Patch that turns version `from`'s snapshot into version `to`'s (either way round; empty when equal).",
    args: {
      providerCode: t.arg.string({ required: true }),
      from: t.arg.int({ required: true }),
      to: t.arg.int({ required: true }),
    },
    resolve: async (_root, args, ctx) => {
      const provider = await ctx.db.provider.findUnique({
        where: { providerCode: args.providerCode },
        select: {
          id: true,
          visibility: true,
          reviewStage: true,
          versions: {
            where: { version: { in: [args.from, args.to] } },
            select: { version: true, snapshot: true },
          },
        },
      });
      assertVisible(ctx.viewer, provider, args.providerCode);
      const byVersion = new Map(provider.versions.map((v) => [v.version, v.snapshot]));
      for (const version of [args.from, args.to]) {
        if (!byVersion.has(version)) throw notFound(`No version ${version} of provider "${args.providerCode}"`);
      }
      const privileged = isPrivileged(ctx.viewer, provider.id);
      return snapshotPatch(
        shownSnapshot(byVersion.get(args.from), privileged),
        shownSnapshot(byVersion.get(args.to), privileged),
      );
    },
  }),
}));

/** Where the document's fields went: an A2A card's `signatures` go to the profile's `cardSignature`. */
function reported(mapping: Pick<Mapping, "mapped" | "unmapped">, card: boolean) {
  if (!card || !mapping.unmapped.some((p) => p === "/signatures" || p.startsWith("/signatures/"))) {
    return { mapped: mapping.mapped, unmapped: mapping.unmapped };
  }
  return {
    mapped: [...mapping.mapped, { from: "/signatures", to: "cardSignature" }],
    unmapped: mapping.unmapped.filter((p) => p !== "/signatures" && !p.startsWith("/signatures/")),
  };
}

/** A mapping problem, as the contract's field error plus the pointer it came from. */
function problems(errors: ImportError[]) {
  return errors.map((e) => ({ path: e.path, message: e.message, source: e.source }));
}

builder.mutationFields((t) => ({
  importProvider: t.field({
    type: ImportResultRef,
    description:
      "Submits a new agent for review from an A2A agent card or an MCP server.json, as createProvider does; answers where each field of the document went and which had no home. URLs in the document are never fetched.",
    args: {
      format: t.arg({ type: ImportFormatRef, required: true }),
      document: t.arg({ type: "JSON", required: true, description: "The agent card or server.json, as JSON" }),
      providerCode: t.arg.string({ description: "As for createProvider; derived from the name when absent" }),
      contactEmail: t.arg.string({
        required: true,
        description: "Neither format has one; shown only to the owner and reviewers",
      }),
      agentType: t.arg({
        type: AgentType,
        description: "Default ASSISTANT for an agent card, TOOL_SERVER for an MCP server",
      }),
      visibility: t.arg({ type: Visibility, description: "Default PUBLIC" }),
      labels: t.arg.stringList({ description: "As for createProvider (neither format has labels)" }),
    },
    resolve: async (_root, { format, document, ...extra }, ctx) => {
      const idempotency = idempotencyOf(ctx);
      ctx.response.headers.set("Cache-Control", "no-store");
      const mapping = mapDocument(format, document);
      if (idempotency?.replayOf) {
        return {
          ...idempotency.replayOf,
          accessToken: null,
          notice: REPLAY_NOTICE,
          ...reported(mapping, format === "a2a"),
        };
      }
      if (mapping.errors.length) throw badInput("The document cannot be imported", problems(mapping.errors));
      const given = Object.fromEntries(Object.entries(extra).filter(([, v]) => v !== undefined && v !== null));
      const intake = validateIntake({ ...mapping.input, ...given });
      if (!intake.ok) {
        throw badInput(
          "The document maps to an intake that is not valid",
          problems(
            intake.errors.map((e) => {
              const source = (e.path.split(".")[0] ?? "") in given ? null : mapping.sourceOf(e.path);
              // zod says "expected string, received undefined" of a field the document lacks.
              const message = /received undefined$/.test(e.message) ? "is required" : e.message;
              return { ...e, source, message: source === null ? message : `${message} (from ${source})` };
            }),
          ),
        );
      }
      // Checked before anything is written: a signature by a trusted key that fails is a 400.
      const signed = format === "a2a" ? await importedCardSignature(document as object, ctx.config.trust) : null;
      const result = await submitIntake(
        ctx,
        intake.value,
        signed
          ? { cardSignature: signed.record, ...(signed.signedCard && { signedCard: signed.signedCard }) }
          : undefined,
      );
      return { ...result, ...reported(mapping, signed !== null) };
    },
  }),
}));
