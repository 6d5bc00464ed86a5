/**
 * The review workflow through /graphql: assignReview, decideReview, commentOnReview, updateReview,
 * suspendProvider and reinstateProvider follow the same transitions table as the REST routes, with
 * CONFLICT, BAD_USER_INPUT, UNAUTHENTICATED, FORBIDDEN and NOT_FOUND in `extensions.code`.
 */
import { beforeAll, describe, expect, test } from "@jest/globals";
import { type Answer, approve, db, errorPaths, gql, gqlCodes, intake, reviewerToken } from "../helpers.ts";

const SUBJECT = "rv-gql-workflow";
let rv: string;

beforeAll(async () => {
  rv = await reviewerToken(SUBJECT);
});

const ASSIGN = `mutation A($c: String!, $a: String) {
  assignReview(reviewCode: $c, assignee: $a) { reviewCode providerCode kind status assignedTo decidedAt }
}`;
const DECIDE = `mutation D($c: String!, $d: ReviewDecision!, $n: String, $t: TrustTier) {
  decideReview(reviewCode: $c, decision: $d, note: $n, trustTier: $t) { reviewCode status assignedTo decidedAt }
}`;
const COMMENT = `mutation C($c: String!, $n: String!) { commentOnReview(reviewCode: $c, note: $n) { at kind actor note } }`;
const PRIORITY = `mutation P($c: String!, $p: ReviewPriority!) {
  updateReview(reviewCode: $c, priority: $p) { reviewCode priority status }
}`;
const SUSPEND = `mutation S($p: String!, $n: String!) {
  suspendProvider(providerCode: $p, note: $n) { providerCode reviewStage tokens { tokenId revokedAt } }
}`;
const REINSTATE = `mutation R($p: String!, $n: String) { reinstateProvider(providerCode: $p, note: $n) { reviewStage } }`;
const PATCH = `mutation U($p: String!, $summary: String, $endpoint: EndpointInput, $policy: PolicyInput) {
  updateProvider(providerCode: $p, summary: $summary, endpoint: $endpoint, policy: $policy) { reviewStage version }
}`;
const ISSUE = `mutation I($p: String!) { issueToken(providerCode: $p, label: "after") { accessToken } }`;
const STATE = `query S($c: String!, $p: String!) {
  review(reviewCode: $c) { status decidedAt }
  provider(providerCode: $p) { reviewStage trustTier }
}`;
const TIMELINE = `query T($p: String!) { provider(providerCode: $p) { reviewTimeline { at kind actor note } } }`;

/** `token` null: anonymous. */
const run = (query: string, variables: Record<string, unknown>, token: string | null = rv) =>
  gql(query, variables, token ? { token } : {});

/** A successful operation's data. */
async function ok(query: string, variables: Record<string, unknown>, token: string | null = rv) {
  const answer = await run(query, variables, token);
  expect(answer.body.errors).toBeUndefined();
  expect(answer.status).toBe(200);
  return answer.body.data;
}

/** The review's status and the provider's stage, read together after each step. */
async function where(reviewCode: string, providerCode: string) {
  const data = await ok(STATE, { c: reviewCode, p: providerCode });
  return { status: data.review.status, stage: data.provider.reviewStage, decided: data.review.decidedAt !== null };
}

async function timeline(providerCode: string, token: string | null = rv) {
  return (await ok(TIMELINE, { p: providerCode }, token)).provider.reviewTimeline as {
    at: string;
    kind: string;
    actor: string;
    note: string | null;
  }[];
}

async function snapshot(providerCode: string) {
  const provider = await db.provider.findUniqueOrThrow({
    where: { providerCode },
    select: { id: true, reviewStage: true, trustTier: true, version: true, updatedAt: true },
  });
  return {
    provider,
    reviews: await db.review.findMany({
      where: { providerId: provider.id },
      orderBy: { id: "asc" },
      select: { reviewCode: true, status: true, priority: true, assignedTo: true, decidedAt: true, updatedAt: true },
    }),
    events: await db.reviewEvent.count({ where: { providerId: provider.id } }),
    tokens: await db.accessToken.findMany({
      where: { providerId: provider.id },
      orderBy: { id: "asc" },
      select: { tokenId: true, revokedAt: true },
    }),
  };
}

