/**
 * The service's "at most N" and "exactly one" write invariants, raced through the front door. Each
 * race fires its requests at once through two apps on the one database, alternately, as two replicas
 * would receive them (on PostgreSQL each app has its own connection pool, so the transactions really
 * run side by side), and each is run for a few rounds on fresh providers, so that one lucky ordering
 * does not hide a bug. What a race must leave behind is then read from the database itself.
 *
 * The Idempotency-Key of intakes (concurrent duplicates make exactly one intake) is raced in
 * tests/security/idempotency.test.ts, not here.
 */
import { afterAll, describe, expect, test } from "@jest/globals";
import { dialectOf, openDb } from "../../src/db/client.ts";
import { createApp } from "../../src/yoga.ts";
import { intakeBody, uniqueCode } from "../builders.ts";
import {
  type Answer,
  type App,
  activeReviewCode,
  app,
  approve,
  call,
  config,
  db,
  intake,
  reviewerToken,
} from "../helpers.ts";

/**
 * The second replica. On PostgreSQL it has its own client, so its own pool of connections. On SQLite
 * it shares the client of `app`: the embedded default is one process with one connection, and a
 * second connection in this same process would wait for SQLite's lock in its busy handler, which
 * blocks the event loop that the transaction holding the lock needs to finish (a stall of the test,
 * not of the service).
 */
const replicaDb = dialectOf(config.databaseUrl) === "postgresql" ? await openDb(config.databaseUrl) : db;
const replica = createApp(config, replicaDb);
const APPS: readonly App[] = [app, replica];

afterAll(async () => {
  await replica.dispose();
  if (replicaDb !== db) await replicaDb.$disconnect();
});

/** Rounds of each race, each on fresh data. */
const ROUNDS = 3;
/** Concurrent requests of a race (the token cap's race sends 20). */
const N = 16;
const ACTIVE = ["OPEN", "IN_PROGRESS", "CHANGES_REQUESTED"];
const DECISION_EVENTS = ["APPROVED", "REJECTED", "CHANGES_REQUESTED"];

/** Starts every request at once, alternating between the two apps, and waits for all of them. */
function race(requests: readonly ((app: App) => Promise<Answer>)[]): Promise<Answer[]> {
  return Promise.all(requests.map((request, i) => request(APPS[i % APPS.length] as App)));
}

/** How many answers had each status, e.g. `{ 201: 4, 409: 16 }`. */
function tally(answers: readonly Answer[]): Record<number, number> {
  const counts: Record<number, number> = {};
  for (const { status } of answers) counts[status] = (counts[status] ?? 0) + 1;
  return counts;
}

/** The error codes of the refused answers (problem documents), one each, in order. */
const codesOf = (answers: readonly Answer[]) => answers.filter((a) => a.status >= 400).map((a) => a.body?.code);

const issueToken = (providerCode: string, token: string, body: Record<string, unknown>) => (app: App) =>
  call("POST", `/api/v1/providers/${providerCode}/tokens`, { app, token, body });

const patch =
  (providerCode: string, token: string, body: unknown, headers: Record<string, string> = {}) =>
  (app: App) =>
    call("PATCH", `/api/v1/providers/${providerCode}`, { app, token, body, headers });

const activeTokens = (providerCode: string) =>
  db.accessToken.count({ where: { provider: { providerCode }, revokedAt: null } });

const versionsOf = async (providerCode: string) =>
  (
    await db.providerVersion.findMany({
      where: { provider: { providerCode } },
      select: { version: true },
      orderBy: { version: "asc" },
    })
  ).map((v) => v.version);

const reviewsOf = (providerCode: string) =>
  db.review.findMany({
    where: { provider: { providerCode } },
    select: { reviewCode: true, kind: true, status: true },
    orderBy: { id: "asc" },
  });

const eventCount = (providerCode: string, kinds: readonly string[]) =>
  db.reviewEvent.count({ where: { provider: { providerCode }, kind: { in: [...kinds] } } });

