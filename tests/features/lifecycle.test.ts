/** The lifecycle (setProviderLifecycle, POST /api/v1/providers/{providerCode}/lifecycle) and the change-feed arguments of the lists, through both doors. */
import { describe, expect, test } from "@jest/globals";
import { createApp } from "../../src/yoga.ts";
import { uniqueCode } from "../builders.ts";
import { doors, type Outcome } from "../doors.ts";
import { approve, config, db, intake, reviewerToken, versionCount } from "../helpers.ts";

/** The lifecycle columns and version of a provider, straight from the database. */
async function stored(providerCode: string) {
  return db.provider.findUniqueOrThrow({
    where: { providerCode },
    select: { lifecycle: true, lifecycleMessage: true, successorCode: true, version: true, updatedAt: true },
  });
}

/** What the error says: the problem's `detail` on REST, the error's `message` on GraphQL (the same text). */
const detailOf = (outcome: Outcome): string =>
  outcome.answer.body?.detail ?? outcome.answer.body?.errors?.[0]?.message ?? "";

/** The field errors of a refusal: the problem's `errors` on REST, the error's `extensions.errors` on GraphQL; paths dotted, as both doors' `paths`. */
const fieldErrorsOf = (outcome: Outcome): { path: string; message: string }[] =>
  (
    (outcome.answer.body?.code ? outcome.answer.body.errors : outcome.answer.body?.errors?.[0]?.extensions?.errors) ??
    []
  ).map((e: { path: string; message: string }, i: number) => ({ ...e, path: outcome.paths[i] ?? e.path }));

/** The provider codes of a list answer, sorted. */
const codesOf = (outcome: Outcome): string[] =>
  outcome.data.items.map((i: { providerCode: string }) => i.providerCode).sort();

