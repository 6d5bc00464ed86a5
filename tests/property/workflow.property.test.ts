/**
 * Model-based property test of the review workflow: random sequences of intakes,
 * assignments, decisions, comments, owner PATCHes (some with a stale If-Match, some with another
 * agent's token or none), suspensions, reinstatements and token issues, rotations and revocations
 * go through REST (`app.fetch`, the real SQLite database), legal or not. The model in ./model.ts
 * predicts each answer from API.md §1–§3 (its own transitions table, not src/reviews/review.rules.ts);
 * a refused command must change nothing. After every command:
 *   - the provider's reviewStage, trustTier, version and profile, each review's kind, status and
 *     assignee, and each token's revocation equal the model; at most one active review a provider;
 *   - the timeline is exactly the modelled events and append-only (what was read before is its
 *     prefix); the versions run n..1 newest first, append-only, n = the profile's version;
 *   - a SUSPENDED provider has no unrevoked access_tokens row and every token it had answers 401;
 *   - anonymous callers list exactly the PUBLIC+APPROVED providers of the run, read the detail of
 *     exactly the PUBLIC/UNLISTED ones not REJECTED/SUSPENDED (404 otherwise), and never see tokens,
 *     contactEmail or timeline notes.
 *
 * Bounded for CI: seed 20261121, 25 runs of one or two intakes then up to 25 commands (~10 s).
 * A longer or different run, what it reached, or the replay of a failure (seed and path as printed):
 *   PROPERTY_RUNS=300 PROPERTY_COMMANDS=40 PROPERTY_SEED=42 PROPERTY_STATS=1 npm test -- tests/property
 *   PROPERTY_SEED=<seed> PROPERTY_PATH=<path> npm test -- tests/property
 * Each run scopes its data by a unique word in every code and name (the database is shared).
 */
import { randomBytes } from "node:crypto";
import { afterAll, beforeAll, describe, test } from "@jest/globals";
import fc from "fast-check";
import { type Answer, call, db, reviewerToken } from "../helpers.ts";
import {
  ACTIVE,
  activeReview,
  activeTokens,
  anonymousCanList,
  anonymousCanRead,
  type Caller,
  canonical,
  type Decision,
  type Expectation,
  expectAssign,
  expectComment,
  expectDecision,
  expectIssue,
  expectModeration,
  expectPatch,
  expectRevoke,
  type Model,
  type ProfileModel,
  type ProviderModel,
  type ReviewModel,
  type TokenModel,
  type TrustTier,
  type Visibility,
} from "./model.ts";

const SEED = Number(process.env.PROPERTY_SEED ?? 20261121);
const RUNS = Number(process.env.PROPERTY_RUNS ?? 25);
const MAX_COMMANDS = Number(process.env.PROPERTY_COMMANDS ?? 25);
const MAX_PROVIDERS = 3;
const REVIEWERS = ["reviewer-1", "reviewer-2"] as const;

// ── Pools of valid values (already in the normalised form the service answers) ───────────────
const ENDPOINTS = [
  { url: "https://agent.example.com/a2a", protocol: "A2A", authScheme: "BEARER", healthUrl: null },
  {
    url: "https://agent.example.com/mcp",
    protocol: "MCP",
    authScheme: "OAUTH2",
    healthUrl: "https://agent.example.com/health",
  },
  { url: "http://localhost:8080/rpc", protocol: "HTTP_JSON", authScheme: "NONE", healthUrl: null },
];
const SEARCH_TOOL = { name: "search", kind: "MCP", description: null, scopes: ["READ_ONLY"] };
const TOOLS = [
  [],
  [SEARCH_TOOL],
  [{ name: "book", kind: "HTTP", description: "Books a slot", scopes: ["WRITE", "EXTERNAL"] }, SEARCH_TOOL],
];
const POLICIES = [
  null,
  {
    dataRetentionDays: 30,
    humanOversight: "ON_REQUEST",
    allowedUseCases: ["routing"],
    prohibitedUseCases: [],
    termsUrl: null,
    privacyUrl: null,
  },
  {
    dataRetentionDays: null,
    humanOversight: "ALWAYS",
    allowedUseCases: [],
    prohibitedUseCases: ["surveillance"],
    termsUrl: "https://example.com/terms",
    privacyUrl: null,
  },
];
const SUMMARIES = ["Plans delivery routes", "Answers questions about maps", "Books meeting rooms"];
const DESCRIPTIONS = [null, "# Route planner\n\nPlans routes.", "   ", "Second draft"];
const LABELS = ["Maps", " routing ", "maps", "geo.v2", "A_B-c", "ops"];
const VISIBILITIES: Visibility[] = ["PUBLIC", "UNLISTED", "PRIVATE"];
const TIERS: TrustTier[] = ["UNVERIFIED", "VERIFIED", "TRUSTED", "OFFICIAL"];