describe("access tokens", () => {
  test("at most 5 active: 20 concurrent issues with the owner's token leave ≤ 5 active, one per 201", async () => {
    for (let round = 1; round <= ROUNDS; round++) {
      const created = await intake();
      const answers = await race(
        Array.from({ length: 20 }, (_, i) =>
          issueToken(created.providerCode, created.accessToken, { label: `race-${i}` }),
        ),
      );
      const active = await activeTokens(created.providerCode);
      const statuses = tally(answers);
      const issued = statuses[201] ?? 0;
      // Every answer is a new token or a 409 (the cap), never anything else.
      expect({ round, statuses, active }).toEqual({
        round,
        statuses: { ...(issued ? { 201: issued } : {}), 409: 20 - issued },
        active: issued + 1,
      });
      expect(active).toBeLessThanOrEqual(5);
      expect(codesOf(answers).every((code) => code === "CONFLICT")).toBe(true);
    }
  });

  test("one successor per rotation: concurrent revokeCurrent with the same token issue exactly one", async () => {
    for (let round = 1; round <= ROUNDS; round++) {
      const created = await intake();
      const answers = await race(
        Array.from({ length: N }, (_, i) =>
          issueToken(created.providerCode, created.accessToken, { revokeCurrent: true, label: `rotation-${i}` }),
        ),
      );
      const statuses = tally(answers);
      const losers = answers.filter((a) => a.status !== 201);
      const active = await db.accessToken.findMany({
        where: { provider: { providerCode: created.providerCode }, revokedAt: null },
        select: { tokenId: true },
      });
      // Losers: their credential was revoked by the winner, so each is refused as a stale one (401).
      expect({ round, created: statuses[201] ?? 0, active: active.length }).toEqual({ round, created: 1, active: 1 });
      expect(losers.every((a) => a.status === 401 && a.body.code === "UNAUTHENTICATED")).toBe(true);
      // One TOKEN_ISSUED for the intake, one for the rotation.
      expect(await eventCount(created.providerCode, ["TOKEN_ISSUED"])).toBe(2);

      const winner = answers.find((a) => a.status === 201) as Answer;
      expect(active[0]?.tokenId).toBe(winner.body.token.tokenId);
      const withSuccessor = await patch(created.providerCode, winner.body.accessToken, { summary: `Rotated ${round}` })(
        replica,
      );
      expect(withSuccessor.status).toBe(200);
      const withOld = await patch(created.providerCode, created.accessToken, { summary: "Old token" })(app);
      expect(withOld.status).toBe(401);
      expect(withOld.body.code).toBe("UNAUTHENTICATED");
    }
  });

  test("suspension vs token issue: once the suspension answered 200, no token is active", async () => {
    const rv = await reviewerToken("rv-races-suspend");
    for (let round = 1; round <= ROUNDS; round++) {
      const created = await intake();
      await approve(created.providerCode);
      // The suspension goes out early, midway or late among the issues, round by round.
      const at = [2, Math.floor(N / 2), N - 3][round - 1] as number;
      const requests = Array.from({ length: N }, (_, i) =>
        issueToken(created.providerCode, created.accessToken, { label: `before-suspension-${i}` }),
      );
      requests.splice(at, 0, (app: App) =>
        call("POST", `/api/v1/providers/${created.providerCode}/suspend`, {
          app,
          token: rv,
          body: { note: `race ${round}` },
        }),
      );
      const answers = await race(requests);
      const suspension = answers[at] as Answer;
      const issues = answers.filter((_, i) => i !== at);
      expect(suspension.status).toBe(200);
      // An issue either came first (201, revoked by the suspension), or after it: its credential was
      // revoked (401) or the provider was SUSPENDED (409).
      expect(issues.every((a) => [201, 401, 409].includes(a.status))).toBe(true);
      const active = await activeTokens(created.providerCode);
      const provider = await db.provider.findUniqueOrThrow({ where: { providerCode: created.providerCode } });
      // (The statuses are compared with themselves: they are there to be read when this fails.)
      expect({ round, statuses: tally(issues), stage: provider.reviewStage, active }).toEqual({
        round,
        statuses: tally(issues),
        stage: "SUSPENDED",
        active: 0,
      });
      for (const issued of issues.filter((a) => a.status === 201)) {
        const after = await patch(created.providerCode, issued.body.accessToken, { summary: "After suspension" })(app);
        expect(after.status).toBe(401);
      }
    }
  });
});