/** An error with this code (and HTTP status), and nothing changed. */
async function expectRefused(providerCode: string, code: string, act: () => Promise<Answer>, detail?: string) {
  const before = await snapshot(providerCode);
  const answer = await act();
  expect(gqlCodes(answer)).toEqual([code]);
  if (detail) expect(answer.body.errors[0].message).toContain(detail);
  expect(await snapshot(providerCode)).toEqual(before);
  return answer;
}

const NEW_ENDPOINT = { url: "https://agent.example.com/v3", protocol: "HTTP_JSON", authScheme: "API_KEY" };

async function updateReviewCode(providerCode: string) {
  const review = await db.review.findFirstOrThrow({
    where: { provider: { providerCode }, kind: "UPDATE", status: { in: ["OPEN", "IN_PROGRESS", "CHANGES_REQUESTED"] } },
  });
  return review.reviewCode;
}

describe("an intake through the workflow", () => {
  test("assign, request changes, resubmit by updateProvider, assign, approve with a tier", async () => {
    const created = await intake();
    const { providerCode, reviewCode } = created;
    expect(await where(reviewCode, providerCode)).toEqual({ status: "OPEN", stage: "SUBMITTED", decided: false });

    const assigned = await ok(ASSIGN, { c: reviewCode });
    expect(assigned.assignReview).toEqual({
      reviewCode,
      providerCode,
      kind: "INTAKE",
      status: "IN_PROGRESS",
      assignedTo: SUBJECT,
      decidedAt: null,
    });
    expect(await where(reviewCode, providerCode)).toEqual({
      status: "IN_PROGRESS",
      stage: "IN_REVIEW",
      decided: false,
    });

    await ok(DECIDE, { c: reviewCode, d: "REQUEST_CHANGES", n: "Describe the tools" });
    expect(await where(reviewCode, providerCode)).toEqual({
      status: "CHANGES_REQUESTED",
      stage: "CHANGES_REQUESTED",
      decided: false,
    });

    const patched = await ok(PATCH, { p: providerCode, summary: "Tools described" }, created.accessToken);
    expect(patched.updateProvider).toEqual({ reviewStage: "SUBMITTED", version: 2 });
    expect(await where(reviewCode, providerCode)).toEqual({ status: "OPEN", stage: "SUBMITTED", decided: false });

    await ok(ASSIGN, { c: reviewCode, a: "someone-else" });
    expect(await where(reviewCode, providerCode)).toEqual({
      status: "IN_PROGRESS",
      stage: "IN_REVIEW",
      decided: false,
    });
    const approved = await ok(DECIDE, { c: reviewCode, d: "APPROVE", t: "OFFICIAL" });
    expect(approved.decideReview).toMatchObject({ status: "APPROVED", assignedTo: "someone-else" });
    expect(Date.parse(approved.decideReview.decidedAt)).not.toBeNaN();
    const state = await ok(STATE, { c: reviewCode, p: providerCode });
    expect(state.provider).toEqual({ reviewStage: "APPROVED", trustTier: "OFFICIAL" });

    const events = await timeline(providerCode);
    expect(events.map((e) => e.kind)).toEqual([
      "SUBMITTED",
      "TOKEN_ISSUED",
      "ASSIGNED",
      "CHANGES_REQUESTED",
      "PROFILE_UPDATED",
      "RESUBMITTED",
      "ASSIGNED",
      "APPROVED",
    ]);
    expect(events.find((e) => e.kind === "RESUBMITTED")?.actor).toBe(`agent:${providerCode}`);
    expect(events.find((e) => e.kind === "CHANGES_REQUESTED")).toMatchObject({
      actor: `reviewer:${SUBJECT}`,
      note: "Describe the tools",
    });
  });

  test("reject: REJECTED both, decidedAt set", async () => {
    const created = await intake();
    const answer = await ok(DECIDE, { c: created.reviewCode, d: "REJECT", n: "Duplicate of another agent" });
    expect(answer.decideReview.status).toBe("REJECTED");
    expect(await where(created.reviewCode, created.providerCode)).toEqual({
      status: "REJECTED",
      stage: "REJECTED",
      decided: true,
    });
  });
});

