/**
 * Health's GraphQL surface: the profile's `health` (anyone who may see the profile) and `drift`
 * (its owner and reviewers), the summary's `healthState`, and `checkProviderHealth` (REST:
 * `POST /api/v1/providers/{providerCode}/health/check`), the owner's or a reviewer's "check now".
 */
import { builder, type Context } from "../builder.ts";
import { apiError, notFound } from "../errors.ts";
import { noteAppended } from "../feed/feed.outbox.ts";
import { ProviderRef, ProviderSummaryRef } from "../providers/provider.types.ts";
import { isPrivileged, ownerScope } from "../providers/provider.visibility.ts";
import { ReviewRef } from "../reviews/review.schema.ts";
import { HEALTH_STATES, type HealthState } from "./health.rules.ts";
import {
  claimNow,
  type DriftRecord,
  downApproved,
  driftOfProvider,
  type Health,
  healthOf,
  healthOfRow,
  recentChecks,
  syncTargets,
} from "./health.store.ts";
import { runCheck } from "./health.worker.ts";

export const HealthStateEnum = builder.enumType("HealthState", {
  description:
    "UP: answers its declared protocol. AUTH_REQUIRED: alive, but asks for credentials. WRONG_PROTOCOL: answers, but not the protocol or transport it declares. DOWN: not reachable (DNS, connection, TLS, 404/410). UNKNOWN: could not tell (a timeout, a 5xx, a refused address) or not checked yet.",
  values: HEALTH_STATES,
});

const HealthCheckRef = builder
  .objectRef<{ at: Date; outcome: HealthState; latencyMs: number | null; reason: string }>("AgentHealthCheck")
  .implement({
    description: "One check of the endpoint.",
    fields: (t) => ({
      at: t.expose("at", { type: "DateTime" }),
      outcome: t.field({ type: HealthStateEnum, resolve: (c) => c.outcome }),
      latencyMs: t.exposeInt("latencyMs", { nullable: true, description: "Until the first answer; null without one" }),
      reason: t.exposeString("reason", { description: "In plain words" }),
    }),
  });

const HealthRef = builder.objectRef<Health & { providerId: number }>("AgentHealth").implement({
  description:
    "The endpoint's health as the registry's prober finds it (not declared by the publisher, not versioned). A state changes only after consecutive checks agree.",
  fields: (t) => ({
    state: t.field({ type: HealthStateEnum, resolve: (h) => h.state }),
    since: t.expose("since", { type: "DateTime", description: "When the state was entered" }),
    checkedAt: t.expose("checkedAt", {
      type: "DateTime",
      nullable: true,
      description: "The last check; null before the first",
    }),
    latencyMs: t.exposeInt("latencyMs", { nullable: true, description: "The last check's time to its first answer" }),
    uptime24h: t.exposeFloat("uptime24h", {
      nullable: true,
      description:
        "Share of the checks in the last 24 hours that found it answering (UP or AUTH_REQUIRED), 0–1; null without checks",
    }),
    uptime7d: t.exposeFloat("uptime7d", { nullable: true, description: "The same over 7 days" }),
    uptime30d: t.exposeFloat("uptime30d", { nullable: true, description: "The same over 30 days" }),
    reason: t.exposeString("reason", { nullable: true, description: "The last check's finding, in plain words" }),
    recentChecks: t.field({
      type: [HealthCheckRef],
      // No arguments: REST (SOFA) would make a nested field's argument a parameter of the profile's route.
      description: `The latest ${RECENT_CHECKS} checks, newest first`,
      resolve: (h, _args, ctx) => recentChecks(ctx.db, h.providerId, RECENT_CHECKS),
    }),
  }),
});

const DriftKindEnum = builder.enumType("DriftKind", { values: ["MCP_TOOLS", "A2A_CARD"] as const });

