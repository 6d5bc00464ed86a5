/**
 * The benchmark's peer target: PostGraphile v5, an automatic GraphQL API over the same PostgreSQL
 * tables, measured side by side with the service for `detail`, every list shape the directory
 * sends (`list`, `list-all`, `list-type`, `search`) and its `facets`.
 *
 * - `installPeer` installs PostGraphile from the npm registry into a scratch folder,
 *   `data/bench/postgraphile/` (not a dependency of the project: its package.json and node_modules
 *   are left alone), and copies the server script, postgraphile.server.mjs, next to it.
 * - `peerRequest` is the GraphQL POST the load generator sends to the peer for an operation: the
 *   same rows and fields as the service's anonymous REST read (below).
 * - `comparePeer` normalises the service's answer and the peer's to one shape and says where they
 *   differ; the bench checks it once per (size, operation) before measuring.
 *
 * The service's reads, as an anonymous client makes them (response cache off):
 * - detail: `GET /api/v1/providers/{code}`, the whole Provider type as SOFA selects it: the row,
 *   its review timeline (oldest first), its verified domains, the codes of its predecessors (the
 *   providers naming it as their successor, by code, at most 100, those the caller may see), in one
 *   statement (src/providers/provider.store.ts `readProvider`). The peer asks for the same row by its
 *   unique providerCode with the same related rows, and its predecessors in a second root field.
 * - list: `GET /api/v1/providers?agentType=ASSISTANT&trustTier=VERIFIED&labels=<COMMON_LABEL>&limit=20`:
 *   the 20 newest (updatedAt, id descending) summaries of the providers an anonymous caller may list
 *   (PUBLIC, APPROVED: `listableWhere`; ACTIVE or DEPRECATED: `lifecycleFilters`) of that type, tier
 *   and label (an EXISTS on `provider_labels`), and whether there is a next page (it reads 21 rows).
 *   The peer filters on the same columns, the label with a `some` filter on the relation, and asks
 *   for `pageInfo.hasNextPage`, for which PostGraphile reads 21 rows too.
 * - list-all: `GET /api/v1/providers?limit=20`, the directory's first page (no filter but the
 *   anonymous list's own); list-type: `?agentType=ASSISTANT&limit=20`. The same as list, with only
 *   those filters (peerListQuery writes each shape's query). Compared alike: rows, order, next page.
 * - search: `?search=<SEARCH_WORDS.common>&limit=20`: the list's filters and the full-text match
 *   `"searchVector" @@ to_tsquery('simple', provider_search_fold('<word>:*'))` on the service's own
 *   generated column and GIN index; the service ranks the newest 250 filtered matches (ts_rank_cd,
 *   provider.search.store.ts) and answers the best 20 with an offset cursor. PostGraphile exposes
 *   the tsvector column to the connection filter with equality only, so the server adds a `matches`
 *   operator doing that very match (postgraphile.server.mjs); it has no ranking, so the peer asks
 *   for the 20 newest matches (id descending, the order the service walks them in) and hasNextPage.
 *   The pages cannot hold the same rows. Compared, through a second, unmeasured request to the
 *   peer (peerCheckRequest): every row of the service's page matches the peer's filter, with the
 *   same summary; each is among the peer's newest 250 matches (the block the service ranked); the
 *   page holds min(20, matches) rows; both say alike whether there is a next page. Not compared:
 *   the order within the page (relevance against none) and which 20 of the 250 the page holds.
 *   The peer's measured query reads 21 rows where the service reads and ranks up to 250: the
 *   service's extra work is the price of ranking, and is measured as such.
 * - facets: `GET /api/v1/providers/facets`, no filter: the total and each facet's counts, a facet
 *   leaving out its own filter (provider.filters.ts), so every facet counts the listable, ACTIVE or
 *   DEPRECATED providers but lifecycle, which counts the listable ones in every lifecycle; the top
 *   20 labels. The peer (PEER_FACETS_QUERY) groups with @graphile/pg-aggregates'
 *   groupedAggregates (agentType, trustTier, publisherVerified, visibility, reviewStage, lifecycle;
 *   labels on provider_labels, package registries and transports on provider_packages, each a
 *   distinct count of providers under a filter on the provider), and counts the protocol, a member
 *   of the endpoint's JSON that it cannot group by, with one totalCount per protocol under the
 *   filter's JSON `contains`. groupedAggregates has no order or limit: the peer answers every label
 *   and the comparison takes the top 20 as the service orders them (count, then label byte order).
 *   Compared: the total, every non-zero count of every facet by value, the top labels in order.
 *   Not compared: health, which the service answers empty with health checks off (the bench runs it
 *   with HEALTH=off; the comparison holds it to an empty list and the peer does not count it), and
 *   the service's zero counts (it lists every value of a fixed facet; the peer's groups are those
 *   that exist).
 *
 * Compared although the service derives them, because they come from the tables and the service
 * reads them for this answer: `predecessors` (providers."successorCode"), `verifiedDomains` (the
 * VERIFIED rows of domain_verifications), `cardSignature` (the providers."cardSignature" JSON column).
 *
 * What the comparison leaves out, because the tables do not hold it as such:
 * - `id` of Provider and ProviderSummary: the service's Relay Node IDs (base64 of `Provider:<code>`),
 *   an encoding of its own; PostGraphile's Node IDs are another. Both come from the key compared.
 * - the list's `nextCursor`: an opaque encoding of the service's; compared as what it holds, the
 *   last row's (updatedAt, id) when there is a next page, against the peer's last row and
 *   `hasNextPage`. PostGraphile's own cursor is not asked for.
 * What anonymous readers of the service are not shown, so the peer does not read it either:
 * - `contactEmail` and `tokens` (null for them), a timeline event's `note` (null), a reviewer's
 *   identity in `actor` (shown as `reviewer`): the peer does not select contactEmail, tokens or note,
 *   and the comparison holds the service's to null; the peer's actors are shown as the service shows
 *   them (`reviewer:<subject>` → `reviewer`, src/providers/provider.visibility.ts `shownActor`).
 * - a predecessor the anonymous reader may not see (PRIVATE, REJECTED or SUSPENDED): the peer reads
 *   the same 100 rows as the service with their visibility and stage, and the comparison drops
 *   those the service's `canSee` drops.
 * Where PostGraphile answers a whole JSON column (capabilities, models, tools, endpoint, policy,
 * roles, cardSignature), both sides are projected to the service's fields, absent members as null.
 * The service's defaults of a verified domain (`method` HTTP, `verifiedAt` its createdAt,
 * `lastCheckedAt` its verifiedAt) are applied to the peer's columns alike.
 */
