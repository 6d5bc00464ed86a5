/** The review queue and reviewer JWTs (API.md §3) through /api/v1. */
import { describe, expect, test } from "@jest/globals";
import { SignJWT } from "jose";
import { call, config, db, expectProblem, intake, reviewerToken, uniqueCode } from "../helpers.ts";

const secret = new TextEncoder().encode(config.reviewerJwtSecret);

/** A reviewer-shaped JWT with any of its parts changed. */
function jwt(
  options: {
    issuer?: string;
    audience?: string;
    expiresAt?: number;
    subject?: string | null;
    roles?: unknown;
    key?: Uint8Array;
    alg?: string;
  } = {},
) {
  const now = Math.floor(Date.now() / 1000);
  let token = new SignJWT({ roles: options.roles ?? ["reviewer"] })
    .setProtectedHeader({ alg: options.alg ?? "HS256", typ: "JWT" })
    .setIssuer(options.issuer ?? config.reviewerJwtIssuer)
    .setAudience(options.audience ?? config.reviewerJwtAudience)
    .setIssuedAt(now - 60)
    .setExpirationTime(options.expiresAt ?? now + 600);
  if (options.subject !== null) token = token.setSubject(options.subject ?? "reviewer-jwt");
  return token.sign(options.key ?? secret);
}

describe("GET /api/v1/reviews/queue", () => {
  test("without a token: 401 with WWW-Authenticate", async () => {
    const answer = await call("GET", "/api/v1/reviews/queue");
    expectProblem(answer, 401, "UNAUTHENTICATED");
    expect(answer.headers.get("www-authenticate")).toMatch(/^Bearer\b/);
  });

  test("an agent token never passes as a reviewer token: 403", async () => {
    const agent = await intake();
    expectProblem(await call("GET", "/api/v1/reviews/queue", { token: agent.accessToken }), 403, "FORBIDDEN");
  });

  test("a reviewer sees active items, URGENT first, then oldest first", async () => {
    const word = uniqueCode("queue").replace("-", "");
    const made = [];
    for (let i = 0; i < 4; i++) made.push(await intake({ name: `Queue ${word} ${i}` }));
    const [a, b, c, d] = made as [(typeof made)[0], (typeof made)[0], (typeof made)[0], (typeof made)[0]];
    const base = Date.now() - 60_000;
    const set = (p: typeof a, priority: string, rank: number, ageMs: number, status = "OPEN") =>
      db.review.update({
        where: { reviewCode: p.reviewCode },
        data: { priority, priorityRank: rank, createdAt: new Date(base - ageMs), status },
      });
    await set(a, "NORMAL", 2, 3_000); // older normal
    await set(b, "URGENT", 0, 1_000); // newest, but urgent
    await set(c, "NORMAL", 2, 5_000); // oldest normal
    await set(d, "LOW", 3, 9_000, "APPROVED"); // closed: not in the queue

    const answer = await call("GET", `/api/v1/reviews/queue?search=${word}`, { token: await reviewerToken() });
    expect(answer.status).toBe(200);
    expect(answer.body.items.map((r: { reviewCode: string }) => r.reviewCode)).toEqual([
      b.reviewCode,
      c.reviewCode,
      a.reviewCode,
    ]);
    expect(answer.body.items.map((r: { priority: string }) => r.priority)).toEqual(["URGENT", "NORMAL", "NORMAL"]);

    const paged = await call("GET", `/api/v1/reviews/queue?search=${word}&limit=2`, { token: await reviewerToken() });
    const rest = await call("GET", `/api/v1/reviews/queue?search=${word}&limit=2&cursor=${paged.body.nextCursor}`, {
      token: await reviewerToken(),
    });
    expect([...paged.body.items, ...rest.body.items].map((r: { reviewCode: string }) => r.reviewCode)).toEqual([
      b.reviewCode,
      c.reviewCode,
      a.reviewCode,
    ]);
    expect(rest.body.nextCursor).toBeNull();

    const urgent = await call("GET", `/api/v1/reviews/queue?search=${word}&priority=URGENT`, {
      token: await reviewerToken(),
    });
    expect(urgent.body.items.map((r: { reviewCode: string }) => r.reviewCode)).toEqual([b.reviewCode]);
    const closed = await call("GET", "/api/v1/reviews/queue?status=APPROVED", { token: await reviewerToken() });
    expectProblem(closed, 400, "BAD_USER_INPUT");
  });

  test("an admin role is a reviewer too", async () => {
    const answer = await call("GET", "/api/v1/reviews/queue?limit=1", {
      token: await reviewerToken("admin-1", ["admin"]),
    });
    expect(answer.status).toBe(200);
  });

  test.each([
    ["expired", () => jwt({ expiresAt: Math.floor(Date.now() / 1000) - 60 })],
    ["for another audience", () => jwt({ audience: "someone-else" })],
    ["from another issuer", () => jwt({ issuer: "https://evil.example.com" })],
    ["signed with another secret", () => jwt({ key: new TextEncoder().encode("x".repeat(48)) })],
    ["without a reviewer role", () => jwt({ roles: ["viewer"] })],
    ["with roles that are not a list", () => jwt({ roles: "reviewer" })],
    ["without a subject", () => jwt({ subject: null })],
    ["signed with HS512 (algorithm not allowed)", () => jwt({ alg: "HS512" })],
    [
      "unsigned (alg none)",
      async () => {
        const good = await jwt();
        const [, payload] = good.split(".");
        const header = Buffer.from(JSON.stringify({ alg: "none", typ: "JWT" })).toString("base64url");
        return `${header}.${payload}.`;
      },
    ],
  ])("a reviewer token %s is a 401", async (_what, make) => {
    const answer = await call("GET", "/api/v1/reviews/queue", { token: await make() });
    expectProblem(answer, 401, "UNAUTHENTICATED");
    expect(answer.headers.get("www-authenticate")).toMatch(/^Bearer\b/);
  });

  test("a well-formed token made by hand is accepted (the test's own JWT is sound)", async () => {
    const answer = await call("GET", "/api/v1/reviews/queue?limit=1", { token: await jwt() });
    expect(answer.status).toBe(200);
  });
});