describe("BAD_USER_INPUT, and nothing changes", () => {
  test.each([
    ["REJECT without a note", { d: "REJECT" }, ["note"]],
    ["REQUEST_CHANGES with a blank note", { d: "REQUEST_CHANGES", n: "  " }, ["note"]],
    ["a tier with REJECT", { d: "REJECT", n: "no", t: "VERIFIED" }, ["trustTier"]],
    ["a tier with REQUEST_CHANGES", { d: "REQUEST_CHANGES", n: "fix", t: "TRUSTED" }, ["trustTier"]],
  ])("decideReview with %s names the field", async (_what, variables, paths) => {
    const created = await intake();
    const answer = await expectRefused(created.providerCode, "BAD_USER_INPUT", () =>
      run(DECIDE, { c: created.reviewCode, ...variables }),
    );
    expect(answer.status).toBe(400);
    expect(errorPaths(answer)).toEqual(paths);
  });

  test("an unknown decision or tier is refused by the schema", async () => {
    const created = await intake();
    await expectRefused(created.providerCode, "BAD_USER_INPUT", () =>
      run(DECIDE, { c: created.reviewCode, d: "MAYBE" }),
    );
    await expectRefused(created.providerCode, "BAD_USER_INPUT", () =>
      run(DECIDE, { c: created.reviewCode, d: "APPROVE", t: "PLATINUM" }),
    );
  });

  test("suspendProvider with a blank note names note", async () => {
    const created = await intake();
    await approve(created.providerCode);
    const answer = await expectRefused(created.providerCode, "BAD_USER_INPUT", () =>
      run(SUSPEND, { p: created.providerCode, n: " " }),
    );
    expect(errorPaths(answer)).toEqual(["note"]);
  });

  test("commentOnReview with a blank note names note", async () => {
    const created = await intake();
    const answer = await expectRefused(created.providerCode, "BAD_USER_INPUT", () =>
      run(COMMENT, { c: created.reviewCode, n: "" }),
    );
    expect(errorPaths(answer)).toEqual(["note"]);
  });
});

describe("suspension", () => {
  test("suspendProvider revokes every token; reinstateProvider approves; issueToken is CONFLICT until then", async () => {
    const created = await intake();
    await approve(created.providerCode);
    const second = await ok(ISSUE, { p: created.providerCode }, created.accessToken);
    const old = [created.accessToken, second.issueToken.accessToken as string];

    const suspended = await ok(SUSPEND, { p: created.providerCode, n: "Spam" });
    expect(suspended.suspendProvider.reviewStage).toBe("SUSPENDED");
    expect(suspended.suspendProvider.tokens).toHaveLength(2);
    for (const token of suspended.suspendProvider.tokens) expect(token.revokedAt).not.toBeNull();
    for (const token of old) {
      const answer = await run(PATCH, { p: created.providerCode, summary: "x" }, token);
      expect(answer.status).toBe(401);
      expect(gqlCodes(answer)).toEqual(["UNAUTHENTICATED"]);
    }

    const refused = await expectRefused(created.providerCode, "CONFLICT", () =>
      run(ISSUE, { p: created.providerCode }),
    );
    expect(refused.status).toBe(409);

    expect((await ok(REINSTATE, { p: created.providerCode })).reinstateProvider.reviewStage).toBe("APPROVED");
    for (const token of old) {
      expect(gqlCodes(await run(PATCH, { p: created.providerCode, summary: "x" }, token))).toEqual(["UNAUTHENTICATED"]);
    }
    const fresh = (await ok(ISSUE, { p: created.providerCode })).issueToken.accessToken as string;
    expect((await ok(PATCH, { p: created.providerCode, summary: "Back" }, fresh)).updateProvider.reviewStage).toBe(
      "APPROVED",
    );
    expect((await timeline(created.providerCode)).map((e) => e.kind)).toEqual([
      "SUBMITTED",
      "TOKEN_ISSUED",
      "APPROVED",
      "TOKEN_ISSUED",
      "SUSPENDED",
      "TOKEN_REVOKED",
      "REINSTATED",
      "TOKEN_ISSUED",
      "PROFILE_UPDATED",
    ]);
  });
});