import { execFileSync } from "node:child_process";
import { copyFileSync, existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { COMMON_LABEL, SEARCH_WORDS } from "../../../scripts/synthetic/vocabulary.ts";
import type { Viewer } from "../../../src/auth/viewer.ts";
import { PROTOCOLS } from "../../../src/providers/provider.enums.ts";
import { canSee, shownActor } from "../../../src/providers/provider.visibility.ts";

/**
 * The peer's packages, exact: PostGraphile v5, the connection filter plugin of v5 (peer postgraphile
 * ^5.1.4) and Graphile's aggregates plugin of v5 (0.2.0-rc.2, peer graphile-build ^5.0.0-rc.5: the
 * v4 line is 0.1.x) for the facets' counts.
 */
export const PEER_PACKAGES = {
  postgraphile: "5.1.5",
  "postgraphile-plugin-connection-filter": "4.0.1",
  "@graphile/pg-aggregates": "0.2.0-rc.2",
} as const;

const SERVER_SOURCE = fileURLToPath(new URL("./postgraphile.server.mjs", import.meta.url));
const SERVER_NAME = "postgraphile.server.mjs";

/** The peer's readiness probe: `POST /graphql` of `{__typename}`, ready when it answers 200. */
export const PEER_READY = {
  method: "POST",
  path: "/graphql",
  headers: { "content-type": "application/json" },
  body: JSON.stringify({ query: "{__typename}" }),
} as const;

/** The installed version of a package in `dir`, or null. */
function installedVersion(dir: string, name: string): string | null {
  const manifest = `${dir}node_modules/${name}/package.json`;
  if (!existsSync(manifest)) return null;
  return (JSON.parse(readFileSync(manifest, "utf8")) as { version?: string }).version ?? null;
}

/**
 * Installs PostGraphile into `${root}data/bench/postgraphile/` from the npm registry (npm install,
 * only when the installed versions are not the pinned ones), copies the server script there and
 * answers the copy's absolute path. `root` ends with a slash, as the bench's ROOT does.
 */
export function installPeer(root: string): string {
  const dir = `${root}data/bench/postgraphile/`;
  mkdirSync(dir, { recursive: true });
  const manifest = `${JSON.stringify(
    {
      name: "bench-peer-postgraphile",
      private: true,
      description: "The benchmark's PostGraphile peer (tests/bench/peer/postgraphile.ts); installed by the bench.",
      type: "module",
      dependencies: PEER_PACKAGES,
    },
    null,
    2,
  )}\n`;
  const manifestPath = `${dir}package.json`;
  if (!existsSync(manifestPath) || readFileSync(manifestPath, "utf8") !== manifest) {
    writeFileSync(manifestPath, manifest);
  }
  const stale = Object.entries(PEER_PACKAGES).filter(([name, version]) => installedVersion(dir, name) !== version);
  if (stale.length > 0) {
    process.stderr.write(`bench: installing ${stale.map(([n, v]) => `${n}@${v}`).join(", ")} into ${dir}\n`);
    // npm's output goes to stderr, as the bench's log does.
    // `--prefix`: this folder, even when the bench runs under `npm run` (whose env names /work/main as the local prefix).
    execFileSync("npm", ["install", "--no-audit", "--no-fund", "--prefix", dir], { cwd: dir, stdio: ["ignore", 2, 2] });
    const still = Object.entries(PEER_PACKAGES).filter(([name, version]) => installedVersion(dir, name) !== version);
    if (still.length > 0)
      throw new Error(`npm install left ${still.map(([n]) => n).join(", ")} not at the pinned version`);
  }
  const server = resolve(dir, SERVER_NAME);
  copyFileSync(SERVER_SOURCE, server);
  return server;
}

// ── Requests ──────────────────────────────────────────────────────────────────────────────────
/**
 * The profile: the row by its unique code, every column an anonymous reader is shown (not
 * contactEmail), its review timeline oldest first (not the notes), its verified domains; and its
 * predecessors as the service reads them (by code, at most 100), with what `canSee` needs.
 */
export const PEER_DETAIL_QUERY = `query PeerDetail($code: String!) {
  providerByProviderCode(providerCode: $code) {
    providerCode name summary description homepageUrl labels agentType visibility
    capabilities models tools endpoint packages policy roles trustTier reviewStage
    version createdAt updatedAt lifecycle lifecycleMessage successorCode cardSignature
    reviewEventsByProviderId(orderBy: ROW_ID_ASC) { nodes { at kind actor } }
    domainVerificationsByProviderId(condition: { state: "VERIFIED" }, orderBy: ROW_ID_ASC) {
      nodes { domain method createdAt verifiedAt lastCheckedAt }
    }
  }
  predecessors: allProviders(condition: { successorCode: $code }, orderBy: PROVIDER_CODE_ASC, first: 100) {
    nodes { providerCode visibility reviewStage }
  }
}`;

/** A list shape's filters beyond what every anonymous list holds: the bench's requests of each. */
export interface PeerListFilter {
  agentType?: string;
  trustTier?: string;
  label?: string;
}

/** The list shapes the bench measures, as the service's request (tests/bench/bench.ts) filters them. */
export const PEER_LISTS = {
  list: { agentType: "ASSISTANT", trustTier: "VERIFIED", label: COMMON_LABEL },
  "list-all": {},
  "list-type": { agentType: "ASSISTANT" },
} as const satisfies Record<string, PeerListFilter>;
export type PeerListOp = keyof typeof PEER_LISTS;

/** What every anonymous list holds (listableWhere; lifecycleFilters without includeRetired). */
const LISTABLE = `visibility: "PUBLIC", reviewStage: "APPROVED"`;
const LISTED_LIFECYCLE = `lifecycle: { in: ["ACTIVE", "DEPRECATED"] }`;
/** The columns of a summary, and `rowId` for the order's tie-break, which the service's next cursor holds. */
const SUMMARY_NODE = `rowId providerCode name summary agentType visibility trustTier reviewStage labels endpoint updatedAt
      lifecycle lifecycleMessage successorCode publisherVerified`;

/**
 * A list: what the service's list filters on (listableWhere, lifecycleFilters, the arguments given,
 * a label as an EXISTS), in its order, `first` rows and whether there are more. Only the filters
 * the shape has are written, as a client of PostGraphile would write each query.
 */
export function peerListQuery(filter: PeerListFilter): { query: string; variables: Record<string, unknown> } {
  const args = [
    ...(filter.agentType ? ["$agentType: String!"] : []),
    ...(filter.trustTier ? ["$trustTier: String!"] : []),
    ...(filter.label ? ["$label: String!"] : []),
    "$first: Int!",
  ];
  const condition = [
    ...(filter.agentType ? ["agentType: $agentType"] : []),
    ...(filter.trustTier ? ["trustTier: $trustTier"] : []),
    LISTABLE,
  ];
  const where = [
    LISTED_LIFECYCLE,
    ...(filter.label ? ["providerLabelsByProviderId: { some: { label: { equalTo: $label } } }"] : []),
  ];
  const query = `query PeerList(${args.join(", ")}) {
  allProviders(
    condition: { ${condition.join(", ")} }
    filter: { ${where.join(", ")} }
    orderBy: [UPDATED_AT_DESC, ROW_ID_DESC]
    first: $first
  ) {
    nodes { ${SUMMARY_NODE} }
    pageInfo { hasNextPage }
  }
}`;
  return { query, variables: { ...filter, first: 20 } };
}

/**
 * The search: the service's match (`"searchVector" @@ to_tsquery('simple', provider_search_fold(…))`,
 * through the server's `matches` operator) with the list's filters, newest created first (the
 * order the service walks its matches in; PostGraphile has no ranking), 20 rows and whether there
 * are more.
 */
export const PEER_SEARCH_QUERY = `query PeerSearch($match: String!, $first: Int!) {
  allProviders(
    condition: { ${LISTABLE} }
    filter: { ${LISTED_LIFECYCLE}, searchVector: { matches: $match } }
    orderBy: [ROW_ID_DESC]
    first: $first
  ) {
    nodes { ${SUMMARY_NODE} }
    pageInfo { hasNextPage }
  }
}`;

/** The service's search window (provider.search.store.ts searchTuning.window): its first page ranks the newest this many matches. */
const SEARCH_WINDOW = 250;

/**
 * Not measured, only for the comparison: the rows of the service's page among the peer's matches
 * (by code), and the codes of the peer's newest SEARCH_WINDOW matches.
 */
const PEER_SEARCH_CHECK_QUERY = `query PeerSearchCheck($match: String!, $codes: [String!]!, $window: Int!) {
  page: allProviders(
    condition: { ${LISTABLE} }
    filter: { ${LISTED_LIFECYCLE}, searchVector: { matches: $match }, providerCode: { in: $codes } }
  ) {
    nodes { ${SUMMARY_NODE} }
  }
  newest: allProviders(
    condition: { ${LISTABLE} }
    filter: { ${LISTED_LIFECYCLE}, searchVector: { matches: $match } }
    orderBy: [ROW_ID_DESC]
    first: $window
  ) {
    nodes { providerCode }
  }
}`;

/** The service's tsQuery of the bench's one-word search (provider.search.store.ts `tsQuery`): a prefix term. */
const searchMatch = (word: string) => `${word}:*`;

/**
 * The directory's facets, with no filter, as the service counts them (provider.filters.ts,
 * provider.facets.store.ts): each facet leaves out its own filter, so every facet counts the
 * listable (PUBLIC, APPROVED) providers that are ACTIVE or DEPRECATED, but lifecycle, which counts
 * them in every lifecycle. groupedAggregates (@graphile/pg-aggregates) groups by a column; the
 * protocol, a member of the endpoint's JSON, is one totalCount per value with the filter's JSON
 * `contains`; labels and packages are grouped on their own tables with a filter on the provider.
 * Every label is answered (groupedAggregates has no order or limit): the top 20 are the client's.
 */
export const PEER_FACETS_QUERY = `query PeerFacets {
  listed: allProviders(condition: { ${LISTABLE} }, filter: { ${LISTED_LIFECYCLE} }) {
    totalCount
${(
  [
    ["agentType", "AGENT_TYPE"],
    ["trustTier", "TRUST_TIER"],
    ["publisherVerified", "PUBLISHER_VERIFIED"],
    ["visibility", "VISIBILITY"],
    ["reviewStage", "REVIEW_STAGE"],
  ] as const
)
  .map(([facet, column]) => `    ${facet}: groupedAggregates(groupBy: [${column}]) { keys distinctCount { rowId } }`)
  .join("\n")}
  }
  lifecycle: allProviders(condition: { ${LISTABLE} }) {
    groupedAggregates(groupBy: [LIFECYCLE]) { keys distinctCount { rowId } }
  }
${PROTOCOLS.map(
  (protocol) =>
    `  protocol_${protocol}: allProviders(condition: { ${LISTABLE} }, filter: { ${LISTED_LIFECYCLE}, endpoint: { contains: { protocol: "${protocol}" } } }) { totalCount }`,
).join("\n")}
  labels: allProviderLabels(filter: { providerByProviderId: { visibility: { equalTo: "PUBLIC" }, reviewStage: { equalTo: "APPROVED" }, ${LISTED_LIFECYCLE} } }) {
    groupedAggregates(groupBy: [LABEL]) { keys distinctCount { providerId } }
  }
${(
  [
    ["packageRegistry", "REGISTRY_TYPE"],
    ["transport", "TRANSPORT"],
  ] as const
)
  .map(
    ([facet, column]) =>
      `  ${facet}: allProviderPackages(filter: { providerByProviderId: { visibility: { equalTo: "PUBLIC" }, reviewStage: { equalTo: "APPROVED" }, ${LISTED_LIFECYCLE} } }) {
    groupedAggregates(groupBy: [${column}]) { keys distinctCount { providerId } }
  }`,
  )
  .join("\n")}
}`;

export type PeerOp = "detail" | PeerListOp | "search" | "facets";
export const PEER_OPS: readonly PeerOp[] = ["detail", "list", "list-all", "list-type", "search", "facets"];

/** The GraphQL POST the load generator sends to the peer for `op`. */
export function peerRequest(
  op: PeerOp,
  fixture: { code: string },
): { method: "POST"; path: string; headers: Record<string, string>; body: string } {
  const body =
    op === "detail"
      ? { query: PEER_DETAIL_QUERY, variables: { code: fixture.code } }
      : op === "search"
        ? { query: PEER_SEARCH_QUERY, variables: { match: searchMatch(SEARCH_WORDS.common), first: 20 } }
        : op === "facets"
          ? { query: PEER_FACETS_QUERY, variables: {} }
          : peerListQuery(PEER_LISTS[op]);
  return graphqlPost(body);
}

/**
 * A second request to the peer for the comparison of `op`, not measured, built from the service's
 * answer: for search, the service's page among the peer's matches. Null when `op` needs none.
 */
export function peerCheckRequest(op: PeerOp, serviceAnswer: unknown): ReturnType<typeof graphqlPost> | null {
  if (op !== "search") return null;
  const codes = serviceList(serviceAnswer, false).items.map((item) => String(item.providerCode));
  return graphqlPost({
    query: PEER_SEARCH_CHECK_QUERY,
    variables: { match: searchMatch(SEARCH_WORDS.common), codes, window: SEARCH_WINDOW },
  });
}

function graphqlPost(body: { query: string; variables: Record<string, unknown> }): {
  method: "POST";
  path: string;
  headers: Record<string, string>;
  body: string;
} {
  // `accept`: answered as application/json, as the service answers (grafserv's default is
  // application/graphql-response+json; the body is the same).
  return {
    method: "POST",
    path: "/graphql",
    headers: { "content-type": "application/json", accept: "application/json" },
    body: JSON.stringify(body),
  };
}

// ── Comparison ────────────────────────────────────────────────────────────────────────────────
type Json = null | boolean | number | string | Json[] | { [key: string]: Json };
type Obj = Record<string, unknown>;

const isObj = (v: unknown): v is Obj => typeof v === "object" && v !== null && !Array.isArray(v);
const obj = (v: unknown, what: string): Obj => {
  if (!isObj(v)) throw new Error(`${what} is not an object: ${short(v)}`);
  return v;
};
const arr = (v: unknown, what: string): unknown[] => {
  if (!Array.isArray(v)) throw new Error(`${what} is not a list: ${short(v)}`);
  return v;
};
function short(v: unknown): string {
  const text = JSON.stringify(v) ?? String(v);
  return text.length > 120 ? `${text.slice(0, 117)}...` : text;
}

/** A scalar as compared: strings (enums too) as they are, absent as null. */
const scalar = (v: unknown): Json => (v === undefined ? null : (v as Json));

/**
 * An instant as epoch ms: the service's ISO strings end in `Z`; PostgreSQL's `timestamp(3)` (without
 * zone, holding UTC, as Prisma writes it) comes from PostGraphile without an offset.
 */
function instant(v: unknown, what: string): number | null {
  if (v === null || v === undefined) return null;
  if (typeof v !== "string") throw new Error(`${what} is not a timestamp: ${short(v)}`);
  const zoned = /(Z|[+-]\d\d:?\d\d)$/.test(v) ? v : `${v}Z`;
  const ms = Date.parse(zoned);
  if (Number.isNaN(ms)) throw new Error(`${what} is not a timestamp: ${short(v)}`);
  return ms;
}

/** The members of `fields` of an object (a JSON column or a GraphQL object), absent as null. */
function pick(v: unknown, fields: readonly string[], what: string): Obj | null {
  if (v === null || v === undefined) return null;
  const o = obj(v, what);
  // Lists inside the sections (tags, modes, scopes, use cases) are compared as they are, in order.
  return Object.fromEntries(fields.map((f) => [f, scalar(o[f])]));
}
const picks = (v: unknown, fields: readonly string[], what: string) =>
  arr(v, what).map((item, i) => pick(item, fields, `${what}[${i}]`));

/** The service's GraphQL selection of the sections (tests/bench/bench.ts PROFILE_FIELDS). */
const CAPABILITY = ["key", "name", "description", "tags", "inputModes", "outputModes"];
const MODEL = ["vendor", "model", "role", "contextWindow"];
const TOOL = ["name", "kind", "description", "scopes"];
const ENDPOINT = ["url", "protocol", "authScheme", "healthUrl"];
// A package compared by what names it; its variables and arguments are the same JSON either way.
const PACKAGE = ["registryType", "identifier", "version", "fileSha256"];
const POLICY = [
  "dataRetentionDays",
  "humanOversight",
  "allowedUseCases",
  "prohibitedUseCases",
  "termsUrl",
  "privacyUrl",
];
const ROLE = ["subject", "role"];
const CARD_SIGNATURE = ["status", "domain", "kid"];
/** Scalar columns of the profile and of a summary, compared as they are. */
const PROFILE_SCALARS = [
  "providerCode",
  "name",
  "summary",
  "description",
  "homepageUrl",
  "agentType",
  "visibility",
  "trustTier",
  "reviewStage",
  "version",
  "lifecycle",
  "lifecycleMessage",
  "successorCode",
];
const SUMMARY_SCALARS = [
  "providerCode",
  "name",
  "summary",
  "agentType",
  "visibility",
  "trustTier",
  "reviewStage",
  "lifecycle",
  "lifecycleMessage",
  "successorCode",
  "publisherVerified",
];

/** The service's own rules, for the reader both answers are for (no provider is an anonymous reader's own: id 0). */
const ANONYMOUS: Viewer = { kind: "anonymous" };

/** A GraphQL answer's `data`, or why there is none. */
function dataOf(answer: unknown, who: string): Obj {
  const o = obj(answer, `${who}'s answer`);
  if (Array.isArray(o.errors) && o.errors.length > 0) throw new Error(`${who} answered errors: ${short(o.errors)}`);
  return obj(o.data, `${who}'s data`);
}

/** What the comparison puts for a field missing from the service's REST answer: unequal to anything the peer has. */
const ABSENT = "(absent from the service's answer)";

/**
 * Fields the service's raw object `raw` does not hold: in a REST answer (SOFA selects every field)
 * a difference, marked ABSENT; in a GraphQL answer, the bench's selection decides what is compared,
 * so they are left out on both sides.
 */
function settleAbsent(raw: Obj, service: Obj, peer: Obj, graphql: boolean): void {
  for (const key of Object.keys(service)) {
    if (key in raw) continue;
    if (graphql) {
      delete service[key];
      delete peer[key];
    } else {
      service[key] = ABSENT;
    }
  }
}

/** The service's answer as its profile, and whether it came as GraphQL (`{ data: { provider } }`) rather than REST. */
function serviceProfile(answer: unknown): { raw: Obj; graphql: boolean } {
  const a = obj(answer, "the service's answer");
  const graphql = "data" in a || "errors" in a;
  return { raw: obj(graphql ? dataOf(a, "the service").provider : a, "the service's profile"), graphql };
}

/** The profile, from the service's answer. */
function serviceDetail(p: Obj): Obj {
  // A field the answer does not hold is null here; settleAbsent decides what that means.
  const field = <T>(key: string, read: (value: unknown) => T) => (key in p ? read(p[key]) : null);
  return {
    ...Object.fromEntries(PROFILE_SCALARS.map((f) => [f, scalar(p[f])])),
    labels: scalar(p.labels),
    contactEmail: scalar(p.contactEmail),
    tokens: scalar(p.tokens),
    capabilities: field("capabilities", (v) => picks(v, CAPABILITY, "capabilities")),
    models: field("models", (v) => picks(v, MODEL, "models")),
    tools: field("tools", (v) => picks(v, TOOL, "tools")),
    endpoint: field("endpoint", (v) => pick(v, ENDPOINT, "endpoint")),
    packages: field("packages", (v) => picks(v, PACKAGE, "packages")),
    policy: field("policy", (v) => pick(v, POLICY, "policy")),
    roles: field("roles", (v) => picks(v, ROLE, "roles")),
    cardSignature: field("cardSignature", (v) => pick(v, CARD_SIGNATURE, "cardSignature")),
    createdAt: field("createdAt", (v) => instant(v, "createdAt")),
    updatedAt: field("updatedAt", (v) => instant(v, "updatedAt")),
    reviewTimeline: field("reviewTimeline", (v) =>
      arr(v, "reviewTimeline").map((e, i) => {
        const event = obj(e, `reviewTimeline[${i}]`);
        return {
          at: instant(event.at, `reviewTimeline[${i}].at`),
          kind: scalar(event.kind),
          actor: scalar(event.actor),
          note: scalar(event.note),
        };
      }),
    ),
    verifiedDomains: field("verifiedDomains", (v) =>
      arr(v, "verifiedDomains").map((d, i) => {
        const domain = obj(d, `verifiedDomains[${i}]`);
        return {
          domain: scalar(domain.domain),
          method: scalar(domain.method),
          verifiedAt: instant(domain.verifiedAt, `verifiedDomains[${i}].verifiedAt`),
          lastCheckedAt: instant(domain.lastCheckedAt, `verifiedDomains[${i}].lastCheckedAt`),
        };
      }),
    ),
    predecessors: scalar(p.predecessors),
  };
}

/** The profile, from the peer's answer to PEER_DETAIL_QUERY, as the service shows it to an anonymous reader. */
function peerDetail(answer: unknown): Obj {
  const data = dataOf(answer, "the peer");
  const p = obj(data.providerByProviderCode, "the peer's providerByProviderCode");
  const events = obj(p.reviewEventsByProviderId, "reviewEventsByProviderId").nodes;
  const domains = obj(p.domainVerificationsByProviderId, "domainVerificationsByProviderId").nodes;
  const predecessors = arr(obj(data.predecessors, "predecessors").nodes, "predecessors.nodes");
  return {
    ...Object.fromEntries(PROFILE_SCALARS.map((f) => [f, scalar(p[f])])),
    labels: scalar(p.labels),
    // Not read: shown to the owner and reviewers only (null for an anonymous reader).
    contactEmail: null,
    tokens: null,
    capabilities: picks(p.capabilities, CAPABILITY, "capabilities"),
    models: picks(p.models, MODEL, "models"),
    tools: picks(p.tools, TOOL, "tools"),
    endpoint: pick(p.endpoint, ENDPOINT, "endpoint"),
    packages: picks(p.packages, PACKAGE, "packages"),
    policy: pick(p.policy, POLICY, "policy"),
    roles: picks(p.roles, ROLE, "roles"),
    cardSignature: pick(p.cardSignature, CARD_SIGNATURE, "cardSignature"),
    createdAt: instant(p.createdAt, "createdAt"),
    updatedAt: instant(p.updatedAt, "updatedAt"),
    reviewTimeline: arr(events, "reviewEventsByProviderId.nodes").map((e, i) => {
      const event = obj(e, `reviewEventsByProviderId.nodes[${i}]`);
      return {
        at: instant(event.at, `reviewEventsByProviderId.nodes[${i}].at`),
        kind: scalar(event.kind),
        actor: shownActor(ANONYMOUS, 0, String(scalar(event.actor))),
        note: null,
      };
    }),
    verifiedDomains: arr(domains, "domainVerificationsByProviderId.nodes").map((d, i) => {
      const domain = obj(d, `domainVerificationsByProviderId.nodes[${i}]`);
      const verifiedAt = domain.verifiedAt ?? domain.createdAt;
      return {
        domain: scalar(domain.domain),
        method: scalar(domain.method ?? "HTTP"),
        verifiedAt: instant(verifiedAt, `verifiedDomains[${i}].verifiedAt`),
        lastCheckedAt: instant(domain.lastCheckedAt ?? verifiedAt, `verifiedDomains[${i}].lastCheckedAt`),
      };
    }),
    predecessors: predecessors
      .map((r, i) => obj(r, `predecessors.nodes[${i}]`))
      .filter((r) => canSee(ANONYMOUS, { id: 0, visibility: String(r.visibility), reviewStage: String(r.reviewStage) }))
      .map((r) => scalar(r.providerCode)),
  };
}

/** What the list answers: its rows, and the sort key of the last one when there is a next page. */
interface ListShape {
  items: Obj[];
  next: { updatedAt: number | null; id: Json } | null;
}

function summary(s: Obj, what: string): Obj {
  return {
    ...Object.fromEntries(SUMMARY_SCALARS.map((f) => [f, scalar(s[f])])),
    labels: scalar(s.labels),
    endpoint: pick(s.endpoint, ["protocol"], `${what}.endpoint`),
    updatedAt: instant(s.updatedAt, `${what}.updatedAt`),
  };
}

/**
 * The service's page (REST, or GraphQL `{ data: { providers } }`), its next cursor decoded:
 * `[updatedAt ISO, id]`. A search's cursor is an offset of its own order (`keyset` false): only
 * whether there is one is kept, as the last row's key.
 */
function serviceList(answer: unknown, keyset = true): ListShape & { raw: Obj[]; graphql: boolean } {
  const a = obj(answer, "the service's answer");
  const graphql = "data" in a || "errors" in a;
  const page = obj(graphql ? dataOf(a, "the service").providers : a, "the service's page");
  const raw = arr(page.items, "items").map((s, i) => obj(s, `items[${i}]`));
  const items = raw.map((s, i) => summary(s, `items[${i}]`));
  let next: ListShape["next"] = null;
  if (!("nextCursor" in page)) throw new Error("the service's page has no nextCursor");
  if (page.nextCursor !== null && !keyset) {
    const last = items.at(-1);
    next = { updatedAt: last ? (last.updatedAt as number | null) : null, id: last ? scalar(last.providerCode) : null };
  } else if (page.nextCursor !== null) {
    const key = JSON.parse(Buffer.from(String(page.nextCursor), "base64url").toString("utf8")) as unknown;
    const [updatedAt, id] = arr(key, "the decoded nextCursor");
    next = { updatedAt: instant(updatedAt, "nextCursor's updatedAt"), id: scalar(id) };
  }
  return { items, next, raw, graphql };
}

function peerList(answer: unknown): ListShape {
  const connection = obj(dataOf(answer, "the peer").allProviders, "the peer's allProviders");
  const nodes = arr(connection.nodes, "allProviders.nodes").map((s, i) => obj(s, `allProviders.nodes[${i}]`));
  const items = nodes.map((s, i) => summary(s, `allProviders.nodes[${i}]`));
  const last = nodes.at(-1);
  const more = obj(connection.pageInfo, "allProviders.pageInfo").hasNextPage === true;
  return {
    items,
    next: more && last ? { updatedAt: instant(last.updatedAt, "last node's updatedAt"), id: scalar(last.rowId) } : null,
  };
}

/** The first place two normalised values differ, as `path: service … peer …`; null when equal. */
function firstDifference(service: unknown, peer: unknown, path: string): string | null {
  if (Array.isArray(service) && Array.isArray(peer)) {
    for (let i = 0; i < Math.min(service.length, peer.length); i++) {
      const d = firstDifference(service[i], peer[i], `${path}[${i}]`);
      if (d) return d;
    }
    return service.length === peer.length
      ? null
      : `${path}: the service has ${service.length} items, the peer ${peer.length}`;
  }
  if (isObj(service) && isObj(peer)) {
    for (const key of new Set([...Object.keys(service), ...Object.keys(peer)])) {
      const d = firstDifference(service[key], peer[key], path ? `${path}.${key}` : key);
      if (d) return d;
    }
    return null;
  }
  return Object.is(service, peer) ? null : `${path}: service ${short(service)}, peer ${short(peer)}`;
}

/**
 * Whether the service's answer and the peer's to `op` hold the same data: null when they do, else
 * the first difference found (or why an answer could not be read). The service's answer is its
 * REST JSON body (or its GraphQL answer to the bench's query); the peer's, its GraphQL answer.
 */
export function comparePeer(
  op: PeerOp,
  serviceAnswer: unknown,
  peerAnswer: unknown,
  checkAnswer?: unknown,
): string | null {
  try {
    if (op === "facets") return firstDifference(serviceFacets(serviceAnswer), peerFacets(peerAnswer), "");
    if (op === "search") return compareSearch(serviceAnswer, peerAnswer, checkAnswer);
    if (op === "detail") {
      const { raw, graphql } = serviceProfile(serviceAnswer);
      const service = serviceDetail(raw);
      const peer = peerDetail(peerAnswer);
      settleAbsent(raw, service, peer, graphql);
      return firstDifference(service, peer, "");
    }
    const { raw, graphql, ...service } = serviceList(serviceAnswer);
    const peer = peerList(peerAnswer);
    service.items.forEach((item, i) => {
      const peerItem = peer.items[i];
      if (peerItem) settleAbsent(raw[i] as Obj, item, peerItem, graphql);
    });
    return firstDifference(service, peer, "");
  } catch (error) {
    return `${op}: ${(error as Error).message}`;
  }
}

/**
 * The search, compared as far as both can answer it: the service ranks its newest SEARCH_WINDOW
 * matches, PostGraphile has no ranking, so the pages hold other rows. Compared: every row of the
 * service's page matches the peer's filter (search and list filters) with the same summary, and is
 * among the peer's newest SEARCH_WINDOW matches (the service's first block); the page is as full
 * as the peer's matches allow; and both say alike whether there is a next page.
 */
function compareSearch(serviceAnswer: unknown, peerAnswer: unknown, checkAnswer: unknown): string | null {
  const service = serviceList(serviceAnswer, false);
  const { raw, graphql, items } = service;
  const peer = peerList(peerAnswer);
  const check = dataOf(checkAnswer, "the peer's check");
  const byCode = new Map(
    arr(obj(check.page, "page").nodes, "page.nodes").map((n, i) => {
      const node = obj(n, `page.nodes[${i}]`);
      return [String(node.providerCode), summary(node, `page.nodes[${i}]`)] as const;
    }),
  );
  const newest = arr(obj(check.newest, "newest").nodes, "newest.nodes").map((n, i) =>
    String(obj(n, `newest.nodes[${i}]`).providerCode),
  );
  const window = new Set(newest);
  for (const [i, item] of items.entries()) {
    const code = String(item.providerCode);
    const peerItem = byCode.get(code);
    if (!peerItem) return `search: the service's items[${i}] (${code}) does not match the peer's filter`;
    settleAbsent(raw[i] as Obj, item, peerItem, graphql);
    const d = firstDifference(item, peerItem, `items[${i}]`);
    if (d) return `search: ${d}`;
    if (!window.has(code))
      return `search: the service's items[${i}] (${code}) is not among the peer's newest ${SEARCH_WINDOW} matches`;
  }
  const full = Math.min(20, newest.length);
  if (items.length !== full) return `search: the service's page has ${items.length} items, the peer ${full} matches`;
  if ((service.next === null) !== (peer.next === null))
    return `search: a next page: the service ${service.next !== null}, the peer ${peer.next !== null}`;
  return null;
}

/** The facets as compared: the total, each facet's non-zero counts by value, the top labels in order. */
interface FacetsShape {
  total: number;
  counts: Record<string, Record<string, number>>;
  health: Json;
  labels: [string, number][];
}

/** The facets the peer counts by value (health: see serviceFacets). */
const COUNTED_FACETS = [
  "agentType",
  "protocol",
  "transport",
  "packageRegistry",
  "trustTier",
  "publisherVerified",
  "lifecycle",
  "visibility",
  "reviewStage",
] as const;
const TOP_LABELS = 20;

/**
 * The service's facets (REST `{ total, facets }`, or GraphQL `{ data: { providerFacets } }`). Its
 * health facet is empty with health checks off, as the bench runs it (HEALTH=off): the peer does not
 * count provider health, and the comparison holds the service's to an empty list.
 */
function serviceFacets(answer: unknown): FacetsShape {
  const a = obj(answer, "the service's answer");
  const root = obj("data" in a || "errors" in a ? dataOf(a, "the service").providerFacets : a, "the facets");
  const facets = obj(root.facets, "facets");
  const counts = (name: string) =>
    Object.fromEntries(
      arr(facets[name], name)
        .map((c, i) => obj(c, `${name}[${i}]`))
        .filter((c) => Number(c.count) > 0)
        .map((c) => [String(c.value), Number(c.count)]),
    );
  return {
    total: Number(root.total),
    counts: Object.fromEntries(COUNTED_FACETS.map((name) => [name, counts(name)])),
    health: scalar(facets.health),
    labels: arr(facets.labels, "labels").map((c, i) => {
      const label = obj(c, `labels[${i}]`);
      return [String(label.value), Number(label.count)];
    }),
  };
}

/** The peer's answer to PEER_FACETS_QUERY in the same shape: each group's key and count; the labels' top 20 as the service orders them. */
function peerFacets(answer: unknown): FacetsShape {
  const data = dataOf(answer, "the peer");
  const groups = (connection: unknown, what: string, field: "rowId" | "providerId") =>
    Object.fromEntries(
      arr(connection, what).map((g, i) => {
        const group = obj(g, `${what}[${i}]`);
        const [key] = arr(group.keys, `${what}[${i}].keys`);
        return [String(key), Number(obj(group.distinctCount, `${what}[${i}].distinctCount`)[field])];
      }),
    );
  const listed = obj(data.listed, "listed");
  const of = (name: string, field: "rowId" | "providerId") =>
    groups(obj(data[name], name).groupedAggregates, `${name}.groupedAggregates`, field);
  const protocol = Object.fromEntries(
    PROTOCOLS.map((p) => [p, Number(obj(data[`protocol_${p}`], `protocol_${p}`).totalCount)] as const).filter(
      ([, n]) => n > 0,
    ),
  );
  const labels = Object.entries(of("labels", "providerId"))
    .sort(([a, m], [b, n]) => n - m || (a < b ? -1 : a > b ? 1 : 0))
    .slice(0, TOP_LABELS);
  return {
    total: Number(listed.totalCount),
    counts: {
      agentType: groups(listed.agentType, "listed.agentType", "rowId"),
      protocol,
      transport: of("transport", "providerId"),
      packageRegistry: of("packageRegistry", "providerId"),
      trustTier: groups(listed.trustTier, "listed.trustTier", "rowId"),
      publisherVerified: groups(listed.publisherVerified, "listed.publisherVerified", "rowId"),
      lifecycle: of("lifecycle", "rowId"),
      visibility: groups(listed.visibility, "listed.visibility", "rowId"),
      reviewStage: groups(listed.reviewStage, "listed.reviewStage", "rowId"),
    },
    health: [],
    labels,
  };
}