const DriftRef = builder.objectRef<DriftRecord>("Drift").implement({
  description: "How the live agent differs from what was seen before and from what it declares.",
  fields: (t) => ({
    kind: t.field({ type: DriftKindEnum, resolve: (d) => d.kind }),
    detectedAt: t.expose("detectedAt", { type: "DateTime" }),
    summary: t.exposeString("summary", { description: "In plain words" }),
    sinceLastCheck: t.field({
      type: "JSON",
      description: "RFC 6902 patch from what the previous check saw to what this one saw (MCP: tools by name)",
      resolve: (d) => d.sinceLastCheck,
    }),
    fromDeclared: t.field({
      type: "JSON",
      nullable: true,
      description: "A2A: RFC 6902 patch from the registry's card (skills, interfaces, security) to the live one",
      resolve: (d) => d.fromDeclared,
    }),
    undeclaredTools: t.exposeStringList("undeclaredTools", {
      description: "MCP: live tools the profile does not declare",
    }),
    missingTools: t.exposeStringList("missingTools", { description: "MCP: declared tools the server does not list" }),
  }),
});

/**
 * The health of one provider: read with the profile when it came from a profile read, else now.
 * With HEALTH=off there is none: what was found before is no longer kept up to date.
 */
async function healthFor(ctx: Context, provider: { id: number }) {
  if (!ctx.config.health.enabled) return null;
  const row = (provider as { healthRow?: Record<string, unknown> | null }).healthRow;
  if (row !== undefined) return row === null ? null : { ...healthOfRow(row).health, providerId: provider.id };
  const found = (await healthOf(ctx.db, [provider.id])).get(provider.id);
  return found ? { ...found, providerId: provider.id } : null;
}

async function driftFor(ctx: Context, provider: { id: number }) {
  if (!ctx.config.health.enabled) return null;
  const row = (provider as { healthRow?: Record<string, unknown> | null }).healthRow;
  if (row !== undefined) return row === null ? null : healthOfRow(row).drift;
  return driftOfProvider(ctx.db, provider.id);
}

builder.prismaObjectFields(ProviderRef, (t) => ({
  health: t.field({
    type: HealthRef,
    nullable: true,
    description:
      "The endpoint's health; null when nothing is probed (no endpoint, another protocol without healthUrl, a retired agent)",
    resolve: (p, _args, ctx) => healthFor(ctx, p),
  }),
  drift: t.field({
    type: DriftRef,
    nullable: true,
    description:
      "The live agent's drift from what it declares; shown to the owner and reviewers only, null for others and while there is none",
    resolve: (p, _args, ctx) => (isPrivileged(ctx.viewer, p.id) ? driftFor(ctx, p) : null),
  }),
}));

builder.objectFields(ProviderSummaryRef, (t) => ({
  healthState: t.field({
    type: HealthStateEnum,
    nullable: true,
    description: "The confirmed health state; null when nothing is probed",
    resolve: (p, _args, ctx) =>
      ctx.config.health.enabled ? ((p as { healthState?: string | null }).healthState as HealthState | null) : null,
  }),
}));

builder.prismaObjectFields(ReviewRef, (t) => ({
  healthState: t.field({
    type: HealthStateEnum,
    nullable: true,
    description: "The confirmed health state of the agent under review; null when nothing is probed",
    select: { provider: { select: { healthState: true } } },
    resolve: (r, _args, ctx) => (ctx.config.health.enabled ? (r.provider.healthState as HealthState | null) : null),
  }),
}));

/** How many checks the profile lists. */
const RECENT_CHECKS = 10;

/** How long an approved agent must have been DOWN to be listed for reviewers. */
const LONG_DOWN_MS = 24 * 3_600_000;

const DownProviderRef = builder
  .objectRef<{ providerCode: string; name: string; since: Date; reason: string | null }>("DownProvider")
  .implement({
    description: "An approved agent whose endpoint has been DOWN for more than 24 hours.",
    fields: (t) => ({
      providerCode: t.exposeString("providerCode"),
      name: t.exposeString("name"),
      since: t.expose("since", { type: "DateTime", description: "When it went DOWN" }),
      reason: t.exposeString("reason", { nullable: true, description: "The last check's finding" }),
    }),
  });

