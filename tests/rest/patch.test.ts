/** PATCH /api/v1/providers/{providerCode}: who may, what it writes, and that a refusal writes nothing. */
import { afterEach, describe, expect, jest, test } from "@jest/globals";
import { createApp } from "../../src/yoga.ts";
import {
  type App,
  approve,
  call,
  config,
  db,
  errorPaths,
  expectProblem,
  intake,
  reviewerToken,
  uniqueCode,
  versionCount,
} from "../helpers.ts";
import { openCountingDb } from "../perf/counting.db.ts";

const patch = (
  providerCode: string,
  body: unknown,
  options: { token?: string; headers?: Record<string, string>; app?: App } = {},
) => call("PATCH", `/api/v1/providers/${providerCode}`, { body, ...options });

/** The provider row and its version count, to compare before and after a refusal. */
async function state(providerCode: string) {
  const row = await db.provider.findUniqueOrThrow({ where: { providerCode } });
  return { row, versions: await versionCount(providerCode) };
}

afterEach(() => {
  jest.restoreAllMocks();
});

describe("by the owner", () => {
  test("200, ETag, one new version row with the changed fields, in the same write", async () => {
    const created = await intake();
    expect(await versionCount(created.providerCode)).toBe(1);
    const answer = await patch(
      created.providerCode,
      { summary: "A new summary", description: "Now with **Markdown**", labels: ["maps", "routing"] },
      { token: created.accessToken },
    );
    expect(answer.status).toBe(200);
    expect(answer.headers.get("etag")).toBe('"2"');
    expect(answer.body).toMatchObject({ summary: "A new summary", description: "Now with **Markdown**", version: 2 });

    expect(await versionCount(created.providerCode)).toBe(2);
    const row = await db.provider.findUniqueOrThrow({
      where: { providerCode: created.providerCode },
      include: { versions: { orderBy: { version: "asc" } } },
    });
    expect(row.version).toBe(2);
    const latest = row.versions[1];
    expect(latest).toMatchObject({ version: 2, actor: `agent:${created.providerCode}` });
    // labels were sent unchanged: only what differs is recorded.
    expect(latest?.changedFields).toEqual(["summary", "description"]);
    expect(latest?.snapshot).toMatchObject({ summary: "A new summary", description: "Now with **Markdown**" });
    expect(row.versions[0]?.snapshot).toMatchObject({ summary: "Plans delivery routes across a city" });

    const timeline = answer.body.reviewTimeline.map((e: { kind: string }) => e.kind);
    expect(timeline).toContain("PROFILE_UPDATED");
  });

  test("each PATCH adds exactly one version", async () => {
    const created = await intake();
    for (let i = 2; i <= 4; i++) {
      const answer = await patch(created.providerCode, { name: `Planner ${i}` }, { token: created.accessToken });
      expect(answer.headers.get("etag")).toBe(`"${i}"`);
      expect(await versionCount(created.providerCode)).toBe(i);
    }
  });

  test("concurrent PATCHes: each answers the profile as it left it, its ETag its version", async () => {
    // The answer is read in the PATCH's own transaction: read after the commit, it could already
    // hold a later concurrent PATCH (seen on PostgreSQL) while the ETag named this one's version.
    const created = await intake();
    const names = Array.from({ length: 12 }, (_, i) => `Concurrent Planner ${i}`);
    const answers = await Promise.all(
      names.map((name) => patch(created.providerCode, { name }, { token: created.accessToken })),
    );
    for (const [i, answer] of answers.entries()) {
      expect(answer.status).toBe(200);
      expect(answer.body.name).toBe(names[i]);
      expect(answer.headers.get("etag")).toBe(`"${answer.body.version}"`);
    }
    expect(answers.map((a) => a.body.version).sort((a, b) => a - b)).toEqual(names.map((_, i) => i + 2));
  });

  test("labels are normalised and the label index follows them", async () => {
    const created = await intake();
    const answer = await patch(
      created.providerCode,
      { labels: [" New ", "new", "Other"] },
      { token: created.accessToken },
    );
    expect(answer.body.labels).toEqual(["new", "other"]);
    const index = await db.providerLabel.findMany({
      where: { provider: { providerCode: created.providerCode } },
      orderBy: { label: "asc" },
    });
    expect(index.map((l) => l.label)).toEqual(["new", "other"]);
  });

  test("null clears a nullable field", async () => {
    const created = await intake({ description: "Something" });
    const answer = await patch(created.providerCode, { description: null }, { token: created.accessToken });
    expect(answer.status).toBe(200);
    expect(answer.body.description).toBeNull();
  });

  test("a matching If-Match is accepted", async () => {
    const created = await intake();
    const answer = await patch(
      created.providerCode,
      { summary: "Matched" },
      { token: created.accessToken, headers: { "if-match": '"1"' } },
    );
    expect(answer.status).toBe(200);
    expect(answer.headers.get("etag")).toBe('"2"');
  });

  test("a stale If-Match is a 412 and changes nothing", async () => {
    const created = await intake();
    await patch(created.providerCode, { summary: "Second" }, { token: created.accessToken });
    const before = await state(created.providerCode);
    const answer = await patch(
      created.providerCode,
      { summary: "Lost update" },
      { token: created.accessToken, headers: { "if-match": '"1"' } },
    );
    expectProblem(answer, 412, "PRECONDITION_FAILED");
    expect(await state(created.providerCode)).toEqual(before);
  });
});