const labelsArb = fc.subarray(LABELS);
const visibilityArb = fc.constantFrom(...VISIBILITIES);
/** Which of a provider's reviews or tokens: preferably the active one, else any by index. */
const pickArb = fc.record({
  active: fc.oneof({ weight: 4, arbitrary: fc.constant(true) }, { weight: 1, arbitrary: fc.constant(false) }),
  index: fc.nat(20),
});
type Pick = { active: boolean; index: number };
const reviewerArb = fc.constantFrom(...REVIEWERS);
/** `arb` with the given chance (in percent), else null. */
const maybe = <T>(arb: fc.Arbitrary<T>, percent: number): fc.Arbitrary<T | null> =>
  fc.oneof({ weight: 100 - percent, arbitrary: fc.constant(null) }, { weight: percent, arbitrary: arb });
const noteArb = fc.constantFrom("Looks good", "Please document the tools", "  spaced note  ");

// ── The system under test, as one run sees it ──────────────────────────────────────────────
interface Real {
  /** The run's unique word: in every code and name it makes, and the search of its list. */
  word: string;
  made: number;
  /** The timeline and the versions (oldest first) last read, per provider: they may only grow. */
  timelines: Map<string, unknown[]>;
  versions: Map<string, unknown[]>;
}

const PROBLEM_CODES: Record<number, string> = {
  400: "BAD_USER_INPUT",
  401: "UNAUTHENTICATED",
  403: "FORBIDDEN",
  404: "NOT_FOUND",
  409: "CONFLICT",
  412: "PRECONDITION_FAILED",
};

const reviewerTokens = new Map<string, string>();
/** How often each expectation was met, printed with PROPERTY_STATS=1 to see what the runs reach. */
const tally = new Map<string, number>();

function fail(message: string, details: Record<string, unknown> = {}): never {
  const lines = Object.entries(details).map(([k, v]) => `  ${k}: ${typeof v === "string" ? v : JSON.stringify(v)}`);
  throw new Error([message, ...lines].join("\n"));
}

/** Deep equality by value (JSON with sorted keys): answers and rows come from other realms than the model. */
function same(actual: unknown, expected: unknown, what: string): void {
  if (canonical(actual) !== canonical(expected)) fail(`${what} differs from the model`, { expected, actual });
}

function providerAt(m: Readonly<Model>, index: number): ProviderModel {
  return m.providers[index % m.providers.length] as ProviderModel;
}
function pickReview(p: ProviderModel, pick: Pick): ReviewModel {
  const active = activeReview(p);
  if (pick.active && active) return active;
  return p.reviews[pick.index % p.reviews.length] as ReviewModel;
}
function pickToken(p: ProviderModel, pick: Pick): TokenModel {
  const active = activeTokens(p);
  if (pick.active && active.length > 0) return active[pick.index % active.length] as TokenModel;
  return p.tokens[pick.index % p.tokens.length] as TokenModel;
}
function secretOf(caller: Caller): string | undefined {
  if (caller.kind === "reviewer") return reviewerTokens.get(caller.subject);
  if (caller.kind === "agent") return caller.token.secret;
  return undefined;
}
function describeState(p: ProviderModel) {
  return {
    code: p.code,
    stage: p.stage,
    visibility: p.profile.visibility,
    version: p.version,
    reviews: p.reviews.map((r) => `${r.code} ${r.kind} ${r.status}`),
    tokens: p.tokens.map((t) => `${t.tokenId}${t.revoked ? " (revoked)" : ""}`),
  };
}

/**
 * Sends a request and holds its answer to the model's expectation; a success moves the model, a
 * refusal must be a problem document (and must have changed nothing: `settle` checks that next).
 */
