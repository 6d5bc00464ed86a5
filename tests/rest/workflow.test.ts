/**
 * What only the REST door does in the review workflow: its guard refuses a body key the route does
 * not have, and an assign sent with no body at all still assigns to the caller. The workflow itself
 * (both doors) is in tests/features/workflow.test.ts.
 */
import { beforeAll, describe, expect, test } from "@jest/globals";
import { call, db, errorPaths, expectProblem, intake, reviewerToken } from "../helpers.ts";

const SUBJECT = "rv-workflow";
let rv: string;

beforeAll(async () => {
  rv = await reviewerToken(SUBJECT);
});

/** What a refused request must leave as it was. */
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
  };
}

describe("POST /api/v1/reviews/{reviewCode}/assign", () => {
  test("with no body at all, it assigns to the caller", async () => {
    const created = await intake();
    const answer = await call("POST", `/api/v1/reviews/${created.reviewCode}/assign`, { token: rv });
    expect(answer.status).toBe(200);
    expect(answer.body).toMatchObject({ status: "IN_PROGRESS", assignedTo: SUBJECT });
  });
});

describe("body keys the route does not have", () => {
  test("an unknown key in a decision is a 400 naming it, and nothing changes", async () => {
    const created = await intake();
    const before = await snapshot(created.providerCode);
    const answer = await call("POST", `/api/v1/reviews/${created.reviewCode}/decision`, {
      body: { decision: "APPROVE", reviewStage: "APPROVED" },
      token: rv,
    });
    expectProblem(answer, 400, "BAD_USER_INPUT");
    expect(errorPaths(answer)).toEqual(["/reviewStage"]);
    expect(await snapshot(created.providerCode)).toEqual(before);
  });

  test("a status in PATCH /reviews/{reviewCode} is a 400 naming it, and nothing changes", async () => {
    const created = await intake();
    const before = await snapshot(created.providerCode);
    const answer = await call("PATCH", `/api/v1/reviews/${created.reviewCode}`, {
      body: { priority: "HIGH", status: "APPROVED" },
      token: rv,
    });
    expectProblem(answer, 400, "BAD_USER_INPUT");
    expect(errorPaths(answer)).toEqual(["/status"]);
    expect(await snapshot(created.providerCode)).toEqual(before);
  });
});
