/**
 * The review workflow (API.md §1 "Stage and status transitions", §4 reviewer operations) through
 * both doors: every allowed move changes the review's status and the provider's stage together,
 * every other move is a CONFLICT (409) naming the current state and changes nothing, and the
 * timeline records it all.
 */
import { beforeAll, describe, expect, test } from "@jest/globals";
import type { ErrorCode } from "../../src/errors.ts";
import { type Door, doors, expectCode, expectOk, type Outcome } from "../doors.ts";
import { approve, db, intake, reviewerToken, withApprovalNote } from "../helpers.ts";

const SUBJECT = "rv-workflow";

/** The message of a refusal: a problem's `detail`, or the GraphQL error's `message`. */
const messageOf = (outcome: Outcome): string =>
  outcome.answer.body?.detail ?? outcome.answer.body?.errors?.[0]?.message ?? "";

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

/** A refusal with this code, and nothing changed. */
async function expectUnchanged(providerCode: string, code: ErrorCode, act: () => Promise<Outcome>) {
  const before = await snapshot(providerCode);
  const answer = await act();
  expectCode(answer, code);
  expect(await snapshot(providerCode)).toEqual(before);
  return answer;
}

/** A CONFLICT whose message names the current state, and nothing changed. */
async function expectRefused(providerCode: string, state: string, act: () => Promise<Outcome>) {
  const answer = await expectUnchanged(providerCode, "CONFLICT", act);
  expect(messageOf(answer)).toContain(state);
}

/** The provider's active UPDATE review, if any. */
async function updateReview(providerCode: string) {
  return db.review.findFirst({
    where: { provider: { providerCode }, kind: "UPDATE", status: { in: ["OPEN", "IN_PROGRESS", "CHANGES_REQUESTED"] } },
  });
}

const kinds = (events: { kind: string }[]) => events.map((e) => e.kind);

const NEW_ENDPOINT = { url: "https://agent.example.com/v2/a2a", protocol: "A2A", authScheme: "BEARER" };

type Event = { at: string; kind: string; actor: string; note: string | null };