async function perform(
  p: ProviderModel,
  label: string,
  expectation: Expectation,
  send: () => Promise<Answer>,
): Promise<Answer> {
  const before = describeState(p);
  const answer = await send();
  if (answer.status !== expectation.status) {
    fail(`${label}: expected ${expectation.status} (${expectation.why}), got ${answer.status}`, {
      body: answer.text.slice(0, 600),
      modelBefore: before,
    });
  }
  const key = `${label.slice(0, label.indexOf("("))} → ${expectation.status} ${expectation.why}`;
  tally.set(key, (tally.get(key) ?? 0) + 1);
  if (answer.status >= 200 && answer.status < 300) {
    expectation.apply();
    p.events.push(...expectation.events);
  } else {
    // A refusal is a problem document with the code of its status (API.md §5).
    same(
      { contentType: answer.headers.get("content-type"), code: answer.body?.code },
      { contentType: "application/problem+json", code: PROBLEM_CODES[answer.status] },
      `${label}: the refusal`,
    );
    if (answer.status === 401 && !answer.headers.get("www-authenticate")?.startsWith("Bearer")) {
      fail(`${label}: a 401 without WWW-Authenticate: Bearer`);
    }
    if (expectation.names && !String(answer.body.detail).includes(expectation.names)) {
      fail(`${label}: the 409 does not name the current state ${expectation.names}`, { detail: answer.body.detail });
    }
  }
  return answer;
}

// ── Invariants ─────────────────────────────────────────────────────────────────────────────
function isPrefix(older: unknown[], newer: unknown[]): boolean {
  return older.length <= newer.length && older.every((item, i) => canonical(item) === canonical(newer[i]));
}

/** One provider through the API: as a reviewer, anonymously, and with each token when suspended. */
async function checkProvider(r: Real, p: ProviderModel): Promise<void> {
  const reviewer = reviewerTokens.get(REVIEWERS[0]) as string;
  const detail = await call("GET", `/api/v1/providers/${p.code}`, { token: reviewer });
  if (detail.status !== 200) fail(`reviewer GET ${p.code}: ${detail.status}`, { body: detail.text });
  const body = detail.body;
  same(
    {
      reviewStage: body.reviewStage,
      trustTier: body.trustTier,
      version: body.version,
      visibility: body.visibility,
      summary: body.summary,
      description: body.description,
      labels: body.labels,
    },
    {
      reviewStage: p.stage,
      trustTier: p.trustTier,
      version: p.version,
      visibility: p.profile.visibility,
      summary: p.profile.summary,
      description: p.profile.description,
      labels: p.profile.labels,
    },
    `${p.code}: the profile`,
  );
  for (const field of ["endpoint", "tools", "policy"] as const) {
    // An endpoint is answered with every member, those the model's leave out empty.
    const expected =
      field === "endpoint" && p.profile.endpoint
        ? { transport: null, headers: [], variables: [], ...p.profile.endpoint }
        : p.profile[field];
    same(canonical(body[field]), canonical(expected), `${p.code}: ${field}`);
  }
  same(
    (body.tokens as { tokenId: string; revokedAt: string | null }[]).map((t) => [t.tokenId, t.revokedAt !== null]),
    p.tokens.map((t) => [t.tokenId, t.revoked]),
    `${p.code}: tokens (id, revoked)`,
  );

  // The timeline: exactly the modelled events, and what was read before is still its beginning.
  const timeline = body.reviewTimeline as { at: string; kind: string; actor: string; note: string | null }[];
  same(
    timeline.map((e) => ({ kind: e.kind, actor: e.actor })),
    p.events,
    `${p.code}: the timeline`,
  );
  const seenTimeline = r.timelines.get(p.code) ?? [];
  if (!isPrefix(seenTimeline, timeline)) {
    fail(`${p.code}: the timeline is not append-only`, { before: seenTimeline, after: timeline });
  }
  for (let i = 1; i < timeline.length; i++) {
    if ((timeline[i - 1] as { at: string }).at > (timeline[i] as { at: string }).at) {
      fail(`${p.code}: the timeline is not oldest first`, { timeline });
    }
  }
  r.timelines.set(p.code, timeline);

  // The versions: 1..n without gaps, newest first, append-only; n is the profile's version.
  const versions = await call("GET", `/api/v1/providers/${p.code}/versions?limit=100`, { token: reviewer });
  if (versions.status !== 200) fail(`GET ${p.code}/versions: ${versions.status}`, { body: versions.text });
  const items = versions.body.items as { version: number }[];
  same(
    items.map((v) => v.version),
    Array.from({ length: p.version }, (_, i) => p.version - i),
    `${p.code}: the version numbers`,
  );
  same(versions.body.nextCursor, null, `${p.code}: nextCursor of the versions`);
  const oldestFirst = [...items].reverse();
  const seenVersions = r.versions.get(p.code) ?? [];
  if (!isPrefix(seenVersions, oldestFirst)) {
    fail(`${p.code}: the versions are not append-only`, { before: seenVersions, after: oldestFirst });
  }
  r.versions.set(p.code, oldestFirst);

  // Anonymous: 200 exactly where API.md §2 allows, and never a private field.
  const anonymous = await call("GET", `/api/v1/providers/${p.code}`);
  same(anonymous.status, anonymousCanRead(p) ? 200 : 404, `${p.code}: anonymous GET status (${p.stage})`);
  if (anonymous.status === 200) {
    const a = anonymous.body;
    same(
      {
        tokens: a.tokens,
        contactEmail: a.contactEmail,
        notes: (a.reviewTimeline as { note: unknown }[]).filter((e) => e.note !== null),
      },
      { tokens: null, contactEmail: null, notes: [] },
      `${p.code}: the anonymous view's private fields`,
    );
    same(a.reviewStage, p.stage, `${p.code}: anonymous reviewStage`);
  }

  // Suspended: no token works.
  if (p.stage === "SUSPENDED") {
    for (const token of p.tokens) {
      const answer = await call("GET", `/api/v1/providers/${p.code}`, { token: token.secret });
      same(answer.status, 401, `${p.code} is SUSPENDED: a request with token ${token.tokenId}`);
    }
  }
}

