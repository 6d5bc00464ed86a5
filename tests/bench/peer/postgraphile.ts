/**
 * The benchmark's peer target: PostGraphile v5, an automatic GraphQL API over the same PostgreSQL
 * tables, measured side by side with the service for the two reads `detail` and `list`.
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
import { COMMON_LABEL } from "../../../scripts/synthetic/vocabulary.ts";
import type { Viewer } from "../../../src/auth/viewer.ts";
import { canSee, shownActor } from "../../../src/providers/provider.visibility.ts";

/** The peer's packages, exact: PostGraphile v5 and the connection filter plugin of v5 (peer postgraphile ^5.1.4). */
export const PEER_PACKAGES = {
  postgraphile: "5.1.5",
  "postgraphile-plugin-connection-filter": "4.0.1",
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

/**
 * The list: what the service's list filters on (listableWhere, lifecycleFilters, the arguments,
 * the label's EXISTS), in its order, 20 rows and whether there are more; `rowId` for the order's
 * tie-break, which the service's next cursor holds.
 */
export const PEER_LIST_QUERY = `query PeerList($agentType: String!, $trustTier: String!, $label: String!, $first: Int!) {
  allProviders(
    condition: { agentType: $agentType, trustTier: $trustTier, visibility: "PUBLIC", reviewStage: "APPROVED" }
    filter: {
      lifecycle: { in: ["ACTIVE", "DEPRECATED"] }
      providerLabelsByProviderId: { some: { label: { equalTo: $label } } }
    }
    orderBy: [UPDATED_AT_DESC, ROW_ID_DESC]
    first: $first
  ) {
    nodes {
      rowId providerCode name summary agentType visibility trustTier reviewStage labels endpoint updatedAt
      lifecycle lifecycleMessage successorCode publisherVerified
    }
    pageInfo { hasNextPage }
  }
}`;

/** The list's filter, as the bench's service request has it. */
export const PEER_LIST_VARIABLES = { agentType: "ASSISTANT", trustTier: "VERIFIED", label: COMMON_LABEL, first: 20 };

export type PeerOp = "detail" | "list";

/** The GraphQL POST the load generator sends to the peer for `op`. */
export function peerRequest(
  op: PeerOp,
  fixture: { code: string },
): { method: "POST"; path: string; headers: Record<string, string>; body: string } {
  const body =
    op === "detail"
      ? { query: PEER_DETAIL_QUERY, variables: { code: fixture.code } }
      : { query: PEER_LIST_QUERY, variables: PEER_LIST_VARIABLES };
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

/** The service's page (REST, or GraphQL `{ data: { providers } }`), its next cursor decoded: `[updatedAt ISO, id]`. */
function serviceList(answer: unknown): ListShape & { raw: Obj[]; graphql: boolean } {
  const a = obj(answer, "the service's answer");
  const graphql = "data" in a || "errors" in a;
  const page = obj(graphql ? dataOf(a, "the service").providers : a, "the service's page");
  const raw = arr(page.items, "items").map((s, i) => obj(s, `items[${i}]`));
  const items = raw.map((s, i) => summary(s, `items[${i}]`));
  let next: ListShape["next"] = null;
  if (!("nextCursor" in page)) throw new Error("the service's page has no nextCursor");
  if (page.nextCursor !== null) {
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
export function comparePeer(op: PeerOp, serviceAnswer: unknown, peerAnswer: unknown): string | null {
  try {
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
