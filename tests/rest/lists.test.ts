/** What only REST does for the provider list (the rest is tests/features/lists.test.ts): the guard refuses unknown query parameters. */
import { describe, expect, test } from "@jest/globals";
import { call, errorPaths, expectProblem, intake } from "../helpers.ts";

describe("query parameters", () => {
  test("an unknown query parameter is a 400 naming it", async () => {
    const answer = await call("GET", "/api/v1/providers?orderBy=name&limit=5");
    expectProblem(answer, 400, "BAD_USER_INPUT");
    expect(errorPaths(answer)).toEqual(["/orderBy"]);
  });

  test("an unknown query parameter on a detail route is a 400 too", async () => {
    const created = await intake();
    const answer = await call("GET", `/api/v1/providers/${created.providerCode}?expand=all`, {
      token: created.accessToken,
    });
    expectProblem(answer, 400, "BAD_USER_INPUT");
    expect(errorPaths(answer)).toEqual(["/expand"]);
  });
});
