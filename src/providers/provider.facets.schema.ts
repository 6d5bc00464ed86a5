/**
 * The list's facets (Query.providerFacets, GET /api/v1/providers/facets): how many providers the
 * list would answer for each value of each filter, for the caller's own query and filters and with
 * the list's visibility rule. What the counts mean is in provider.filters.ts; the SQL is in
 * provider.facets.store.ts.
 */
import { builder } from "../builder.ts";
import { HEALTH_STATES } from "../health/health.rules.ts";
import {
  AGENT_TYPES,
  PACKAGE_REGISTRIES,
  PACKAGE_TRANSPORTS,
  PROTOCOLS,
  REVIEW_STAGES,
  TRUST_TIERS,
  VISIBILITIES,
} from "./provider.enums.ts";
import { facetCounts, TOP_LABELS } from "./provider.facets.store.ts";
import { type ColumnFacet, listFilterArgs, listFilters } from "./provider.filters.ts";
import { LIFECYCLES } from "./provider.lifecycle.ts";

interface FacetCount {
  value: string;
  count: number;
}

/** The facets with a fixed set of values, each answered with every value, zeros too, in this order. */
const VALUES = {
  agentType: AGENT_TYPES,
  protocol: PROTOCOLS,
  transport: PACKAGE_TRANSPORTS,
  packageRegistry: PACKAGE_REGISTRIES,
  trustTier: TRUST_TIERS,
  health: HEALTH_STATES,
  publisherVerified: ["true", "false"],
  lifecycle: LIFECYCLES,
  visibility: VISIBILITIES,
  reviewStage: REVIEW_STAGES,
} satisfies Record<ColumnFacet | "transport" | "packageRegistry", readonly string[]>;
type FacetName = keyof typeof VALUES | "labels";
type Facets = Record<FacetName, FacetCount[]>;

const FacetCountRef = builder.objectRef<FacetCount>("FacetCount").implement({
  description: "One value of a facet and how many providers the list answers with it.",
  fields: (t) => ({
    value: t.exposeString("value", { description: "The value, as the list's argument of the facet's name takes it" }),
    count: t.exposeInt("count"),
  }),
});

const DESCRIPTIONS: Record<FacetName, string> = {
  agentType: "By agentType",
  protocol: "By the endpoint's protocol (agents without an endpoint have none)",
  transport: "By the transport of a package (a provider with packages of two transports counts in both)",
  packageRegistry: "By the registry of a package",
  trustTier: "By trustTier",
  health: "By confirmed health state (empty when health checks are off; agents not probed have none)",
  publisherVerified: "Whether a verified domain covers the endpoint: true or false",
  lifecycle: "By lifecycle; RETIRED is counted though the list hides it unless asked",
  visibility: "By visibility (an anonymous caller lists PUBLIC providers only)",
  reviewStage: "By review stage (an anonymous caller lists APPROVED providers only)",
  labels: `The ${TOP_LABELS} labels most carried by the providers the list answers (labels filter included: a label's count is how many of them also carry it), most first, ties by label`,
};

const FacetListsRef = builder.objectRef<Facets>("ProviderFacetLists").implement({
  description:
    "Each facet's values with their counts. A facet's counts leave out its own filter (choosing another value of it changes the list to that count); labels, which filter all-of, count within the list.",
  fields: (t) =>
    Object.fromEntries(
      (Object.keys(DESCRIPTIONS) as FacetName[]).map((name) => [
        name,
        t.field({ type: [FacetCountRef], description: DESCRIPTIONS[name], resolve: (f) => f[name] }),
      ]),
    ) as Record<FacetName, ReturnType<typeof t.field>>,
});

const ProviderFacetsRef = builder.objectRef<{ total: number; facets: Facets }>("ProviderFacets").implement({
  description: "Counts for the providers list's query and filters, as the caller may list them.",
  fields: (t) => ({
    total: t.exposeInt("total", { description: "How many providers the list answers for these arguments" }),
    facets: t.field({ type: FacetListsRef, resolve: (f) => f.facets }),
  }),
});

builder.queryFields((t) => ({
  providerFacets: t.field({
    type: ProviderFacetsRef,
    description:
      "How many providers the list (`providers`) answers for its arguments, and for each value of each of its filters: the list's own arguments, visibility rule and validation.",
    args: listFilterArgs(t),
    resolve: async (_root, args, ctx) => {
      const filters = listFilters(args, ctx);
      const rows = await facetCounts(ctx.db, filters);
      const facets = {} as Facets;
      for (const [name, values] of Object.entries(VALUES) as [keyof typeof VALUES, readonly string[]][]) {
        // With health checks off there is no health to filter by (the list refuses the filter).
        const shown = name === "health" && !ctx.config.health.enabled ? [] : values;
        const counted = new Map(rows.filter((r) => r.facet === name).map((r) => [r.value, r.count]));
        facets[name] = shown.map((value) => ({ value, count: counted.get(value) ?? 0 }));
      }
      facets.labels = rows
        .filter((r): r is FacetCount & { facet: string } => r.facet === "labels" && r.value !== null)
        .map(({ value, count }) => ({ value, count }))
        .sort((a, b) => b.count - a.count || (a.value < b.value ? -1 : a.value > b.value ? 1 : 0));
      return { total: rows.find((r) => r.facet === "")?.count ?? 0, facets };
    },
  }),
}));
