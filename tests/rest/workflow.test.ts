/**
 * The review workflow (API.md §1 "Stage and status transitions", §4 reviewer routes) through
 * /api/v1: every allowed move changes the review's status and the provider's stage together, every
 * other move is a 409 naming the current state and changes nothing, and the timeline records it all.
 */
import { beforeAll, describe, expect, test } from "@jest/globals";
import { type Answer, approve, call, db, errorPaths, expectProblem, intake, reviewerToken } from "../helpers.ts";

const SUBJECT = "rv-workflow";
let rv: string;

beforeAll(async () => {
  rv = await reviewerToken(SUBJECT);
});

/** `token` null: anonymous. */
const post = (path: string, body?: unknown, token?: string | null) =>
  call("POST", `/api/v1${path}`, { ...(body === undefined ? {} : { body }), ...(token ? { token } : {}) });
const assign = (code: string, body?: unknown, token: string | null = rv) =>
  post(`/reviews/${code}/assign`, body, token);
const decide = (code: string, body: unknown, token: string | null = rv) =>
  post(`/reviews/${code}/decision`, body, token);
const comment = (code: string, body: unknown, token: string | null = rv) =>
  post(`/reviews/${code}/comments`, body, token);
const suspend = (providerCode: string, body: unknown = { note: "abuse reported" }, token: string | null = rv) =>
  post(`/providers/${providerCode}/suspend`, body, token);
const reinstate = (providerCode: string, body: unknown = { note: "cleared" }, token: string | null = rv) =>
  post(`/providers/${providerCode}/reinstate`, body, token);
const prioritise = (code: string, priority: string, token: string | null = rv) =>
  call("PATCH", `/api/v1/reviews/${code}`, { body: { priority }, ...(token ? { token } : {}) });
const patch = (providerCode: string, body: unknown, token: string) =>
  call("PATCH", `/api/v1/providers/${providerCode}`, { body, token });

/** The review and its provider as a reviewer reads them through the front door, after each step. */
async function where(reviewCode: string) {
  const review = await call("GET", `/api/v1/reviews/${reviewCode}`, { token: rv });
  expect(review.status).toBe(200);
  const provider = await call("GET", `/api/v1/providers/${review.body.providerCode}`, { token: rv });
  expect(provider.status).toBe(200);
  return {
    status: review.body.status as string,
    stage: provider.body.reviewStage as string,
    decided: review.body.decidedAt !== null,
  };
}

/** Everything a refused move must leave as it was. */
async function snapshot(providerCode: string) {
  const provider = await db.provider.findUniqueOrThrow({
    where: { providerCode },
    select: { id: true, reviewStage: true, trustTier: true, version: true, updatedAt: true },
  });
  const reviews = await db.review.findMany({
    where: { providerId: provider.id },
    orderBy: { id: "asc" },
    select: {
      reviewCode: true,
      kind: true,
      status: true,
      priority: true,
      assignedTo: true,
      decidedAt: true,
      updatedAt: true,
    },
  });
  const events = await db.reviewEvent.count({ where: { providerId: provider.id } });
  const tokens = await db.accessToken.findMany({
    where: { providerId: provider.id },
    orderBy: { id: "asc" },
    select: { tokenId: true, revokedAt: true },
  });
  return { provider, reviews, events, tokens };
}

async function timeline(providerCode: string, token?: string) {
  const answer = await call("GET", `/api/v1/providers/${providerCode}`, token ? { token } : {});
  expect(answer.status).toBe(200);
  return answer.body.reviewTimeline as { at: string; kind: string; actor: string; note: string | null }[];
}

const kinds = (events: { kind: string }[]) => events.map((e) => e.kind);

/** A 409 whose detail names the current state, and nothing changed. */
async function expectRefused(providerCode: string, state: string, act: () => Promise<Answer>) {
  const before = await snapshot(providerCode);
  const answer = await act();
  expectProblem(answer, 409, "CONFLICT");
  expect(answer.body.detail).toContain(state);
  expect(await snapshot(providerCode)).toEqual(before);
}

/** An approved provider, through the workflow. */
async function approved(overrides: Record<string, unknown> = {}) {
  const created = await intake(overrides);
  await approve(created.providerCode);
  return created;
}

/** The provider's active UPDATE review, if any. */
async function updateReview(providerCode: string) {
  return db.review.findFirst({
    where: { provider: { providerCode }, kind: "UPDATE", status: { in: ["OPEN", "IN_PROGRESS", "CHANGES_REQUESTED"] } },
  });
}