describe.each(doors)("$name", (door) => {
  const lifecycle = (
    providerCode: string,
    fields: Record<string, unknown>,
    options: { token?: string; headers?: Record<string, string>; app?: ReturnType<typeof createApp> } = {},
  ) => door.run("Mutation.setProviderLifecycle", { providerCode, ...fields }, options);
  const profile = (providerCode: string, token?: string) => door.run("Query.provider", { providerCode }, { token });
  const versionOf = (providerCode: string, version: number, token?: string) =>
    door.run("Query.providerVersion", { providerCode, version }, { token });
  const list = (args: Record<string, unknown>, token?: string) => door.run("Query.providers", args, { token });

  describe("deprecate, retire, reactivate", () => {
    test("the owner deprecates with a message and a successor: a new version, a timeline event, the detail shows it", async () => {
      const successor = await intake();
      await approve(successor.providerCode);
      const old = await intake();
      await approve(old.providerCode);
      const before = await stored(old.providerCode);

      const outcome = await lifecycle(
        old.providerCode,
        { state: "DEPRECATED", message: "  Use the new planner  ", successorCode: successor.providerCode },
        { token: old.accessToken },
      );
      expect(outcome.code).toBeUndefined();
      expect(outcome.status).toBe(200);
      expect(outcome.answer.headers.get("etag")).toBe(`"${before.version + 1}"`);
      expect(outcome.data).toMatchObject({
        providerCode: old.providerCode,
        lifecycle: "DEPRECATED",
        lifecycleMessage: "Use the new planner",
        successorCode: successor.providerCode,
        version: before.version + 1,
      });
      expect(new Date(outcome.data.updatedAt).getTime()).toBeGreaterThan(before.updatedAt.getTime());

      // Public detail: lifecycle, message, successor; the successor lists its predecessor.
      const detail = await profile(old.providerCode);
      expect(detail.data).toMatchObject({ lifecycle: "DEPRECATED", successorCode: successor.providerCode });
      expect(detail.data.reviewTimeline.at(-1)).toMatchObject({ kind: "DEPRECATED" });
      const next = await profile(successor.providerCode);
      expect(next.data).toMatchObject({
        lifecycle: "ACTIVE",
        lifecycleMessage: null,
        predecessors: [old.providerCode],
      });

      // The version: lifecycle fields changed, the snapshot carries them.
      const version = await versionOf(old.providerCode, before.version + 1);
      expect(version.code).toBeUndefined();
      expect(version.data.changedFields).toEqual(["lifecycle", "lifecycleMessage", "successorCode"]);
      expect(version.data.snapshot).toMatchObject({
        lifecycle: "DEPRECATED",
        lifecycleMessage: "Use the new planner",
        successorCode: successor.providerCode,
        name: "Route Planner",
      });
      // An ordinary update later keeps the lifecycle in its snapshot (it did not change it).
      const patched = await door.run(
        "Mutation.updateProvider",
        { providerCode: old.providerCode, summary: "Still here, for now" },
        { token: old.accessToken },
      );
      expect(patched.code).toBeUndefined();
      expect(patched.data.lifecycle).toBe("DEPRECATED");
      const after = await versionOf(old.providerCode, before.version + 2);
      expect(after.data.changedFields).toEqual(["summary"]);
      expect(after.data.snapshot).toMatchObject({ lifecycle: "DEPRECATED", successorCode: successor.providerCode });
    });

    test("deprecate with a successor; the successor's predecessors; retire; the owner cannot undo it", async () => {
      const next = await intake();
      const old = await intake();
      const deprecated = await lifecycle(
        old.providerCode,
        { state: "DEPRECATED", message: "use the next one", successorCode: next.providerCode },
        { token: old.accessToken },
      );
      expect(deprecated.code).toBeUndefined();
      expect(deprecated.data).toMatchObject({
        lifecycle: "DEPRECATED",
        lifecycleMessage: "use the next one",
        successorCode: next.providerCode,
        version: 2,
      });
      expect(deprecated.data.reviewTimeline.at(-1)).toMatchObject({ kind: "DEPRECATED" });

      const successor = await profile(next.providerCode);
      expect(successor.data).toMatchObject({ predecessors: [old.providerCode], lifecycle: "ACTIVE" });

      const retired = await lifecycle(old.providerCode, { state: "RETIRED" }, { token: old.accessToken });
      expect(retired.data).toMatchObject({ lifecycle: "RETIRED", version: 3 });
      const undo = await lifecycle(old.providerCode, { state: "ACTIVE" }, { token: old.accessToken });
      expect(undo.code).toBe("CONFLICT");

      const version = await versionOf(old.providerCode, 2);
      expect(version.data.changedFields).toEqual(["lifecycle", "lifecycleMessage", "successorCode"]);
      expect(version.data.snapshot).toMatchObject({
        lifecycle: "DEPRECATED",
        lifecycleMessage: "use the next one",
        successorCode: next.providerCode,
        name: "Route Planner",
      });
    });

    test("DEPRECATED → ACTIVE by the owner clears message and successor (REACTIVATED)", async () => {
      const p = await intake();
      const deprecated = await lifecycle(
        p.providerCode,
        { state: "DEPRECATED", message: "going" },
        { token: p.accessToken },
      );
      expect(deprecated.code).toBeUndefined();
      const back = await lifecycle(p.providerCode, { state: "ACTIVE" }, { token: p.accessToken });
      expect(back.code).toBeUndefined();
      expect(back.data).toMatchObject({ lifecycle: "ACTIVE", lifecycleMessage: null, successorCode: null, version: 3 });
      const timeline = await db.reviewEvent.findMany({
        where: { provider: { providerCode: p.providerCode } },
        orderBy: { id: "asc" },
        select: { kind: true },
      });
      expect(timeline.map((e) => e.kind).slice(-2)).toEqual(["DEPRECATED", "REACTIVATED"]);
      // ACTIVE snapshots carry no lifecycle keys, like those written before lifecycles existed.
      const v3 = await versionOf(p.providerCode, 3);
      expect(v3.data.snapshot).toMatchObject({ lifecycle: "ACTIVE", lifecycleMessage: null, successorCode: null });
      const raw = await db.providerVersion.findFirstOrThrow({
        where: { provider: { providerCode: p.providerCode }, version: 3 },
        select: { snapshot: true },
      });
      expect(Object.keys(raw.snapshot as object)).not.toContain("lifecycle");
    });

    test("retirement is final for the owner: a CONFLICT naming RETIRED, nothing changed; a reviewer can undo it", async () => {
      const p = await intake();
      const retired = await lifecycle(p.providerCode, { state: "RETIRED" }, { token: p.accessToken });
      expect(retired.code).toBeUndefined();
      expect(retired.data).toMatchObject({ lifecycle: "RETIRED", lifecycleMessage: null });
      const versions = await versionCount(p.providerCode);
      for (const fields of [
        { state: "ACTIVE" },
        { state: "DEPRECATED", message: "x" },
        { state: "RETIRED", message: "y" },
      ]) {
        const refused = await lifecycle(p.providerCode, fields, { token: p.accessToken });
        expect(refused.code).toBe("CONFLICT");
        expect(refused.status).toBe(409);
        expect(detailOf(refused)).toMatch(/RETIRED/);
      }
      expect(await versionCount(p.providerCode)).toBe(versions);
      expect((await stored(p.providerCode)).lifecycle).toBe("RETIRED");

      const undone = await lifecycle(p.providerCode, { state: "ACTIVE" }, { token: await reviewerToken("lc-undo") });
      expect(undone.code).toBeUndefined();
      expect(undone.data.lifecycle).toBe("ACTIVE");
      const event = await db.reviewEvent.findFirstOrThrow({
        where: { provider: { providerCode: p.providerCode } },
        orderBy: { id: "desc" },
      });
      expect(event).toMatchObject({ kind: "REACTIVATED", actor: "reviewer:lc-undo" });
    });

    test("the same state with the same message is a CONFLICT; a new message is a new version", async () => {
      const p = await intake();
      await lifecycle(p.providerCode, { state: "DEPRECATED", message: "one" }, { token: p.accessToken });
      const same = await lifecycle(p.providerCode, { state: "DEPRECATED", message: "one" }, { token: p.accessToken });
      expect(same.code).toBe("CONFLICT");
      expect(same.status).toBe(409);
      const active = await lifecycle(
        (await intake()).providerCode,
        { state: "ACTIVE" },
        { token: await reviewerToken() },
      );
      expect(active.code).toBe("CONFLICT");
      const again = await lifecycle(p.providerCode, { state: "DEPRECATED", message: "two" }, { token: p.accessToken });
      expect(again.code).toBeUndefined();
      expect(again.data).toMatchObject({ lifecycleMessage: "two", version: 3 });
    });

    test("a stale If-Match is PRECONDITION_FAILED and changes nothing; a matching one passes", async () => {
      const p = await intake();
      const stale = await lifecycle(
        p.providerCode,
        { state: "RETIRED" },
        { token: p.accessToken, headers: { "if-match": '"7"' } },
      );
      expect(stale.code).toBe("PRECONDITION_FAILED");
      expect(stale.status).toBe(412);
      expect(await stored(p.providerCode)).toMatchObject({ lifecycle: "ACTIVE", version: 1 });
      const fresh = await lifecycle(
        p.providerCode,
        { state: "RETIRED" },
        { token: p.accessToken, headers: { "if-match": '"1"' } },
      );
      expect(fresh.code).toBeUndefined();
      expect(fresh.status).toBe(200);
    });

    test("a lifecycle change stands alone: updateProvider refuses it mixed with other fields, naming them", async () => {
      const p = await intake();
      const mixed = await door.run(
        "Mutation.updateProvider",
        { providerCode: p.providerCode, lifecycle: "RETIRED", summary: "x" },
        { token: p.accessToken },
      );
      expect(mixed.code).toBe("BAD_USER_INPUT");
      expect(mixed.paths).toEqual(["summary"]);
      expect(await stored(p.providerCode)).toMatchObject({ lifecycle: "ACTIVE", version: 1 });
    });
  });

  describe("bad input: BAD_USER_INPUT naming the field, nothing changed", () => {
    test.each([
      ["a deprecation without a message", { state: "DEPRECATED" }, "message"],
      ["a message over 500 characters", { state: "RETIRED", message: "x".repeat(501) }, "message"],
      ["a message to reactivate", { state: "ACTIVE", message: "back" }, "message"],
      ["a successor to reactivate", { state: "ACTIVE", successorCode: "some-agent" }, "successorCode"],
      ["a successor that is no code", { state: "RETIRED", successorCode: "Not A Code" }, "successorCode"],
      ["an unknown state", { state: "SUNSET" }, "state"],
      ["no state", { message: "why" }, "state"],
    ])("%s", async (_what, fields, path) => {
      const p = await intake();
      const outcome = await lifecycle(p.providerCode, fields, { token: p.accessToken });
      expect(outcome.code).toBe("BAD_USER_INPUT");
      expect(outcome.status).toBe(400);
      expect(outcome.paths).toContain(path);
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
      const named = await lifecycle(
        b.providerCode,
        { state: "DEPRECATED", message: "use p", successorCode: p.providerCode },
        { token: b.accessToken },
      );
      expect(named.code).toBeUndefined();

      const cases: [string, RegExp][] = [
        [uniqueCode("missing"), /names no provider/],
        [hidden.providerCode, /names no provider/],
        [gone.providerCode, /RETIRED/],
        [p.providerCode, /itself/],
        [b.providerCode, /cycle/],
      ];
      for (const [successorCode, detail] of cases) {
        const outcome = await lifecycle(
          p.providerCode,
          { state: "DEPRECATED", message: "m", successorCode },
          { token: p.accessToken },
        );
        expect(outcome.code).toBe("BAD_USER_INPUT");
        expect(outcome.paths).toEqual(["successorCode"]);
        expect(JSON.stringify(outcome.answer.body)).toMatch(detail);
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
      const said = (outcome: Outcome) => fieldErrorsOf(outcome)[0]?.message;
      expect(said(missing)).toEqual(expect.any(String));
      expect(said(missing)?.replace("zz-none-here", "X")).toBe(said(privateOne)?.replace(hidden.providerCode, "X"));
      expect(await stored(p.providerCode)).toMatchObject({ lifecycle: "ACTIVE", version: 1 });
    });
  });

  describe("who may", () => {
    test("anonymous UNAUTHENTICATED; another agent FORBIDDEN (or NOT_FOUND where it cannot see); a reviewer may", async () => {
      const p = await intake();
      const other = await intake();
      const hidden = await intake({ visibility: "PRIVATE" });
      const anonymous = await lifecycle(p.providerCode, { state: "RETIRED" });
      expect(anonymous.code).toBe("UNAUTHENTICATED");
      expect(anonymous.status).toBe(401);
      expect(anonymous.answer.headers.get("www-authenticate")).toMatch(/^Bearer/);
      const forbidden = await lifecycle(p.providerCode, { state: "RETIRED" }, { token: other.accessToken });
      expect(forbidden.code).toBe("FORBIDDEN");
      expect(forbidden.status).toBe(403);
      const unseen = await lifecycle(hidden.providerCode, { state: "RETIRED" }, { token: other.accessToken });
      expect(unseen.code).toBe("NOT_FOUND");
      expect(unseen.status).toBe(404);
      const nobody = await lifecycle(uniqueCode("nobody"), { state: "RETIRED" }, { token: await reviewerToken() });
      expect(nobody.code).toBe("NOT_FOUND");
      expect(await stored(p.providerCode)).toMatchObject({ lifecycle: "ACTIVE", version: 1 });
      const byReviewer = await lifecycle(
        p.providerCode,
        { state: "DEPRECATED", message: "policy" },
        { token: await reviewerToken("lc-rv") },
      );
      expect(byReviewer.code).toBeUndefined();
      expect(byReviewer.status).toBe(200);
      const version = await db.providerVersion.findFirstOrThrow({
        where: { provider: { providerCode: p.providerCode }, version: 2 },
      });
      expect(version.actor).toBe("reviewer:lc-rv");
    });

    test("error codes: UNAUTHENTICATED, FORBIDDEN, NOT_FOUND, BAD_USER_INPUT with the field, CONFLICT; nothing changed", async () => {
      const p = await intake();
      const other = await intake();
      expect((await lifecycle(p.providerCode, { state: "RETIRED" })).code).toBe("UNAUTHENTICATED");
      expect((await lifecycle(p.providerCode, { state: "RETIRED" }, { token: other.accessToken })).code).toBe(
        "FORBIDDEN",
      );
      expect((await lifecycle(uniqueCode("none"), { state: "RETIRED" }, { token: await reviewerToken() })).code).toBe(
        "NOT_FOUND",
      );
      const noMessage = await lifecycle(p.providerCode, { state: "DEPRECATED" }, { token: p.accessToken });
      expect(noMessage.code).toBe("BAD_USER_INPUT");
      expect(fieldErrorsOf(noMessage)).toEqual([{ path: "message", message: expect.any(String) }]);
      expect((await lifecycle(p.providerCode, { state: "SUNSET" }, { token: p.accessToken })).code).toBe(
        "BAD_USER_INPUT",
      );
      expect((await lifecycle(p.providerCode, { state: "ACTIVE" }, { token: p.accessToken })).code).toBe("CONFLICT");
      expect(await stored(p.providerCode)).toMatchObject({ lifecycle: "ACTIVE", version: 1 });
    });
  });

  describe("lists hide RETIRED unless asked", () => {
    test("list and search, anonymous and reviewer; includeRetired: true shows them; a bad value is refused", async () => {
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
      const shown = [active.providerCode, deprecated.providerCode].sort();
      const all = [...shown, retired.providerCode].sort();
      const rv = await reviewerToken();
      for (const query of [{ labels: [label] }, { search: word }]) {
        expect(codesOf(await list(query))).toEqual(shown);
        expect(codesOf(await list(query, rv))).toEqual(shown);
        expect(codesOf(await list({ ...query, includeRetired: false }))).toEqual(shown);
        expect(codesOf(await list({ ...query, includeRetired: true }))).toEqual(all);
      }
      const listed = await list({ labels: [label], includeRetired: true });
      const item = listed.data.items.find((i: { providerCode: string }) => i.providerCode === retired.providerCode);
      expect(item).toMatchObject({ lifecycle: "RETIRED", lifecycleMessage: "gone", successorCode: null });
      // The retired detail is still there, saying so.
      expect((await profile(retired.providerCode)).data.lifecycle).toBe("RETIRED");

      const bad = await list({ includeRetired: "yes" });
      expect(bad.code).toBe("BAD_USER_INPUT");
      expect(bad.paths).toEqual(["includeRetired"]);
    });

    test("the search path hides RETIRED unless asked and filters by updatedSince", async () => {
      const word = `lcq${uniqueCode("w").replace(/-/g, "")}`;
      const first = await intake({ description: word });
      const second = await intake({ description: word });
      for (const p of [first, second]) await approve(p.providerCode);
      await lifecycle(first.providerCode, { state: "RETIRED" }, { token: first.accessToken });

      expect(codesOf(await list({ search: word }))).toEqual([second.providerCode]);
      expect(codesOf(await list({ search: word, includeRetired: true }))).toEqual(
        [first.providerCode, second.providerCode].sort(),
      );
      // The retirement is the newest write: updatedSince its time leaves only it.
      const retiredAt = (await stored(first.providerCode)).updatedAt.toISOString();
      expect(codesOf(await list({ search: word, includeRetired: true, updatedSince: retiredAt }))).toEqual([
        first.providerCode,
      ]);
      expect(codesOf(await list({ search: word, updatedSince: retiredAt }))).toEqual([]);
      expect(
        codesOf(await list({ search: word, includeRetired: true, updatedSince: "2000-01-01T00:00:00Z" })),
      ).toHaveLength(2);

      const bad = await list({ updatedSince: "not a time" });
      expect(bad.code).toBe("BAD_USER_INPUT");
      // A DateTime that is not one is refused by the variable's coercion: named, on either door.
      expect(bad.paths).toEqual(["updatedSince"]);
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
        list({ labels: [label], updatedSince: since, limit: 2, ...(cursor ? { cursor } : {}) });
      const first = await feed();
      expect(first.code).toBeUndefined();
      expect(first.data.items.map((i: { providerCode: string }) => i.providerCode)).toEqual(
        rows.slice(1, 3).map((r) => r.providerCode),
      );
      // A write while paging: the provider moves to the end, seen on a later page, nothing skipped.
      const moved = rows[1]?.providerCode as string;
      const owner = made.find((p) => p.providerCode === moved);
      const write = await door.run(
        "Mutation.updateProvider",
        { providerCode: moved, summary: "moved on" },
        { token: owner?.accessToken },
      );
      expect(write.code).toBeUndefined();
      const seen: string[] = [];
      let cursor: string | null = first.data.nextCursor;
      while (cursor) {
        const next = await feed(cursor);
        expect(next.code).toBeUndefined();
        seen.push(...next.data.items.map((i: { providerCode: string }) => i.providerCode));
        cursor = next.data.nextCursor;
      }
      expect(seen).toEqual([rows[3]?.providerCode, moved]);
      // Nothing older than `since` came.
      expect(seen).not.toContain(rows[0]?.providerCode);
      // Far in the future: nothing.
      const none = await list({ labels: [label], updatedSince: "2999-01-01T00:00:00Z" });
      expect(none.data).toEqual({ items: [], nextCursor: null });
    });

    test("the change feed pages oldest change first, one at a time", async () => {
      const label = uniqueCode("gfeed");
      const made: string[] = [];
      for (let i = 0; i < 3; i++) {
        const p = await intake({ labels: [label] });
        await approve(p.providerCode);
        made.push(p.providerCode);
      }
      const seen: string[] = [];
      let cursor: string | null = null;
      do {
        const page: Outcome = await list({
          labels: [label],
          updatedSince: "2000-01-01T00:00:00Z",
          limit: 1,
          ...(cursor ? { cursor } : {}),
        });
        expect(page.code).toBeUndefined();
        seen.push(...page.data.items.map((i: { providerCode: string }) => i.providerCode));
        cursor = page.data.nextCursor;
      } while (cursor);
      expect(seen).toEqual(made);
    });

    test.each(["yesterday", "2026-13-01T00:00:00Z", "2026-11-21T10:00:00", "1700000000"])(
      "an invalid updatedSince (%s) is BAD_USER_INPUT naming it, on the list and on the review queue",
      async (updatedSince) => {
        const listed = await list({ updatedSince });
        expect(listed.code).toBe("BAD_USER_INPUT");
        expect(listed.status).toBe(400);
        expect(listed.paths).toEqual(["updatedSince"]);
        const queue = await door.run("Query.reviewQueue", { updatedSince }, { token: await reviewerToken() });
        expect(queue.code).toBe("BAD_USER_INPUT");
        expect(queue.paths).toEqual(["updatedSince"]);
      },
    );

    test("a cursor of the newest-first list is refused by the change feed", async () => {
      const label = uniqueCode("cur");
      for (let i = 0; i < 2; i++) await approve((await intake({ labels: [label] })).providerCode);
      const page = await list({ labels: [label], limit: 1 });
      expect(page.data.nextCursor).toEqual(expect.any(String));
      const refused = await list({
        labels: [label],
        limit: 1,
        updatedSince: "2000-01-01T00:00:00Z",
        cursor: page.data.nextCursor,
      });
      expect(refused.code).toBe("BAD_USER_INPUT");
      expect(refused.paths).toEqual(["cursor"]);
    });

    test("the review queue takes updatedSince as a filter", async () => {
      const rv = await reviewerToken();
      const p = await intake();
      const review = await db.review.findFirstOrThrow({ where: { provider: { providerCode: p.providerCode } } });
      const at = review.updatedAt.toISOString();
      const later = new Date(review.updatedAt.getTime() + 1).toISOString();
      const queue = (updatedSince: string) =>
        door.run("Query.reviewQueue", { providerCode: p.providerCode, updatedSince }, { token: rv });
      const listed = await queue(at);
      expect(listed.code).toBeUndefined();
      expect(listed.data.items.map((i: { reviewCode: string }) => i.reviewCode)).toEqual([p.reviewCode]);
      const after = await queue(later);
      expect(after.data.items).toEqual([]);
    });
  });

  describe("the response cache (src/http/cache) learns of lifecycle changes", () => {
    test("a cached anonymous list and profile are not served stale after a retirement", async () => {
      const cached = createApp({ ...config, responseCache: true }, db);
      try {
        const label = uniqueCode("lcc");
        const p = await intake({ labels: [label] });
        await approve(p.providerCode);
        const listed = () => door.run("Query.providers", { labels: [label] }, { app: cached });
        const detail = () => door.run("Query.provider", { providerCode: p.providerCode }, { app: cached });
        await listed();
        await detail();
        const hit = await listed();
        expect(hit.answer.headers.get("x-cache")).toBe("HIT");
        expect(hit.data.items.map((i: { providerCode: string }) => i.providerCode)).toEqual([p.providerCode]);
        expect((await detail()).answer.headers.get("x-cache")).toBe("HIT");

        const retired = await lifecycle(p.providerCode, { state: "RETIRED" }, { app: cached, token: p.accessToken });
        expect(retired.code).toBeUndefined();
        const after = await listed();
        expect(after.answer.headers.get("x-cache")).toBeNull();
        expect(after.data.items).toEqual([]);
        expect((await detail()).data.lifecycle).toBe("RETIRED");
      } finally {
        await cached.dispose();
      }
    });
  });
});
