/**
 * What only the REST door does with reviewer JWTs: an anonymous request and a refused credential get
 * byte-for-byte the same 401 problem, on the shared-secret app and on an app keyed by a JWKS. (Through
 * /graphql an anonymous call is refused by the field, with its `path` and `data: null`, unlike a
 * refused credential.) The rules for reviewer JWTs on both doors are in tests/features/reviewer-jwt.test.ts.
 */
import { describe, expect, test } from "@jest/globals";
import { createApp } from "../../src/yoga.ts";
import { call, config, db, expectProblem, intake, reviewerToken } from "../helpers.ts";
import { claimsFor, encode, jwksServer, keyPair, sign, unsigned } from "../jwt.helpers.ts";

const secret = encode(config.reviewerJwtSecret as string);
const claims = claimsFor("jwt-reviewer", config);

describe("reviewer JWTs through /api/v1", () => {
  test("anonymous and every refused token give byte-for-byte the same refusal, on the queue, assign and decision", async () => {
    const p = await intake();
    const tokens = [
      unsigned(claims()),
      await sign(claims({ aud: "x" }), secret),
      await sign(claims({ roles: ["viewer"] }), secret),
      `agr_${await reviewerToken()}`,
      "garbage",
    ];
    const requests = [
      (token?: string) => call("GET", "/api/v1/reviews/queue", token ? { token } : {}),
      (token?: string) => call("POST", `/api/v1/reviews/${p.reviewCode}/assign`, token ? { token } : {}),
      (token?: string) =>
        call("POST", `/api/v1/reviews/${p.reviewCode}/decision`, {
          body: { decision: "APPROVE", note: "approved in tests" },
          ...(token ? { token } : {}),
        }),
    ];
    const seen = new Set<string>();
    for (const request of requests) {
      for (const token of [undefined, ...tokens]) {
        const answer = await request(token);
        expectProblem(answer, 401, "UNAUTHENTICATED");
        seen.add(`${answer.status} ${answer.headers.get("www-authenticate")} ${answer.text}`);
      }
    }
    expect(seen.size).toBe(1);
    expect([...seen][0]).toMatch(/^401 Bearer\b/);
  });

  test("an app keyed by a JWKS URL refuses anonymous calls and bad tokens with the shared-secret app's bytes", async () => {
    const rsa = await keyPair("RS256", "rest-rsa");
    const jwks = await jwksServer([rsa.jwk]);
    try {
      const app = createApp(
        { ...config, reviewerJwksUrl: jwks.url, reviewerJwtSecret: undefined, reviewerJwks: { cooldownMs: 0 } },
        db,
      );
      const reference = await call("GET", "/api/v1/reviews/queue");
      expectProblem(reference, 401, "UNAUTHENTICATED");
      const bad = await sign(claims({ aud: "x" }), rsa.privateKey, { alg: "RS256", kid: rsa.kid });
      for (const token of [undefined, bad, "garbage"]) {
        const answer = await call("GET", "/api/v1/reviews/queue", { app, ...(token ? { token } : {}) });
        expectProblem(answer, 401, "UNAUTHENTICATED");
        expect(answer.headers.get("www-authenticate")).toBe(reference.headers.get("www-authenticate"));
        expect(answer.text).toBe(reference.text);
      }
    } finally {
      await jwks.close();
    }
  });
});