const NEW_ENDPOINT = { url: "https://agent.example.com/v2/a2a", protocol: "A2A", authScheme: "BEARER" };

describe("an intake through the workflow", () => {
  test("intake → OPEN / SUBMITTED; assign → IN_PROGRESS / IN_REVIEW, to the caller when no assignee is sent", async () => {
    const created = await intake();
    expect(await where(created.reviewCode)).toEqual({ status: "OPEN", stage: "SUBMITTED", decided: false });

    const answer = await assign(created.reviewCode);
    expect(answer.status).toBe(200);
    expect(answer.body).toMatchObject({
      reviewCode: created.reviewCode,
      providerCode: created.providerCode,
      kind: "INTAKE",
      status: "IN_PROGRESS",
      assignedTo: SUBJECT,
      decidedAt: null,
    });
    expect(await where(created.reviewCode)).toEqual({ status: "IN_PROGRESS", stage: "IN_REVIEW", decided: false });

    const events = await timeline(created.providerCode, rv);
    expect(kinds(events)).toEqual(["SUBMITTED", "TOKEN_ISSUED", "ASSIGNED"]);
    expect(events[2]).toMatchObject({ actor: `reviewer:${SUBJECT}` });
  });

  test("an empty body assigns to the caller too; an assignee takes it over and it stays IN_PROGRESS", async () => {
    const created = await intake();
    expect((await assign(created.reviewCode, {})).body.assignedTo).toBe(SUBJECT);
    const handed = await assign(created.reviewCode, { assignee: "reviewer-two" });
    expect(handed.status).toBe(200);
    expect(handed.body).toMatchObject({ status: "IN_PROGRESS", assignedTo: "reviewer-two" });
    expect(await where(created.reviewCode)).toEqual({ status: "IN_PROGRESS", stage: "IN_REVIEW", decided: false });
    const events = await timeline(created.providerCode, rv);
    expect(kinds(events).filter((k) => k === "ASSIGNED")).toHaveLength(2);
    // Whoever did it is the actor; who it went to is in the note.
    expect(events.at(-1)).toMatchObject({
      actor: `reviewer:${SUBJECT}`,
      note: expect.stringContaining("reviewer-two"),
    });
  });

  test("a blank assignee is a 400 naming it", async () => {
    const created = await intake();
    const before = await snapshot(created.providerCode);
    const answer = await assign(created.reviewCode, { assignee: "  " });
    expectProblem(answer, 400, "BAD_USER_INPUT");
    expect(errorPaths(answer)).toEqual(["assignee"]);
    expect(await snapshot(created.providerCode)).toEqual(before);
  });

  test("request changes → CHANGES_REQUESTED both; the owner's PATCH resubmits: OPEN / SUBMITTED; then approve with a tier", async () => {
    const created = await intake();
    await assign(created.reviewCode);

    const asked = await decide(created.reviewCode, { decision: "REQUEST_CHANGES", note: "Add a privacy policy" });
    expect(asked.status).toBe(200);
    expect(asked.body).toMatchObject({ status: "CHANGES_REQUESTED", decidedAt: null });
    expect(await where(created.reviewCode)).toEqual({
      status: "CHANGES_REQUESTED",
      stage: "CHANGES_REQUESTED",
      decided: false,
    });

    const patched = await patch(created.providerCode, { summary: "Now with a policy" }, created.accessToken);
    expect(patched.status).toBe(200);
    expect(patched.body.reviewStage).toBe("SUBMITTED");
    expect(await where(created.reviewCode)).toEqual({ status: "OPEN", stage: "SUBMITTED", decided: false });
    // Resubmission reopens the same review; it opens no other.
    expect(await db.review.count({ where: { provider: { providerCode: created.providerCode } } })).toBe(1);
    const resubmitted = (await timeline(created.providerCode, rv)).filter((e) => e.kind === "RESUBMITTED");
    expect(resubmitted).toEqual([expect.objectContaining({ actor: `agent:${created.providerCode}` })]);

    await assign(created.reviewCode);
    expect(await where(created.reviewCode)).toEqual({ status: "IN_PROGRESS", stage: "IN_REVIEW", decided: false });
    const ok = await decide(created.reviewCode, { decision: "APPROVE", trustTier: "VERIFIED", note: "Looks good" });
    expect(ok.status).toBe(200);
    expect(ok.body.status).toBe("APPROVED");
    expect(Date.parse(ok.body.decidedAt)).not.toBeNaN();
    expect(await where(created.reviewCode)).toEqual({ status: "APPROVED", stage: "APPROVED", decided: true });
    const provider = await db.provider.findUniqueOrThrow({ where: { providerCode: created.providerCode } });
    expect(provider.trustTier).toBe("VERIFIED");

    expect(kinds(await timeline(created.providerCode, rv))).toEqual([
      "SUBMITTED",
      "TOKEN_ISSUED",
      "ASSIGNED",
      "CHANGES_REQUESTED",
      "PROFILE_UPDATED",
      "RESUBMITTED",
      "ASSIGNED",
      "APPROVED",
    ]);
  });

  test("approve without a tier leaves it UNVERIFIED; deciding an unassigned review records the decider", async () => {
    const created = await intake();
    const ok = await decide(created.reviewCode, { decision: "APPROVE" });
    expect(ok.status).toBe(200);
    expect(ok.body).toMatchObject({ status: "APPROVED", assignedTo: SUBJECT });
    expect(await where(created.reviewCode)).toEqual({ status: "APPROVED", stage: "APPROVED", decided: true });
    expect((await db.provider.findUniqueOrThrow({ where: { providerCode: created.providerCode } })).trustTier).toBe(
      "UNVERIFIED",
    );
  });

  test("reject → REJECTED both, decidedAt set, the note kept", async () => {
    const created = await intake();
    await assign(created.reviewCode);
    const answer = await decide(created.reviewCode, { decision: "REJECT", note: "Not an agent" });
    expect(answer.status).toBe(200);
    expect(answer.body.status).toBe("REJECTED");
    expect(await where(created.reviewCode)).toEqual({ status: "REJECTED", stage: "REJECTED", decided: true });
    expect((await timeline(created.providerCode, rv)).at(-1)).toMatchObject({
      kind: "REJECTED",
      actor: `reviewer:${SUBJECT}`,
      note: "Not an agent",
    });
  });
});