describe("token revocation", () => {
  test("concurrent revocations of one token, by its owner and a reviewer: all answer it revoked, one event records it", async () => {
    const rv = await reviewerToken("rv-races-revoke");
    for (let round = 1; round <= ROUNDS; round++) {
      const created = await intake();
      const spare = await issueToken(created.providerCode, created.accessToken, { label: "spare" })(app);
      const tokenId = spare.body.token.tokenId as string;
      const answers = await race(
        Array.from(
          { length: N },
          (_, i) => (app: App) =>
            call("DELETE", `/api/v1/providers/${created.providerCode}/tokens/${tokenId}`, {
              app,
              token: i % 2 ? rv : created.accessToken,
            }),
        ),
      );
      expect({ round, statuses: tally(answers) }).toEqual({ round, statuses: { 200: N } });
      expect(answers.every((a) => typeof a.body.revokedAt === "string")).toBe(true);
      expect(await eventCount(created.providerCode, ["TOKEN_REVOKED"])).toBe(1);
    }
  });
});

describe("profile versions", () => {
  test('If-Match: "1": of concurrent PATCHes exactly one is 200, the rest 412; versions 1..2', async () => {
    for (let round = 1; round <= ROUNDS; round++) {
      const created = await intake();
      const summaries = Array.from({ length: N }, (_, i) => `Conditional summary ${round}.${i}`);
      const answers = await race(
        summaries.map((summary) =>
          patch(created.providerCode, created.accessToken, { summary }, { "if-match": '"1"' }),
        ),
      );
      expect({ round, statuses: tally(answers) }).toEqual({ round, statuses: { 200: 1, 412: N - 1 } });
      expect(codesOf(answers).every((code) => code === "PRECONDITION_FAILED")).toBe(true);
      const winner = answers.findIndex((a) => a.status === 200);
      expect((answers[winner] as Answer).headers.get("etag")).toBe('"2"');
      expect(await versionsOf(created.providerCode)).toEqual([1, 2]);
      const row = await db.provider.findUniqueOrThrow({ where: { providerCode: created.providerCode } });
      expect({ version: row.version, summary: row.summary }).toEqual({ version: 2, summary: summaries[winner] });
    }
  });

  test("without If-Match: every concurrent PATCH is 200, versions 1..N+1 with neither gap nor duplicate", async () => {
    for (let round = 1; round <= ROUNDS; round++) {
      const created = await intake();
      const answers = await race(
        Array.from({ length: N }, (_, i) =>
          patch(created.providerCode, created.accessToken, { summary: `Unconditional ${round}.${i}` }),
        ),
      );
      expect({ round, statuses: tally(answers) }).toEqual({ round, statuses: { 200: N } });
      const etags = answers.map((a) => a.headers.get("etag"));
      expect(new Set(etags).size).toBe(N);
      for (const answer of answers) expect(answer.headers.get("etag")).toBe(`"${answer.body.version}"`);
      const expected = Array.from({ length: N + 1 }, (_, i) => i + 1);
      expect(await versionsOf(created.providerCode)).toEqual(expected);
      expect(answers.map((a) => a.body.version).sort((a, b) => a - b)).toEqual(expected.slice(1));
      const row = await db.provider.findUniqueOrThrow({ where: { providerCode: created.providerCode } });
      expect(row.version).toBe(N + 1);
    }
  });
});

describe("intake", () => {
  test("providerCode is unique: concurrent intakes of one code make one provider, the rest 409", async () => {
    for (let round = 1; round <= ROUNDS; round++) {
      const providerCode = uniqueCode("race");
      const answers = await race(
        Array.from(
          { length: N },
          (_, i) => (app: App) =>
            call("POST", "/api/v1/providers", { app, body: intakeBody({ providerCode, name: `Racer ${i}` }) }),
        ),
      );
      expect({ round, statuses: tally(answers) }).toEqual({ round, statuses: { 201: 1, 409: N - 1 } });
      expect(codesOf(answers).every((code) => code === "CONFLICT")).toBe(true);
      const providers = await db.provider.findMany({ where: { providerCode }, select: { id: true } });
      expect(providers).toHaveLength(1);
      const providerId = providers[0]?.id;
      expect({
        reviews: await db.review.count({ where: { providerId } }),
        tokens: await db.accessToken.count({ where: { providerId } }),
        versions: await db.providerVersion.count({ where: { providerId } }),
      }).toEqual({ reviews: 1, tokens: 1, versions: 1 });
    }
  });
});

