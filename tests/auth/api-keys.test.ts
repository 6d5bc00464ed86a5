/**
 * API keys through both doors: an admin makes one (its secret answered once), lists it with when it
 * was last used, and revokes it; a key reads, and does nothing else; a revoked, expired, tampered or
 * unknown key is a 401; only admins manage keys, and only admins read the log's record of it.
 */
import { describe, expect, test } from "@jest/globals";
import { call, db, expectProblem, gql, intake, reviewerToken } from "../helpers.ts";

const admin = await reviewerToken("admin-1", ["admin"]);
const reviewer = await reviewerToken("reviewer-1", ["reviewer"]);

async function makeKey(name: string, extra: Record<string, unknown> = {}) {
  const made = await call("POST", "/api/v1/api-keys", { token: admin, body: { name, ...extra } });
  expect(made.status).toBe(201);
  return made;
}

/** The events an audience reads of one key (by its id, which the note names). */
async function keyEvents(keyId: string, token?: string) {
  const answer = await call("GET", "/api/v1/events?after=0&limit=500&kinds=API_KEY_CREATED,API_KEY_REVOKED", {
    ...(token ? { token } : {}),
  });
  expect(answer.status).toBe(200);
  return (answer.body.items as { kind: string; note: string }[]).filter((e) => e.note.includes(keyId));
}

describe("making a key", () => {
  test("the secret is answered once, not kept, and the key reads", async () => {
    const made = await makeKey("CI reader");
    expect(made.headers.get("cache-control")).toBe("no-store");
    const { secret, apiKey } = made.body;
    expect(secret).toMatch(/^ark_[0-9A-Za-z]{38}$/);
    expect(apiKey).toMatchObject({ name: "CI reader", createdBy: "reviewer:admin-1", active: true, lastUsedAt: null });
    expect(secret.startsWith(apiKey.prefix)).toBe(true);
    const row = await db.apiKey.findUniqueOrThrow({ where: { keyId: apiKey.keyId } });
    expect(JSON.stringify(row)).not.toContain(secret.slice(4));

    const read = await call("GET", "/api/v1/providers", { token: secret });
    expect(read.status).toBe(200);
    const listed = await call("GET", "/api/v1/api-keys?limit=100", { token: admin });
    expect(listed.status).toBe(200);
    const mine = listed.body.items.find((k: { keyId: string }) => k.keyId === apiKey.keyId);
    expect(mine.lastUsedAt).not.toBeNull();
    expect(JSON.stringify(listed.body)).not.toContain(secret);
  });

  test("the same operations over GraphQL", async () => {
    const made = await gql(
      "mutation ($name: String!) { createApiKey(name: $name) { secret apiKey { keyId name active } } }",
      { name: "Dashboard" },
      { token: admin },
    );
    expect(made.body.errors).toBeUndefined();
    const { secret, apiKey } = made.body.data.createApiKey;
    const listed = await gql("{ apiKeys(limit: 100) { items { keyId name } } }", {}, { token: admin });
    expect(listed.body.data.apiKeys.items).toContainEqual({ keyId: apiKey.keyId, name: "Dashboard" });
    const revoked = await gql(
      "mutation ($id: String!) { revokeApiKey(keyId: $id) { active revokedBy } }",
      { id: apiKey.keyId },
      { token: admin },
    );
    expect(revoked.body.data.revokeApiKey).toEqual({ active: false, revokedBy: "reviewer:admin-1" });
    expect((await gql("{ providers { items { providerCode } } }", {}, { token: secret })).status).toBe(401);
  });

  test.each([
    ["an empty name", { name: "  " }, "/name"],
    ["a name too long", { name: "n".repeat(81) }, "/name"],
    ["an expiry in the past", { name: "Old", expiresAt: "2020-01-01T00:00:00Z" }, "/expiresAt"],
  ])("%s is a 400 naming the field, and makes nothing", async (_what, body, path) => {
    const before = await db.apiKey.count();
    const answer = await call("POST", "/api/v1/api-keys", { token: admin, body });
    expectProblem(answer, 400, "BAD_USER_INPUT");
    expect(answer.body.errors.map((e: { path: string }) => e.path)).toEqual([path]);
    expect(await db.apiKey.count()).toBe(before);
  });

  test("only an admin manages keys: anonymous 401, a reviewer, an agent and a key 403", async () => {
    const { secret, apiKey } = (await makeKey("Someone's")).body;
    const agent = await intake();
    const before = await db.apiKey.count();
    expectProblem(await call("POST", "/api/v1/api-keys", { body: { name: "x" } }), 401, "UNAUTHENTICATED");
    for (const token of [reviewer, agent.accessToken, secret]) {
      expectProblem(await call("POST", "/api/v1/api-keys", { token, body: { name: "x" } }), 403, "FORBIDDEN");
      expectProblem(await call("GET", "/api/v1/api-keys", { token }), 403, "FORBIDDEN");
      expectProblem(await call("DELETE", `/api/v1/api-keys/${apiKey.keyId}`, { token }), 403, "FORBIDDEN");
    }
    expect(await db.apiKey.count()).toBe(before);
    expect((await db.apiKey.findUniqueOrThrow({ where: { keyId: apiKey.keyId } })).revokedAt).toBeNull();
  });
});