describe("refused bodies change nothing", () => {
  test.each(["trustTier", "reviewStage", "providerCode", "version"])(
    "%s is not patchable: 400 naming it",
    async (key) => {
      const created = await intake();
      const before = await state(created.providerCode);
      const value = key === "version" ? 9 : key === "providerCode" ? uniqueCode() : "OFFICIAL";
      const answer = await patch(
        created.providerCode,
        { summary: "Sneaky", [key]: value },
        { token: created.accessToken },
      );
      expectProblem(answer, 400, "BAD_USER_INPUT");
      expect(errorPaths(answer)).toEqual([key]);
      expect(await state(created.providerCode)).toEqual(before);
    },
  );

  test("an unknown key is a 400 naming it", async () => {
    const created = await intake();
    const before = await state(created.providerCode);
    const answer = await patch(created.providerCode, { summary: "x", colour: "blue" }, { token: created.accessToken });
    expectProblem(answer, 400, "BAD_USER_INPUT");
    expect(errorPaths(answer)).toEqual(["colour"]);
    expect(await state(created.providerCode)).toEqual(before);
  });

  test("an empty body is a 400", async () => {
    const created = await intake();
    const before = await state(created.providerCode);
    const answer = await patch(created.providerCode, {}, { token: created.accessToken });
    expectProblem(answer, 400, "BAD_USER_INPUT");
    expect(await state(created.providerCode)).toEqual(before);
  });

  test("no body at all is a 400", async () => {
    const created = await intake();
    const answer = await call("PATCH", `/api/v1/providers/${created.providerCode}`, { token: created.accessToken });
    expectProblem(answer, 400, "BAD_USER_INPUT");
  });

  test("a body that fails validation appends no version", async () => {
    const created = await intake();
    const before = await state(created.providerCode);
    const answer = await patch(
      created.providerCode,
      { summary: "Fine", contactEmail: "nope", labels: ["ok", "not ok"] },
      { token: created.accessToken },
    );
    expectProblem(answer, 400, "BAD_USER_INPUT");
    expect(errorPaths(answer).sort()).toEqual(["contactEmail", "labels.1"]);
    expect(await state(created.providerCode)).toEqual(before);
  });

  test("null for a required field is refused", async () => {
    const created = await intake();
    const before = await state(created.providerCode);
    const answer = await patch(created.providerCode, { name: null }, { token: created.accessToken });
    expectProblem(answer, 400, "BAD_USER_INPUT");
    expect(errorPaths(answer)).toEqual(["name"]);
    expect(await state(created.providerCode)).toEqual(before);
  });
});