describe("an approved provider's UPDATE review", () => {
  test("opened by an endpoint change, one at a time; assign and approve keep the stage APPROVED", async () => {
    const created = await intake();
    await approve(created.providerCode);
    await ok(PATCH, { p: created.providerCode, summary: "Only words" }, created.accessToken);
    expect(await db.review.count({ where: { provider: { providerCode: created.providerCode } } })).toBe(1);

    await ok(PATCH, { p: created.providerCode, endpoint: NEW_ENDPOINT }, created.accessToken);
    const code = await updateReviewCode(created.providerCode);
    await ok(PATCH, { p: created.providerCode, policy: { humanOversight: "ON_REQUEST" } }, created.accessToken);
    expect(await db.review.count({ where: { provider: { providerCode: created.providerCode } } })).toBe(2);
    expect(await where(code, created.providerCode)).toEqual({ status: "OPEN", stage: "APPROVED", decided: false });

    expect((await ok(ASSIGN, { c: code })).assignReview.kind).toBe("UPDATE");
    expect(await where(code, created.providerCode)).toEqual({
      status: "IN_PROGRESS",
      stage: "APPROVED",
      decided: false,
    });
    await ok(DECIDE, { c: code, d: "APPROVE" });
    expect(await where(code, created.providerCode)).toEqual({ status: "APPROVED", stage: "APPROVED", decided: true });
  });

  test("rejecting it suspends the provider and revokes its tokens", async () => {
    const created = await intake();
    await approve(created.providerCode);
    await ok(PATCH, { p: created.providerCode, endpoint: NEW_ENDPOINT }, created.accessToken);
    const code = await updateReviewCode(created.providerCode);
    await ok(DECIDE, { c: code, d: "REJECT", n: "Endpoint not reachable" });
    expect(await where(code, created.providerCode)).toEqual({ status: "REJECTED", stage: "SUSPENDED", decided: true });
    expect(gqlCodes(await run(PATCH, { p: created.providerCode, summary: "x" }, created.accessToken))).toEqual([
      "UNAUTHENTICATED",
    ]);
    expect((await timeline(created.providerCode)).map((e) => e.kind).slice(-3)).toEqual([
      "REJECTED",
      "SUSPENDED",
      "TOKEN_REVOKED",
    ]);
  });
});

describe("CONFLICT names the current state and changes nothing", () => {
  test("decideReview on an APPROVED review", async () => {
    const created = await intake();
    await approve(created.providerCode);
    const answer = await expectRefused(
      created.providerCode,
      "CONFLICT",
      () => run(DECIDE, { c: created.reviewCode, d: "REJECT", n: "changed my mind" }),
      "APPROVED",
    );
    expect(answer.status).toBe(409);
  });

  test("assignReview on a REJECTED review", async () => {
    const created = await intake();
    await ok(DECIDE, { c: created.reviewCode, d: "REJECT", n: "no" });
    await expectRefused(created.providerCode, "CONFLICT", () => run(ASSIGN, { c: created.reviewCode }), "REJECTED");
  });

  test("suspendProvider on a SUBMITTED provider, reinstateProvider on an APPROVED one", async () => {
    const created = await intake();
    await expectRefused(
      created.providerCode,
      "CONFLICT",
      () => run(SUSPEND, { p: created.providerCode, n: "why" }),
      "SUBMITTED",
    );
    await approve(created.providerCode);
    await expectRefused(
      created.providerCode,
      "CONFLICT",
      () => run(REINSTATE, { p: created.providerCode }),
      "APPROVED",
    );
  });

  test("updateReview on a closed review", async () => {
    const created = await intake();
    await approve(created.providerCode);
    await expectRefused(
      created.providerCode,
      "CONFLICT",
      () => run(PRIORITY, { c: created.reviewCode, p: "URGENT" }),
      "APPROVED",
    );
  });
});