describe("a decision's body", () => {
  test.each([
    ["REJECT without a note", { decision: "REJECT" }, ["note"]],
    ["REJECT with a blank note", { decision: "REJECT", note: "   " }, ["note"]],
    ["REQUEST_CHANGES without a note", { decision: "REQUEST_CHANGES" }, ["note"]],
    ["REQUEST_CHANGES with an empty note", { decision: "REQUEST_CHANGES", note: "" }, ["note"]],
    ["a tier with REJECT", { decision: "REJECT", note: "no", trustTier: "TRUSTED" }, ["trustTier"]],
    ["a tier with REQUEST_CHANGES", { decision: "REQUEST_CHANGES", note: "fix", trustTier: "VERIFIED" }, ["trustTier"]],
    ["an unknown decision", { decision: "MAYBE" }, ["decision"]],
    ["no decision", { note: "hm" }, ["decision"]],
    ["an unknown tier", { decision: "APPROVE", trustTier: "GOLD" }, ["trustTier"]],
    ["an unknown key", { decision: "APPROVE", reviewStage: "APPROVED" }, ["reviewStage"]],
    ["a note over 2000 characters", { decision: "REJECT", note: "x".repeat(2001) }, ["note"]],
  ])("%s is a 400 naming the field, and nothing changes", async (_what, body, paths) => {
    const created = await intake();
    await assign(created.reviewCode);
    const before = await snapshot(created.providerCode);
    const answer = await decide(created.reviewCode, body);
    expectProblem(answer, 400, "BAD_USER_INPUT");
    expect(errorPaths(answer)).toEqual(paths);
    expect(await snapshot(created.providerCode)).toEqual(before);
  });
});