/** Every provider of the run in the database, and the anonymous list. */
async function checkRun(m: Model, r: Real): Promise<void> {
  const rows = await db.provider.findMany({
    where: { providerCode: { startsWith: `${r.word}-` } },
    select: {
      providerCode: true,
      reviewStage: true,
      trustTier: true,
      version: true,
      reviews: { orderBy: { id: "asc" }, select: { reviewCode: true, kind: true, status: true, assignedTo: true } },
      tokens: { orderBy: { id: "asc" }, select: { tokenId: true, revokedAt: true } },
      _count: { select: { versions: true, events: true } },
    },
    orderBy: { id: "asc" },
  });
  same(
    rows.map((row) => row.providerCode),
    m.providers.map((p) => p.code),
    "the run's providers in the database",
  );
  rows.forEach((row, i) => {
    const p = m.providers[i] as ProviderModel;
    same(
      { reviewStage: row.reviewStage, trustTier: row.trustTier, version: row.version },
      { reviewStage: p.stage, trustTier: p.trustTier, version: p.version },
      `${p.code}: the providers row`,
    );
    same(
      row.reviews.map((v) => ({ code: v.reviewCode, kind: v.kind, status: v.status, assignedTo: v.assignedTo })),
      p.reviews,
      `${p.code}: the reviews rows`,
    );
    const active = row.reviews.filter((v) => (ACTIVE as readonly string[]).includes(v.status));
    if (active.length > 1) fail(`${p.code}: more than one active review`, { active });
    same(
      row.tokens.map((t) => [t.tokenId, t.revokedAt !== null]),
      p.tokens.map((t) => [t.tokenId, t.revoked]),
      `${p.code}: the access_tokens rows (id, revoked)`,
    );
    if (row.reviewStage === "SUSPENDED" && row.tokens.some((t) => t.revokedAt === null)) {
      fail(`${p.code} is SUSPENDED with an unrevoked access token`, { tokens: row.tokens });
    }
    same(row._count.versions, p.version, `${p.code}: provider_versions rows`);
    same(row._count.events, p.events.length, `${p.code}: review_events rows`);
  });

  const list = await call("GET", `/api/v1/providers?search=${r.word}&limit=100`);
  if (list.status !== 200) fail(`anonymous list: ${list.status}`, { body: list.text });
  same(
    (list.body.items as { providerCode: string }[]).map((i) => i.providerCode).sort(),
    m.providers
      .filter(anonymousCanList)
      .map((p) => p.code)
      .sort(),
    "the anonymous list (PUBLIC and APPROVED)",
  );
}

async function settle(m: Model, r: Real, touched: ProviderModel[]): Promise<void> {
  for (const p of touched) await checkProvider(r, p);
  await checkRun(m, r);
}

// ── Commands ───────────────────────────────────────────────────────────────────────────────
type Cmd = fc.AsyncCommand<Model, Real>;
const hasProvider = (m: Readonly<Model>) => m.providers.length > 0;

