/**
 * Synthetic registry: fills a database with N realistic agents for load tests and the search
 * benchmark. The rows go straight into the tables — better-sqlite3 prepared statements
 * in big transactions on SQLite, multi-row `INSERT … SELECT FROM json_to_recordset($1)` batches on
 * PostgreSQL — bypassing Prisma, which would need hours for a million agents. Search indexes
 * (FTS tables, generated columns) are the database's business: triggers and generated columns
 * keep them, this script never writes to them.
 *
 *   npm run seed:synthetic -- --count 100000 [--database-url URL] [--seed 1] [--now 2026-01-01]
 *
 * Every row is a function of (seed, its index, count, now) and of the ids it gets, so a run on a
 * fresh database is reproducible. Per agent: the provider row, its `provider_labels`, version 1
 * with its snapshot, one INTAKE review (decided for decided stages) and its timeline. No access
 * tokens: the synthetic agents cannot write, a reviewer token can still read everything.
 */
import { mkdirSync } from "node:fs";
import { dirname } from "node:path";
import { pathToFileURL } from "node:url";
import Database from "better-sqlite3";
import pg from "pg";
import { dialectOf, sqlitePath } from "../src/db/client.ts";
import { migrate } from "../src/db/migrate.ts";
import type {
  AGENT_TYPES as AGENT_TYPE_LIST,
  REVIEW_STAGES,
  TRUST_TIERS,
  VISIBILITIES as VISIBILITY_LIST,
} from "../src/providers/provider.enums.ts";
import { OWNER_FIELDS } from "../src/providers/provider.rules.ts";
import { type Priority, priorityRank, type ReviewStatus } from "../src/reviews/review.rules.ts";

type AgentType = (typeof AGENT_TYPE_LIST)[number];
type Visibility = (typeof VISIBILITY_LIST)[number];
type ReviewStage = (typeof REVIEW_STAGES)[number];
type TrustTier = (typeof TRUST_TIERS)[number];

// ── Vocabulary ────────────────────────────────────────────────────────────────────────────────
// Words are drawn Zipf-style, so a search word hits a few, many or very many rows. No word of a
// list is a substring of a marker word, so the markers stay selective under LIKE too.

/** Subject areas, most frequent first (Zipf): the top one is in about a fifth of the profiles. */
const DOMAINS = [
  "data",
  "code",
  "customer",
  "document",
  "sales",
  "finance",
  "security",
  "email",
  "research",
  "marketing",
  "invoice",
  "travel",
  "legal",
  "contract",
  "calendar",
  "hiring",
  "health",
  "insurance",
  "logistics",
  "shipping",
  "inventory",
  "retail",
  "translation",
  "compliance",
  "audit",
  "tax",
  "payroll",
  "energy",
  "weather",
  "music",
  "video",
  "image",
  "podcast",
  "education",
  "tutoring",
  "math",
  "chemistry",
  "genomics",
  "climate",
  "agriculture",
  "property",
  "mortgage",
  "banking",
  "trading",
  "gaming",
  "news",
  "survey",
  "analytics",
  "observability",
  "incident",
  "cloud",
  "network",
  "devops",
  "testing",
  "design",
  "accessibility",
  "procurement",
  "vendor",
  "warehouse",
  "fleet",
] as const;

const ADJECTIVES = [
  "Swift",
  "Smart",
  "Bright",
  "Quiet",
  "Clever",
  "Steady",
  "Nimble",
  "Precise",
  "Friendly",
  "Bold",
  "Lucid",
  "Agile",
  "Patient",
  "Rapid",
  "Careful",
  "Open",
  "Solid",
  "Keen",
  "Calm",
  "Sharp",
];
const NOUNS: Record<AgentType, readonly string[]> = {
  ASSISTANT: ["Assistant", "Copilot", "Helper", "Advisor", "Concierge"],
  AUTONOMOUS: ["Agent", "Operator", "Autopilot", "Runner"],
  WORKFLOW: ["Pipeline", "Workflow", "Orchestrator", "Flow"],
  TOOL_SERVER: ["Toolkit", "Server", "Connector", "Gateway"],
  MULTI_AGENT: ["Crew", "Team", "Swarm", "Collective"],
};
const VERBS = [
  "drafts",
  "reviews",
  "summarizes",
  "classifies",
  "triages",
  "reconciles",
  "monitors",
  "translates",
  "schedules",
  "extracts",
  "answers questions about",
  "audits",
  "forecasts",
  "routes",
  "enriches",
];
const OBJECTS = [
  "reports",
  "tickets",
  "records",
  "requests",
  "messages",
  "spreadsheets",
  "dashboards",
  "filings",
  "orders",
  "claims",
  "alerts",
  "notes",
];
const AUDIENCES = [
  "small teams",
  "enterprises",
  "developers",
  "analysts",
  "support desks",
  "operations",
  "startups",
  "agencies",
  "clinics",
  "schools",
];
const LABELS = [
  "llm",
  "automation",
  "nlp",
  "rag",
  "search",
  "coding",
  "python",
  "support",
  "chat",
  "finance",
  "analytics",
  "typescript",
  "sql",
  "security",
  "mcp",
  "a2a",
  "open-source",
  "enterprise",
  "email",
  "summarization",
  "translation",
  "voice",
  "vision",
  "ocr",
  "etl",
  "devops",
  "compliance",
  "healthcare",
  "legal",
  "education",
  "marketing",
  "sales",
  "crm",
  "calendar",
  "scheduling",
  "travel",
  "ecommerce",
  "logistics",
  "hr",
  "recruiting",
  "research",
  "data-science",
  "ml-ops",
  "observability",
  "monitoring",
  "kubernetes",
  "aws",
  "gcp",
  "azure",
  "slack",
  "github",
  "jira",
  "notion",
  "spreadsheet",
  "pdf",
  "web-scraping",
  "browser",
  "agents",
  "multi-agent",
  "planning",
  "reasoning",
  "math",
  "code-review",
  "testing",
  "docs",
  "api",
  "graphql",
  "openai",
  "anthropic",
  "beta",
  "experimental",
  "realtime",
  "batch",
  "streaming",
  "privacy",
  "gdpr",
  "hipaa",
  "soc2",
  "on-prem",
  "edge",
  "mobile",
  "iot",
  "gaming",
  "music",
  "image-generation",
  "video",
  "audio",
  "speech-to-text",
  "text-to-speech",
  "knowledge-base",
  "faq",
  "onboarding",
  "billing",
  "payments",
  "invoicing",
  "accounting",
  "tax",
  "insurance",
  "real-estate",
  "energy",
  "climate",
  "agriculture",
  "biotech",
  "chemistry",
  "genomics",
  "news",
  "social-media",
  "seo",
  "content",
  "copywriting",
  "design",
  "accessibility",
  "i18n",
  "lang.en",
  "lang.de",
  "lang.fr",
  "lang.es",
  "lang.ja",
  "v2",
  "deprecated-api",
] as const;