describe.each(doors)("$name", (door: Door) => {
  let rv: string;

  beforeAll(async () => {
    rv = await reviewerToken(SUBJECT);
  });

  /** `token` null: anonymous. */
  const as = (token: string | null | undefined) => (token ? { token } : {});
  const assign = (reviewCode: string, args: Record<string, unknown> = {}, token: string | null = rv) =>
    door.run("Mutation.assignReview", { reviewCode, ...args }, as(token));
  const decide = (reviewCode: string, args: Record<string, unknown>, token: string | null = rv) =>
    door.run("Mutation.decideReview", { reviewCode, ...withApprovalNote(args) }, as(token));
  const comment = (reviewCode: string, args: Record<string, unknown>, token: string | null = rv) =>
    door.run("Mutation.commentOnReview", { reviewCode, ...args }, as(token));
  const suspend = (
    providerCode: string,
    args: Record<string, unknown> = { note: "abuse reported" },
    token: string | null = rv,
  ) => door.run("Mutation.suspendProvider", { providerCode, ...args }, as(token));
  const reinstate = (
    providerCode: string,
    args: Record<string, unknown> = { note: "cleared" },
    token: string | null = rv,
  ) => door.run("Mutation.reinstateProvider", { providerCode, ...args }, as(token));
  const prioritise = (reviewCode: string, priority: string | undefined, token: string | null = rv) =>
    door.run("Mutation.updateReview", { reviewCode, priority }, as(token));
  const patch = (providerCode: string, args: Record<string, unknown>, token: string) =>
    door.run("Mutation.updateProvider", { providerCode, ...args }, { token });
  const issue = (providerCode: string, label: string, token: string) =>
    door.run("Mutation.issueToken", { providerCode, label }, { token });

  /** The review and its provider as a reviewer reads them, after each step. */
  async function where(reviewCode: string) {
    const review = expectOk(await door.run("Query.review", { reviewCode }, { token: rv }));
    const provider = expectOk(await door.run("Query.provider", { providerCode: review.providerCode }, { token: rv }));
    return {
      status: review.status as string,
      stage: provider.reviewStage as string,
      decided: review.decidedAt !== null,
    };
  }

  async function timeline(providerCode: string, token?: string | null): Promise<Event[]> {
    return expectOk(await door.run("Query.provider", { providerCode }, as(token))).reviewTimeline;
  }

  /** An approved provider, through the workflow. */
  async function approved(overrides: Record<string, unknown> = {}) {
    const created = await intake(overrides);
    await approve(created.providerCode);
    return created;
  }

  describe("an intake through the workflow", () => {
    test("intake → OPEN / SUBMITTED; assign → IN_PROGRESS / IN_REVIEW, to the caller when no assignee is sent", async () => {
      const created = await intake();
      expect(await where(created.reviewCode)).toEqual({ status: "OPEN", stage: "SUBMITTED", decided: false });

      expect(expectOk(await assign(created.reviewCode))).toMatchObject({
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

    test("an assignee takes an assigned review over and it stays IN_PROGRESS; the timeline names both", async () => {
      const created = await intake();
      expect(expectOk(await assign(created.reviewCode, {})).assignedTo).toBe(SUBJECT);
      const handed = expectOk(await assign(created.reviewCode, { assignee: "reviewer-two" }));
      expect(handed).toMatchObject({ status: "IN_PROGRESS", assignedTo: "reviewer-two" });
      expect(await where(created.reviewCode)).toEqual({ status: "IN_PROGRESS", stage: "IN_REVIEW", decided: false });
      const events = await timeline(created.providerCode, rv);
      expect(kinds(events).filter((k) => k === "ASSIGNED")).toHaveLength(2);
      // Whoever did it is the actor; who it went to is in the note.
      expect(events.at(-1)).toMatchObject({
        actor: `reviewer:${SUBJECT}`,
        note: expect.stringContaining("reviewer-two"),
      });
    });

    test("a blank assignee is BAD_USER_INPUT (400) naming it, and nothing changes", async () => {
      const created = await intake();
      const answer = await expectUnchanged(created.providerCode, "BAD_USER_INPUT", () =>
        assign(created.reviewCode, { assignee: "  " }),
      );
      expect(answer.paths).toEqual(["assignee"]);
    });

    test("request changes → CHANGES_REQUESTED both; the owner's update resubmits: OPEN / SUBMITTED; then approve with a tier", async () => {
      const created = await intake();
      const { providerCode, reviewCode } = created;
      expectOk(await assign(reviewCode));

      const asked = expectOk(await decide(reviewCode, { decision: "REQUEST_CHANGES", note: "Describe the tools" }));
      expect(asked).toMatchObject({ status: "CHANGES_REQUESTED", decidedAt: null });
      expect(await where(reviewCode)).toEqual({
        status: "CHANGES_REQUESTED",
        stage: "CHANGES_REQUESTED",
        decided: false,
      });

      const patched = expectOk(await patch(providerCode, { summary: "Tools described" }, created.accessToken));
      expect(patched).toMatchObject({ reviewStage: "SUBMITTED", version: 2 });
      expect(await where(reviewCode)).toEqual({ status: "OPEN", stage: "SUBMITTED", decided: false });
      // Resubmission reopens the same review; it opens no other.
      expect(await db.review.count({ where: { provider: { providerCode } } })).toBe(1);
      const resubmitted = (await timeline(providerCode, rv)).filter((e) => e.kind === "RESUBMITTED");
      expect(resubmitted).toEqual([expect.objectContaining({ actor: `agent:${providerCode}` })]);

      expectOk(await assign(reviewCode, { assignee: "someone-else" }));
      expect(await where(reviewCode)).toEqual({ status: "IN_PROGRESS", stage: "IN_REVIEW", decided: false });
      const ok = expectOk(await decide(reviewCode, { decision: "APPROVE", trustTier: "OFFICIAL", note: "Looks good" }));
      expect(ok).toMatchObject({ status: "APPROVED", assignedTo: "someone-else" });
      expect(Date.parse(ok.decidedAt)).not.toBeNaN();
      expect(await where(reviewCode)).toEqual({ status: "APPROVED", stage: "APPROVED", decided: true });
      const provider = expectOk(await door.run("Query.provider", { providerCode }, { token: rv }));
      expect(provider).toMatchObject({ reviewStage: "APPROVED", trustTier: "OFFICIAL" });

      const events = await timeline(providerCode, rv);
      expect(kinds(events)).toEqual([
        "SUBMITTED",
        "TOKEN_ISSUED",
        "ASSIGNED",
        "CHANGES_REQUESTED",
        "PROFILE_UPDATED",
        "RESUBMITTED",
        "ASSIGNED",
        "APPROVED",
      ]);
      expect(events.find((e) => e.kind === "CHANGES_REQUESTED")).toMatchObject({
        actor: `reviewer:${SUBJECT}`,
        note: "Describe the tools",
      });
    });

    test("approve without a tier leaves it UNVERIFIED; deciding an unassigned review records the decider", async () => {
      const created = await intake();
      const ok = expectOk(await decide(created.reviewCode, { decision: "APPROVE" }));
      expect(ok).toMatchObject({ status: "APPROVED", assignedTo: SUBJECT });
      expect(await where(created.reviewCode)).toEqual({ status: "APPROVED", stage: "APPROVED", decided: true });
      expect((await db.provider.findUniqueOrThrow({ where: { providerCode: created.providerCode } })).trustTier).toBe(
        "UNVERIFIED",
      );
    });

    test("reject → REJECTED both, decidedAt set, the note kept", async () => {
      const created = await intake();
      expectOk(await assign(created.reviewCode));
      const answer = expectOk(await decide(created.reviewCode, { decision: "REJECT", note: "Not an agent" }));
      expect(answer.status).toBe("REJECTED");
      expect(Date.parse(answer.decidedAt)).not.toBeNaN();
      expect(await where(created.reviewCode)).toEqual({ status: "REJECTED", stage: "REJECTED", decided: true });
      expect((await timeline(created.providerCode, rv)).at(-1)).toMatchObject({
        kind: "REJECTED",
        actor: `reviewer:${SUBJECT}`,
        note: "Not an agent",
      });
    });
  });

  describe("a decision's arguments", () => {
    test.each([
      ["REJECT without a note", { decision: "REJECT" }, ["note"]],
      ["REJECT with a blank note", { decision: "REJECT", note: "   " }, ["note"]],
      ["REQUEST_CHANGES without a note", { decision: "REQUEST_CHANGES" }, ["note"]],
      ["REQUEST_CHANGES with an empty note", { decision: "REQUEST_CHANGES", note: "" }, ["note"]],
      ["REQUEST_CHANGES with a blank note", { decision: "REQUEST_CHANGES", note: "  " }, ["note"]],
      ["a tier with REJECT", { decision: "REJECT", note: "no", trustTier: "TRUSTED" }, ["trustTier"]],
      [
        "a tier with REQUEST_CHANGES",
        { decision: "REQUEST_CHANGES", note: "fix", trustTier: "VERIFIED" },
        ["trustTier"],
      ],
      ["an unknown decision", { decision: "MAYBE" }, ["decision"]],
      ["no decision", { note: "hm" }, ["decision"]],
      ["an unknown tier", { decision: "APPROVE", trustTier: "GOLD" }, ["trustTier"]],
      ["a note over 2000 characters", { decision: "REJECT", note: "x".repeat(2001) }, ["note"]],
    ])("%s is BAD_USER_INPUT (400) naming the field, and nothing changes", async (_what, args, paths) => {
      const created = await intake();
      expectOk(await assign(created.reviewCode));
      const answer = await expectUnchanged(created.providerCode, "BAD_USER_INPUT", () =>
        decide(created.reviewCode, args),
      );
      expect(answer.paths).toEqual(paths);
    });
  });

  describe("suspension and reinstatement", () => {
    test("suspend revokes every token at once; reinstate approves again with the old tokens still revoked", async () => {
      const created = await approved();
      const second = expectOk(await issue(created.providerCode, "ci", created.accessToken), 201);
      const tokens = [created.accessToken, second.accessToken as string];
      for (const [i, token] of tokens.entries()) {
        expectOk(await patch(created.providerCode, { summary: `Still mine ${i}` }, token));
      }

      const suspended = expectOk(await suspend(created.providerCode, { note: "Phishing reports" }));
      expect(suspended.reviewStage).toBe("SUSPENDED");
      expect(suspended.tokens).toHaveLength(2);
      for (const token of suspended.tokens) expect(token.revokedAt).not.toBeNull();
      const rows = await db.accessToken.findMany({ where: { provider: { providerCode: created.providerCode } } });
      expect(rows).toHaveLength(2);
      for (const row of rows) expect(row.revokedAt).toBeInstanceOf(Date);
      for (const token of tokens) {
        expectCode(await patch(created.providerCode, { summary: "Locked out" }, token), "UNAUTHENTICATED");
        expectCode(await door.run("Query.providers", { limit: 1 }, { token }), "UNAUTHENTICATED");
      }
      // Hidden from the public while suspended; reviewers still see it.
      expectCode(await door.run("Query.provider", { providerCode: created.providerCode }), "NOT_FOUND");
      const events = await timeline(created.providerCode, rv);
      expect(kinds(events).slice(-2)).toEqual(["SUSPENDED", "TOKEN_REVOKED"]);
      expect(events.at(-2)).toMatchObject({ actor: `reviewer:${SUBJECT}`, note: "Phishing reports" });

      // No new token while suspended: CONFLICT, nothing issued.
      await expectRefused(created.providerCode, "SUSPENDED", () => issue(created.providerCode, "back", rv));
      expect(await db.accessToken.count({ where: { provider: { providerCode: created.providerCode } } })).toBe(2);

      const back = expectOk(await reinstate(created.providerCode));
      expect(back.reviewStage).toBe("APPROVED");
      expect(kinds(await timeline(created.providerCode, rv)).at(-1)).toBe("REINSTATED");
      for (const token of tokens) {
        expectCode(await patch(created.providerCode, { summary: "Still locked" }, token), "UNAUTHENTICATED");
      }

      const fresh = expectOk(await issue(created.providerCode, "reinstated", rv), 201);
      expect(fresh.accessToken).toMatch(/^agr_/);
      const patched = expectOk(await patch(created.providerCode, { summary: "Back in business" }, fresh.accessToken));
      expect(patched.reviewStage).toBe("APPROVED");
      expect(kinds(await timeline(created.providerCode, rv))).toEqual([
        "SUBMITTED",
        "TOKEN_ISSUED",
        "APPROVED",
        "TOKEN_ISSUED",
        "PROFILE_UPDATED",
        "PROFILE_UPDATED",
        "SUSPENDED",
        "TOKEN_REVOKED",
        "REINSTATED",
        "TOKEN_ISSUED",
        "PROFILE_UPDATED",
      ]);
    });

    test("reinstate needs no note", async () => {
      const created = await approved();
      expectOk(await suspend(created.providerCode));
      expect(expectOk(await reinstate(created.providerCode, {})).reviewStage).toBe("APPROVED");
    });

    test.each([
      ["without a note", {}],
      ["with a blank note", { note: "  " }],
      ["with a null note", { note: null }],
    ])("suspend %s is BAD_USER_INPUT (400) naming note, and nothing changes", async (_what, args) => {
      const created = await approved();
      const answer = await expectUnchanged(created.providerCode, "BAD_USER_INPUT", () =>
        suspend(created.providerCode, args),
      );
      expect(answer.paths).toEqual(["note"]);
    });

    test("suspending withdraws an update under review", async () => {
      const created = await approved();
      expectOk(await patch(created.providerCode, { endpoint: NEW_ENDPOINT }, created.accessToken));
      const update = await updateReview(created.providerCode);
      expect(update).not.toBeNull();
      expectOk(await suspend(created.providerCode));
      const after = await db.review.findUniqueOrThrow({ where: { id: update?.id } });
      expect(after.status).toBe("WITHDRAWN");
      expect(after.decidedAt).toBeInstanceOf(Date);
    });

    test("an unknown provider is NOT_FOUND (404)", async () => {
      expectCode(await suspend("no-such-provider-xyz"), "NOT_FOUND");
      expectCode(await reinstate("no-such-provider-xyz"), "NOT_FOUND");
    });
  });

  describe("an approved provider's updates", () => {
    test("an update of summary, labels or description only opens no review and leaves it APPROVED", async () => {
      const created = await approved();
      const answer = expectOk(
        await patch(
          created.providerCode,
          { summary: "Sharper summary", labels: ["maps", "fast"], description: "More words" },
          created.accessToken,
        ),
      );
      expect(answer.reviewStage).toBe("APPROVED");
      expect(await updateReview(created.providerCode)).toBeNull();
      expect(await db.review.count({ where: { provider: { providerCode: created.providerCode } } })).toBe(1);
    });

    test("changing the endpoint opens one UPDATE review; further such updates open none; assign and approve keep APPROVED", async () => {
      const created = await approved();
      const first = expectOk(await patch(created.providerCode, { endpoint: NEW_ENDPOINT }, created.accessToken));
      expect(first.reviewStage).toBe("APPROVED");
      const update = await updateReview(created.providerCode);
      expect(update).toMatchObject({ kind: "UPDATE", status: "OPEN", priority: "NORMAL", assignedTo: null });
      const code = update?.reviewCode as string;
      expect(code).toMatch(/^RV-[0-9A-HJKMNP-TV-Z]{8}$/);
      expect(await where(code)).toEqual({ status: "OPEN", stage: "APPROVED", decided: false });
      const opened = (await timeline(created.providerCode, rv)).at(-1);
      expect(opened).toMatchObject({ kind: "UPDATE_SUBMITTED", actor: `agent:${created.providerCode}` });

      expectOk(
        await patch(
          created.providerCode,
          { tools: [{ name: "search", kind: "HTTP", scopes: ["READ_ONLY"] }] },
          created.accessToken,
        ),
      );
      expectOk(await patch(created.providerCode, { policy: { humanOversight: "ON_REQUEST" } }, created.accessToken));
      expect(await db.review.count({ where: { provider: { providerCode: created.providerCode } } })).toBe(2);

      expect(expectOk(await assign(code)).kind).toBe("UPDATE");
      expect(await where(code)).toEqual({ status: "IN_PROGRESS", stage: "APPROVED", decided: false });
      expectOk(await decide(code, { decision: "APPROVE", trustTier: "TRUSTED" }));
      expect(await where(code)).toEqual({ status: "APPROVED", stage: "APPROVED", decided: true });
      expect((await db.provider.findUniqueOrThrow({ where: { providerCode: created.providerCode } })).trustTier).toBe(
        "TRUSTED",
      );

      // The update is closed, so the next reviewed change opens a new one.
      expectOk(await patch(created.providerCode, { policy: { humanOversight: "ALWAYS" } }, created.accessToken));
      const next = await updateReview(created.providerCode);
      expect(next?.reviewCode).toBeDefined();
      expect(next?.reviewCode).not.toBe(code);
    });

    test("rejecting an update suspends the provider and revokes its tokens", async () => {
      const created = await approved();
      expectOk(await patch(created.providerCode, { policy: { humanOversight: "NONE" } }, created.accessToken));
      const code = (await updateReview(created.providerCode))?.reviewCode as string;
      expectOk(await assign(code));
      expectOk(await decide(code, { decision: "REJECT", note: "Oversight removed" }));
      expect(await where(code)).toEqual({ status: "REJECTED", stage: "SUSPENDED", decided: true });
      const tokens = await db.accessToken.findMany({ where: { provider: { providerCode: created.providerCode } } });
      expect(tokens.every((t) => t.revokedAt !== null)).toBe(true);
      expectCode(await patch(created.providerCode, { summary: "x" }, created.accessToken), "UNAUTHENTICATED");
      // The timeline says both what was decided and what it did to the provider.
      const events = await timeline(created.providerCode, rv);
      expect(kinds(events).slice(-3)).toEqual(["REJECTED", "SUSPENDED", "TOKEN_REVOKED"]);
      for (const event of events.slice(-3)) expect(event.actor).toBe(`reviewer:${SUBJECT}`);
      expect(events.at(-3)?.note).toBe("Oversight removed");
      // A suspended provider can be reinstated, as after any suspension.
      expect(expectOk(await reinstate(created.providerCode)).reviewStage).toBe("APPROVED");
    });

    test("changes requested on an update: the stage stays APPROVED; the owner's update reopens it", async () => {
      const created = await approved();
      expectOk(await patch(created.providerCode, { endpoint: NEW_ENDPOINT }, created.accessToken));
      const code = (await updateReview(created.providerCode))?.reviewCode as string;
      expectOk(await decide(code, { decision: "REQUEST_CHANGES", note: "Use a health URL" }));
      expect(await where(code)).toEqual({ status: "CHANGES_REQUESTED", stage: "APPROVED", decided: false });
      expectOk(
        await patch(
          created.providerCode,
          { endpoint: { ...NEW_ENDPOINT, healthUrl: "https://agent.example.com/health" } },
          created.accessToken,
        ),
      );
      expect(await where(code)).toEqual({ status: "OPEN", stage: "APPROVED", decided: false });
      expect(kinds(await timeline(created.providerCode, rv)).at(-1)).toBe("RESUBMITTED");
      expect(await db.review.count({ where: { provider: { providerCode: created.providerCode } } })).toBe(2);
    });
  });

  describe("every other transition is a CONFLICT (409) naming the current state, and changes nothing", () => {
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
      expectOk(await decide(created.reviewCode, { decision: "REJECT", note: "No" }));
      await expectRefused(created.providerCode, "REJECTED", () => assign(created.reviewCode));
      await expectRefused(created.providerCode, "REJECTED", () => decide(created.reviewCode, { decision: "APPROVE" }));
    });

    test("assigning or deciding a review that awaits the owner's changes", async () => {
      const created = await intake();
      expectOk(await decide(created.reviewCode, { decision: "REQUEST_CHANGES", note: "More detail" }));
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
      expectOk(await assign(submitted.reviewCode));
      await expectRefused(submitted.providerCode, "IN_REVIEW", () => suspend(submitted.providerCode));
      expectOk(await decide(submitted.reviewCode, { decision: "REJECT", note: "No" }));
      await expectRefused(submitted.providerCode, "REJECTED", () => suspend(submitted.providerCode));

      const suspended = await approved();
      expectOk(await suspend(suspended.providerCode));
      await expectRefused(suspended.providerCode, "SUSPENDED", () => suspend(suspended.providerCode));
    });

    test("reinstating a provider that is not SUSPENDED", async () => {
      const live = await approved();
      await expectRefused(live.providerCode, "APPROVED", () => reinstate(live.providerCode));
      const submitted = await intake();
      await expectRefused(submitted.providerCode, "SUBMITTED", () => reinstate(submitted.providerCode));
      const rejected = await intake();
      expectOk(await decide(rejected.reviewCode, { decision: "REJECT", note: "No" }));
      await expectRefused(rejected.providerCode, "REJECTED", () => reinstate(rejected.providerCode));
    });

    test("reprioritising a closed review", async () => {
      const created = await approved();
      await expectRefused(created.providerCode, "APPROVED", () => prioritise(created.reviewCode, "URGENT"));
    });

    test("deciding or assigning an update withdrawn by a suspension", async () => {
      const created = await approved();
      expectOk(await patch(created.providerCode, { endpoint: NEW_ENDPOINT }, created.accessToken));
      const code = (await updateReview(created.providerCode))?.reviewCode as string;
      expectOk(await suspend(created.providerCode));
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
      const anonymous = await expectUnchanged(created.providerCode, "UNAUTHENTICATED", () =>
        act(created.reviewCode, null),
      );
      expect(anonymous.answer.headers.get("www-authenticate")).toMatch(/^Bearer\b/);
      await expectUnchanged(created.providerCode, "FORBIDDEN", () => act(created.reviewCode, created.accessToken));
      await expectUnchanged(created.providerCode, "FORBIDDEN", () => act(created.reviewCode, other.accessToken));
      expectCode(await act("RV-00000000", rv), "NOT_FOUND");
    });

    test.each([
      ["suspend", (code: string, token: string | null) => suspend(code, { note: "x" }, token)],
      ["reinstate", (code: string, token: string | null) => reinstate(code, { note: "x" }, token)],
    ])("%s: anonymous 401, the owner's token 403; nothing changes", async (_what, act) => {
      const created = await approved();
      await expectUnchanged(created.providerCode, "UNAUTHENTICATED", () => act(created.providerCode, null));
      await expectUnchanged(created.providerCode, "FORBIDDEN", () => act(created.providerCode, created.accessToken));
    });

    test("an admin may act as a reviewer", async () => {
      const created = await intake();
      const admin = await reviewerToken("admin-wf", ["admin"]);
      expect(expectOk(await assign(created.reviewCode, {}, admin)).assignedTo).toBe("admin-wf");
    });
  });

  describe("comments", () => {
    test("a reviewer's comment: created (201), on the timeline with its actor; the review does not move", async () => {
      const created = await intake();
      const answer = expectOk(await comment(created.reviewCode, { note: "Checking the endpoint" }), 201);
      expect(answer).toMatchObject({
        kind: "COMMENTED",
        actor: `reviewer:${SUBJECT}`,
        note: "Checking the endpoint",
      });
      expect(Date.parse(answer.at)).not.toBeNaN();
      expect(await where(created.reviewCode)).toEqual({ status: "OPEN", stage: "SUBMITTED", decided: false });
      expect((await timeline(created.providerCode, rv)).at(-1)).toMatchObject({
        kind: "COMMENTED",
        note: "Checking the endpoint",
      });
    });

    test("the provider's owner may comment on its own review; a comment is not a resubmission", async () => {
      const created = await intake();
      expectOk(await decide(created.reviewCode, { decision: "REQUEST_CHANGES", note: "Which model?" }));
      const answer = expectOk(
        await comment(created.reviewCode, { note: "GPT-class, see models" }, created.accessToken),
        201,
      );
      expect(answer).toMatchObject({ kind: "COMMENTED", actor: `agent:${created.providerCode}` });
      expect(await where(created.reviewCode)).toEqual({
        status: "CHANGES_REQUESTED",
        stage: "CHANGES_REQUESTED",
        decided: false,
      });
    });

    test("another agent gets NOT_FOUND, anonymous 401, a blank, empty or missing note 400; none writes anything", async () => {
      const created = await intake();
      const other = await intake();
      await expectUnchanged(created.providerCode, "NOT_FOUND", () =>
        comment(created.reviewCode, { note: "Hi" }, other.accessToken),
      );
      await expectUnchanged(created.providerCode, "UNAUTHENTICATED", () =>
        comment(created.reviewCode, { note: "Hi" }, null),
      );
      for (const args of [{ note: " " }, { note: "" }, {}]) {
        const answer = await expectUnchanged(created.providerCode, "BAD_USER_INPUT", () =>
          comment(created.reviewCode, args),
        );
        expect(answer.paths).toEqual(["note"]);
      }
      expectCode(await comment("RV-00000000", { note: "Hi" }), "NOT_FOUND");
      expectCode(await comment("RV-00000000", { note: "Hi" }, other.accessToken), "NOT_FOUND");
    });
  });

  describe("updateReview", () => {
    test("sets the priority of an active review; the status and stage do not move", async () => {
      const created = await intake();
      const answer = expectOk(await prioritise(created.reviewCode, "URGENT"));
      expect(answer).toMatchObject({ reviewCode: created.reviewCode, priority: "URGENT", status: "OPEN" });
      expect(await where(created.reviewCode)).toEqual({ status: "OPEN", stage: "SUBMITTED", decided: false });
      expectOk(await assign(created.reviewCode));
      expect(expectOk(await prioritise(created.reviewCode, "LOW"))).toMatchObject({
        priority: "LOW",
        status: "IN_PROGRESS",
      });
      const events = await timeline(created.providerCode, rv);
      expect(kinds(events).filter((k) => k === "PRIORITY_CHANGED")).toHaveLength(2);
      expect(events.at(-1)).toMatchObject({ kind: "PRIORITY_CHANGED", note: "priority set to LOW" });
    });

    test.each([
      ["an unknown priority", "CRITICAL"],
      ["no priority", undefined],
    ])("%s is BAD_USER_INPUT (400) naming the field, and nothing changes", async (_what, priority) => {
      const created = await intake();
      const answer = await expectUnchanged(created.providerCode, "BAD_USER_INPUT", () =>
        prioritise(created.reviewCode, priority),
      );
      expect(answer.paths).toEqual(["priority"]);
    });
  });

  describe("the timeline", () => {
    test("every event has a time and an actor, oldest first, and earlier events never change", async () => {
      const created = await intake();
      const seen: Event[][] = [await timeline(created.providerCode, rv)];
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
        expect(answer.code).toBeUndefined();
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
      expect((await db.provider.findUniqueOrThrow({ where: { providerCode: created.providerCode } })).trustTier).toBe(
        "VERIFIED",
      );
    });

    test("reviewer notes reach reviewers and the owner only; the public and other agents see `reviewer` and no note", async () => {
      const created = await intake();
      const other = await intake();
      expectOk(await comment(created.reviewCode, { note: "Internal: check the vendor" }), 201);
      expectOk(await decide(created.reviewCode, { decision: "APPROVE", note: "Approved after vendor check" }));

      for (const token of [rv, created.accessToken]) {
        const events = await timeline(created.providerCode, token);
        expect(events.filter((e) => e.actor === `reviewer:${SUBJECT}`).map((e) => [e.kind, e.note])).toEqual([
          ["COMMENTED", "Internal: check the vendor"],
          ["APPROVED", "Approved after vendor check"],
        ]);
      }
      for (const token of [null, other.accessToken]) {
        const events = await timeline(created.providerCode, token);
        // The agent's own events keep their actor: it is public who submitted.
        expect(events.map((e) => [e.kind, e.actor, e.note])).toEqual([
          ["SUBMITTED", `agent:${created.providerCode}`, null],
          ["TOKEN_ISSUED", `agent:${created.providerCode}`, null],
          ["COMMENTED", "reviewer", null],
          ["APPROVED", "reviewer", null],
        ]);
        for (const event of events) expect(event.actor).not.toContain(SUBJECT);
      }
    });
  });
});
