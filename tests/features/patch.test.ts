/** Updating a profile (Mutation.updateProvider, PATCH /api/v1/providers/{providerCode}) through both doors: who may, what it writes, and that a refusal writes nothing. */
import { describe, expect, test } from "@jest/globals";
import { createApp } from "../../src/yoga.ts";
import { uniqueCode } from "../builders.ts";
import { doors, type Outcome } from "../doors.ts";
import { type App, approve, call, config, db, intake, reviewerToken, versionCount } from "../helpers.ts";
import { openCountingDb } from "../perf/counting.db.ts";

/** The provider row and its version count, to compare before and after a refusal. */
async function state(providerCode: string) {
  const row = await db.provider.findUniqueOrThrow({ where: { providerCode } });
  return { row, versions: await versionCount(providerCode) };
}

/** What the error says: the problem's `detail` on REST, the error's `message` on GraphQL (the same text). */
const detailOf = (outcome: Outcome): string =>
  outcome.answer.body?.detail ?? outcome.answer.body?.errors?.[0]?.message ?? "";

/** The messages of the input errors: the problem's `errors` on REST, the error's `extensions.errors` on GraphQL. */
const messagesOf = (outcome: Outcome): string[] =>
  (
    (outcome.answer.body?.code ? outcome.answer.body.errors : outcome.answer.body?.errors?.[0]?.extensions?.errors) ??
    []
  ).map((e: { message: string }) => e.message);