/**
 * Rare marker words: each is in about `rows` profiles whatever the registry's size (at most all of
 * them), so a "selective search" stays selective from 1k to 1M agents.
 */
export const MARKERS = [
  { word: "kestrelwing", rows: 10 },
  { word: "quokkalight", rows: 50 },
  { word: "zanzibarite", rows: 100 },
] as const;

/** The words the benchmark searches for. */
export const SEARCH_WORDS = {
  /** The most frequent subject: in about a fifth of the profiles. */
  common: DOMAINS[0],
  /** A marker: in about 50 profiles at any size. */
  selective: MARKERS[1].word,
} as const;
/** The most frequent label, for the label filter of the benchmark. */
export const COMMON_LABEL = LABELS[0];

const TOOL_NAMES = [
  "search_web",
  "read_file",
  "write_file",
  "send_email",
  "query_sql",
  "http_get",
  "create_ticket",
  "run_python",
  "fetch_calendar",
  "post_message",
  "lookup_customer",
  "generate_image",
];
const TOOL_KINDS = ["MCP", "FUNCTION", "HTTP", "BUILTIN"] as const;
const TOOL_SCOPES = ["READ_ONLY", "WRITE", "DESTRUCTIVE", "EXTERNAL"] as const;
const MODELS = [
  ["openai", "gpt-4o", 128_000],
  ["anthropic", "claude-sonnet-4", 200_000],
  ["google", "gemini-2.5-pro", 1_000_000],
  ["meta", "llama-3.1-70b", 128_000],
  ["mistral", "mistral-large", 128_000],
  ["cohere", "embed-v3", null],
] as const;
const PROTOCOL_PATHS = { A2A: "/a2a", MCP: "/mcp", HTTP_JSON: "/api", OPENAI_COMPATIBLE: "/v1", OTHER: "/" } as const;
const USE_CASES = ["internal tooling", "customer support", "research", "reporting", "education", "prototyping"];
const PROHIBITED = ["medical diagnosis", "legal advice", "surveillance", "credit decisions"];
const MEDIA = ["text/plain", "application/json", "text/markdown", "application/pdf", "image/png"];
const REVIEWERS = ["alice", "bruno", "chen", "dara", "emeka", "farah"];

// ── Deterministic randomness ──────────────────────────────────────────────────────────────────

type Rng = () => number;