describe("suspension and reinstatement", () => {
  test("suspend revokes every token at once; reinstate approves again with the old tokens still revoked", async () => {
    const created = await approved();
    const second = await post(`/providers/${created.providerCode}/tokens`, { label: "ci" }, created.accessToken);
    expect(second.status).toBe(201);
    const tokens = [created.accessToken, second.body.accessToken as string];
    for (const token of tokens) {
      expect((await patch(created.providerCode, { summary: "Still mine" }, token)).status).toBe(200);
    }

    const answer = await suspend(created.providerCode, { note: "Phishing reports" });
    expect(answer.status).toBe(200);
    expect(answer.body.reviewStage).toBe("SUSPENDED");
    const rows = await db.accessToken.findMany({ where: { provider: { providerCode: created.providerCode } } });
    expect(rows).toHaveLength(2);
    for (const row of rows) expect(row.revokedAt).toBeInstanceOf(Date);
    for (const token of tokens) {
      expectProblem(await patch(created.providerCode, { summary: "Locked out" }, token), 401, "UNAUTHENTICATED");
      expectProblem(await call("GET", "/api/v1/providers?limit=1", { token }), 401, "UNAUTHENTICATED");
    }
    // Hidden from the public while suspended; reviewers still see it.
    expectProblem(await call("GET", `/api/v1/providers/${created.providerCode}`), 404, "NOT_FOUND");
    const events = await timeline(created.providerCode, rv);
    expect(kinds(events).slice(-2)).toEqual(["SUSPENDED", "TOKEN_REVOKED"]);
    expect(events.at(-2)).toMatchObject({ actor: `reviewer:${SUBJECT}`, note: "Phishing reports" });

    // No new token while suspended: 409, nothing issued.
    const refused = await post(`/providers/${created.providerCode}/tokens`, { label: "back" }, rv);
    expectProblem(refused, 409, "CONFLICT");
    expect(refused.body.detail).toContain("SUSPENDED");
    expect(await db.accessToken.count({ where: { provider: { providerCode: created.providerCode } } })).toBe(2);

    const back = await reinstate(created.providerCode);
    expect(back.status).toBe(200);
    expect(back.body.reviewStage).toBe("APPROVED");
    expect(kinds(await timeline(created.providerCode, rv)).at(-1)).toBe("REINSTATED");
    for (const token of tokens) {
      expectProblem(await patch(created.providerCode, { summary: "Still locked" }, token), 401, "UNAUTHENTICATED");
    }

    const fresh = await post(`/providers/${created.providerCode}/tokens`, { label: "reinstated" }, rv);
    expect(fresh.status).toBe(201);
    expect(fresh.body.accessToken).toMatch(/^agr_/);
    const patched = await patch(created.providerCode, { summary: "Back in business" }, fresh.body.accessToken);
    expect(patched.status).toBe(200);
    expect(patched.body.reviewStage).toBe("APPROVED");
  });

  test("reinstate needs no note", async () => {
    const created = await approved();
    expect((await suspend(created.providerCode)).status).toBe(200);
    const back = await reinstate(created.providerCode, {});
    expect(back.status).toBe(200);
    expect(back.body.reviewStage).toBe("APPROVED");
  });

  test.each([
    ["without a note", {}],
    ["with a blank note", { note: "  " }],
    ["with a null note", { note: null }],
  ])("suspend %s is a 400 naming note, and nothing changes", async (_what, body) => {
    const created = await approved();
    const before = await snapshot(created.providerCode);
    const answer = await suspend(created.providerCode, body);
    expectProblem(answer, 400, "BAD_USER_INPUT");
    expect(errorPaths(answer)).toEqual(["note"]);
    expect(await snapshot(created.providerCode)).toEqual(before);
  });

  test("suspending withdraws an update under review", async () => {
    const created = await approved();
    await patch(created.providerCode, { endpoint: NEW_ENDPOINT }, created.accessToken);
    const update = await updateReview(created.providerCode);
    expect(update).not.toBeNull();
    expect((await suspend(created.providerCode)).status).toBe(200);
    const after = await db.review.findUniqueOrThrow({ where: { id: update?.id } });
    expect(after.status).toBe("WITHDRAWN");
    expect(after.decidedAt).toBeInstanceOf(Date);
  });

  test("an unknown provider is a 404", async () => {
    expectProblem(await suspend("no-such-provider-xyz"), 404, "NOT_FOUND");
    expectProblem(await reinstate("no-such-provider-xyz"), 404, "NOT_FOUND");
  });
});

