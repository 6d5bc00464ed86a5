/**
 * Verified publisher domains over GraphQL (and REST through SOFA): an owner asks for a challenge for
 * its endpoint's domain, publishes the proof, and asks the registry to check it. The profile lists
 * the verified domains to everyone who may see it; reviewers see, per queue item, whether the
 * endpoint's domain is verified.
 */
import { builder, type Context } from "../builder.ts";
import { badInput, conflict, notFound } from "../errors.ts";
import { noteFeed } from "../feed/feed.outbox.ts";
import { ProviderRef, ProviderSummaryRef } from "../providers/provider.types.ts";
import { ownerScope } from "../providers/provider.visibility.ts";
import { ReviewRef } from "../reviews/review.schema.ts";
import { vouchByDomain } from "./card.trust.ts";
import { newChallengeToken, proveControl } from "./domain.check.ts";
import { challengeOf, DOMAIN_METHODS, type DomainMethod, domainKey, normalizeDomain } from "./domain.rules.ts";
import {
  type DomainRow,
  endpointVerified,
  findDomain,
  providerEndpoint,
  recordCheck,
  saveChallenge,
} from "./domain.store.ts";

const DomainMethodEnum = builder.enumType("DomainMethod", {
  description: "How control of a domain was proved: HTTP (the well-known file) or DNS (the TXT record)",
  values: DOMAIN_METHODS,
});

builder.prismaObject("DomainVerification", {
  name: "VerifiedDomain",
  description: "A domain whose control the provider's owner proved; re-checked on a schedule.",
  fields: (t) => ({
    domain: t.exposeString("domain"),
    method: t.field({ type: DomainMethodEnum, resolve: (d) => (d.method ?? "HTTP") as DomainMethod }),
    verifiedAt: t.field({ type: "DateTime", resolve: (d) => d.verifiedAt ?? d.createdAt }),
    lastCheckedAt: t.field({ type: "DateTime", resolve: (d) => d.lastCheckedAt ?? d.verifiedAt ?? d.createdAt }),
  }),
});

const HttpProofRef = builder.objectRef<{ url: string; body: string }>("DomainHttpProof").implement({
  description: "Serve `body` as the whole content of `url` (text/plain, HTTP 200).",
  fields: (t) => ({ url: t.exposeString("url"), body: t.exposeString("body") }),
});
const DnsProofRef = builder.objectRef<{ name: string; value: string }>("DomainDnsProof").implement({
  description: "Publish a TXT record named `name` whose value is `value`.",
  fields: (t) => ({ name: t.exposeString("name"), value: t.exposeString("value") }),
});

type Challenge = DomainRow & { providerCode: string };
const DomainChallengeRef = builder.objectRef<Challenge>("DomainChallenge").implement({
  description:
    "A challenge to prove control of a domain: publish either proof, then ask for a check before it expires. Answered to the owner only.",
  fields: (t) => ({
    domain: t.exposeString("domain"),
    token: t.exposeString("token"),
    http: t.field({ type: HttpProofRef, resolve: (c) => challengeOf(c.domain, c.providerCode, c.token).http }),
    dns: t.field({ type: DnsProofRef, resolve: (c) => challengeOf(c.domain, c.providerCode, c.token).dns }),
    expiresAt: t.expose("expiresAt", { type: "DateTime" }),
    verified: t.boolean({
      description: "Whether the domain is already verified",
      resolve: (c) => c.state === "VERIFIED",
    }),
  }),
});

interface CheckAnswer {
  domain: string;
  verified: boolean;
  method: DomainMethod | null;
  verifiedAt: Date | null;
  lastCheckedAt: Date | null;
  reason: string | null;
}
const DomainCheckRef = builder.objectRef<CheckAnswer>("DomainCheck").implement({
  description: "The outcome of a check. A failed check is an answer too: verified false, and why.",
  fields: (t) => ({
    domain: t.exposeString("domain"),
    verified: t.exposeBoolean("verified", { description: "Whether the domain is verified after this check" }),
    method: t.field({ type: DomainMethodEnum, nullable: true, resolve: (c) => c.method }),
    verifiedAt: t.field({ type: "DateTime", nullable: true, resolve: (c) => c.verifiedAt }),
    lastCheckedAt: t.field({ type: "DateTime", nullable: true, resolve: (c) => c.lastCheckedAt }),
    reason: t.exposeString("reason", {
      nullable: true,
      description: "Why this check found no proof; null when it did",
    }),
  }),
});

