/**
 * POST /api/v1/providers/{providerCode}/lifecycle: deprecate, retire, reactivate; who may;
 * what is refused (and that a refusal changes nothing); versions, timeline and the detail.
 */
import { describe, expect, test } from "@jest/globals";
import { createApp } from "../../src/yoga.ts";
import {
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

const lifecycle = (code: string, body: unknown, options: { token?: string; headers?: Record<string, string> } = {}) =>
  call("POST", `/api/v1/providers/${code}/lifecycle`, { body, ...options });

/** The lifecycle columns and version of a provider, straight from the database. */
async function stored(providerCode: string) {
  return db.provider.findUniqueOrThrow({
    where: { providerCode },
    select: { lifecycle: true, lifecycleMessage: true, successorCode: true, version: true, updatedAt: true },
  });
}

describe("deprecate, retire, reactivate", () => {
  test("the owner deprecates with a message and a successor: a new version, a timeline event, the detail shows it", async () => {
    const successor = await intake();
    await approve(successor.providerCode);
    const old = await intake();
    await approve(old.providerCode);
    const before = await stored(old.providerCode);

    const answer = await lifecycle(
      old.providerCode,
      { state: "DEPRECATED", message: "  Use the new planner  ", successorCode: successor.providerCode },
      { token: old.accessToken },
    );
    expect(answer.status).toBe(200);
    expect(answer.headers.get("etag")).toBe(`"${before.version + 1}"`);
    expect(answer.body).toMatchObject({
      providerCode: old.providerCode,
      lifecycle: "DEPRECATED",
      lifecycleMessage: "Use the new planner",
      successorCode: successor.providerCode,
      version: before.version + 1,
    });
    expect(new Date(answer.body.updatedAt).getTime()).toBeGreaterThan(before.updatedAt.getTime());

    // Public detail: lifecycle, message, successor; the successor lists its predecessor.
    const detail = await call("GET", `/api/v1/providers/${old.providerCode}`);
    expect(detail.body).toMatchObject({ lifecycle: "DEPRECATED", successorCode: successor.providerCode });
    expect(detail.body.reviewTimeline.at(-1)).toMatchObject({ kind: "DEPRECATED" });
    const next = await call("GET", `/api/v1/providers/${successor.providerCode}`);
    expect(next.body).toMatchObject({ lifecycle: "ACTIVE", lifecycleMessage: null, predecessors: [old.providerCode] });

    // The version: lifecycle fields changed, the snapshot carries them.
    const version = await call("GET", `/api/v1/providers/${old.providerCode}/versions/${before.version + 1}`);
    expect(version.status).toBe(200);
    expect(version.body.changedFields).toEqual(["lifecycle", "lifecycleMessage", "successorCode"]);
    expect(version.body.snapshot).toMatchObject({
      lifecycle: "DEPRECATED",
      lifecycleMessage: "Use the new planner",
      successorCode: successor.providerCode,
      name: "Route Planner",
    });
    // An ordinary PATCH later keeps the lifecycle in its snapshot (it did not change it).
    const patched = await call("PATCH", `/api/v1/providers/${old.providerCode}`, {
      token: old.accessToken,
      body: { summary: "Still here, for now" },
    });
    expect(patched.status).toBe(200);
    expect(patched.body.lifecycle).toBe("DEPRECATED");
    const after = await call("GET", `/api/v1/providers/${old.providerCode}/versions/${before.version + 2}`);
    expect(after.body.changedFields).toEqual(["summary"]);
    expect(after.body.snapshot).toMatchObject({ lifecycle: "DEPRECATED", successorCode: successor.providerCode });
  });

  test("DEPRECATED → ACTIVE by the owner clears message and successor (REACTIVATED)", async () => {
    const p = await intake();
    expect(
      (await lifecycle(p.providerCode, { state: "DEPRECATED", message: "going" }, { token: p.accessToken })).status,
    ).toBe(200);
    const back = await lifecycle(p.providerCode, { state: "ACTIVE" }, { token: p.accessToken });
    expect(back.status).toBe(200);
    expect(back.body).toMatchObject({ lifecycle: "ACTIVE", lifecycleMessage: null, successorCode: null, version: 3 });
    const timeline = await db.reviewEvent.findMany({
      where: { provider: { providerCode: p.providerCode } },
      orderBy: { id: "asc" },
      select: { kind: true },
    });
    expect(timeline.map((e) => e.kind).slice(-2)).toEqual(["DEPRECATED", "REACTIVATED"]);
    // ACTIVE snapshots carry no lifecycle keys, like those written before lifecycles existed.
    const v3 = await call("GET", `/api/v1/providers/${p.providerCode}/versions/3`);
    expect(v3.body.snapshot).toMatchObject({ lifecycle: "ACTIVE", lifecycleMessage: null, successorCode: null });
    const raw = await db.providerVersion.findFirstOrThrow({
      where: { provider: { providerCode: p.providerCode }, version: 3 },
      select: { snapshot: true },
    });
    expect(Object.keys(raw.snapshot as object)).not.toContain("lifecycle");
  });

  test("retirement is final for the owner: a 409 naming RETIRED, nothing changed; a reviewer can undo it", async () => {
    const p = await intake();
    const retired = await lifecycle(p.providerCode, { state: "RETIRED" }, { token: p.accessToken });
    expect(retired.status).toBe(200);
    expect(retired.body).toMatchObject({ lifecycle: "RETIRED", lifecycleMessage: null });
    const versions = await versionCount(p.providerCode);
    for (const body of [
      { state: "ACTIVE" },
      { state: "DEPRECATED", message: "x" },
      { state: "RETIRED", message: "y" },
    ]) {
      const refused = await lifecycle(p.providerCode, body, { token: p.accessToken });
      expectProblem(refused, 409, "CONFLICT");
      expect(refused.body.detail).toMatch(/RETIRED/);
    }
    expect(await versionCount(p.providerCode)).toBe(versions);
    expect((await stored(p.providerCode)).lifecycle).toBe("RETIRED");

    const undone = await lifecycle(p.providerCode, { state: "ACTIVE" }, { token: await reviewerToken("lc-undo") });
    expect(undone.status).toBe(200);
    expect(undone.body.lifecycle).toBe("ACTIVE");
    const event = await db.reviewEvent.findFirstOrThrow({
      where: { provider: { providerCode: p.providerCode } },
      orderBy: { id: "desc" },
    });
    expect(event).toMatchObject({ kind: "REACTIVATED", actor: "reviewer:lc-undo" });
  });

  test("the same state with the same message is a 409; a new message is a new version", async () => {
    const p = await intake();
    await lifecycle(p.providerCode, { state: "DEPRECATED", message: "one" }, { token: p.accessToken });
    expectProblem(
      await lifecycle(p.providerCode, { state: "DEPRECATED", message: "one" }, { token: p.accessToken }),
      409,
      "CONFLICT",
    );
    expectProblem(
      await lifecycle((await intake()).providerCode, { state: "ACTIVE" }, { token: await reviewerToken() }),
      409,
      "CONFLICT",
    );
    const again = await lifecycle(p.providerCode, { state: "DEPRECATED", message: "two" }, { token: p.accessToken });
    expect(again.status).toBe(200);
    expect(again.body).toMatchObject({ lifecycleMessage: "two", version: 3 });
  });

  test("a stale If-Match is a 412 and changes nothing", async () => {
    const p = await intake();
    const stale = await lifecycle(
      p.providerCode,
      { state: "RETIRED" },
      { token: p.accessToken, headers: { "if-match": '"7"' } },
    );
    expectProblem(stale, 412, "PRECONDITION_FAILED");
    expect(await stored(p.providerCode)).toMatchObject({ lifecycle: "ACTIVE", version: 1 });
    const fresh = await lifecycle(
      p.providerCode,
      { state: "RETIRED" },
      { token: p.accessToken, headers: { "if-match": '"1"' } },
    );
    expect(fresh.status).toBe(200);
  });
});

describe("bad input: a 400 naming the field, nothing changed", () => {
  test.each([
    ["a deprecation without a message", { state: "DEPRECATED" }, "message"],
    ["a message over 500 characters", { state: "RETIRED", message: "x".repeat(501) }, "message"],
    ["a message to reactivate", { state: "ACTIVE", message: "back" }, "message"],
    ["a successor to reactivate", { state: "ACTIVE", successorCode: "some-agent" }, "successorCode"],
    ["a successor that is no code", { state: "RETIRED", successorCode: "Not A Code" }, "successorCode"],
    ["an unknown state", { state: "SUNSET" }, "state"],
    ["no state", { message: "why" }, "state"],
    ["a read-only key", { state: "RETIRED", version: 9 }, "version"],
    ["an unknown key", { state: "RETIRED", successor: "x" }, "successor"],
  ])("%s", async (_what, body, path) => {
    const p = await intake();
    const answer = await lifecycle(p.providerCode, body, { token: p.accessToken });
    expectProblem(answer, 400, "BAD_USER_INPUT");
    expect(errorPaths(answer)).toContain(path);
    expect(await stored(p.providerCode)).toMatchObject({ lifecycle: "ACTIVE", version: 1 });
    expect(await versionCount(p.providerCode)).toBe(1);
  });

  test("the successor must exist, be visible to all, not be retired, not be itself, and not lead back", async () => {
    const p = await intake();
    const hidden = await intake({ visibility: "PRIVATE" });
    const gone = await intake();
    await lifecycle(gone.providerCode, { state: "RETIRED" }, { token: gone.accessToken });
    const b = await intake();
    // b names p as its successor: p may not name b (a cycle of two).
    expect(
      (
        await lifecycle(
          b.providerCode,
          { state: "DEPRECATED", message: "use p", successorCode: p.providerCode },
          { token: b.accessToken },
        )
      ).status,
    ).toBe(200);

    const cases: [string, RegExp][] = [
      [uniqueCode("missing"), /names no provider/],
      [hidden.providerCode, /names no provider/],
      [gone.providerCode, /RETIRED/],
      [p.providerCode, /itself/],
      [b.providerCode, /cycle/],
    ];
    for (const [successorCode, detail] of cases) {
      const answer = await lifecycle(
        p.providerCode,
        { state: "DEPRECATED", message: "m", successorCode },
        { token: p.accessToken },
      );
      expectProblem(answer, 400, "BAD_USER_INPUT");
      expect(errorPaths(answer)).toEqual(["successorCode"]);
      expect(JSON.stringify(answer.body)).toMatch(detail);
    }
    // A missing code and a private one read the same: codes cannot be probed.
    const missing = await lifecycle(
      p.providerCode,
      { state: "DEPRECATED", message: "m", successorCode: "zz-none-here" },
      { token: p.accessToken },
    );
    const privateOne = await lifecycle(
      p.providerCode,
      { state: "DEPRECATED", message: "m", successorCode: hidden.providerCode },
      { token: p.accessToken },
    );
    expect(missing.body.errors[0].message.replace("zz-none-here", "X")).toBe(
      privateOne.body.errors[0].message.replace(hidden.providerCode, "X"),
    );
    expect(await stored(p.providerCode)).toMatchObject({ lifecycle: "ACTIVE", version: 1 });
  });
});

describe("who may", () => {
  test("anonymous 401; another agent 403 (or 404 where it cannot see); a reviewer may", async () => {
    const p = await intake();
    const other = await intake();
    const hidden = await intake({ visibility: "PRIVATE" });
    const anonymous = await lifecycle(p.providerCode, { state: "RETIRED" });
    expectProblem(anonymous, 401, "UNAUTHENTICATED");
    expect(anonymous.headers.get("www-authenticate")).toMatch(/^Bearer/);
    expectProblem(
      await lifecycle(p.providerCode, { state: "RETIRED" }, { token: other.accessToken }),
      403,
      "FORBIDDEN",
    );
    expectProblem(
      await lifecycle(hidden.providerCode, { state: "RETIRED" }, { token: other.accessToken }),
      404,
      "NOT_FOUND",
    );
    expectProblem(
      await lifecycle(uniqueCode("nobody"), { state: "RETIRED" }, { token: await reviewerToken() }),
      404,
      "NOT_FOUND",
    );
    expect(await stored(p.providerCode)).toMatchObject({ lifecycle: "ACTIVE", version: 1 });
    const byReviewer = await lifecycle(
      p.providerCode,
      { state: "DEPRECATED", message: "policy" },
      { token: await reviewerToken("lc-rv") },
    );
    expect(byReviewer.status).toBe(200);
    const version = await db.providerVersion.findFirstOrThrow({
      where: { provider: { providerCode: p.providerCode }, version: 2 },
    });
    expect(version.actor).toBe("reviewer:lc-rv");
  });
});

describe("lists hide RETIRED unless asked", () => {
  test("list and search, anonymous and reviewer; includeRetired=true shows them; a bad value is a 400", async () => {
    const label = uniqueCode("lcl");
    const word = `zq${uniqueCode("w").replace(/-/g, "")}`;
    const active = await intake({ labels: [label], description: word });
    const deprecated = await intake({ labels: [label], description: word });
    const retired = await intake({ labels: [label], description: word });
    for (const p of [active, deprecated, retired]) await approve(p.providerCode);
    await lifecycle(
      deprecated.providerCode,
      { state: "DEPRECATED", message: "old" },
      { token: deprecated.accessToken },
    );
    await lifecycle(retired.providerCode, { state: "RETIRED", message: "gone" }, { token: retired.accessToken });
    const codes = (a: { body: { items: { providerCode: string }[] } }) =>
      a.body.items.map((i) => i.providerCode).sort();
    const shown = [active.providerCode, deprecated.providerCode].sort();
    const all = [...shown, retired.providerCode].sort();
    const rv = await reviewerToken();
    for (const query of [`labels=${label}`, `search=${word}`]) {
      expect(codes(await call("GET", `/api/v1/providers?${query}`))).toEqual(shown);
      expect(codes(await call("GET", `/api/v1/providers?${query}`, { token: rv }))).toEqual(shown);
      expect(codes(await call("GET", `/api/v1/providers?${query}&includeRetired=false`))).toEqual(shown);
      expect(codes(await call("GET", `/api/v1/providers?${query}&includeRetired=true`))).toEqual(all);
    }
    const list = await call("GET", `/api/v1/providers?labels=${label}&includeRetired=true`);
    const item = list.body.items.find((i: { providerCode: string }) => i.providerCode === retired.providerCode);
    expect(item).toMatchObject({ lifecycle: "RETIRED", lifecycleMessage: "gone", successorCode: null });
    // The retired detail is still there, saying so.
    expect((await call("GET", `/api/v1/providers/${retired.providerCode}`)).body.lifecycle).toBe("RETIRED");

    const bad = await call("GET", `/api/v1/providers?includeRetired=yes`);
    expectProblem(bad, 400, "BAD_USER_INPUT");
    expect(errorPaths(bad)).toEqual(["includeRetired"]);
  });
});

describe("updatedSince: the change feed of a list", () => {
  test("providers updated at or after it, oldest change first, paged without skips; a write moves one to the end", async () => {
    const label = uniqueCode("since");
    const made = [];
    for (let i = 0; i < 4; i++) {
      const p = await intake({ labels: [label] });
      await approve(p.providerCode);
      made.push(p);
    }
    const rows = await db.provider.findMany({
      where: { providerCode: { in: made.map((p) => p.providerCode) } },
      orderBy: [{ updatedAt: "asc" }, { id: "asc" }],
      select: { providerCode: true, updatedAt: true },
    });
    const second = rows[1];
    if (!second) throw new Error("no rows");
    const since = second.updatedAt.toISOString();
    const feed = (cursor?: string) =>
      call(
        "GET",
        `/api/v1/providers?labels=${label}&updatedSince=${since}&limit=2${cursor ? `&cursor=${cursor}` : ""}`,
      );
    const first = await feed();
    expect(first.status).toBe(200);
    expect(first.body.items.map((i: { providerCode: string }) => i.providerCode)).toEqual(
      rows.slice(1, 3).map((r) => r.providerCode),
    );
    // A write while paging: the provider moves to the end, seen on a later page, nothing skipped.
    const moved = rows[1]?.providerCode as string;
    const owner = made.find((p) => p.providerCode === moved);
    await call("PATCH", `/api/v1/providers/${moved}`, { token: owner?.accessToken, body: { summary: "moved on" } });
    const seen: string[] = [];
    let cursor: string | null = first.body.nextCursor;
    while (cursor) {
      const next = await feed(cursor);
      expect(next.status).toBe(200);
      seen.push(...next.body.items.map((i: { providerCode: string }) => i.providerCode));
      cursor = next.body.nextCursor;
    }
    expect(seen).toEqual([rows[3]?.providerCode, moved]);
    // Nothing older than `since` came.
    expect(seen).not.toContain(rows[0]?.providerCode);
    // Far in the future: nothing.
    const none = await call("GET", `/api/v1/providers?labels=${label}&updatedSince=2999-01-01T00:00:00Z`);
    expect(none.body).toEqual({ items: [], nextCursor: null });
  });

  test.each(["yesterday", "2026-13-01T00:00:00Z", "2026-11-21T10:00:00", "1700000000"])(
    "an invalid updatedSince (%s) is a 400 naming it",
    async (value) => {
      const answer = await call("GET", `/api/v1/providers?updatedSince=${encodeURIComponent(value)}`);
      expectProblem(answer, 400, "BAD_USER_INPUT");
      expect(errorPaths(answer)).toEqual(["updatedSince"]);
      const queue = await call("GET", `/api/v1/reviews/queue?updatedSince=${encodeURIComponent(value)}`, {
        token: await reviewerToken(),
      });
      expectProblem(queue, 400, "BAD_USER_INPUT");
      expect(errorPaths(queue)).toEqual(["updatedSince"]);
    },
  );

  test("a cursor of the newest-first list is refused by the change feed", async () => {
    const label = uniqueCode("cur");
    for (let i = 0; i < 2; i++) await approve((await intake({ labels: [label] })).providerCode);
    const page = await call("GET", `/api/v1/providers?labels=${label}&limit=1`);
    expect(page.body.nextCursor).toEqual(expect.any(String));
    const refused = await call(
      "GET",
      `/api/v1/providers?labels=${label}&limit=1&updatedSince=2000-01-01T00:00:00Z&cursor=${page.body.nextCursor}`,
    );
    expectProblem(refused, 400, "BAD_USER_INPUT");
    expect(errorPaths(refused)).toEqual(["cursor"]);
  });

  test("the review queue takes updatedSince as a filter", async () => {
    const rv = await reviewerToken();
    const p = await intake();
    const review = await db.review.findFirstOrThrow({ where: { provider: { providerCode: p.providerCode } } });
    const at = review.updatedAt.toISOString();
    const later = new Date(review.updatedAt.getTime() + 1).toISOString();
    const listed = await call("GET", `/api/v1/reviews/queue?providerCode=${p.providerCode}&updatedSince=${at}`, {
      token: rv,
    });
    expect(listed.body.items.map((i: { reviewCode: string }) => i.reviewCode)).toEqual([p.reviewCode]);
    const after = await call("GET", `/api/v1/reviews/queue?providerCode=${p.providerCode}&updatedSince=${later}`, {
      token: rv,
    });
    expect(after.body.items).toEqual([]);
  });
});

describe("the response cache (src/cache) learns of lifecycle changes", () => {
  test("a cached anonymous list and profile are not served stale after a retirement", async () => {
    const cached = createApp({ ...config, responseCache: true }, db);
    try {
      const label = uniqueCode("lcc");
      const p = await intake({ labels: [label] });
      await approve(p.providerCode);
      const list = () => call("GET", `/api/v1/providers?labels=${label}`, { app: cached });
      const detail = () => call("GET", `/api/v1/providers/${p.providerCode}`, { app: cached });
      await list();
      await detail();
      const hit = await list();
      expect(hit.headers.get("x-cache")).toBe("HIT");
      expect((await detail()).headers.get("x-cache")).toBe("HIT");

      const retired = await call("POST", `/api/v1/providers/${p.providerCode}/lifecycle`, {
        app: cached,
        token: p.accessToken,
        body: { state: "RETIRED" },
      });
      expect(retired.status).toBe(200);
      const after = await list();
      expect(after.headers.get("x-cache")).toBeNull();
      expect(after.body.items).toEqual([]);
      expect((await detail()).body.lifecycle).toBe("RETIRED");
    } finally {
      await cached.dispose();
    }
  });
});

describe("the REST surface", () => {
  test("PATCH takes the lifecycle alone, not mixed with other fields; the OpenAPI document describes the route and the list arguments", async () => {
    const p = await intake();
    const patched = await call("PATCH", `/api/v1/providers/${p.providerCode}`, {
      token: p.accessToken,
      body: { lifecycle: "RETIRED", summary: "x" },
    });
    expectProblem(patched, 400, "BAD_USER_INPUT");
    expect(errorPaths(patched)).toEqual(["summary"]);
    expect(await stored(p.providerCode)).toMatchObject({ lifecycle: "ACTIVE", version: 1 });

    const doc = (await call("GET", "/openapi.json")).body;
    const list = doc.paths["/api/v1/providers"].get.parameters as { name: string; schema: { type: string } }[];
    expect(list.find((x) => x.name === "includeRetired")?.schema.type).toBe("boolean");
    expect(list.find((x) => x.name === "updatedSince")?.schema.type).toBe("string");
    const route = doc.paths["/api/v1/providers/{providerCode}/lifecycle"].post;
    expect(route.operationId).toBe("setProviderLifecycle");
    expect(route.parameters.map((x: { name: string }) => x.name)).toEqual(["providerCode", "If-Match"]);
    expect(Object.keys(route.requestBody.content["application/json"].schema.properties)).toEqual([
      "state",
      "message",
      "successorCode",
    ]);
    expect(Object.keys(route.responses)).toEqual(
      expect.arrayContaining(["200", "400", "401", "403", "404", "409", "412"]),
    );
    expect(doc.components.schemas.ProviderSummary.properties.lifecycle.$ref).toBe("#/components/schemas/Lifecycle");
  });
});