builder.queryField("downProviders", (t) =>
  t.field({
    type: [DownProviderRef],
    description:
      "Approved agents DOWN for more than 24 hours, longest first: reviewers may suspend or ask their owners. Reviewers only.",
    authScopes: { reviewer: true },
    args: { limit: t.arg.int({ description: "1–100 (default 50)" }) },
    resolve: async (_root, args, ctx) => {
      const down = await downApproved(ctx.db, {
        now: new Date(),
        forMs: LONG_DOWN_MS,
        limit: Math.min(100, Math.max(1, args.limit ?? 50)),
      });
      if (down.length === 0) return [];
      const names = new Map(
        (
          await ctx.db.provider.findMany({
            where: { id: { in: down.map((d) => d.providerId) } },
            select: { id: true, providerCode: true, name: true },
          })
        ).map((p) => [p.id, p]),
      );
      return down.flatMap((d) => {
        const p = names.get(d.providerId);
        return p ? [{ providerCode: p.providerCode, name: p.name, since: d.since, reason: d.reason }] : [];
      });
    },
  }),
);

builder.mutationField("checkProviderHealth", (t) =>
  t.field({
    type: HealthRef,
    description: `Checks the provider's endpoint now and answers its health: its owner (agent token) or a reviewer, at most once a minute (HEALTH_CHECK_NOW_SECONDS). A result that disagrees with the state is checked again at once, so the answer is confirmed.`,
    authScopes: (_root, args, ctx) => ownerScope(ctx, args.providerCode, true),
    args: { providerCode: t.arg.string({ required: true }) },
    resolve: async (_root, args, ctx) => {
      const config = ctx.config.health;
      const provider = await ctx.db.provider.findUnique({
        where: { providerCode: args.providerCode },
        select: { id: true },
      });
      if (!provider) throw notFound(`No provider "${args.providerCode}"`);
      if (!config.enabled) throw apiError("CONFLICT", "Health checks are turned off in this registry (HEALTH=off)");
      // The prober follows profile changes within a poll; a check asked for right after one must not wait.
      await syncTargets(ctx.db, {
        now: new Date(),
        intervalSeconds: config.intervalSeconds,
        providerIds: [provider.id],
      });
      let everySeconds = config.checkNowSeconds;
      for (let round = 0; round < config.confirmations; round++) {
        const now = new Date();
        const claimed = await claimNow(ctx.db, provider.id, {
          now,
          leaseUntil: new Date(now.getTime() + config.leaseMs),
          everySeconds,
        });
        if ("kind" in claimed) {
          if (round > 0) break;
          if (claimed.kind === "none") {
            throw apiError("CONFLICT", "Nothing to check: the provider has no endpoint the registry probes");
          }
          throw apiError(
            "RATE_LIMITED",
            claimed.kind === "recent"
              ? "A check was asked for recently; try again later"
              : "A check of this provider is under way; try again shortly",
            { headers: { "Retry-After": String(claimed.retryAfterSeconds) } },
          );
        }
        const recorded = await runCheck(
          {
            db: ctx.db,
            outbound: ctx.health.outbound,
            config,
            base: ctx.config.publicUrl ?? new URL(ctx.request.url).origin,
            metrics: ctx.health.metrics,
          },
          claimed,
        );
        if (!recorded) break;
        noteAppended(recorded.events);
        // The follow-up checks that confirm a disagreeing result are part of this one request.
        everySeconds = 0;
        if (recorded.lost || recorded.result.outcome === recorded.state) break;
      }
      const health = await healthFor(ctx, provider);
      if (!health) throw notFound(`No provider "${args.providerCode}"`);
      return health;
    },
  }),
);