// The profile: verified domains for everyone who may see it, read with the profile's one statement
// (provider.store.ts). Challenges are not public: the owner has them from requestDomainChallenge.
builder.prismaObjectField(ProviderRef, "verifiedDomains", (t) =>
  t.relation("domains", {
    description: "Domains whose control the owner proved (the endpoint's host or a parent of it)",
    query: { where: { state: "VERIFIED" }, orderBy: { id: "asc" } },
  }),
);
// The profile carries it too: with it, the profile is the whole public state a mirror hashes.
builder.prismaObjectField(ProviderRef, "publisherVerified", (t) =>
  t.exposeBoolean("publisherVerified", {
    description: "Whether the endpoint's domain is verified: one of the provider's verified domains covers its host",
  }),
);
// The list form: a column of the providers row (domain.store.ts keeps it in step with the domains),
// so the three statements that read summaries carry it without a query per row.
builder.objectField(ProviderSummaryRef, "publisherVerified", (t) =>
  t.exposeBoolean("publisherVerified", {
    description: "Whether the endpoint's domain is verified: one of the provider's verified domains covers its host",
  }),
);
// The queue: its page reads the flag with each review (review.store.ts); other look-ups ask here.
builder.prismaObjectField(ReviewRef, "endpointVerified", (t) =>
  t.boolean({
    description: "Whether the provider's endpoint host is covered by one of its verified domains",
    resolve: (r, _args, ctx) => {
      const read = (r as { endpointVerified?: unknown }).endpointVerified;
      return typeof read === "boolean" ? read : endpointVerified(ctx.db, r.providerId);
    },
  }),
);

/** The provider (its id and endpoint) whose domains the caller, its owner, manages. */
async function ownedProvider(ctx: Context, providerCode: string) {
  const provider = await providerEndpoint(ctx.db, providerCode);
  if (!provider) throw notFound(`No provider "${providerCode}"`);
  return provider;
}

builder.mutationFields((t) => ({
  requestDomainChallenge: t.field({
    type: DomainChallengeRef,
    description:
      "Asks for a challenge to prove control of a domain: the endpoint's host or a parent of it. Asking again for a pending domain replaces its token and expiry; a verified domain keeps its token. The owner only.",
    authScopes: (_root, args, ctx) => ownerScope(ctx, args.providerCode),
    args: {
      providerCode: t.arg.string({ required: true }),
      domain: t.arg.string({ required: true, description: "e.g. example.com for an endpoint at api.example.com" }),
    },
    resolve: async (_root, args, ctx) => {
      const provider = await ownedProvider(ctx, args.providerCode);
      const domain = normalizeDomain(args.domain, provider.url);
      if (!domain.ok) throw badInput("domain is not a domain this agent can verify", domain.errors);
      const row = await saveChallenge(ctx.db, {
        providerId: provider.id,
        domain: domain.value,
        token: newChallengeToken(),
        now: new Date(),
        ttlSeconds: ctx.config.trust.challengeTtlSeconds,
      });
      ctx.response.headers.set("Cache-Control", "no-store");
      return { ...row, providerCode: args.providerCode };
    },
  }),

  checkDomain: t.field({
    type: DomainCheckRef,
    description:
      "Checks the proof of a domain asked for: the well-known file first, then the TXT record. A failed check answers verified false and why. The owner only.",
    authScopes: (_root, args, ctx) => ownerScope(ctx, args.providerCode),
    args: {
      providerCode: t.arg.string({ required: true }),
      domain: t.arg.string({ required: true }),
    },
    resolve: async (_root, args, ctx) => {
      const provider = await ownedProvider(ctx, args.providerCode);
      const name = domainKey(args.domain);
      const row = await findDomain(ctx.db, provider.id, name);
      if (!row) throw notFound(`No challenge for "${name}": ask for one first`);
      const now = new Date();
      if (row.state === "PENDING" && row.expiresAt < now) {
        throw conflict(`The challenge for ${name} expired at ${row.expiresAt.toISOString()}; ask for a new one`);
      }
      // The network, outside any transaction; the outcome is written on the row as it was checked.
      const proof = await proveControl(ctx.outbound, {
        domain: row.domain,
        providerCode: args.providerCode,
        token: row.token,
      });
      const { trust } = ctx.config;
      const outcome = await recordCheck(ctx.db, row, proof, {
        now: new Date(),
        intervalSeconds: trust.recheckIntervalSeconds > 0 ? trust.recheckIntervalSeconds : 86_400,
        ttlSeconds: trust.challengeTtlSeconds,
        actor: `agent:${args.providerCode}`,
      });
      // A card imported with a key this domain publishes is vouched for now (its JWKS fetched
      // outside any transaction); gaining the domain already announces the changed profile.
      if (outcome.gained) await vouchByDomain(ctx.db, ctx.outbound, provider.id, outcome.row.domain);
      noteFeed(...outcome.notes);
      ctx.response.headers.set("Cache-Control", "no-store");
      const verified = outcome.row.state === "VERIFIED";
      return {
        domain: outcome.row.domain,
        verified,
        method: verified ? (outcome.row.method as DomainMethod) : null,
        verifiedAt: verified ? outcome.row.verifiedAt : null,
        lastCheckedAt: outcome.row.lastCheckedAt,
        reason: proof.verified ? null : proof.reason,
      };
    },
  }),
}));
