/** A protected route answers 401 to a caller without credentials, before it looks at the body. */
import { describe, expect, test } from "@jest/globals";
import { call, db, expectProblem, intake } from "../helpers.ts";

describe("credentials come before input", () => {
  test("PATCH without a token and with a bad body is 401, not 400, and changes nothing", async () => {
    const created = await intake();
    const answer = await call("PATCH", `/api/v1/providers/${created.providerCode}`, {
      body: { trustTier: "OFFICIAL", nonsense: true },
    });
    expectProblem(answer, 401, "UNAUTHENTICATED");
    expect(answer.headers.get("www-authenticate")).toMatch(/^Bearer/);
    const row = await db.provider.findUniqueOrThrow({ where: { providerCode: created.providerCode } });
    expect([row.version, row.trustTier]).toEqual([1, "UNVERIFIED"]);
  });

  test("a reviewer route without a token is 401 even with a malformed body", async () => {
    const created = await intake();
    const answer = await call("POST", `/api/v1/reviews/${created.reviewCode}/decision`, { body: "{not json" });
    expectProblem(answer, 401, "UNAUTHENTICATED");
  });

  test("with a token, the body is checked as before", async () => {
    const created = await intake();
    const answer = await call("PATCH", `/api/v1/providers/${created.providerCode}`, {
      body: { trustTier: "OFFICIAL" },
      token: created.accessToken,
    });
    expectProblem(answer, 400, "BAD_USER_INPUT");
  });
});