describe("an approved provider's updates", () => {
  test("a PATCH of summary or labels only opens no review and leaves it APPROVED", async () => {
    const created = await approved();
    const answer = await patch(
      created.providerCode,
      { summary: "Sharper summary", labels: ["maps", "fast"], description: "More words" },
      created.accessToken,
    );
    expect(answer.status).toBe(200);
    expect(answer.body.reviewStage).toBe("APPROVED");
    expect(await updateReview(created.providerCode)).toBeNull();
    expect(await db.review.count({ where: { provider: { providerCode: created.providerCode } } })).toBe(1);
  });

  test("changing the endpoint opens one UPDATE review; a second such PATCH opens none; assign and approve keep APPROVED", async () => {
    const created = await approved();
    const first = await patch(created.providerCode, { endpoint: NEW_ENDPOINT }, created.accessToken);
    expect(first.status).toBe(200);
    expect(first.body.reviewStage).toBe("APPROVED");
    const update = await updateReview(created.providerCode);
    expect(update).toMatchObject({ kind: "UPDATE", status: "OPEN", priority: "NORMAL", assignedTo: null });
    const code = update?.reviewCode as string;
    expect(code).toMatch(/^RV-[0-9A-HJKMNP-TV-Z]{8}$/);
    expect(await where(code)).toEqual({ status: "OPEN", stage: "APPROVED", decided: false });
    const opened = (await timeline(created.providerCode, rv)).at(-1);
    expect(opened).toMatchObject({ kind: "UPDATE_SUBMITTED", actor: `agent:${created.providerCode}` });

    const second = await patch(
      created.providerCode,
      { tools: [{ name: "search", kind: "HTTP", scopes: ["READ_ONLY"] }] },
      created.accessToken,
    );
    expect(second.status).toBe(200);
    expect(await db.review.count({ where: { provider: { providerCode: created.providerCode } } })).toBe(2);

    expect((await assign(code)).status).toBe(200);
    expect(await where(code)).toEqual({ status: "IN_PROGRESS", stage: "APPROVED", decided: false });
    const ok = await decide(code, { decision: "APPROVE", trustTier: "TRUSTED" });
    expect(ok.status).toBe(200);
    expect(await where(code)).toEqual({ status: "APPROVED", stage: "APPROVED", decided: true });
    expect((await db.provider.findUniqueOrThrow({ where: { providerCode: created.providerCode } })).trustTier).toBe(
      "TRUSTED",
    );

    // The update is closed, so the next reviewed change opens a new one.
    await patch(created.providerCode, { policy: { humanOversight: "ALWAYS" } }, created.accessToken);
    const next = await updateReview(created.providerCode);
    expect(next?.reviewCode).toBeDefined();
    expect(next?.reviewCode).not.toBe(code);
  });

  test("rejecting an update suspends the provider and revokes its tokens", async () => {
    const created = await approved();
    await patch(created.providerCode, { policy: { humanOversight: "NONE" } }, created.accessToken);
    const code = (await updateReview(created.providerCode))?.reviewCode as string;
    await assign(code);
    const answer = await decide(code, { decision: "REJECT", note: "Oversight removed" });
    expect(answer.status).toBe(200);
    expect(await where(code)).toEqual({ status: "REJECTED", stage: "SUSPENDED", decided: true });
    const tokens = await db.accessToken.findMany({ where: { provider: { providerCode: created.providerCode } } });
    expect(tokens.every((t) => t.revokedAt !== null)).toBe(true);
    expectProblem(await patch(created.providerCode, { summary: "x" }, created.accessToken), 401, "UNAUTHENTICATED");
    // The timeline says both what was decided and what it did to the provider.
    const events = await timeline(created.providerCode, rv);
    expect(kinds(events).slice(-3)).toEqual(["REJECTED", "SUSPENDED", "TOKEN_REVOKED"]);
    for (const event of events.slice(-3)) expect(event.actor).toBe(`reviewer:${SUBJECT}`);
    expect(events.at(-3)?.note).toBe("Oversight removed");
    // A suspended provider can be reinstated, as after any suspension.
    expect((await reinstate(created.providerCode)).body.reviewStage).toBe("APPROVED");
  });

  test("changes requested on an update: the stage stays APPROVED; the owner's PATCH reopens it", async () => {
    const created = await approved();
    await patch(created.providerCode, { endpoint: NEW_ENDPOINT }, created.accessToken);
    const code = (await updateReview(created.providerCode))?.reviewCode as string;
    const asked = await decide(code, { decision: "REQUEST_CHANGES", note: "Use a health URL" });
    expect(asked.status).toBe(200);
    expect(await where(code)).toEqual({ status: "CHANGES_REQUESTED", stage: "APPROVED", decided: false });
    const answer = await patch(
      created.providerCode,
      { endpoint: { ...NEW_ENDPOINT, healthUrl: "https://agent.example.com/health" } },
      created.accessToken,
    );
    expect(answer.status).toBe(200);
    expect(await where(code)).toEqual({ status: "OPEN", stage: "APPROVED", decided: false });
    expect(kinds(await timeline(created.providerCode, rv)).at(-1)).toBe("RESUBMITTED");
    expect(await db.review.count({ where: { provider: { providerCode: created.providerCode } } })).toBe(2);
  });
});

