/** The review queue and one review read with reviewer JWTs (API.md §3), through both doors. */
import { describe, expect, test } from "@jest/globals";
import { SignJWT } from "jose";
import { uniqueCode } from "../builders.ts";
import { type Door, doors, expectCode, expectOk, type Outcome } from "../doors.ts";
import { config, db, intake, reviewerToken } from "../helpers.ts";

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

/** UNAUTHENTICATED (401) with `WWW-Authenticate: Bearer`. */
function expectUnauthenticated(outcome: Outcome): void {
  expectCode(outcome, "UNAUTHENTICATED");
  expect(outcome.answer.headers.get("www-authenticate")).toMatch(/^Bearer\b/);
}

const reviewCodes = (data: { items: { reviewCode: string }[] }) => data.items.map((r) => r.reviewCode);

describe.each(doors)("$name", (door: Door) => {
  const queue = (args: Record<string, unknown>, token?: string) =>
    door.run("Query.reviewQueue", args, token ? { token } : {});

  describe("reviewQueue", () => {
    test("without a token: UNAUTHENTICATED (401) with WWW-Authenticate", async () => {
      expectUnauthenticated(await queue({}));
    });

    test("an agent token never passes as a reviewer token: FORBIDDEN (403)", async () => {
      const agent = await intake();
      expectCode(await queue({}, agent.accessToken), "FORBIDDEN");
    });

    test("no token, agent token, reviewer token: only the reviewer reads the provider's item", async () => {
      const agent = await intake();
      expectUnauthenticated(await queue({ providerCode: agent.providerCode }));
      expectCode(await queue({ providerCode: agent.providerCode }, agent.accessToken), "FORBIDDEN");
      const ok = expectOk(await queue({ providerCode: agent.providerCode }, await reviewerToken()));
      expect(ok).toEqual({
        items: [
          expect.objectContaining({
            reviewCode: agent.reviewCode,
            providerCode: agent.providerCode,
            priority: "NORMAL",
            status: "OPEN",
          }),
        ],
        nextCursor: null,
      });
    });

    test("a reviewer sees active items, URGENT first, then oldest first; pages, filters, no closed status", async () => {
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
      const token = await reviewerToken();

      const all = expectOk(await queue({ search: word }, token));
      expect(reviewCodes(all)).toEqual([b.reviewCode, c.reviewCode, a.reviewCode]);
      expect(all.items.map((r: { priority: string }) => r.priority)).toEqual(["URGENT", "NORMAL", "NORMAL"]);

      const paged = expectOk(await queue({ search: word, limit: 2 }, token));
      const rest = expectOk(await queue({ search: word, limit: 2, cursor: paged.nextCursor }, token));
      expect([...reviewCodes(paged), ...reviewCodes(rest)]).toEqual([b.reviewCode, c.reviewCode, a.reviewCode]);
      expect(rest.nextCursor).toBeNull();

      const urgent = expectOk(await queue({ search: word, priority: "URGENT" }, token));
      expect(reviewCodes(urgent)).toEqual([b.reviewCode]);
      const closed = await queue({ status: "APPROVED" }, token);
      expectCode(closed, "BAD_USER_INPUT");
      expect(closed.paths).toEqual(["status"]);
    });

    test("URGENT first, then oldest first (createdAt and priority set in the database)", async () => {
      const word = uniqueCode("gqueue").replace("-", "");
      const older = await intake({ name: `Queue ${word} older` });
      const urgent = await intake({ name: `Queue ${word} urgent` });
      const newer = await intake({ name: `Queue ${word} newer` });
      const now = Date.now();
      await db.review.update({ where: { reviewCode: older.reviewCode }, data: { createdAt: new Date(now - 50_000) } });
      await db.review.update({ where: { reviewCode: newer.reviewCode }, data: { createdAt: new Date(now - 10_000) } });
      await db.review.update({
        where: { reviewCode: urgent.reviewCode },
        data: { priority: "URGENT", priorityRank: 0, createdAt: new Date(now - 1_000) },
      });
      const answer = expectOk(await queue({ search: word }, await reviewerToken()));
      expect(reviewCodes(answer)).toEqual([urgent.reviewCode, older.reviewCode, newer.reviewCode]);
    });

    test("an admin role is a reviewer too", async () => {
      const answer = expectOk(await queue({ limit: 1 }, await reviewerToken("admin-1", ["admin"])));
      expect(Array.isArray(answer.items)).toBe(true);
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
    ])("a reviewer token %s is UNAUTHENTICATED (401)", async (_what, make) => {
      expectUnauthenticated(await queue({}, await make()));
    });

    test("a well-formed token made by hand is accepted (the test's own JWT is sound)", async () => {
      const answer = expectOk(await queue({ limit: 1 }, await jwt()));
      expect(Array.isArray(answer.items)).toBe(true);
    });
  });

  describe("review", () => {
    test("the reviewer and the owner read it; another agent gets NOT_FOUND; anonymous UNAUTHENTICATED", async () => {
      const created = await intake();
      const other = await intake();
      const read = (reviewCode: string, token?: string) =>
        door.run("Query.review", { reviewCode }, token ? { token } : {});
      const byReviewer = expectOk(await read(created.reviewCode, await reviewerToken()));
      expect(byReviewer).toMatchObject({
        reviewCode: created.reviewCode,
        providerCode: created.providerCode,
        kind: "INTAKE",
      });
      expect(expectOk(await read(created.reviewCode, created.accessToken)).reviewCode).toBe(created.reviewCode);
      expectCode(await read(created.reviewCode, other.accessToken), "NOT_FOUND");
      expectUnauthenticated(await read(created.reviewCode));
      expectCode(await read("RV-00000000", await reviewerToken()), "NOT_FOUND");
    });
  });
});
