/** Who sees what (API.md §2) through /api/v1: lists, details, private fields and versions. */
import { describe, expect, test } from "@jest/globals";
import { approve, call, db, expectProblem, intake, reviewerToken, uniqueCode } from "../helpers.ts";

const codes = (answer: { body: { items: { providerCode: string }[] } }) => answer.body.items.map((i) => i.providerCode);

async function setStage(providerCode: string, reviewStage: string) {
  await db.provider.update({ where: { providerCode }, data: { reviewStage } });
}

describe("lists", () => {
  test("anonymous callers list only PUBLIC and APPROVED providers", async () => {
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

    const anonymous = await call("GET", `/api/v1/providers?labels=${label}`);
    expect(anonymous.status).toBe(200);
    expect(codes(anonymous)).toEqual([listed.providerCode]);

    // Filters never widen what a caller may see.
    const asked = await call("GET", `/api/v1/providers?labels=${label}&visibility=PRIVATE`);
    expect(codes(asked)).toEqual([]);
    const stage = await call("GET", `/api/v1/providers?labels=${label}&reviewStage=SUBMITTED`);
    expect(codes(stage)).toEqual([]);

    const reviewer = await call("GET", `/api/v1/providers?labels=${label}`, { token: await reviewerToken() });
    expect(codes(reviewer).sort()).toEqual(
      [listed, submitted, unlisted, priv, suspended].map((p) => p.providerCode).sort(),
    );
  });

  test("an agent lists what anonymous callers see, plus itself", async () => {
    const label = uniqueCode("own");
    const listed = await intake({ labels: [label] });
    await approve(listed.providerCode);
    const mine = await intake({ labels: [label], visibility: "PRIVATE" });
    const otherPrivate = await intake({ labels: [label], visibility: "PRIVATE" });
    const otherSubmitted = await intake({ labels: [label] });

    const answer = await call("GET", `/api/v1/providers?labels=${label}`, { token: mine.accessToken });
    expect(answer.status).toBe(200);
    expect(codes(answer).sort()).toEqual([listed.providerCode, mine.providerCode].sort());
    expect(codes(answer)).not.toContain(otherPrivate.providerCode);
    expect(codes(answer)).not.toContain(otherSubmitted.providerCode);
  });
});

describe("details", () => {
  test("a PRIVATE provider is 404 for anonymous callers and other agents, 200 for its owner and reviewers", async () => {
    const priv = await intake({ visibility: "PRIVATE" });
    await approve(priv.providerCode);
    const other = await intake();
    const path = `/api/v1/providers/${priv.providerCode}`;

    const anonymous = await call("GET", path);
    expectProblem(anonymous, 404, "NOT_FOUND");
    const unknown = await call("GET", `/api/v1/providers/${uniqueCode("nobody")}`);
    // What may not be seen looks exactly like what does not exist.
    expect(Object.keys(anonymous.body).sort()).toEqual(Object.keys(unknown.body).sort());
    expect(anonymous.body.title).toBe(unknown.body.title);

    expectProblem(await call("GET", path, { token: other.accessToken }), 404, "NOT_FOUND");
    const owner = await call("GET", path, { token: priv.accessToken });
    expect(owner.status).toBe(200);
    expect(owner.body.providerCode).toBe(priv.providerCode);
    const reviewer = await call("GET", path, { token: await reviewerToken() });
    expect(reviewer.status).toBe(200);
  });

  test("an UNLISTED provider is readable by anyone but not listed", async () => {
    const label = uniqueCode("unl");
    const unlisted = await intake({ labels: [label], visibility: "UNLISTED" });
    await approve(unlisted.providerCode);
    const read = await call("GET", `/api/v1/providers/${unlisted.providerCode}`);
    expect(read.status).toBe(200);
    expect(read.body.visibility).toBe("UNLISTED");
    expect(codes(await call("GET", `/api/v1/providers?labels=${label}`))).toEqual([]);
  });

  test("a SUBMITTED public provider is readable but not listed", async () => {
    const label = uniqueCode("sub");
    const submitted = await intake({ labels: [label] });
    expect((await call("GET", `/api/v1/providers/${submitted.providerCode}`)).status).toBe(200);
    expect(codes(await call("GET", `/api/v1/providers?labels=${label}`))).toEqual([]);
  });

  test.each(["REJECTED", "SUSPENDED"])(
    "a %s provider is 404 for anonymous callers, not for its owner or reviewers",
    async (stage) => {
      const created = await intake();
      await setStage(created.providerCode, stage);
      const path = `/api/v1/providers/${created.providerCode}`;
      expectProblem(await call("GET", path), 404, "NOT_FOUND");
      const owner = await call("GET", path, { token: created.accessToken });
      expect(owner.status).toBe(200);
      expect(owner.body.reviewStage).toBe(stage);
      expect((await call("GET", path, { token: await reviewerToken() })).status).toBe(200);
      expectProblem(await call("GET", `${path}/versions`), 404, "NOT_FOUND");
    },
  );
});