describe("every other transition is a 409 naming the current state, and changes nothing", () => {
  test("deciding an APPROVED review", async () => {
    const created = await approved();
    for (const decision of ["APPROVE", "REJECT", "REQUEST_CHANGES"]) {
      await expectRefused(created.providerCode, "APPROVED", () =>
        decide(created.reviewCode, { decision, note: "again" }),
      );
    }
  });

  test("assigning or deciding a REJECTED review", async () => {
    const created = await intake();
    await decide(created.reviewCode, { decision: "REJECT", note: "No" });
    await expectRefused(created.providerCode, "REJECTED", () => assign(created.reviewCode));
    await expectRefused(created.providerCode, "REJECTED", () => decide(created.reviewCode, { decision: "APPROVE" }));
  });

  test("assigning or deciding a review that awaits the owner's changes", async () => {
    const created = await intake();
    await decide(created.reviewCode, { decision: "REQUEST_CHANGES", note: "More detail" });
    await expectRefused(created.providerCode, "CHANGES_REQUESTED", () => assign(created.reviewCode));
    await expectRefused(created.providerCode, "CHANGES_REQUESTED", () =>
      decide(created.reviewCode, { decision: "APPROVE" }),
    );
    await expectRefused(created.providerCode, "CHANGES_REQUESTED", () =>
      decide(created.reviewCode, { decision: "REQUEST_CHANGES", note: "twice" }),
    );
  });

  test("suspending a provider that is not APPROVED", async () => {
    const submitted = await intake();
    await expectRefused(submitted.providerCode, "SUBMITTED", () => suspend(submitted.providerCode));
    await assign(submitted.reviewCode);
    await expectRefused(submitted.providerCode, "IN_REVIEW", () => suspend(submitted.providerCode));
    await decide(submitted.reviewCode, { decision: "REJECT", note: "No" });
    await expectRefused(submitted.providerCode, "REJECTED", () => suspend(submitted.providerCode));

    const suspended = await approved();
    await suspend(suspended.providerCode);
    await expectRefused(suspended.providerCode, "SUSPENDED", () => suspend(suspended.providerCode));
  });

  test("reinstating a provider that is not SUSPENDED", async () => {
    const live = await approved();
    await expectRefused(live.providerCode, "APPROVED", () => reinstate(live.providerCode));
    const submitted = await intake();
    await expectRefused(submitted.providerCode, "SUBMITTED", () => reinstate(submitted.providerCode));
    const rejected = await intake();
    await decide(rejected.reviewCode, { decision: "REJECT", note: "No" });
    await expectRefused(rejected.providerCode, "REJECTED", () => reinstate(rejected.providerCode));
  });

  test("reprioritising a closed review", async () => {
    const created = await approved();
    await expectRefused(created.providerCode, "APPROVED", () => prioritise(created.reviewCode, "URGENT"));
  });

  test("deciding an update withdrawn by a suspension", async () => {
    const created = await approved();
    await patch(created.providerCode, { endpoint: NEW_ENDPOINT }, created.accessToken);
    const code = (await updateReview(created.providerCode))?.reviewCode as string;
    await suspend(created.providerCode);
    await expectRefused(created.providerCode, "WITHDRAWN", () => decide(code, { decision: "APPROVE" }));
    await expectRefused(created.providerCode, "WITHDRAWN", () => assign(code));
  });
});

describe("who may act", () => {
  test.each([
    ["assign", (code: string, token: string | null) => assign(code, {}, token)],
    ["decide", (code: string, token: string | null) => decide(code, { decision: "APPROVE" }, token)],
    ["reprioritise", (code: string, token: string | null) => prioritise(code, "HIGH", token)],
  ])("%s: anonymous 401, any agent (its owner too) 403, unknown review 404; nothing changes", async (_what, act) => {
    const created = await intake();
    const other = await intake();
    const before = await snapshot(created.providerCode);
    const anonymous = await act(created.reviewCode, null);
    expectProblem(anonymous, 401, "UNAUTHENTICATED");
    expect(anonymous.headers.get("www-authenticate")).toMatch(/^Bearer\b/);
    expectProblem(await act(created.reviewCode, created.accessToken), 403, "FORBIDDEN");
    expectProblem(await act(created.reviewCode, other.accessToken), 403, "FORBIDDEN");
    expect(await snapshot(created.providerCode)).toEqual(before);
    expectProblem(await act("RV-00000000", rv), 404, "NOT_FOUND");
  });

  test.each([
    ["suspend", (code: string, token: string | null) => suspend(code, { note: "x" }, token)],
    ["reinstate", (code: string, token: string | null) => reinstate(code, { note: "x" }, token)],
  ])("%s: anonymous 401, the owner's token 403; nothing changes", async (_what, act) => {
    const created = await approved();
    const before = await snapshot(created.providerCode);
    expectProblem(await act(created.providerCode, null), 401, "UNAUTHENTICATED");
    expectProblem(await act(created.providerCode, created.accessToken), 403, "FORBIDDEN");
    expect(await snapshot(created.providerCode)).toEqual(before);
  });

  test("an admin may act as a reviewer", async () => {
    const created = await intake();
    const admin = await reviewerToken("admin-wf", ["admin"]);
    const answer = await assign(created.reviewCode, undefined, admin);
    expect(answer.status).toBe(200);
    expect(answer.body.assignedTo).toBe("admin-wf");
  });
});

