/**
 * What only the REST door does for GET /api/v1/reviews/queue: its guard refuses a query parameter
 * the route does not have. The queue itself (both doors) is in tests/features/queue.test.ts.
 */
import { describe, expect, test } from "@jest/globals";
import { call, errorPaths, expectProblem, reviewerToken } from "../helpers.ts";

describe("GET /api/v1/reviews/queue", () => {
  test("an unknown parameter is a 400 naming it", async () => {
    const answer = await call("GET", "/api/v1/reviews/queue?order=newest", { token: await reviewerToken("rv-queue") });
    expectProblem(answer, 400, "BAD_USER_INPUT");
    expect(errorPaths(answer)).toEqual(["/order"]);
  });
});
