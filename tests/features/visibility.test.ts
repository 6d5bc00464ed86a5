/** Who sees what (API.md §2) through both doors: lists, details, private fields, versions and reviewer notes. */
import { describe, expect, test } from "@jest/globals";
import { uniqueCode } from "../builders.ts";
import { type Door, doors, type Outcome } from "../doors.ts";
import { approve, db, intake, reviewerToken } from "../helpers.ts";

const codes = (outcome: Outcome): string[] =>
  (outcome.data.items as { providerCode: string }[]).map((i) => i.providerCode);

const as = (token?: string) => (token ? { token } : {});

async function setStage(providerCode: string, reviewStage: string) {
  await db.provider.update({ where: { providerCode }, data: { reviewStage } });
}

/**
 * What a refusal says, with the provider code it names blanked: the problem document on REST, the
 * error's message and extensions on GraphQL (its `locations` say where the field is in the document).
 */
function said(door: Door, outcome: Outcome, providerCode: string) {
  const body = outcome.answer.body;
  const words =
    door.name === "REST"
      ? { keys: Object.keys(body).sort(), title: body.title, detail: body.detail }
      : { message: body.errors?.[0]?.message, extensions: body.errors?.[0]?.extensions };
  const text = JSON.stringify({ code: outcome.code, status: outcome.status, paths: outcome.paths, words });
  return JSON.parse(text.replaceAll(providerCode, "<code>"));
}