class Intake implements Cmd {
  constructor(
    readonly input: {
      visibility: Visibility;
      labels: string[];
      endpoint: number;
      tools: number;
      policy: number;
      /** Ask for the code of a provider this run already made: 409. */
      takenCode: number | null;
    },
  ) {}
  check(m: Readonly<Model>) {
    return this.input.takenCode === null ? m.providers.length < MAX_PROVIDERS : hasProvider(m);
  }
  async run(m: Model, r: Real) {
    const { input } = this;
    const taken = input.takenCode === null ? null : providerAt(m, input.takenCode);
    const code = taken?.code ?? `${r.word}-${r.made + 1}`;
    const profile: ProfileModel = {
      summary: SUMMARIES[0] as string,
      description: null,
      labels: [...input.labels, r.word.toUpperCase()].map((l) => l.trim().toLowerCase()),
      visibility: input.visibility,
      endpoint: ENDPOINTS[input.endpoint],
      tools: TOOLS[input.tools] as unknown[],
      policy: POLICIES[input.policy],
    };
    profile.labels = [...new Set(profile.labels)];
    const answer = await call("POST", "/api/v1/providers", {
      body: {
        providerCode: code,
        name: `Prop ${r.word} ${r.made + 1}`,
        summary: profile.summary,
        agentType: "ASSISTANT",
        contactEmail: "owner@example.com",
        endpoint: profile.endpoint,
        labels: [...input.labels, r.word.toUpperCase()],
        visibility: input.visibility,
        tools: profile.tools,
        policy: profile.policy,
      },
    });
    if (taken) {
      same(answer.status, 409, `intake with the taken code ${code}`);
      await checkRun(m, r);
      return;
    }
    if (answer.status !== 201) fail(`intake: expected 201, got ${answer.status}`, { body: answer.text });
    r.made += 1;
    const actor = `agent:${code}`;
    const p: ProviderModel = {
      code,
      stage: "SUBMITTED",
      trustTier: "UNVERIFIED",
      version: 1,
      profile,
      reviews: [{ code: answer.body.reviewCode, kind: "INTAKE", status: "OPEN", assignedTo: null }],
      tokens: [{ secret: answer.body.accessToken, tokenId: answer.body.provider.tokens[0].tokenId, revoked: false }],
      events: [
        { kind: "SUBMITTED", actor },
        { kind: "TOKEN_ISSUED", actor },
      ],
    };
    m.providers.push(p);
    await settle(m, r, [p]);
  }
  toString() {
    const i = this.input;
    return i.takenCode === null
      ? `Intake(${i.visibility}, labels=${JSON.stringify(i.labels)}, endpoint#${i.endpoint}, tools#${i.tools}, policy#${i.policy})`
      : `Intake(taken code of p${i.takenCode})`;
  }
}

class Assign implements Cmd {
  constructor(readonly input: { p: number; review: Pick; by: string; assignee: string | null }) {}
  check = hasProvider;
  async run(m: Model, r: Real) {
    const p = providerAt(m, this.input.p);
    const review = pickReview(p, this.input.review);
    const caller: Caller = { kind: "reviewer", subject: this.input.by };
    const expectation = expectAssign(p, review, caller, this.input.assignee);
    await perform(p, this.toString(), expectation, () =>
      call("POST", `/api/v1/reviews/${review.code}/assign`, {
        token: secretOf(caller),
        body: this.input.assignee ? { assignee: this.input.assignee } : {},
      }),
    );
    await settle(m, r, [p]);
  }
  toString() {
    const i = this.input;
    return `Assign(p${i.p}, review ${i.review.active ? "active" : `#${i.review.index}`}, by ${i.by}, to ${i.assignee ?? "self"})`;
  }
}

class Decide implements Cmd {
  constructor(
    readonly input: {
      p: number;
      review: Pick;
      by: string;
      decision: Decision;
      note: string | null;
      trustTier: TrustTier | null;
      /** Sent with one of the owner's tokens instead of a reviewer's: 403 (401 when revoked). */
      asOwner: Pick | null;
    },
  ) {}
  check = hasProvider;
  async run(m: Model, r: Real) {
    const { input } = this;
    const p = providerAt(m, input.p);
    const review = pickReview(p, input.review);
    const caller: Caller = input.asOwner
      ? { kind: "agent", provider: p, token: pickToken(p, input.asOwner) }
      : { kind: "reviewer", subject: input.by };
    const expectation = expectDecision(p, review, caller, input);
    const answer = await perform(p, this.toString(), expectation, () =>
      call("POST", `/api/v1/reviews/${review.code}/decision`, {
        token: secretOf(caller),
        body: {
          decision: input.decision,
          ...(input.note !== null ? { note: input.note } : {}),
          ...(input.trustTier ? { trustTier: input.trustTier } : {}),
        },
      }),
    );
    if (answer.status === 200) same(answer.body.status, review.status, `${review.code}: the decided review's status`);
    await settle(m, r, [p]);
  }
  toString() {
    const i = this.input;
    return `Decide(p${i.p}, review ${i.review.active ? "active" : `#${i.review.index}`}, ${i.decision}, note=${JSON.stringify(i.note)}, tier=${i.trustTier}, by ${i.asOwner ? "the owner" : i.by})`;
  }
}