describe("private fields", () => {
  test("tokens and contactEmail are null for anonymous callers and other agents, present for the owner and reviewers", async () => {
    const created = await intake();
    await approve(created.providerCode);
    const other = await intake();
    const path = `/api/v1/providers/${created.providerCode}`;

    for (const token of [undefined, other.accessToken]) {
      const answer = await call("GET", path, token ? { token } : {});
      expect(answer.status).toBe(200);
      expect(answer.body.tokens).toBeNull();
      expect(answer.body.contactEmail).toBeNull();
    }
    for (const token of [created.accessToken, await reviewerToken()]) {
      const answer = await call("GET", path, { token });
      expect(answer.body.contactEmail).toBe("ops@example.com");
      expect(answer.body.tokens).toEqual([
        expect.objectContaining({ tokenId: expect.stringMatching(/^tok_/), prefix: created.accessToken.slice(0, 10) }),
      ]);
      expect(answer.text).not.toContain(created.accessToken);
    }
  });
});

describe("versions", () => {
  test("versions of a PRIVATE provider follow the profile's visibility", async () => {
    const priv = await intake({ visibility: "PRIVATE" });
    await approve(priv.providerCode);
    const other = await intake();
    for (const path of [
      `/api/v1/providers/${priv.providerCode}/versions`,
      `/api/v1/providers/${priv.providerCode}/versions/1`,
    ]) {
      expectProblem(await call("GET", path), 404, "NOT_FOUND");
      expectProblem(await call("GET", path, { token: other.accessToken }), 404, "NOT_FOUND");
      expect((await call("GET", path, { token: priv.accessToken })).status).toBe(200);
      expect((await call("GET", path, { token: await reviewerToken() })).status).toBe(200);
    }
  });

  test("a snapshot's contactEmail is hidden from anonymous callers", async () => {
    const created = await intake();
    await approve(created.providerCode);
    const path = `/api/v1/providers/${created.providerCode}/versions/1`;
    const anonymous = await call("GET", path);
    expect(anonymous.status).toBe(200);
    expect(anonymous.body.snapshot.contactEmail).toBeNull();
    expect(anonymous.text).not.toContain("ops@example.com");
    expect(anonymous.body.snapshot.name).toBe("Route Planner");
    const owner = await call("GET", path, { token: created.accessToken });
    expect(owner.body.snapshot.contactEmail).toBe("ops@example.com");
    const reviewer = await call("GET", path, { token: await reviewerToken() });
    expect(reviewer.body.snapshot.contactEmail).toBe("ops@example.com");
  });

  test("the profile's reviewer notes are hidden from the public", async () => {
    const created = await intake();
    await approve(created.providerCode);
    const row = await db.provider.findUniqueOrThrow({ where: { providerCode: created.providerCode } });
    await db.reviewEvent.create({
      data: { providerId: row.id, kind: "COMMENTED", actor: "reviewer:alice", note: "Please add a privacy URL" },
    });
    const path = `/api/v1/providers/${created.providerCode}`;
    const anonymous = await call("GET", path);
    const comment = anonymous.body.reviewTimeline.find((e: { kind: string }) => e.kind === "COMMENTED");
    expect(comment).toMatchObject({ actor: "reviewer", note: null });
    expect(anonymous.text).not.toContain("alice");
    const owner = await call("GET", path, { token: created.accessToken });
    expect(owner.body.reviewTimeline.find((e: { kind: string }) => e.kind === "COMMENTED")).toMatchObject({
      actor: "reviewer:alice",
      note: "Please add a privacy URL",
    });
  });
});
