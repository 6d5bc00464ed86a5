/**
 * One synthetic agent as plain data: its profile, review and timeline, a pure function of (seed,
 * index, count, now) and the ids reserved for it, so a run on a fresh database is reproducible.
 */
import { HUMAN_OVERSIGHT, TOOL_KINDS, TOOL_SCOPES } from "../../src/providers/provider.enums.ts";
import type { OwnerField } from "../../src/providers/provider.rules.ts";
import { priorityRank, type ReviewStatus } from "../../src/reviews/review.rules.ts";
import { distinct, pick, rngFor, weighted, weightedOf, zipf } from "./random.ts";
import {
  ADJECTIVES,
  AGENT_TYPE_WEIGHTS,
  AUDIENCES,
  DOMAINS,
  LABELS,
  MARKERS,
  MEDIA,
  MODELS,
  NOUNS,
  OBJECTS,
  PRIORITY_WEIGHTS,
  PROHIBITED,
  PROTOCOL_PATHS,
  REVIEWERS,
  type ReviewStage,
  STAGE_WEIGHTS,
  TIER_WEIGHTS,
  TOOL_NAMES,
  USE_CASES,
  VERBS,
  VISIBILITY_WEIGHTS,
} from "./vocabulary.ts";

/** A day in ms; the agents are created over the two years (`SPAN`) before `now`. */
export const DAY = 86_400_000;
const SPAN = 730 * DAY;

const domainOf = zipf(DOMAINS.length, 1);
const labelOf = zipf(LABELS.length, 1.1);
const cap = (s: string) => s[0]!.toUpperCase() + s.slice(1);

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
  /**
   * The owner fields it fills: a field of another name is a type error here; an optional field the
   * generator does not know yet is left null, in the row and in the snapshot.
   */
  profile: Partial<Record<OwnerField, unknown>> & { labels: string[] };
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
  const agentType = weightedOf(rng, AGENT_TYPE_WEIGHTS);
  const visibility = weightedOf(rng, VISIBILITY_WEIGHTS);
  const reviewStage = weightedOf(rng, STAGE_WEIGHTS);
  const decided = reviewStage === "APPROVED" || reviewStage === "SUSPENDED";
  const trustTier = decided ? weightedOf(rng, TIER_WEIGHTS) : "UNVERIFIED";
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
    transport: null,
    headers: [],
    variables: [],
  };
  const policy =
    rng() < 0.2
      ? null
      : {
          dataRetentionDays: rng() < 0.7 ? pick(rng, [0, 7, 30, 90, 365]) : null,
          humanOversight: pick(rng, HUMAN_OVERSIGHT),
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
  const priority = weightedOf(rng, PRIORITY_WEIGHTS);
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
      packages: [],
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