class Comment implements Cmd {
  constructor(readonly input: { p: number; review: Pick; by: string; owner: Pick | null }) {}
  check = hasProvider;
  async run(m: Model, r: Real) {
    const { input } = this;
    const p = providerAt(m, input.p);
    const review = pickReview(p, input.review);
    const caller: Caller = input.owner
      ? { kind: "agent", provider: p, token: pickToken(p, input.owner) }
      : { kind: "reviewer", subject: input.by };
    await perform(p, this.toString(), expectComment(p, caller), () =>
      call("POST", `/api/v1/reviews/${review.code}/comments`, {
        token: secretOf(caller),
        body: { note: "A question about the tools" },
      }),
    );
    await settle(m, r, [p]);
  }
  toString() {
    const i = this.input;
    return `Comment(p${i.p}, review ${i.review.active ? "active" : `#${i.review.index}`}, by ${i.owner ? `the owner (token ${i.owner.active ? "active" : `#${i.owner.index}`})` : i.by})`;
  }
}

interface PatchFields {
  summary?: number;
  description?: number;
  labels?: string[];
  visibility?: Visibility;
  endpoint?: number;
  tools?: number;
  policy?: number;
}

class Patch implements Cmd {
  constructor(
    readonly input: {
      p: number;
      token: Pick;
      fields: PatchFields;
      ifMatch: "none" | "current" | "stale";
      /** Sent with another provider's token (or none at all): 403/404 (401). */
      foreign: { other: number } | "anonymous" | null;
    },
  ) {}
  check(m: Readonly<Model>) {
    return this.input.foreign === null || this.input.foreign === "anonymous" ? hasProvider(m) : m.providers.length > 1;
  }
  async run(m: Model, r: Real) {
    const { input } = this;
    const p = providerAt(m, input.p);
    let caller: Caller;
    if (input.foreign === "anonymous") caller = { kind: "anonymous" };
    else if (input.foreign) {
      const others = m.providers.filter((q) => q !== p);
      const q = others[input.foreign.other % others.length] as ProviderModel;
      caller = { kind: "agent", provider: q, token: pickToken(q, input.token) };
    } else caller = { kind: "agent", provider: p, token: pickToken(p, input.token) };

    const f = input.fields;
    const body: Record<string, unknown> = {};
    const changes: Partial<ProfileModel> = {};
    if (f.summary !== undefined) body.summary = changes.summary = SUMMARIES[f.summary] as string;
    if (f.description !== undefined) {
      const text = DESCRIPTIONS[f.description] ?? null;
      body.description = text;
      changes.description = text?.trim() || null;
    }
    if (f.labels !== undefined) {
      body.labels = [...f.labels, r.word];
      changes.labels = [...new Set([...f.labels, r.word].map((l) => l.trim().toLowerCase()))];
    }
    if (f.visibility !== undefined) body.visibility = changes.visibility = f.visibility;
    if (f.endpoint !== undefined) body.endpoint = changes.endpoint = ENDPOINTS[f.endpoint];
    if (f.tools !== undefined) body.tools = changes.tools = TOOLS[f.tools] as unknown[];
    if (f.policy !== undefined) body.policy = changes.policy = POLICIES[f.policy];

    const ifMatch =
      input.ifMatch === "none" ? null : input.ifMatch === "current" ? p.version : p.version > 1 ? p.version - 1 : 7;
    const expectation = expectPatch(p, caller, changes, ifMatch);
    const known = new Set(p.reviews.map((v) => v.code));
    const answer = await perform(p, this.toString(), expectation, () =>
      call("PATCH", `/api/v1/providers/${p.code}`, {
        token: secretOf(caller),
        body,
        headers: ifMatch === null ? {} : { "if-match": `"${ifMatch}"` },
      }),
    );
    if (answer.status === 200) {
      same(answer.headers.get("etag"), `"${p.version}"`, `${p.code}: the ETag of the PATCH`);
      same(answer.body.version, p.version, `${p.code}: the version answered by the PATCH`);
      if (expectation.opensUpdate) {
        const fresh = await db.review.findMany({
          where: { provider: { providerCode: p.code }, reviewCode: { notIn: [...known] } },
          select: { reviewCode: true },
        });
        if (fresh.length !== 1) fail(`${p.code}: expected one new UPDATE review, found ${fresh.length}`);
        p.reviews.push({
          code: (fresh[0] as { reviewCode: string }).reviewCode,
          kind: "UPDATE",
          status: "OPEN",
          assignedTo: null,
        });
      }
    }
    await settle(m, r, [p]);
  }
  toString() {
    const i = this.input;
    const who =
      i.foreign === "anonymous"
        ? "anonymous"
        : i.foreign
          ? `token of another provider #${i.foreign.other}`
          : `token ${i.token.active ? "active" : `#${i.token.index}`}`;
    return `Patch(p${i.p}, ${JSON.stringify(i.fields)}, If-Match ${i.ifMatch}, ${who})`;
  }
}