describe("who may PATCH", () => {
  test("nobody: 401 with WWW-Authenticate: Bearer", async () => {
    const created = await intake();
    const before = await state(created.providerCode);
    const answer = await patch(created.providerCode, { summary: "Anonymous edit" });
    expectProblem(answer, 401, "UNAUTHENTICATED");
    expect(answer.headers.get("www-authenticate")).toMatch(/^Bearer\b/);
    expect(await state(created.providerCode)).toEqual(before);
  });

  test("another agent: 403 on a provider it can see", async () => {
    const target = await intake();
    await approve(target.providerCode);
    const other = await intake();
    const before = await state(target.providerCode);
    const answer = await patch(target.providerCode, { summary: "Hijack" }, { token: other.accessToken });
    expectProblem(answer, 403, "FORBIDDEN");
    expect(await state(target.providerCode)).toEqual(before);
  });

  test("another agent: 404 on a PRIVATE provider", async () => {
    const target = await intake({ visibility: "PRIVATE" });
    const other = await intake();
    const before = await state(target.providerCode);
    const answer = await patch(target.providerCode, { summary: "Hijack" }, { token: other.accessToken });
    expectProblem(answer, 404, "NOT_FOUND");
    expect(await state(target.providerCode)).toEqual(before);
  });

  test("another agent on a code that does not exist: 404", async () => {
    const other = await intake();
    expectProblem(await patch(uniqueCode("ghost"), { summary: "x" }, { token: other.accessToken }), 404, "NOT_FOUND");
  });

  test("a reviewer is not the owner: 403", async () => {
    const target = await intake();
    const before = await state(target.providerCode);
    const answer = await patch(target.providerCode, { summary: "Reviewer edit" }, { token: await reviewerToken() });
    expectProblem(answer, 403, "FORBIDDEN");
    expect(await state(target.providerCode)).toEqual(before);
  });

  test("a revoked token: 401", async () => {
    const created = await intake();
    const issued = await call("POST", `/api/v1/providers/${created.providerCode}/tokens`, {
      token: created.accessToken,
      body: { label: "spare" },
    });
    expect(issued.status).toBe(201);
    const row = await db.accessToken.findFirstOrThrow({
      where: { provider: { providerCode: created.providerCode }, label: "intake" },
    });
    const revoked = await call("DELETE", `/api/v1/providers/${created.providerCode}/tokens/${row.tokenId}`, {
      token: issued.body.accessToken,
    });
    expect(revoked.status).toBe(200);
    const before = await state(created.providerCode);
    const answer = await patch(created.providerCode, { summary: "After revocation" }, { token: created.accessToken });
    expectProblem(answer, 401, "UNAUTHENTICATED");
    expect(answer.headers.get("www-authenticate")).toMatch(/^Bearer\b/);
    expect(await state(created.providerCode)).toEqual(before);
  });

  test("an expired token: 401", async () => {
    const created = await intake();
    await db.accessToken.updateMany({
      where: { provider: { providerCode: created.providerCode } },
      data: { expiresAt: new Date(Date.now() - 1000) },
    });
    const answer = await patch(created.providerCode, { summary: "Expired" }, { token: created.accessToken });
    expectProblem(answer, 401, "UNAUTHENTICATED");
  });

  test("a token with a wrong checksum: 401 without asking the database", async () => {
    const created = await intake();
    const last = created.accessToken.at(-1);
    const flipped = `${created.accessToken.slice(0, -1)}${last === "A" ? "B" : "A"}`;
    // An app on a client that records every statement it sends (tests/perf/counting.db.ts).
    const counting = await openCountingDb(config.databaseUrl);
    try {
      const app = createApp({ ...config, responseCache: false }, counting.db);
      const lookups = () => counting.statements.filter((sql) => sql.includes("access_tokens"));

      // The look-up of a good token is seen (so its absence below means something).
      const good = await call("GET", `/api/v1/providers/${created.providerCode}`, { app, token: created.accessToken });
      expect(good.status).toBe(200);
      expect(lookups().length).toBeGreaterThan(0);
      counting.reset();

      const before = await state(created.providerCode);
      const answer = await patch(created.providerCode, { summary: "Forged" }, { app, token: flipped });
      expectProblem(answer, 401, "UNAUTHENTICATED");
      expect(counting.statements).toEqual([]);
      expect(await state(created.providerCode)).toEqual(before);
    } finally {
      await counting.db.$disconnect();
    }
  });

  test("every credential failure answers the same body", async () => {
    const created = await intake();
    const unknownToken = `${created.accessToken.slice(0, 4)}${"0".repeat(32)}`;
    // The token with its last character changed (never to itself: that would be the token).
    const altered = `${created.accessToken.slice(0, -1)}${created.accessToken.endsWith("x") ? "y" : "x"}`;
    const bodies = new Set<string>();
    for (const authorization of [
      undefined,
      "Bearer",
      "Basic dXNlcjpwYXNz",
      `Bearer ${altered}`,
      `Bearer ${unknownToken}000000`,
      "Bearer not.a.jwt",
    ]) {
      const answer = await call("PATCH", `/api/v1/providers/${created.providerCode}`, {
        body: { summary: "x" },
        headers: authorization ? { authorization } : {},
      });
      expectProblem(answer, 401, "UNAUTHENTICATED");
      expect(answer.headers.get("www-authenticate")).toMatch(/^Bearer\b/);
      bodies.add(answer.text);
    }
    expect(bodies.size).toBe(1);
  });
});