describe.each(doors)("$name", (door) => {
  const update = (
    providerCode: string,
    fields: Record<string, unknown>,
    options: { token?: string; headers?: Record<string, string>; app?: App } = {},
  ) => door.run("Mutation.updateProvider", { providerCode, ...fields }, options);

  describe("by the owner", () => {
    test("changes the fields, ETag, one new version row with the changed fields, in the same write", async () => {
      const created = await intake();
      expect(await versionCount(created.providerCode)).toBe(1);
      const outcome = await update(
        created.providerCode,
        { summary: "A new summary", description: "Now with **Markdown**", labels: ["maps", "routing"] },
        { token: created.accessToken },
      );
      expect(outcome.code).toBeUndefined();
      expect(outcome.status).toBe(200);
      expect(outcome.answer.headers.get("etag")).toBe('"2"');
      expect(outcome.data).toMatchObject({
        summary: "A new summary",
        description: "Now with **Markdown**",
        version: 2,
      });

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

      const timeline = outcome.data.reviewTimeline.map((e: { kind: string }) => e.kind);
      expect(timeline).toContain("PROFILE_UPDATED");
    });

    test("a change of visibility is recorded with the others", async () => {
      const created = await intake();
      const outcome = await update(
        created.providerCode,
        { summary: "Updated through a door", visibility: "UNLISTED" },
        { token: created.accessToken },
      );
      expect(outcome.code).toBeUndefined();
      expect(outcome.answer.headers.get("etag")).toBe('"2"');
      expect(outcome.data).toMatchObject({ summary: "Updated through a door", visibility: "UNLISTED", version: 2 });
      const versions = await db.providerVersion.findMany({
        where: { provider: { providerCode: created.providerCode } },
        orderBy: { version: "asc" },
      });
      expect(versions.map((v) => v.version)).toEqual([1, 2]);
      expect(versions[1]?.changedFields).toEqual(["summary", "visibility"]);
    });

    test("each update adds exactly one version", async () => {
      const created = await intake();
      for (let i = 2; i <= 4; i++) {
        const outcome = await update(created.providerCode, { name: `Planner ${i}` }, { token: created.accessToken });
        expect(outcome.answer.headers.get("etag")).toBe(`"${i}"`);
        expect(await versionCount(created.providerCode)).toBe(i);
      }
    });

    test("concurrent updates: each answers the profile as it left it, its ETag its version", async () => {
      // The answer is read in the update's own transaction: read after the commit, it could already
      // hold a later concurrent update (seen on PostgreSQL) while the ETag named this one's version.
      const created = await intake();
      const names = Array.from({ length: 12 }, (_, i) => `Concurrent Planner ${i}`);
      const outcomes = await Promise.all(
        names.map((name) => update(created.providerCode, { name }, { token: created.accessToken })),
      );
      for (const [i, outcome] of outcomes.entries()) {
        expect(outcome.code).toBeUndefined();
        expect(outcome.data.name).toBe(names[i]);
        expect(outcome.answer.headers.get("etag")).toBe(`"${outcome.data.version}"`);
      }
      expect(outcomes.map((o) => o.data.version).sort((a, b) => a - b)).toEqual(names.map((_, i) => i + 2));
    });

    test("labels are normalised and the label index follows them", async () => {
      const created = await intake();
      const outcome = await update(
        created.providerCode,
        { labels: [" New ", "new", "Other"] },
        { token: created.accessToken },
      );
      expect(outcome.data.labels).toEqual(["new", "other"]);
      const index = await db.providerLabel.findMany({
        where: { provider: { providerCode: created.providerCode } },
        orderBy: { label: "asc" },
      });
      expect(index.map((l) => l.label)).toEqual(["new", "other"]);
    });

    test.each(["description", "homepageUrl", "policy"])(
      "null clears %s, a nullable field, in a new version",
      async (key) => {
        const created = await intake({
          description: "Something",
          homepageUrl: "https://home.example.com/",
          policy: { humanOversight: "ALWAYS" },
        });
        const outcome = await update(created.providerCode, { [key]: null }, { token: created.accessToken });
        expect(outcome.code).toBeUndefined();
        expect(outcome.status).toBe(200);
        expect(outcome.data[key]).toBeNull();
        expect(outcome.data.summary).toBe("Plans delivery routes across a city");
        expect(await versionCount(created.providerCode)).toBe(2);
      },
    );

    test("a matching If-Match is accepted", async () => {
      const created = await intake();
      const outcome = await update(
        created.providerCode,
        { summary: "Matched" },
        { token: created.accessToken, headers: { "if-match": '"1"' } },
      );
      expect(outcome.code).toBeUndefined();
      expect(outcome.answer.headers.get("etag")).toBe('"2"');
      expect(outcome.data.version).toBe(2);
    });

    test.each(['"1"', '"7"'])("a stale If-Match (%s) is PRECONDITION_FAILED and changes nothing", async (ifMatch) => {
      const created = await intake();
      await update(created.providerCode, { summary: "Second" }, { token: created.accessToken });
      const before = await state(created.providerCode);
      const outcome = await update(
        created.providerCode,
        { summary: "Lost update" },
        { token: created.accessToken, headers: { "if-match": ifMatch } },
      );
      expect(outcome.code).toBe("PRECONDITION_FAILED");
      expect(outcome.status).toBe(412);
      expect(outcome.data).toBeNull();
      expect(await state(created.providerCode)).toEqual(before);
    });
  });

  describe("sections merge member by member (RFC 7396)", () => {
    const endpoint = { url: "https://agent.example.com/a2a", protocol: "A2A", authScheme: "BEARER" };
    const read = async (providerCode: string, token: string) =>
      (await door.run("Query.provider", { providerCode }, { token })).data;
    const latestVersion = (providerCode: string) =>
      db.providerVersion.findFirstOrThrow({ where: { provider: { providerCode } }, orderBy: { version: "desc" } });
    const updateReviews = (providerCode: string) =>
      db.review.count({ where: { provider: { providerCode }, kind: "UPDATE" } });

    test("a partial endpoint changes only its url; protocol and authScheme are kept", async () => {
      const created = await intake({ endpoint: { ...endpoint, healthUrl: "https://agent.example.com/health" } });
      const outcome = await update(
        created.providerCode,
        { endpoint: { url: "https://new.example.com/a2a" } },
        { token: created.accessToken },
      );
      expect(outcome.code).toBeUndefined();
      const expected = {
        url: "https://new.example.com/a2a",
        protocol: "A2A",
        authScheme: "BEARER",
        healthUrl: "https://agent.example.com/health",
      };
      expect(outcome.data).toMatchObject({ endpoint: expected, version: 2 });
      expect(await read(created.providerCode, created.accessToken)).toMatchObject({ endpoint: expected, version: 2 });
      expect(await latestVersion(created.providerCode)).toMatchObject({
        version: 2,
        changedFields: ["endpoint"],
        snapshot: { endpoint: expected },
      });
    });

    test("null for endpoint.healthUrl clears only it", async () => {
      const created = await intake({ endpoint: { ...endpoint, healthUrl: "https://agent.example.com/health" } });
      const outcome = await update(
        created.providerCode,
        { endpoint: { healthUrl: null } },
        { token: created.accessToken },
      );
      expect(outcome.code).toBeUndefined();
      expect(outcome.data.endpoint).toEqual({
        ...endpoint,
        healthUrl: null,
        transport: null,
        headers: [],
        variables: [],
      });
      expect(outcome.data.version).toBe(2);
    });

    test("null for policy.termsUrl clears only it; other members are kept", async () => {
      const created = await intake({
        policy: {
          humanOversight: "ALWAYS",
          termsUrl: "https://agent.example.com/terms",
          privacyUrl: "https://agent.example.com/privacy",
          allowedUseCases: ["routing"],
        },
      });
      const outcome = await update(
        created.providerCode,
        { policy: { termsUrl: null } },
        { token: created.accessToken },
      );
      expect(outcome.code).toBeUndefined();
      expect(outcome.data.policy).toEqual({
        humanOversight: "ALWAYS",
        termsUrl: null,
        privacyUrl: "https://agent.example.com/privacy",
        allowedUseCases: ["routing"],
        prohibitedUseCases: [],
        dataRetentionDays: null,
      });
      expect((await latestVersion(created.providerCode)).changedFields).toEqual(["policy"]);
    });

    test("a partial policy merges onto none: complete, it becomes the policy", async () => {
      const created = await intake();
      const outcome = await update(
        created.providerCode,
        { policy: { humanOversight: "ON_REQUEST", dataRetentionDays: 30 } },
        { token: created.accessToken },
      );
      expect(outcome.code).toBeUndefined();
      expect(outcome.data.policy).toMatchObject({
        humanOversight: "ON_REQUEST",
        dataRetentionDays: 30,
        termsUrl: null,
      });
    });

    test("a partial policy onto none that lacks humanOversight is BAD_USER_INPUT naming it; nothing changes", async () => {
      const created = await intake();
      const before = await state(created.providerCode);
      const outcome = await update(
        created.providerCode,
        { summary: "Not kept", policy: { termsUrl: "https://agent.example.com/terms" } },
        { token: created.accessToken },
      );
      expect(outcome.code).toBe("BAD_USER_INPUT");
      expect(outcome.status).toBe(400);
      expect(outcome.paths).toEqual(["policy.humanOversight"]);
      expect(messagesOf(outcome)).toEqual(["is required"]);
      expect(await state(created.providerCode)).toEqual(before);
      expect(before.row.version).toBe(1);
    });

    test.each([
      ["endpoint.url", { endpoint: { url: "not a url" } }],
      ["endpoint.protocol", { endpoint: { protocol: null } }],
      ["policy.dataRetentionDays", { policy: { dataRetentionDays: -1 } }],
    ])("an invalid member (%s) is BAD_USER_INPUT naming it; nothing changes", async (path, fields) => {
      const created = await intake({ policy: { humanOversight: "ALWAYS" } });
      const before = await state(created.providerCode);
      const outcome = await update(created.providerCode, fields, { token: created.accessToken });
      expect(outcome.code).toBe("BAD_USER_INPUT");
      expect(outcome.paths).toEqual([path]);
      expect(await state(created.providerCode)).toEqual(before);
    });

    test("on an APPROVED provider, a partial endpoint opens an UPDATE review only when the merge changes it", async () => {
      const created = await intake();
      await approve(created.providerCode);

      const same = await update(
        created.providerCode,
        { endpoint: { protocol: "A2A", authScheme: "BEARER" } },
        { token: created.accessToken },
      );
      expect(same.code).toBeUndefined();
      expect(same.data.version).toBe(2);
      expect((await latestVersion(created.providerCode)).changedFields).toEqual([]);
      expect(await updateReviews(created.providerCode)).toBe(0);

      const changed = await update(
        created.providerCode,
        { endpoint: { url: "https://moved.example.com/a2a" } },
        { token: created.accessToken },
      );
      expect(changed.code).toBeUndefined();
      expect(changed.data).toMatchObject({
        reviewStage: "APPROVED",
        endpoint: { ...endpoint, url: "https://moved.example.com/a2a" },
      });
      expect((await latestVersion(created.providerCode)).changedFields).toEqual(["endpoint"]);
      expect(await updateReviews(created.providerCode)).toBe(1);
    });
  });

  describe("refusals change nothing", () => {
    test("no field to change is BAD_USER_INPUT", async () => {
      const created = await intake();
      const before = await state(created.providerCode);
      const outcome = await update(created.providerCode, {}, { token: created.accessToken });
      expect(outcome.code).toBe("BAD_USER_INPUT");
      expect(await state(created.providerCode)).toEqual(before);
    });

    test("a change that fails validation names every field and appends no version", async () => {
      const created = await intake();
      const before = await state(created.providerCode);
      const outcome = await update(
        created.providerCode,
        { summary: "Fine", contactEmail: "nope", labels: ["ok", "not ok"] },
        { token: created.accessToken },
      );
      expect(outcome.code).toBe("BAD_USER_INPUT");
      expect(outcome.status).toBe(400);
      expect(outcome.paths.sort()).toEqual(["contactEmail", "labels.1"]);
      expect(await state(created.providerCode)).toEqual(before);
    });

    test("an invalid value alone is BAD_USER_INPUT naming it", async () => {
      const created = await intake();
      const before = await state(created.providerCode);
      const outcome = await update(
        created.providerCode,
        { summary: "ok", contactEmail: "broken" },
        { token: created.accessToken },
      );
      expect(outcome.code).toBe("BAD_USER_INPUT");
      expect(outcome.paths).toEqual(["contactEmail"]);
      expect(await state(created.providerCode)).toEqual(before);
    });

    test.each(["name", "summary", "labels", "contactEmail"])(
      "null for %s, which a profile always has, is refused naming it",
      async (key) => {
        const created = await intake();
        const before = await state(created.providerCode);
        const outcome = await update(created.providerCode, { [key]: null }, { token: created.accessToken });
        expect(outcome.code).toBe("BAD_USER_INPUT");
        expect(outcome.paths).toEqual([key]);
        expect(messagesOf(outcome)).toEqual(["must not be null"]);
        expect(await state(created.providerCode)).toEqual(before);
      },
    );

    test("null for endpoint, of an agent that ships no package, is refused naming it", async () => {
      const created = await intake();
      const before = await state(created.providerCode);
      const outcome = await update(created.providerCode, { endpoint: null }, { token: created.accessToken });
      expect(outcome.code).toBe("BAD_USER_INPUT");
      expect(outcome.paths).toEqual(["endpoint"]);
      expect(messagesOf(outcome)).toEqual(["is required unless the agent ships as at least one package"]);
      expect(await state(created.providerCode)).toEqual(before);
    });
  });

  describe("who may update", () => {
    test("nobody: UNAUTHENTICATED with WWW-Authenticate: Bearer", async () => {
      const created = await intake();
      const before = await state(created.providerCode);
      const outcome = await update(created.providerCode, { summary: "Anonymous edit" });
      expect(outcome.code).toBe("UNAUTHENTICATED");
      expect(outcome.status).toBe(401);
      expect(outcome.answer.headers.get("www-authenticate")).toMatch(/^Bearer\b/);
      expect(await state(created.providerCode)).toEqual(before);
    });

    test("another agent: FORBIDDEN on a provider it can see", async () => {
      const target = await intake();
      await approve(target.providerCode);
      const other = await intake();
      const before = await state(target.providerCode);
      const outcome = await update(target.providerCode, { summary: "Hijack" }, { token: other.accessToken });
      expect(outcome.code).toBe("FORBIDDEN");
      expect(outcome.status).toBe(403);
      expect(await state(target.providerCode)).toEqual(before);
    });

    test("another agent: NOT_FOUND on a PRIVATE provider", async () => {
      const target = await intake({ visibility: "PRIVATE" });
      const other = await intake();
      const before = await state(target.providerCode);
      const outcome = await update(target.providerCode, { summary: "Hijack" }, { token: other.accessToken });
      expect(outcome.code).toBe("NOT_FOUND");
      expect(outcome.status).toBe(404);
      expect(await state(target.providerCode)).toEqual(before);
    });

    test("another agent on a code that does not exist: NOT_FOUND", async () => {
      const other = await intake();
      const outcome = await update(uniqueCode("ghost"), { summary: "x" }, { token: other.accessToken });
      expect(outcome.code).toBe("NOT_FOUND");
    });

    test("a reviewer is not the owner: FORBIDDEN", async () => {
      const target = await intake();
      const before = await state(target.providerCode);
      const outcome = await update(target.providerCode, { summary: "Reviewer edit" }, { token: await reviewerToken() });
      expect(outcome.code).toBe("FORBIDDEN");
      expect(await state(target.providerCode)).toEqual(before);
      expect(before.versions).toBe(1);
    });

    test("a revoked token: UNAUTHENTICATED", async () => {
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
      const outcome = await update(
        created.providerCode,
        { summary: "After revocation" },
        { token: created.accessToken },
      );
      expect(outcome.code).toBe("UNAUTHENTICATED");
      expect(outcome.answer.headers.get("www-authenticate")).toMatch(/^Bearer\b/);
      expect(await state(created.providerCode)).toEqual(before);
    });

    test("an expired token: UNAUTHENTICATED", async () => {
      const created = await intake();
      await db.accessToken.updateMany({
        where: { provider: { providerCode: created.providerCode } },
        data: { expiresAt: new Date(Date.now() - 1000) },
      });
      const outcome = await update(created.providerCode, { summary: "Expired" }, { token: created.accessToken });
      expect(outcome.code).toBe("UNAUTHENTICATED");
    });

    test.each([
      ["last", -1],
      ["eleventh", 10],
    ])(
      "a token with a wrong checksum (its %s character changed): UNAUTHENTICATED without asking the database",
      async (_which, at) => {
        const created = await intake();
        const chars = created.accessToken.split("");
        const i = at < 0 ? chars.length + at : at;
        chars[i] = chars[i] === "A" ? "B" : "A";
        const forged = chars.join("");
        // An app on a client that records every statement it sends (tests/perf/counting.db.ts).
        const counting = await openCountingDb(config.databaseUrl);
        try {
          const app = createApp({ ...config, responseCache: false }, counting.db);
          const lookups = () => counting.statements.filter((sql) => sql.includes("access_tokens"));

          // The look-up of a good token is seen (so its absence below means something).
          const good = await door.run(
            "Query.provider",
            { providerCode: created.providerCode },
            { app, token: created.accessToken },
          );
          expect(good.code).toBeUndefined();
          expect(lookups().length).toBeGreaterThan(0);
          counting.reset();

          const before = await state(created.providerCode);
          const outcome = await update(created.providerCode, { summary: "Forged" }, { app, token: forged });
          expect(outcome.code).toBe("UNAUTHENTICATED");
          expect(outcome.answer.status).toBe(401);
          expect(counting.statements).toEqual([]);
          expect(await state(created.providerCode)).toEqual(before);

          // The same client does see the look-up for the genuine token, which may update.
          const genuine = await update(
            created.providerCode,
            { summary: "Genuine" },
            { app, token: created.accessToken },
          );
          expect(genuine.code).toBeUndefined();
          expect(lookups().length).toBeGreaterThan(0);
          expect(await versionCount(created.providerCode)).toBe(2);
        } finally {
          await counting.db.$disconnect();
        }
      },
    );

    test("every bad credential answers the same body; no credential, the same code and message", async () => {
      // On REST no credential at all answers that very body too (tests/rest/patch.test.ts); on
      // GraphQL it fails the field (with its path and `data: null`) rather than the request.
      const created = await intake();
      const unknownToken = `${created.accessToken.slice(0, 4)}${"0".repeat(32)}`;
      // The token with its last character changed (never to itself: that would be the token).
      const altered = `${created.accessToken.slice(0, -1)}${created.accessToken.endsWith("x") ? "y" : "x"}`;
      const bodies = new Set<string>();
      const said = new Set<string>();
      for (const authorization of [
        undefined,
        "Bearer",
        "Basic dXNlcjpwYXNz",
        `Bearer ${altered}`,
        `Bearer ${unknownToken}000000`,
        "Bearer not.a.jwt",
      ]) {
        const outcome = await update(
          created.providerCode,
          { summary: "x" },
          { headers: authorization ? { authorization } : {} },
        );
        expect(outcome.code).toBe("UNAUTHENTICATED");
        expect(outcome.status).toBe(401);
        expect(outcome.answer.headers.get("www-authenticate")).toMatch(/^Bearer\b/);
        said.add(detailOf(outcome));
        if (authorization) bodies.add(outcome.answer.text);
      }
      expect(bodies.size).toBe(1);
      expect([...said]).toEqual(["Missing or invalid credentials"]);
    });
  });
});