class Moderate implements Cmd {
  constructor(readonly input: { p: number; action: "suspend" | "reinstate"; by: string; note: string | null }) {}
  check = hasProvider;
  async run(m: Model, r: Real) {
    const { input } = this;
    const p = providerAt(m, input.p);
    const caller: Caller = { kind: "reviewer", subject: input.by };
    await perform(p, this.toString(), expectModeration(p, caller, input.action, input.note), () =>
      call("POST", `/api/v1/providers/${p.code}/${input.action}`, {
        token: secretOf(caller),
        body: input.note === null ? {} : { note: input.note },
      }),
    );
    await settle(m, r, [p]);
  }
  toString() {
    const i = this.input;
    return `${i.action === "suspend" ? "Suspend" : "Reinstate"}(p${i.p}, by ${i.by}, note=${JSON.stringify(i.note)})`;
  }
}

class IssueToken implements Cmd {
  constructor(readonly input: { p: number; owner: Pick | null; by: string; rotate: boolean }) {}
  check = hasProvider;
  async run(m: Model, r: Real) {
    const { input } = this;
    const p = providerAt(m, input.p);
    const caller: Caller = input.owner
      ? { kind: "agent", provider: p, token: pickToken(p, input.owner) }
      : { kind: "reviewer", subject: input.by };
    const answer = await perform(p, this.toString(), expectIssue(p, caller, input.rotate), () =>
      call("POST", `/api/v1/providers/${p.code}/tokens`, {
        token: secretOf(caller),
        body: { label: "property", ...(input.rotate ? { revokeCurrent: true } : {}) },
      }),
    );
    if (answer.status === 201) {
      p.tokens.push({ secret: answer.body.accessToken, tokenId: answer.body.token.tokenId, revoked: false });
    }
    await settle(m, r, [p]);
  }
  toString() {
    const i = this.input;
    return `IssueToken(p${i.p}, by ${i.owner ? `the owner (token ${i.owner.active ? "active" : `#${i.owner.index}`})` : i.by}${i.rotate ? ", revokeCurrent" : ""})`;
  }
}

class RevokeToken implements Cmd {
  constructor(readonly input: { p: number; owner: Pick | null; by: string; target: Pick }) {}
  check = hasProvider;
  async run(m: Model, r: Real) {
    const { input } = this;
    const p = providerAt(m, input.p);
    const caller: Caller = input.owner
      ? { kind: "agent", provider: p, token: pickToken(p, input.owner) }
      : { kind: "reviewer", subject: input.by };
    const target = pickToken(p, input.target);
    await perform(p, this.toString(), expectRevoke(p, caller, target), () =>
      call("DELETE", `/api/v1/providers/${p.code}/tokens/${target.tokenId}`, { token: secretOf(caller) }),
    );
    await settle(m, r, [p]);
  }
  toString() {
    const i = this.input;
    return `RevokeToken(p${i.p}, token ${i.target.active ? "active" : `#${i.target.index}`}, by ${i.owner ? `the owner (token ${i.owner.active ? "active" : `#${i.owner.index}`})` : i.by})`;
  }
}

const p = fc.nat(MAX_PROVIDERS * 2);
const ownerPick = maybe(pickArb, 50);
/** An intake; `takenPercent` of them ask for a code the run already took. */
const intakeArb = (takenPercent: number) =>
  fc
    .record({
      visibility: visibilityArb,
      labels: labelsArb,
      endpoint: fc.nat(ENDPOINTS.length - 1),
      tools: fc.nat(TOOLS.length - 1),
      policy: fc.nat(POLICIES.length - 1),
      takenCode: maybe(p, takenPercent),
    })
    .map((input) => new Intake(input));