describe.each(doors)("$name", (door) => {
  async function list(label: string, token?: string, args: Record<string, unknown> = {}) {
    const outcome = await door.run("Query.providers", { labels: [label], limit: 100, ...args }, as(token));
    expect([outcome.code, outcome.status]).toEqual([undefined, 200]);
    return codes(outcome);
  }

  /** Reads a provider's profile; answers its data, failing unless it was read. */
  async function read(providerCode: string, token?: string) {
    const outcome = await door.run("Query.provider", { providerCode }, as(token));
    expect([outcome.code, outcome.status]).toEqual([undefined, 200]);
    expect(outcome.data.providerCode).toBe(providerCode);
    return outcome;
  }

  /** The outcome must be NOT_FOUND with no data. */
  function expectNotFound(outcome: Outcome) {
    expect([outcome.code, outcome.status, outcome.data]).toEqual(["NOT_FOUND", 404, null]);
  }

  describe("lists", () => {
    test("anonymous callers list only PUBLIC and APPROVED providers; reviewers list everything", async () => {
      const label = uniqueCode("vis");
      const listed = await intake({ labels: [label] });
      await approve(listed.providerCode);
      const submitted = await intake({ labels: [label] });
      const unlisted = await intake({ labels: [label], visibility: "UNLISTED" });
      await approve(unlisted.providerCode);
      const priv = await intake({ labels: [label], visibility: "PRIVATE" });
      await approve(priv.providerCode);
      const suspended = await intake({ labels: [label] });
      await setStage(suspended.providerCode, "SUSPENDED");
      const rejected = await intake({ labels: [label] });
      await setStage(rejected.providerCode, "REJECTED");

      expect(await list(label)).toEqual([listed.providerCode]);
      // Filters never widen what a caller may see.
      expect(await list(label, undefined, { visibility: "PRIVATE" })).toEqual([]);
      expect(await list(label, undefined, { reviewStage: "SUBMITTED" })).toEqual([]);

      expect((await list(label, await reviewerToken())).sort()).toEqual(
        [listed, submitted, unlisted, priv, suspended, rejected].map((p) => p.providerCode).sort(),
      );
    });

    test("an agent lists what anonymous callers see, plus itself", async () => {
      const label = uniqueCode("own");
      const listed = await intake({ labels: [label] });
      await approve(listed.providerCode);
      const mine = await intake({ labels: [label], visibility: "PRIVATE" });
      const otherPrivate = await intake({ labels: [label], visibility: "PRIVATE" });
      const otherSubmitted = await intake({ labels: [label] });

      const seen = await list(label, mine.accessToken);
      expect([...seen].sort()).toEqual([listed.providerCode, mine.providerCode].sort());
      expect(seen).not.toContain(otherPrivate.providerCode);
      expect(seen).not.toContain(otherSubmitted.providerCode);
    });
  });

  describe("details", () => {
    test.each([true, false])(
      "a PRIVATE provider (approved: %p) is NOT_FOUND for anonymous callers and other agents, read by its owner and reviewers",
      async (approved) => {
        const priv = await intake({ visibility: "PRIVATE" });
        if (approved) await approve(priv.providerCode);
        const other = await intake();

        const anonymous = await door.run("Query.provider", { providerCode: priv.providerCode });
        expectNotFound(anonymous);
        const nobody = uniqueCode("nobody");
        const unknown = await door.run("Query.provider", { providerCode: nobody });
        expectNotFound(unknown);
        // What may not be seen looks exactly like what does not exist.
        expect(said(door, anonymous, priv.providerCode)).toEqual(said(door, unknown, nobody));

        expectNotFound(await door.run("Query.provider", { providerCode: priv.providerCode }, as(other.accessToken)));
        for (const token of [priv.accessToken, await reviewerToken()]) {
          const profile = (await read(priv.providerCode, token)).data;
          expect(profile.contactEmail).toBe("ops@example.com");
          expect(profile.tokens).toHaveLength(1);
        }
      },
    );

    test("an UNLISTED provider is readable by anyone, without its private fields, but not listed", async () => {
      const label = uniqueCode("unl");
      const unlisted = await intake({ labels: [label], visibility: "UNLISTED" });
      await approve(unlisted.providerCode);
      const pending = await intake({ labels: [label], visibility: "UNLISTED" });
      for (const p of [unlisted, pending]) {
        const profile = (await read(p.providerCode)).data;
        expect(profile).toMatchObject({ visibility: "UNLISTED", contactEmail: null, tokens: null });
      }
      expect(await list(label)).toEqual([]);
    });

    test("a SUBMITTED public provider is readable but not listed", async () => {
      const label = uniqueCode("sub");
      const submitted = await intake({ labels: [label] });
      expect((await read(submitted.providerCode)).data.reviewStage).toBe("SUBMITTED");
      expect(await list(label)).toEqual([]);
    });

    test.each(["REJECTED", "SUSPENDED"])(
      "a %s provider is NOT_FOUND for anonymous callers, not for its owner or reviewers",
      async (stage) => {
        const created = await intake();
        await setStage(created.providerCode, stage);
        expectNotFound(await door.run("Query.provider", { providerCode: created.providerCode }));
        expect((await read(created.providerCode, created.accessToken)).data.reviewStage).toBe(stage);
        await read(created.providerCode, await reviewerToken());
        expectNotFound(await door.run("Query.providerVersions", { providerCode: created.providerCode }));
      },
    );
  });

  describe("private fields", () => {
    test("tokens and contactEmail are null for anonymous callers and other agents, present for the owner and reviewers", async () => {
      const created = await intake();
      await approve(created.providerCode);
      const other = await intake();

      for (const token of [undefined, other.accessToken]) {
        const profile = (await read(created.providerCode, token)).data;
        expect(profile.tokens).toBeNull();
        expect(profile.contactEmail).toBeNull();
      }
      for (const token of [created.accessToken, await reviewerToken()]) {
        const outcome = await read(created.providerCode, token);
        expect(outcome.data.contactEmail).toBe("ops@example.com");
        expect(outcome.data.tokens).toEqual([
          expect.objectContaining({
            tokenId: expect.stringMatching(/^tok_/),
            prefix: created.accessToken.slice(0, 10),
          }),
        ]);
        expect(outcome.answer.text).not.toContain(created.accessToken);
      }
    });
  });

  describe("versions", () => {
    test.each([true, false])(
      "versions of a PRIVATE provider (approved: %p) follow the profile's visibility",
      async (approved) => {
        const priv = await intake({ visibility: "PRIVATE" });
        if (approved) await approve(priv.providerCode);
        const other = await intake();
        const reads = [
          ["Query.providerVersions", { providerCode: priv.providerCode }],
          ["Query.providerVersion", { providerCode: priv.providerCode, version: 1 }],
        ] as const;
        for (const [field, args] of reads) {
          expectNotFound(await door.run(field, args));
          expectNotFound(await door.run(field, args, as(other.accessToken)));
          for (const token of [priv.accessToken, await reviewerToken()]) {
            const outcome = await door.run(field, args, { token });
            expect([field, outcome.code, outcome.status]).toEqual([field, undefined, 200]);
          }
        }
        const versions = await door.run("Query.providerVersions", reads[0][1], { token: await reviewerToken() });
        expect(versions.data.items.map((v: { version: number }) => v.version)).toEqual([1]);
      },
    );

    test.each([true, false])(
      "a snapshot's contactEmail (approved: %p) is hidden from anonymous callers",
      async (approved) => {
        const created = await intake();
        if (approved) await approve(created.providerCode);
        const args = { providerCode: created.providerCode, version: 1 };
        const anonymous = await door.run("Query.providerVersion", args);
        expect([anonymous.code, anonymous.status]).toEqual([undefined, 200]);
        expect(anonymous.data.version).toBe(1);
        expect(anonymous.data.snapshot.contactEmail).toBeNull();
        expect(anonymous.data.snapshot.name).toBe("Route Planner");
        expect(anonymous.answer.text).not.toContain("ops@example.com");
        for (const token of [created.accessToken, await reviewerToken()]) {
          const outcome = await door.run("Query.providerVersion", args, { token });
          expect(outcome.data.snapshot.contactEmail).toBe("ops@example.com");
        }
      },
    );

    test("the profile's reviewer notes are hidden from the public", async () => {
      const created = await intake();
      await approve(created.providerCode);
      const row = await db.provider.findUniqueOrThrow({ where: { providerCode: created.providerCode } });
      await db.reviewEvent.create({
        data: { providerId: row.id, kind: "COMMENTED", actor: "reviewer:alice", note: "Please add a privacy URL" },
      });
      const commented = (outcome: Outcome) =>
        outcome.data.reviewTimeline.find((e: { kind: string }) => e.kind === "COMMENTED");
      const anonymous = await read(created.providerCode);
      expect(commented(anonymous)).toMatchObject({ actor: "reviewer", note: null });
      expect(anonymous.answer.text).not.toContain("alice");
      const owner = await read(created.providerCode, created.accessToken);
      expect(commented(owner)).toMatchObject({ actor: "reviewer:alice", note: "Please add a privacy URL" });
    });
  });
});