describe("comments", () => {
  test("a reviewer's comment: 201, on the timeline with its actor; the review does not move", async () => {
    const created = await intake();
    const answer = await comment(created.reviewCode, { note: "Checking the endpoint" });
    expect(answer.status).toBe(201);
    expect(answer.body).toMatchObject({
      kind: "COMMENTED",
      actor: `reviewer:${SUBJECT}`,
      note: "Checking the endpoint",
    });
    expect(await where(created.reviewCode)).toEqual({ status: "OPEN", stage: "SUBMITTED", decided: false });
    expect((await timeline(created.providerCode, rv)).at(-1)).toMatchObject({
      kind: "COMMENTED",
      note: "Checking the endpoint",
    });
  });

  test("the provider's owner may comment on its own review", async () => {
    const created = await intake();
    await decide(created.reviewCode, { decision: "REQUEST_CHANGES", note: "Which model?" });
    const answer = await comment(created.reviewCode, { note: "GPT-class, see models" }, created.accessToken);
    expect(answer.status).toBe(201);
    expect(answer.body).toMatchObject({ kind: "COMMENTED", actor: `agent:${created.providerCode}` });
    // A comment is not a resubmission.
    expect(await where(created.reviewCode)).toEqual({
      status: "CHANGES_REQUESTED",
      stage: "CHANGES_REQUESTED",
      decided: false,
    });
  });

  test("another agent gets 404, anonymous 401, a blank note 400; none writes anything", async () => {
    const created = await intake();
    const other = await intake();
    const before = await snapshot(created.providerCode);
    expectProblem(await comment(created.reviewCode, { note: "Hi" }, other.accessToken), 404, "NOT_FOUND");
    expectProblem(await comment(created.reviewCode, { note: "Hi" }, null), 401, "UNAUTHENTICATED");
    const blank = await comment(created.reviewCode, { note: " " });
    expectProblem(blank, 400, "BAD_USER_INPUT");
    expect(errorPaths(blank)).toEqual(["note"]);
    const missing = await comment(created.reviewCode, {});
    expectProblem(missing, 400, "BAD_USER_INPUT");
    expect(errorPaths(missing)).toEqual(["note"]);
    expect(await snapshot(created.providerCode)).toEqual(before);
    expectProblem(await comment("RV-00000000", { note: "Hi" }), 404, "NOT_FOUND");
    expectProblem(await comment("RV-00000000", { note: "Hi" }, other.accessToken), 404, "NOT_FOUND");
  });
});

describe("PATCH /api/v1/reviews/{reviewCode}", () => {
  test("sets the priority of an active review; the status and stage do not move", async () => {
    const created = await intake();
    const answer = await prioritise(created.reviewCode, "URGENT");
    expect(answer.status).toBe(200);
    expect(answer.body).toMatchObject({ reviewCode: created.reviewCode, priority: "URGENT", status: "OPEN" });
    expect(await where(created.reviewCode)).toEqual({ status: "OPEN", stage: "SUBMITTED", decided: false });
    await assign(created.reviewCode);
    expect((await prioritise(created.reviewCode, "LOW")).body).toMatchObject({
      priority: "LOW",
      status: "IN_PROGRESS",
    });
    const events = await timeline(created.providerCode, rv);
    expect(kinds(events).filter((k) => k === "PRIORITY_CHANGED")).toHaveLength(2);
    expect(events.at(-1)).toMatchObject({ kind: "PRIORITY_CHANGED", note: "priority set to LOW" });
  });

  test.each([
    ["an unknown priority", { priority: "CRITICAL" }, ["priority"]],
    ["no priority", {}, ["priority"]],
    ["a status", { priority: "HIGH", status: "APPROVED" }, ["status"]],
  ])("%s is a 400 naming the field", async (_what, body, paths) => {
    const created = await intake();
    const before = await snapshot(created.providerCode);
    const answer = await call("PATCH", `/api/v1/reviews/${created.reviewCode}`, { body, token: rv });
    expectProblem(answer, 400, "BAD_USER_INPUT");
    expect(errorPaths(answer)).toEqual(paths);
    expect(await snapshot(created.providerCode)).toEqual(before);
  });
});