const commandArb: fc.Arbitrary<Cmd> = fc.oneof(
  { weight: 1, arbitrary: intakeArb(15) },
  {
    weight: 3,
    arbitrary: fc
      .record({
        p,
        review: pickArb,
        by: reviewerArb,
        assignee: fc.constantFrom(null, null, "reviewer-2", "ops-reviewer"),
      })
      .map((input) => new Assign(input)),
  },
  {
    weight: 6,
    arbitrary: fc
      .record({
        p,
        review: pickArb,
        by: reviewerArb,
        decision: fc.constantFrom<Decision>("APPROVE", "APPROVE", "REJECT", "REQUEST_CHANGES", "REQUEST_CHANGES"),
        note: maybe(noteArb, 85),
        trustTier: maybe(fc.constantFrom(...TIERS), 30),
        asOwner: maybe(pickArb, 8),
      })
      .map((input) => new Decide(input)),
  },
  {
    weight: 1,
    arbitrary: fc.record({ p, review: pickArb, by: reviewerArb, owner: ownerPick }).map((input) => new Comment(input)),
  },
  {
    weight: 7,
    arbitrary: fc
      .record({
        p,
        token: pickArb,
        fields: fc.record(
          {
            summary: fc.nat(SUMMARIES.length - 1),
            description: fc.nat(DESCRIPTIONS.length - 1),
            labels: labelsArb,
            visibility: visibilityArb,
            endpoint: fc.nat(ENDPOINTS.length - 1),
            tools: fc.nat(TOOLS.length - 1),
            policy: fc.nat(POLICIES.length - 1),
          },
          { requiredKeys: [] },
        ),
        ifMatch: fc.constantFrom<"none" | "current" | "stale">("none", "none", "current", "stale"),
        foreign: fc.oneof(
          { weight: 10, arbitrary: fc.constant(null) },
          { weight: 1, arbitrary: fc.constant("anonymous" as const) },
          { weight: 2, arbitrary: fc.record({ other: fc.nat(MAX_PROVIDERS) }) },
        ),
      })
      .map((input) => new Patch(input)),
  },
  {
    weight: 3,
    arbitrary: fc
      .record({
        p,
        action: fc.constantFrom<"suspend" | "reinstate">("suspend", "reinstate"),
        by: reviewerArb,
        note: maybe(noteArb, 90),
      })
      .map((input) => new Moderate(input)),
  },
  {
    weight: 2,
    arbitrary: fc
      .record({ p, owner: ownerPick, by: reviewerArb, rotate: maybe(fc.constant(true), 25).map(Boolean) })
      .map((input) => new IssueToken(input)),
  },
  {
    weight: 1,
    arbitrary: fc
      .record({ p, owner: ownerPick, by: reviewerArb, target: pickArb })
      .map((input) => new RevokeToken(input)),
  },
);

// ── The property ───────────────────────────────────────────────────────────────────────────
describe("the review workflow against its model (fast-check)", () => {
  beforeAll(async () => {
    for (const subject of REVIEWERS) reviewerTokens.set(subject, await reviewerToken(subject));
  });
  afterAll(() => {
    if (!process.env.PROPERTY_STATS) return;
    const lines = [...tally].sort(([a], [b]) => a.localeCompare(b)).map(([k, n]) => `${String(n).padStart(5)}  ${k}`);
    console.log(`What the runs reached:\n${lines.join("\n")}`);
  });

  test(
    `random command sequences keep every invariant (seed ${SEED}, ${RUNS} runs)`,
    async () => {
      await fc.assert(
        fc.asyncProperty(
          // A run starts with one or two intakes, so that the commands after them have providers to act on.
          fc.array(intakeArb(0), { minLength: 1, maxLength: 2 }),
          fc.commands([commandArb], { maxCommands: MAX_COMMANDS, size: "max" }),
          async (intakes, commands) => {
            const real: Real = {
              word: `pw${randomBytes(5).toString("hex")}`,
              made: 0,
              timelines: new Map(),
              versions: new Map(),
            };
            const model: Model = { providers: [] };
            for (const intake of intakes) await intake.run(model, real);
            await fc.asyncModelRun(() => ({ model, real }), commands);
            // At the end, every provider of the run once more (commands check only the one they touch).
            await settle(model, real, model.providers);
          },
        ),
        { seed: SEED, numRuns: RUNS, ...(process.env.PROPERTY_PATH ? { path: process.env.PROPERTY_PATH } : {}) },
      );
    },
    Math.max(120_000, RUNS * 8_000),
  );
});