describe("reviews", () => {
  test("one decision per review: concurrent decisions on a claimed review, exactly one 200, the rest 409", async () => {
    const rv = await reviewerToken("rv-races-decide");
    const decisions = ["APPROVE", "REJECT", "REQUEST_CHANGES"] as const;
    const outcome = { APPROVE: "APPROVED", REJECT: "REJECTED", REQUEST_CHANGES: "CHANGES_REQUESTED" } as const;
    for (let round = 1; round <= ROUNDS; round++) {
      const created = await intake();
      const assigned = await call("POST", `/api/v1/reviews/${created.reviewCode}/assign`, { token: rv, body: {} });
      expect(assigned.status).toBe(200);
      // The decisions rotate so that each kind goes first in one round.
      const sent = Array.from({ length: N }, (_, i) => decisions[(i + round) % decisions.length] as string);
      const answers = await race(
        sent.map(
          (decision, i) => (app: App) =>
            call("POST", `/api/v1/reviews/${created.reviewCode}/decision`, {
              app,
              token: rv,
              body: { decision, note: `race ${round}.${i}` },
            }),
        ),
      );
      expect({ round, statuses: tally(answers) }).toEqual({ round, statuses: { 200: 1, 409: N - 1 } });
      expect(codesOf(answers).every((code) => code === "CONFLICT")).toBe(true);
      const won = sent[answers.findIndex((a) => a.status === 200)] as keyof typeof outcome;
      expect(await eventCount(created.providerCode, DECISION_EVENTS)).toBe(1);
      const review = await db.review.findUniqueOrThrow({ where: { reviewCode: created.reviewCode } });
      const provider = await db.provider.findUniqueOrThrow({ where: { providerCode: created.providerCode } });
      expect({ review: review.status, stage: provider.reviewStage }).toEqual({
        review: outcome[won],
        stage: outcome[won],
      });
    }
  });

  test("one active UPDATE review: concurrent owner PATCHes of an approved provider's endpoint open exactly one", async () => {
    for (let round = 1; round <= ROUNDS; round++) {
      const created = await intake();
      await approve(created.providerCode);
      const answers = await race(
        Array.from({ length: N }, (_, i) =>
          patch(created.providerCode, created.accessToken, {
            endpoint: { url: `https://agent-${round}-${i}.example.com/a2a`, protocol: "A2A", authScheme: "BEARER" },
          }),
        ),
      );
      expect({ round, statuses: tally(answers) }).toEqual({ round, statuses: { 200: N } });
      const active = (await reviewsOf(created.providerCode)).filter((r) => ACTIVE.includes(r.status));
      expect({ round, active: active.map((r) => `${r.kind} ${r.status}`) }).toEqual({ round, active: ["UPDATE OPEN"] });
      expect(await eventCount(created.providerCode, ["UPDATE_SUBMITTED"])).toBe(1);
      expect(await activeReviewCode(created.providerCode)).toBe(active[0]?.reviewCode);
    }
  });

  test("at most one active review: owner PATCHes racing the approval of the update under review", async () => {
    const rv = await reviewerToken("rv-races-update");
    for (let round = 1; round <= ROUNDS; round++) {
      const created = await intake();
      await approve(created.providerCode);
      const endpoint = (host: string) => ({
        url: `https://${host}.example.com/a2a`,
        protocol: "A2A",
        authScheme: "BEARER",
      });
      const opened = await patch(created.providerCode, created.accessToken, { endpoint: endpoint(`first-${round}`) })(
        app,
      );
      expect(opened.status).toBe(200);
      const update = await activeReviewCode(created.providerCode);
      const at = [1, Math.floor(N / 2), N - 2][round - 1] as number;
      const requests = Array.from({ length: N }, (_, i) =>
        patch(created.providerCode, created.accessToken, { endpoint: endpoint(`next-${round}-${i}`) }),
      );
      requests.splice(at, 0, (app: App) =>
        call("POST", `/api/v1/reviews/${update}/decision`, {
          app,
          token: rv,
          body: { decision: "APPROVE", note: "approved in tests" },
        }),
      );
      const answers = await race(requests);
      expect({ round, statuses: tally(answers) }).toEqual({ round, statuses: { 200: N + 1 } });
      const reviews = await reviewsOf(created.providerCode);
      const active = reviews.filter((r) => ACTIVE.includes(r.status));
      expect(active.length).toBeLessThanOrEqual(1);
      // Every UPDATE review was opened by one PATCH, and each is either decided or the active one.
      const updates = reviews.filter((r) => r.kind === "UPDATE");
      expect(await eventCount(created.providerCode, ["UPDATE_SUBMITTED"])).toBe(updates.length);
      expect(updates.filter((r) => r.status === "APPROVED").map((r) => r.reviewCode)).toEqual([update]);
    }
  });
});