describe("the timeline", () => {
  test("every event has a time and an actor, oldest first, and earlier events never change", async () => {
    const created = await intake();
    const seen: Awaited<ReturnType<typeof timeline>>[] = [await timeline(created.providerCode, rv)];
    const steps = [
      () => assign(created.reviewCode),
      () => comment(created.reviewCode, { note: "Looking" }),
      () => comment(created.reviewCode, { note: "Reply" }, created.accessToken),
      () => decide(created.reviewCode, { decision: "REQUEST_CHANGES", note: "Fix the summary" }),
      () => patch(created.providerCode, { summary: "Fixed" }, created.accessToken),
      () => decide(created.reviewCode, { decision: "APPROVE", trustTier: "VERIFIED" }),
      () => suspend(created.providerCode, { note: "Complaint" }),
      () => reinstate(created.providerCode, { note: "Resolved" }),
    ];
    for (const step of steps) {
      const answer = await step();
      expect([200, 201]).toContain(answer.status);
      const events = await timeline(created.providerCode, rv);
      const previous = seen.at(-1) ?? [];
      expect(events.length).toBeGreaterThan(previous.length);
      expect(events.slice(0, previous.length)).toEqual(previous);
      seen.push(events);
    }
    const events = seen.at(-1) ?? [];
    expect(kinds(events)).toEqual([
      "SUBMITTED",
      "TOKEN_ISSUED",
      "ASSIGNED",
      "COMMENTED",
      "COMMENTED",
      "CHANGES_REQUESTED",
      "PROFILE_UPDATED",
      "RESUBMITTED",
      "APPROVED",
      "SUSPENDED",
      "TOKEN_REVOKED",
      "REINSTATED",
    ]);
    const owner = `agent:${created.providerCode}`;
    const reviewer = `reviewer:${SUBJECT}`;
    expect(events.map((e) => e.actor)).toEqual([
      owner,
      owner,
      reviewer,
      reviewer,
      owner,
      reviewer,
      owner,
      owner,
      reviewer,
      reviewer,
      reviewer,
      reviewer,
    ]);
    const times = events.map((e) => Date.parse(e.at));
    for (const t of times) expect(t).not.toBeNaN();
    expect([...times].sort((a, b) => a - b)).toEqual(times);
    expect(await db.reviewEvent.count({ where: { provider: { providerCode: created.providerCode } } })).toBe(
      events.length,
    );
  });

  test("reviewer notes reach reviewers and the owner only; the public sees `reviewer` and no note", async () => {
    const created = await intake();
    const other = await intake();
    await comment(created.reviewCode, { note: "Internal: check the vendor" });
    await decide(created.reviewCode, { decision: "APPROVE", note: "Approved after vendor check" });

    for (const token of [rv, created.accessToken]) {
      const events = await timeline(created.providerCode, token);
      expect(events.find((e) => e.kind === "COMMENTED")).toMatchObject({
        actor: `reviewer:${SUBJECT}`,
        note: "Internal: check the vendor",
      });
      expect(events.find((e) => e.kind === "APPROVED")).toMatchObject({
        actor: `reviewer:${SUBJECT}`,
        note: "Approved after vendor check",
      });
    }
    for (const token of [undefined, other.accessToken]) {
      const events = await timeline(created.providerCode, token);
      expect(events.map((e) => e.kind)).toContain("APPROVED");
      for (const event of events) {
        expect(event.note).toBeNull();
        expect(event.actor).not.toContain(SUBJECT);
      }
      expect(events.find((e) => e.kind === "COMMENTED")?.actor).toBe("reviewer");
      expect(events.find((e) => e.kind === "APPROVED")?.actor).toBe("reviewer");
      // The agent's own events keep their actor: it is public who submitted.
      expect(events[0]).toMatchObject({ kind: "SUBMITTED", actor: `agent:${created.providerCode}` });
    }
  });
});