describe("what a key may do", () => {
  test("it reads what anyone may read, and no more: a private agent is a 404", async () => {
    const { secret } = (await makeKey("Reader")).body;
    const hidden = await intake({ visibility: "PRIVATE" });
    expectProblem(await call("GET", `/api/v1/providers/${hidden.providerCode}`, { token: secret }), 404, "NOT_FOUND");
  });

  test("it writes nothing an agent owns: a PATCH is a 403 and changes nothing", async () => {
    const { secret } = (await makeKey("Writer?")).body;
    const agent = await intake();
    const answer = await call("PATCH", `/api/v1/providers/${agent.providerCode}`, {
      token: secret,
      body: { summary: "Changed by a key" },
    });
    expectProblem(answer, 403, "FORBIDDEN");
    const row = await db.provider.findUniqueOrThrow({ where: { providerCode: agent.providerCode } });
    expect(row.summary).not.toBe("Changed by a key");
  });
});

describe("a key that no longer works is a 401", () => {
  test("revoked: refused at the next request; revoking twice records it once, even at once", async () => {
    const { secret, apiKey } = (await makeKey("Revoked")).body;
    expect((await call("GET", "/api/v1/providers", { token: secret })).status).toBe(200);
    const answers = await Promise.all(
      [1, 2].map(() => call("DELETE", `/api/v1/api-keys/${apiKey.keyId}`, { token: admin })),
    );
    expect(answers.map((a) => [a.status, a.body.active])).toEqual([
      [200, false],
      [200, false],
    ]);
    expectProblem(await call("GET", "/api/v1/providers", { token: secret }), 401, "UNAUTHENTICATED");
    expect((await keyEvents(apiKey.keyId, admin)).map((e) => e.kind)).toEqual(["API_KEY_CREATED", "API_KEY_REVOKED"]);
  });

  test("expired", async () => {
    const { secret, apiKey } = (await makeKey("Expiring", { expiresAt: "2099-01-01T00:00:00Z" })).body;
    expect((await call("GET", "/api/v1/providers", { token: secret })).status).toBe(200);
    // Its expiry moved to the past, as time would.
    await db.apiKey.update({ where: { keyId: apiKey.keyId }, data: { expiresAt: new Date(Date.now() - 1000) } });
    expectProblem(await call("GET", "/api/v1/providers", { token: secret }), 401, "UNAUTHENTICATED");
  });

  test("tampered (one character changed) and unknown (a well-formed key never made)", async () => {
    const { secret } = (await makeKey("Tampered")).body;
    const flipped = `${secret.slice(0, 10)}${secret[10] === "a" ? "b" : "a"}${secret.slice(11)}`;
    expectProblem(await call("GET", "/api/v1/providers", { token: flipped }), 401, "UNAUTHENTICATED");
    await db.apiKey.deleteMany({ where: { hash: { not: "" }, name: "Tampered" } });
    expectProblem(await call("GET", "/api/v1/providers", { token: secret }), 401, "UNAUTHENTICATED");
  });
});

test("the log records an admin's actions on keys, for admins only", async () => {
  const { apiKey } = (await makeKey("Logged")).body;
  expect(await call("DELETE", `/api/v1/api-keys/${apiKey.keyId}`, { token: admin })).toMatchObject({ status: 200 });
  const seen = await keyEvents(apiKey.keyId, admin);
  expect(seen.map((e) => e.kind)).toEqual(["API_KEY_CREATED", "API_KEY_REVOKED"]);
  expect(seen[0]?.note).toContain("by reviewer:admin-1");
  expect(await keyEvents(apiKey.keyId, reviewer)).toEqual([]);
  expect(await keyEvents(apiKey.keyId)).toEqual([]);
});
