/**
 * The providers list's filters, built once from its arguments, for the list (Query.providers) and
 * for its facets (Query.providerFacets): both read the same `where` objects, so a facet's count is
 * what the list answers for that value, never a second reading of the arguments.
 *
 * A facet's counts leave out the facet's own filter (multi-select, "disjunctive" facets, as most
 * directories count them): with `agentType=TOOL_SERVER` the agentType facet still says how many
 * ASSISTANTs there are, while every other facet counts tool servers only. Labels are the exception,
 * because the list's labels filter is all-of: a label's count is how many results also carry it.
 */
import type { builder, Context } from "../builder.ts";
import { badInput } from "../errors.ts";
import type { Prisma } from "../generated/prisma/client.ts";
import { type HealthState, healthFilter } from "../health/health.rules.ts";
import { changeFeedArgs, lifecycleFilters } from "./provider.changes.ts";
import { labelFilter } from "./provider.rules.ts";
import { searchWords } from "./provider.search.store.ts";
import {
  AgentType,
  LifecycleEnum,
  PackageRegistryEnum,
  PackageTransportEnum,
  Protocol,
  ReviewStage,
  TrustTier,
  Visibility,
} from "./provider.types.ts";
import { listableWhere } from "./provider.visibility.ts";

/** Facets that count a column of the providers row (the rest count provider_labels and provider_packages rows). */
export const COLUMN_FACETS = [
  "agentType",
  "protocol",
  "trustTier",
  "health",
  "publisherVerified",
  "lifecycle",
  "visibility",
  "reviewStage",
] as const;
export type ColumnFacet = (typeof COLUMN_FACETS)[number];

/** The filter arguments of the list and its facets: a client sets a facet's value as the argument of its name. */
export function listFilterArgs(t: Parameters<Parameters<typeof builder.queryField>[1]>[0]) {
  return {
    search: t.arg.string({
      description:
        "Words that must all appear, as words or word prefixes, in code, name, summary, description, labels or package identifiers (case and accents ignored)",
    }),
    agentType: t.arg({ type: AgentType }),
    visibility: t.arg({ type: Visibility }),
    trustTier: t.arg({ type: TrustTier }),
    reviewStage: t.arg({ type: ReviewStage }),
    labels: t.arg.stringList({ description: "Providers carrying all of these labels (comma-separated in REST)" }),
    health: t.arg.stringList({
      description:
        "Providers whose confirmed health state is any of these: UP, AUTH_REQUIRED, WRONG_PROTOCOL, DOWN, UNKNOWN (comma-separated in REST)",
    }),
    packageRegistry: t.arg({
      type: PackageRegistryEnum,
      description: "Providers shipping at least one package from this registry",
    }),
    transport: t.arg({
      type: PackageTransportEnum,
      description:
        "Providers shipping at least one package a client talks to over this transport (with packageRegistry: the same package)",
    }),
    protocol: t.arg({ type: Protocol, description: "Providers whose endpoint speaks this protocol" }),
    publisherVerified: t.arg.boolean({
      description: "Providers whose publisher has (true) or has not (false) verified a domain covering the endpoint",
    }),
    lifecycle: t.arg({
      type: LifecycleEnum,
      description: "Providers in this lifecycle state (RETIRED ones are listed when asked for, as with includeRetired)",
    }),
    ...changeFeedArgs(t),
  };
}

/** The arguments as a resolver receives them. */
export interface ListFilterArgs {
  search?: string | null;
  agentType?: string | null;
  visibility?: string | null;
  trustTier?: string | null;
  reviewStage?: string | null;
  labels?: readonly string[] | null;
  health?: readonly string[] | null;
  packageRegistry?: string | null;
  transport?: string | null;
  protocol?: string | null;
  publisherVerified?: boolean | null;
  lifecycle?: string | null;
  includeRetired?: boolean | null;
  updatedSince?: Date | null;
}

/** A package filter: one package of that registry over that transport (either may be absent). */
export interface PackageFilter {
  registryType?: string;
  transport?: string;
}