describe("who may act", () => {
  test.each([
    ["assignReview", ASSIGN, (c: { reviewCode: string }) => ({ c: c.reviewCode })],
    ["decideReview", DECIDE, (c: { reviewCode: string }) => ({ c: c.reviewCode, d: "APPROVE" })],
    ["updateReview", PRIORITY, (c: { reviewCode: string }) => ({ c: c.reviewCode, p: "HIGH" })],
    ["suspendProvider", SUSPEND, (c: { providerCode: string }) => ({ p: c.providerCode, n: "x" })],
    ["reinstateProvider", REINSTATE, (c: { providerCode: string }) => ({ p: c.providerCode })],
  ])("%s: anonymous UNAUTHENTICATED (401), the owner's token FORBIDDEN (403)", async (_name, query, vars) => {
    const created = await intake();
    const anonymous = await expectRefused(created.providerCode, "UNAUTHENTICATED", () =>
      run(query, vars(created), null),
    );
    expect(anonymous.status).toBe(401);
    const owner = await expectRefused(created.providerCode, "FORBIDDEN", () =>
      run(query, vars(created), created.accessToken),
    );
    expect(owner.status).toBe(403);
  });

  test("an unknown review or provider is NOT_FOUND", async () => {
    expect(gqlCodes(await run(ASSIGN, { c: "RV-00000000" }))).toEqual(["NOT_FOUND"]);
    expect(gqlCodes(await run(DECIDE, { c: "RV-00000000", d: "APPROVE" }))).toEqual(["NOT_FOUND"]);
    expect(gqlCodes(await run(PRIORITY, { c: "RV-00000000", p: "LOW" }))).toEqual(["NOT_FOUND"]);
    expect(gqlCodes(await run(COMMENT, { c: "RV-00000000", n: "hi" }))).toEqual(["NOT_FOUND"]);
    expect(gqlCodes(await run(SUSPEND, { p: "no-such-provider-gql", n: "x" }))).toEqual(["NOT_FOUND"]);
  });

  test("commentOnReview: reviewer and owner yes; another agent NOT_FOUND; anonymous UNAUTHENTICATED", async () => {
    const created = await intake();
    const other = await intake();
    const byReviewer = await ok(COMMENT, { c: created.reviewCode, n: "Question about pricing" });
    expect(byReviewer.commentOnReview).toMatchObject({
      kind: "COMMENTED",
      actor: `reviewer:${SUBJECT}`,
      note: "Question about pricing",
    });
    const byOwner = await ok(COMMENT, { c: created.reviewCode, n: "It is free" }, created.accessToken);
    expect(byOwner.commentOnReview).toMatchObject({ kind: "COMMENTED", actor: `agent:${created.providerCode}` });
    await expectRefused(created.providerCode, "NOT_FOUND", () =>
      run(COMMENT, { c: created.reviewCode, n: "Hi" }, other.accessToken),
    );
    await expectRefused(created.providerCode, "UNAUTHENTICATED", () =>
      run(COMMENT, { c: created.reviewCode, n: "Hi" }, null),
    );
  });
});

describe("updateReview", () => {
  test("sets the priority of an active review; status and stage stay", async () => {
    const created = await intake();
    const answer = await ok(PRIORITY, { c: created.reviewCode, p: "URGENT" });
    expect(answer.updateReview).toEqual({ reviewCode: created.reviewCode, priority: "URGENT", status: "OPEN" });
    expect(await where(created.reviewCode, created.providerCode)).toEqual({
      status: "OPEN",
      stage: "SUBMITTED",
      decided: false,
    });
  });
});

describe("the timeline's reviewer notes", () => {
  test("the owner and reviewers read them; anonymous callers and other agents see `reviewer` and null", async () => {
    const created = await intake();
    const other = await intake();
    await ok(COMMENT, { c: created.reviewCode, n: "Private remark" });
    await ok(DECIDE, { c: created.reviewCode, d: "APPROVE", n: "Good agent" });
    for (const token of [rv, created.accessToken]) {
      const events = await timeline(created.providerCode, token);
      expect(events.filter((e) => e.actor === `reviewer:${SUBJECT}`).map((e) => [e.kind, e.note])).toEqual([
        ["COMMENTED", "Private remark"],
        ["APPROVED", "Good agent"],
      ]);
    }
    for (const token of [null, other.accessToken]) {
      const events = await timeline(created.providerCode, token);
      expect(events.map((e) => [e.kind, e.actor, e.note])).toEqual([
        ["SUBMITTED", `agent:${created.providerCode}`, null],
        ["TOKEN_ISSUED", `agent:${created.providerCode}`, null],
        ["COMMENTED", "reviewer", null],
        ["APPROVED", "reviewer", null],
      ]);
    }
  });
});