/** A small, fast PRNG (mulberry32) whose state is mixed from the seed and the row's index. */
function rngFor(seed: number, index: number): Rng {
  let s = (Math.imul(seed ^ 0x9e3779b9, 0x85ebca6b) ^ Math.imul(index + 0x27d4eb2f, 0xc2b2ae35)) >>> 0;
  return () => {
    s = (s + 0x6d2b79f5) >>> 0;
    let t = s;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** Draws an index from 0..n-1 with weight 1/(k+1)^s. */
function zipf(n: number, s: number): (r: number) => number {
  const cumulative: number[] = [];
  let total = 0;
  for (let k = 0; k < n; k++) {
    total += 1 / (k + 1) ** s;
    cumulative.push(total);
  }
  return (r) => {
    const target = r * total;
    let lo = 0;
    let hi = n - 1;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if (cumulative[mid]! < target) lo = mid + 1;
      else hi = mid;
    }
    return lo;
  };
}
const domainOf = zipf(DOMAINS.length, 1);
const labelOf = zipf(LABELS.length, 1.1);

function pick<T>(rng: Rng, list: readonly T[]): T {
  return list[Math.floor(rng() * list.length)]!;
}
/**
 * Weights of each value of one of the service's enumerations: keyed by its type, so a value added
 * to the enumeration is a type error here until it has a weight.
 */
type Weights<T extends string> = Readonly<Record<T, number>>;

function weightedOf<T extends string>(rng: Rng, weights: Weights<T>): T {
  return weighted(rng, Object.entries(weights) as [T, number][]);
}
function weighted<T extends string>(rng: Rng, table: readonly (readonly [T, number])[]): T {
  let r = rng() * table.reduce((sum, [, w]) => sum + w, 0);
  for (const [value, w] of table) {
    r -= w;
    if (r < 0) return value;
  }
  return table[table.length - 1]![0];
}
/** Up to `n` distinct items drawn by `draw`. */
function distinct<T>(n: number, draw: () => T): T[] {
  const out = new Set<T>();
  for (let tries = 0; out.size < n && tries < n * 8; tries++) out.add(draw());
  return [...out];
}
const cap = (s: string) => s[0]!.toUpperCase() + s.slice(1);

const AGENT_TYPES: Weights<AgentType> = {
  ASSISTANT: 35,
  TOOL_SERVER: 20,
  WORKFLOW: 20,
  AUTONOMOUS: 15,
  MULTI_AGENT: 10,
};
const VISIBILITIES: Weights<Visibility> = { PUBLIC: 88, UNLISTED: 7, PRIVATE: 5 };
const STAGES: Weights<ReviewStage> = {
  APPROVED: 85,
  SUBMITTED: 5,
  IN_REVIEW: 3,
  REJECTED: 3,
  CHANGES_REQUESTED: 2,
  SUSPENDED: 2,
};
const TIERS: Weights<TrustTier> = { UNVERIFIED: 40, VERIFIED: 40, TRUSTED: 15, OFFICIAL: 5 };
const PRIORITIES: Weights<Priority> = { NORMAL: 80, HIGH: 9, LOW: 8, URGENT: 3 };
/** The status an intake review has while its provider is at a stage. */
const REVIEW_STATUS: Record<ReviewStage, ReviewStatus> = {
  SUBMITTED: "OPEN",
  IN_REVIEW: "IN_PROGRESS",
  CHANGES_REQUESTED: "CHANGES_REQUESTED",
  APPROVED: "APPROVED",
  REJECTED: "REJECTED",
  SUSPENDED: "APPROVED",
};

const CROCKFORD = "0123456789ABCDEFGHJKMNPQRSTVWXYZ";
const MASK40 = (1n << 40n) - 1n;
/**
 * `RV-` + 8 Crockford characters from a review id through a bijection of 40 bits (an odd multiplier,
 * an offset and an xor-shift), so distinct ids give distinct, random-looking codes.
 */
export function syntheticReviewCode(id: number): string {
  let x = (BigInt(id) * 0x9e3779b97fn + 0x5bd1e995n) & MASK40;
  x ^= x >> 21n;
  x = (x * 0xd6e8feb86659fn) & MASK40;
  let code = "";
  for (let i = 0; i < 8; i++) {
    code = CROCKFORD[Number(x & 31n)] + code;
    x >>= 5n;
  }
  return `RV-${code}`;
}

// ── One synthetic agent ───────────────────────────────────────────────────────────────────────

const DAY = 86_400_000;
const SPAN = 730 * DAY;

export interface SyntheticEvent {
  at: number;
  kind: string;
  actor: string;
  note: string | null;
  /** Whether the event belongs to the intake review. */
  review: boolean;
}

export interface SyntheticAgent {
  id: number;
  providerCode: string;
  profile: Record<(typeof OWNER_FIELDS)[number], unknown> & { labels: string[] };
  trustTier: string;
  reviewStage: string;
  createdAt: number;
  updatedAt: number;
  review: {
    id: number;
    reviewCode: string;
    status: string;
    priority: string;
    priorityRank: number;
    assignedTo: string | null;
    createdAt: number;
    updatedAt: number;
    decidedAt: number | null;
  };
  events: SyntheticEvent[];
}

/** The agent at `index` (0-based) of a run of `count`, with the ids reserved for it. */
export function syntheticAgent(
  seed: number,
  index: number,
  count: number,
  ids: { provider: number; review: number },
  now: number,
): SyntheticAgent {
  const rng = rngFor(seed, index);
  const agentType = weightedOf(rng, AGENT_TYPES);
  const visibility = weightedOf(rng, VISIBILITIES);
  const reviewStage = weightedOf(rng, STAGES);
  const decided = reviewStage === "APPROVED" || reviewStage === "SUSPENDED";
  const trustTier = decided ? weightedOf(rng, TIERS) : "UNVERIFIED";
  const domain = DOMAINS[domainOf(rng())]!;
  const second = DOMAINS[domainOf(rng())]!;
  const noun = pick(rng, NOUNS[agentType]);
  const adjective = pick(rng, ADJECTIVES);
  const providerCode = `agent-${ids.provider}-${domain}`;
  const name = `${adjective} ${cap(domain)} ${noun}`;
  const markers = MARKERS.filter((m) => {
    const stride = Math.max(1, Math.floor(count / m.rows));
    return index % stride === m.word.length % stride;
  }).map((m) => m.word);
  const verb = pick(rng, VERBS);
  const object = pick(rng, OBJECTS);
  const audience = pick(rng, AUDIENCES);
  const summary = `${/^[AEIOU]/.test(noun) ? "An" : "A"} ${noun.toLowerCase()} that ${verb} ${domain} ${object} for ${audience}${
    markers.length ? ` (codename ${markers.join(" ")})` : ""
  }.`;
  const description =
    rng() < 0.15
      ? null
      : [
          `${name} ${verb} ${domain} and ${second} ${object} so that ${audience} spend less time on routine work.`,
          `It keeps an audit trail of every step and hands anything unusual to a human.`,
          rng() < 0.5 ? `\n\n- Works with ${second} ${pick(rng, OBJECTS)}\n- ${cap(pick(rng, VERBS))} ${object}` : "",
        ]
          .join(" ")
          .trim()
          .replace(" \n", "\n");

  const labelCount = weighted(rng, [
    ["0", 8],
    ["1", 15],
    ["2", 22],
    ["3", 22],
    ["4", 15],
    ["5", 10],
    ["6", 8],
  ] as const);
  const labels = distinct(Number(labelCount), () => LABELS[labelOf(rng())]!);

  const capabilities = Array.from({ length: 1 + Math.floor(rng() * 3) }, (_, k) => {
    const v = pick(rng, VERBS).split(" ")[0]!;
    return {
      key: `${v}-${domain}-${k + 1}`,
      name: `${cap(v)} ${domain} ${pick(rng, OBJECTS)}`,
      description: rng() < 0.6 ? `${cap(v)} ${domain} ${object} on request.` : null,
      tags: labels.slice(0, 2),
      inputModes: distinct(1 + Math.floor(rng() * 2), () => pick(rng, MEDIA)),
      outputModes: distinct(1, () => pick(rng, MEDIA)),
    };
  });
  const models = distinct(1 + Math.floor(rng() * 2), () => pick(rng, MODELS)).map(([vendor, model, ctx], k) => ({
    vendor,
    model,
    role: ctx === null ? "EMBEDDING" : k === 0 ? "PRIMARY" : "FALLBACK",
    contextWindow: rng() < 0.7 ? ctx : null,
  }));
  const tools = distinct(Math.floor(rng() * 5), () => pick(rng, TOOL_NAMES)).map((toolName) => ({
    name: toolName,
    kind: pick(rng, TOOL_KINDS),
    description: rng() < 0.5 ? `Lets the agent ${toolName.replace("_", " ")}.` : null,
    scopes: distinct(1 + Math.floor(rng() * 2), () => pick(rng, TOOL_SCOPES)),
  }));
  const protocol = weighted(rng, [
    ["A2A", 40],
    ["MCP", 30],
    ["HTTP_JSON", 15],
    ["OPENAI_COMPATIBLE", 10],
    ["OTHER", 5],
  ] as const);
  const host = `${providerCode}.agents.example.com`;
  const endpoint = {
    url: `https://${host}${PROTOCOL_PATHS[protocol]}`,
    protocol,
    authScheme: pick(rng, ["NONE", "BEARER", "BEARER", "API_KEY", "OAUTH2", "MTLS"] as const),
    healthUrl: rng() < 0.5 ? `https://${host}/health` : null,
  };
  const policy =
    rng() < 0.2
      ? null
      : {
          dataRetentionDays: rng() < 0.7 ? pick(rng, [0, 7, 30, 90, 365]) : null,
          humanOversight: pick(rng, ["NONE", "ON_REQUEST", "ALWAYS"] as const),
          allowedUseCases: distinct(Math.floor(rng() * 3), () => pick(rng, USE_CASES)),
          prohibitedUseCases: distinct(Math.floor(rng() * 2), () => pick(rng, PROHIBITED)),
          termsUrl: rng() < 0.4 ? `https://${host}/terms` : null,
          privacyUrl: rng() < 0.4 ? `https://${host}/privacy` : null,
        };
  const contactEmail = `ops.${ids.provider}@${domain}-labs.example.com`;
  const roles = [
    { subject: contactEmail, role: "OWNER" },
    ...(rng() < 0.4 ? [{ subject: `@${domain}-dev-${ids.provider % 997}`, role: "MAINTAINER" }] : []),
    ...(rng() < 0.2 ? [{ subject: `security@${domain}-labs.example.com`, role: "SECURITY_CONTACT" }] : []),
  ];

  // Time: created within the last two years; decided within two weeks; updated since.
  const createdAt = now - Math.floor(rng() * SPAN);
  const settledAt = Math.min(now, createdAt + Math.floor(rng() * 14 * DAY));
  const updatedAt = settledAt + Math.floor(rng() ** 3 * (now - settledAt));
  const actor = `agent:${providerCode}`;
  const reviewer = pick(rng, REVIEWERS);
  const status = REVIEW_STATUS[reviewStage];
  const priority = weightedOf(rng, PRIORITIES);
  const events: SyntheticEvent[] = [{ at: createdAt, kind: "SUBMITTED", actor, note: null, review: true }];
  const by = `reviewer:${reviewer}`;
  switch (reviewStage) {
    case "IN_REVIEW":
      events.push({ at: settledAt, kind: "ASSIGNED", actor: by, note: null, review: true });
      break;
    case "CHANGES_REQUESTED":
      events.push({
        at: settledAt,
        kind: "CHANGES_REQUESTED",
        actor: by,
        note: "Please add a privacy URL.",
        review: true,
      });
      break;
    case "REJECTED":
      events.push({ at: settledAt, kind: "REJECTED", actor: by, note: "The endpoint does not answer.", review: true });
      break;
    case "APPROVED":
      events.push({ at: settledAt, kind: "APPROVED", actor: by, note: null, review: true });
      break;
    case "SUSPENDED":
      events.push({ at: settledAt, kind: "APPROVED", actor: by, note: null, review: true });
      events.push({ at: updatedAt, kind: "SUSPENDED", actor: by, note: "Reported for abuse.", review: false });
      break;
  }
  return {
    id: ids.provider,
    providerCode,
    profile: {
      name,
      summary,
      description,
      labels,
      agentType,
      visibility,
      contactEmail,
      capabilities,
      models,
      tools,
      endpoint,
      policy,
      roles,
    },
    trustTier,
    reviewStage,
    createdAt,
    updatedAt,
    review: {
      id: ids.review,
      reviewCode: syntheticReviewCode(ids.review),
      status,
      priority,
      priorityRank: priorityRank(priority),
      assignedTo: reviewStage === "SUBMITTED" ? null : reviewer,
      createdAt,
      updatedAt: settledAt,
      decidedAt: status === "APPROVED" || status === "REJECTED" ? settledAt : null,
    },
    events,
  };
}

// ── Writing ───────────────────────────────────────────────────────────────────────────────────

export interface SeedOptions {
  databaseUrl: string;
  count: number;
  /** The PRNG seed (default 1). */
  seed?: number;
  /** The end of the two years the dates spread over (default: today, 00:00 UTC). */
  now?: Date;
  /** Agents per transaction (default 10 000 on SQLite, 5 000 on PostgreSQL). */
  batchSize?: number;
  /** Progress lines (default: none); the CLI passes stderr. */
  log?: (line: string) => void;
  /**
   * Rebuild the plain indexes after the load instead of maintaining them row by row (default: when
   * `count` ≥ 50 000). They are rebuilt even when the load fails.
   */
  rebuildIndexes?: boolean;
}

export interface SeedResult {
  dialect: "sqlite" | "postgresql";
  count: number;
  /** Rows written per table. */
  rows: Record<string, number>;
  /** The first and last provider id given to the agents. */
  ids: [number, number];
  ms: number;
}

const SNAPSHOT_FIELDS = [...OWNER_FIELDS];
const CHANGED_FIELDS = JSON.stringify(SNAPSHOT_FIELDS);

/** Migrates the database, then adds `count` synthetic agents. */
export async function seedSynthetic(options: SeedOptions): Promise<SeedResult> {
  const { databaseUrl, count } = options;
  if (!Number.isInteger(count) || count < 0) throw new Error(`count must be a whole number, got ${count}`);
  const seed = options.seed ?? 1;
  const now = (options.now ?? new Date(Math.floor(Date.now() / DAY) * DAY)).getTime();
  const log = options.log ?? (() => {});
  const dialect = dialectOf(databaseUrl);
  await migrate(databaseUrl);
  const started = performance.now();
  const writer = dialect === "postgresql" ? await postgresWriter(databaseUrl) : sqliteWriter(databaseUrl);
  const rows = { providers: 0, provider_labels: 0, provider_versions: 0, reviews: 0, review_events: 0 };
  const batchSize = options.batchSize ?? (dialect === "postgresql" ? 5_000 : 10_000);
  let lastLog = started;
  const rebuild = options.rebuildIndexes ?? count >= 50_000;
  try {
    const base = await writer.nextIds();
    if (rebuild) await writer.dropIndexes();
    for (let from = 0; from < count; from += batchSize) {
      const batch: SyntheticAgent[] = [];
      for (let i = from; i < Math.min(count, from + batchSize); i++) {
        batch.push(syntheticAgent(seed, i, count, { provider: base.provider + i, review: base.review + i }, now));
      }
      await writer.write(batch);
      rows.providers += batch.length;
      rows.reviews += batch.length;
      rows.provider_versions += batch.length;
      for (const a of batch) {
        rows.provider_labels += a.profile.labels.length;
        rows.review_events += a.events.length;
      }
      const t = performance.now();
      if (t - lastLog > 2000 || from + batchSize >= count) {
        lastLog = t;
        log(
          `seed:synthetic ${rows.providers}/${count} agents, ${Math.round(rows.providers / ((t - started) / 1000))} agents/s`,
        );
      }
    }
    if (rebuild) {
      log("seed:synthetic building indexes");
      await writer.restoreIndexes();
    }
    await writer.finish();
    const ms = performance.now() - started;
    const total = Object.values(rows).reduce((a, b) => a + b, 0);
    log(
      `seed:synthetic done: ${count} agents (${total} rows) into ${dialect} in ${(ms / 1000).toFixed(1)} s — ` +
        `${Math.round(count / (ms / 1000))} agents/s, ${Math.round(total / (ms / 1000))} rows/s`,
    );
    return { dialect, count, rows, ids: [base.provider, base.provider + count - 1], ms };
  } finally {
    if (rebuild) await writer.restoreIndexes().catch(() => {});
    await writer.close();
  }
}

/** The tables the seed writes; their plain (non-unique) indexes may be rebuilt around a big load. */
const TABLES = ["providers", "provider_labels", "provider_versions", "reviews", "review_events"];

interface Writer {
  /**
   * Drops the plain indexes of the seeded tables (kept: primary keys and unique indexes), to be
   * built again in one pass by `restoreIndexes` — much faster than growing them row by row.
   */
  dropIndexes(): Promise<void>;
  restoreIndexes(): Promise<void>;
  /** The first free provider and review ids: the seed reserves the next `count` of each. */
  nextIds(): Promise<{ provider: number; review: number }>;
  write(batch: SyntheticAgent[]): Promise<void>;
  /** The search index merged (SQLite), statistics for the planner, sequences, checkpoint. */
  finish(): Promise<void>;
  close(): Promise<void>;
}

/** SQLite stores DateTime as Prisma's driver adapter writes it: ISO-8601 with `+00:00`. */
const sqliteTime = (ms: number) => new Date(ms).toISOString().replace("Z", "+00:00");

function sqliteWriter(databaseUrl: string): Writer {
  const path = sqlitePath(databaseUrl);
  if (path !== ":memory:") mkdirSync(dirname(path), { recursive: true });
  const db = new Database(path);
  db.pragma("journal_mode = WAL");
  db.pragma("synchronous = OFF"); // this connection only: the seed can be re-run if the machine dies
  db.pragma("cache_size = -1000000");
  db.pragma("temp_store = MEMORY");
  const provider = db.prepare(
    `INSERT INTO "providers" ("id", "providerCode", "name", "summary", "description", "labels", "agentType", "visibility", "trustTier", "reviewStage", "contactEmail", "capabilities", "models", "tools", "endpoint", "policy", "roles", "version", "createdAt", "updatedAt")
     VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, 1, ?, ?)`,
  );
  const label = db.prepare(`INSERT INTO "provider_labels" ("providerId", "label") VALUES (?, ?)`);
  const version = db.prepare(
    `INSERT INTO "provider_versions" ("providerId", "version", "createdAt", "actor", "changedFields", "snapshot") VALUES (?, 1, ?, ?, ?, ?)`,
  );
  const review = db.prepare(
    `INSERT INTO "reviews" ("id", "reviewCode", "providerId", "kind", "status", "priority", "priorityRank", "assignedTo", "createdAt", "updatedAt", "decidedAt")
     VALUES (?, ?, ?, 'INTAKE', ?, ?, ?, ?, ?, ?, ?)`,
  );
  const event = db.prepare(
    `INSERT INTO "review_events" ("providerId", "reviewId", "at", "kind", "actor", "note") VALUES (?, ?, ?, ?, ?, ?)`,
  );
  const writeBatch = db.transaction((batch: SyntheticAgent[]) => {
    for (const a of batch) {
      const p = a.profile;
      const json = {
        labels: JSON.stringify(p.labels),
        capabilities: JSON.stringify(p.capabilities),
        models: JSON.stringify(p.models),
        tools: JSON.stringify(p.tools),
        endpoint: JSON.stringify(p.endpoint),
        policy: p.policy === null ? null : JSON.stringify(p.policy),
        roles: JSON.stringify(p.roles),
      };
      const created = sqliteTime(a.createdAt);
      provider.run(
        a.id,
        a.providerCode,
        p.name,
        p.summary,
        p.description,
        json.labels,
        p.agentType,
        p.visibility,
        a.trustTier,
        a.reviewStage,
        p.contactEmail,
        json.capabilities,
        json.models,
        json.tools,
        json.endpoint,
        json.policy,
        json.roles,
        created,
        sqliteTime(a.updatedAt),
      );
      for (const l of p.labels) label.run(a.id, l);
      version.run(a.id, created, `agent:${a.providerCode}`, CHANGED_FIELDS, snapshotJson(p, json));
      const r = a.review;
      review.run(
        r.id,
        r.reviewCode,
        a.id,
        r.status,
        r.priority,
        r.priorityRank,
        r.assignedTo,
        sqliteTime(r.createdAt),
        sqliteTime(r.updatedAt),
        r.decidedAt === null ? null : sqliteTime(r.decidedAt),
      );
      for (const e of a.events) event.run(a.id, e.review ? r.id : null, sqliteTime(e.at), e.kind, e.actor, e.note);
    }
  });
  let dropped: string[] = [];
  return {
    dropIndexes: async () => {
      const list = db
        .prepare(
          `SELECT name, sql FROM sqlite_master WHERE type = 'index' AND sql IS NOT NULL AND sql NOT LIKE 'CREATE UNIQUE%' AND tbl_name IN (${TABLES.map(() => "?").join(", ")})`,
        )
        .all(...TABLES) as { name: string; sql: string }[];
      dropped = list.map((i) => i.sql);
      for (const i of list) db.exec(`DROP INDEX "${i.name}"`);
    },
    restoreIndexes: async () => {
      const sqls = dropped;
      dropped = [];
      for (const sql of sqls) db.exec(sql);
    },
    nextIds: async () => {
      const max = (table: string) =>
        Number((db.prepare(`SELECT coalesce(max("id"), 0) AS m FROM "${table}"`).get() as { m: number }).m);
      return { provider: max("providers") + 1, review: max("reviews") + 1 };
    },
    write: async (batch) => writeBatch(batch),
    finish: async () => {
      // The search index grew by the triggers, batch by batch: a log-structured merge of segments,
      // which FTS5 merges level by level as writes go on, a slice of the pending merge inside every
      // write. A million rows written at once leave it partway through merging four segments of
      // ~240 MB each, and every write then paid ~1.8 ms for its slice on average, up to 340 ms for
      // one, until that merge was done (PATCH at 1,000,000 agents 275/s, p99 95 ms). A bulk load
      // ends as the migration that rebuilt the index does (20261121030000_search_prefix): merged
      // into one segment, here 24 s at a million agents.
      db.exec(`INSERT INTO "provider_search" ("provider_search") VALUES ('optimize')`);
      db.pragma("analysis_limit = 1000");
      db.exec("ANALYZE");
      db.pragma("wal_checkpoint(TRUNCATE)");
    },
    close: async () => {
      db.close();
    },
  };
}

/** The version snapshot: the owner fields in their fixed order, from the already serialised sections. */
function snapshotJson(p: SyntheticAgent["profile"], json: Record<string, string | null>): string {
  const parts = SNAPSHOT_FIELDS.map((f) => `${JSON.stringify(f)}:${json[f] ?? JSON.stringify(p[f])}`);
  return `{${parts.join(",")}}`;
}

async function postgresWriter(databaseUrl: string): Promise<Writer> {
  const client = new pg.Client({ connectionString: databaseUrl });
  await client.connect();
  await client.query("SET synchronous_commit = off");
  // Batches are sent while the next one is generated; at most two are in flight.
  let inFlight: Promise<unknown>[] = [];
  const send = (sql: string, rows: unknown[]) => client.query(sql, [JSON.stringify(rows)]);
  const insert = (table: string, columns: Record<string, string>) => {
    const names = Object.keys(columns)
      .map((c) => `"${c}"`)
      .join(", ");
    const types = Object.entries(columns)
      .map(([c, t]) => `"${c}" ${t}`)
      .join(", ");
    return `INSERT INTO "${table}" (${names}) SELECT ${names} FROM jsonb_to_recordset($1::jsonb) AS x(${types})`;
  };
  const PROVIDERS = insert("providers", {
    id: "int",
    providerCode: "text",
    name: "text",
    summary: "text",
    description: "text",
    labels: "jsonb",
    agentType: "text",
    visibility: "text",
    trustTier: "text",
    reviewStage: "text",
    contactEmail: "text",
    capabilities: "jsonb",
    models: "jsonb",
    tools: "jsonb",
    endpoint: "jsonb",
    policy: "jsonb",
    roles: "jsonb",
    createdAt: "timestamp(3)",
    updatedAt: "timestamp(3)",
  });
  const LABELS_SQL = insert("provider_labels", { providerId: "int", label: "text" });
  const VERSIONS = insert("provider_versions", {
    providerId: "int",
    version: "int",
    createdAt: "timestamp(3)",
    actor: "text",
    changedFields: "jsonb",
    snapshot: "jsonb",
  });
  const REVIEWS = insert("reviews", {
    id: "int",
    reviewCode: "text",
    providerId: "int",
    kind: "text",
    status: "text",
    priority: "text",
    priorityRank: "int",
    assignedTo: "text",
    createdAt: "timestamp(3)",
    updatedAt: "timestamp(3)",
    decidedAt: "timestamp(3)",
  });
  const EVENTS = insert("review_events", {
    providerId: "int",
    reviewId: "int",
    at: "timestamp(3)",
    kind: "text",
    actor: "text",
    note: "text",
  });
  const iso = (ms: number) => new Date(ms).toISOString();
  let dropped: string[] = [];
  return {
    dropIndexes: async () => {
      const { rows } = await client.query(
        `SELECT i.indexname AS name, i.indexdef AS sql FROM pg_indexes i
          JOIN pg_class c ON c.relname = i.indexname AND c.relnamespace = to_regnamespace(i.schemaname)
          JOIN pg_index x ON x.indexrelid = c.oid
         WHERE i.schemaname = current_schema() AND i.tablename = ANY($1) AND NOT x.indisunique AND NOT x.indisprimary`,
        [TABLES],
      );
      dropped = rows.map((r) => String(r.sql));
      for (const r of rows) await client.query(`DROP INDEX "${r.name}"`);
    },
    restoreIndexes: async () => {
      const settled = await Promise.allSettled(inFlight);
      inFlight = [];
      await client.query("ROLLBACK"); // only a warning when no batch failed
      const sqls = dropped;
      dropped = [];
      await client.query("SET maintenance_work_mem = '512MB'");
      for (const sql of sqls) await client.query(sql);
      const failed = settled.find((r) => r.status === "rejected");
      if (failed) throw failed.reason;
    },
    nextIds: async () => {
      const { rows } = await client.query(
        `SELECT (SELECT coalesce(max("id"), 0) FROM "providers") AS p, (SELECT coalesce(max("id"), 0) FROM "reviews") AS r`,
      );
      return { provider: Number(rows[0].p) + 1, review: Number(rows[0].r) + 1 };
    },
    write: async (batch) => {
      const providers = batch.map((a) => ({
        id: a.id,
        providerCode: a.providerCode,
        ...a.profile,
        trustTier: a.trustTier,
        reviewStage: a.reviewStage,
        createdAt: iso(a.createdAt),
        updatedAt: iso(a.updatedAt),
      }));
      const labels = batch.flatMap((a) => a.profile.labels.map((label) => ({ providerId: a.id, label })));
      const versions = batch.map((a) => ({
        providerId: a.id,
        version: 1,
        createdAt: iso(a.createdAt),
        actor: `agent:${a.providerCode}`,
        changedFields: SNAPSHOT_FIELDS,
        snapshot: Object.fromEntries(SNAPSHOT_FIELDS.map((f) => [f, a.profile[f]])),
      }));
      const reviews = batch.map(({ id, review: r }) => ({
        id: r.id,
        reviewCode: r.reviewCode,
        providerId: id,
        kind: "INTAKE",
        status: r.status,
        priority: r.priority,
        priorityRank: r.priorityRank,
        assignedTo: r.assignedTo,
        createdAt: iso(r.createdAt),
        updatedAt: iso(r.updatedAt),
        decidedAt: r.decidedAt === null ? null : iso(r.decidedAt),
      }));
      const events = batch.flatMap((a) =>
        a.events.map((e) => ({
          providerId: a.id,
          reviewId: e.review ? a.review.id : null,
          at: iso(e.at),
          kind: e.kind,
          actor: e.actor,
          note: e.note,
        })),
      );
      // One after the other on the connection; the caller generates the next batch meanwhile.
      const previous = inFlight[inFlight.length - 1] ?? Promise.resolve();
      const done = previous.then(async () => {
        await client.query("BEGIN");
        await send(PROVIDERS, providers);
        await send(LABELS_SQL, labels);
        await send(VERSIONS, versions);
        await send(REVIEWS, reviews);
        await send(EVENTS, events);
        await client.query("COMMIT");
      });
      done.catch(() => {}); // awaited below or in finish(); a failure there rejects the seed
      inFlight.push(done);
      if (inFlight.length >= 2) await inFlight.shift();
    },
    finish: async () => {
      await Promise.all(inFlight);
      inFlight = [];
      for (const table of ["providers", "reviews"]) {
        await client.query(
          `SELECT setval(pg_get_serial_sequence('"${table}"', 'id'), (SELECT coalesce(max("id"), 1) FROM "${table}"))`,
        );
      }
      await client.query(`ANALYZE "providers", "provider_labels", "provider_versions", "reviews", "review_events"`);
    },
    close: async () => {
      await Promise.allSettled(inFlight);
      await client.query("ROLLBACK").catch(() => {});
      await client.end();
    },
  };
}

// ── CLI ───────────────────────────────────────────────────────────────────────────────────────

/** `--name value` and `--name=value` options, by name; throws on anything else or an unknown name. */
export function parseOptions(argv: string[], known: string[]): Map<string, string> {
  const args = new Map<string, string>();
  for (let i = 0; i < argv.length; i++) {
    const key = argv[i]!;
    if (!key.startsWith("--")) throw new Error(`unexpected argument "${key}"`);
    const [name, inline] = key.slice(2).split("=", 2) as [string, string | undefined];
    args.set(name, inline ?? argv[++i] ?? "");
  }
  for (const k of args.keys()) if (!known.includes(k)) throw new Error(`unknown option --${k}`);
  return args;
}

function parseArgs(argv: string[]): { count: number; databaseUrl: string; seed: number; now?: Date; batch?: number } {
  const args = parseOptions(argv, ["count", "database-url", "seed", "now", "batch"]);
  const count = Number(args.get("count"));
  if (!Number.isInteger(count) || count < 0) throw new Error("--count N (a whole number) is required");
  const now = args.get("now");
  return {
    count,
    databaseUrl: args.get("database-url") || process.env.DATABASE_URL || "file:./data/registry.db",
    seed: Number(args.get("seed") ?? 1),
    ...(now ? { now: new Date(now) } : {}),
    ...(args.has("batch") ? { batch: Number(args.get("batch")) } : {}),
  };
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  try {
    const a = parseArgs(process.argv.slice(2));
    await seedSynthetic({
      databaseUrl: a.databaseUrl,
      count: a.count,
      seed: a.seed,
      ...(a.now ? { now: a.now } : {}),
      ...(a.batch ? { batchSize: a.batch } : {}),
      log: (line) => process.stderr.write(`${line}\n`),
    });
  } catch (error) {
    process.stderr.write(`seed:synthetic failed: ${(error as Error).message}\n`);
    process.exitCode = 1;
  }
}