export interface ListFilters {
  /** The search's words; empty: no search. */
  words: string[];
  labels: string[];
  health: HealthState[];
  since: Date | null;
  /** Who the caller may find in a list (listableWhere): always holds. */
  visible: Prisma.ProviderWhereInput;
  /** The filters on the providers row's own columns, each under the facet it belongs to. */
  columns: Partial<Record<ColumnFacet, Prisma.ProviderWhereInput>>;
  packages: PackageFilter | null;
  /** What identifies the list beside its words, for a search cursor's fingerprint. */
  context: unknown[];
}

/** The filters of the arguments, checked: a bad value is a 400 naming its argument, as in the list. */
export function listFilters(args: ListFilterArgs, ctx: Pick<Context, "viewer" | "config">): ListFilters {
  const words = searchWords(args.search);
  const labels = labelFilter(args.labels);
  if (!labels.ok) throw badInput("labels is not a valid filter", labels.errors);
  const health = healthFilter(args.health);
  if (!health.ok) throw badInput("health is not a valid filter", health.errors);
  if (health.value.length > 0 && !ctx.config.health.enabled) {
    throw badInput("Health checks are off in this registry (HEALTH=off): there is no health to filter by", [
      { path: "health", message: "health checks are off" },
    ]);
  }
  const since = args.updatedSince ?? null;
  const columns: ListFilters["columns"] = {};
  if (args.agentType) columns.agentType = { agentType: args.agentType };
  if (args.visibility) columns.visibility = { visibility: args.visibility };
  if (args.trustTier) columns.trustTier = { trustTier: args.trustTier };
  if (args.reviewStage) columns.reviewStage = { reviewStage: args.reviewStage };
  if (health.value.length > 0) columns.health = { healthState: { in: health.value } };
  // `protocol` is the endpoint's, a member of its JSON (provider.search.store.ts reads it).
  if (args.protocol) columns.protocol = { protocol: args.protocol } as Prisma.ProviderWhereInput;
  if (typeof args.publisherVerified === "boolean")
    columns.publisherVerified = { publisherVerified: args.publisherVerified };
  // An explicit lifecycle is asked for, RETIRED too; without one, lists hide RETIRED unless asked.
  const lifecycle = args.lifecycle
    ? { lifecycle: args.lifecycle }
    : lifecycleFilters({ includeRetired: args.includeRetired, since: null })[0];
  if (lifecycle) columns.lifecycle = lifecycle;
  const packages =
    args.packageRegistry || args.transport
      ? {
          ...(args.packageRegistry ? { registryType: args.packageRegistry } : {}),
          ...(args.transport ? { transport: args.transport } : {}),
        }
      : null;
  return {
    words,
    labels: labels.value,
    health: health.value,
    since,
    visible: listableWhere(ctx.viewer),
    columns,
    packages,
    context: [
      labels.value,
      args.agentType,
      args.visibility,
      args.trustTier,
      args.reviewStage,
      health.value,
      args.packageRegistry,
      args.transport,
      args.protocol,
      args.publisherVerified,
      args.lifecycle,
      Boolean(args.includeRetired),
      since?.toISOString(),
    ],
  };
}

/** The package filter as a `where`: `packageIndex` is one package holding every value given. */
export function packageWhere(filter: PackageFilter): Prisma.ProviderWhereInput {
  return { packageIndex: { some: filter } };
}

/**
 * Every filter but the search as `where` objects: the list's (nothing left out), or a facet's
 * (`without` its own filter; `packages` for the two package facets, which count package rows).
 */
export function filterWheres(
  filters: ListFilters,
  without?: { column?: ColumnFacet; packages?: boolean; columns?: boolean },
): Prisma.ProviderWhereInput[] {
  return [
    filters.visible,
    ...filters.labels.map((label) => ({ labelIndex: { some: { label } } })),
    ...(filters.packages && !without?.packages ? [packageWhere(filters.packages)] : []),
    ...(filters.since ? [{ updatedAt: { gte: filters.since } }] : []),
    ...(without?.columns
      ? []
      : Object.entries(filters.columns)
          .filter(([facet]) => facet !== without?.column)
          .map(([, where]) => where)),
  ];
}
