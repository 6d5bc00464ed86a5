/**
 * Global object identification: every type with an identity has a global `id` and implements
 * `Node`, and `Query.node(id)` finds it again — for whoever its own look-up lets see it, and no one
 * else (null with the look-up's error, never a leak).
 */
import { describe, expect, test } from "@jest/globals";
import { approve, gql, intake, reviewerToken } from "../helpers.ts";

const NODE = `query($id: ID!) {
  node(id: $id) {
    __typename
    id
    ... on Provider { providerCode name }
    ... on ProviderSummary { providerCode name }
    ... on ProviderVersion { providerCode version snapshot { name } }
    ... on ProviderVersionSummary { providerCode version }
    ... on Review { reviewCode providerCode providerName }
    ... on AccessToken { tokenId prefix }
  }
}`;

const node = (id: string, token?: string) => gql(NODE, { id }, token ? { token } : {});

const globalId = (type: string, key: string) => Buffer.from(`${type}:${key}`).toString("base64");

/** An approved public provider and a private one, each with its owner's token and review code. */
const shown = await intake({ name: "Shown Agent" });
await approve(shown.providerCode);
const hidden = await intake({ name: "Hidden Agent", visibility: "PRIVATE" });

describe("each Node type's id finds it again", () => {
  test("Provider and ProviderSummary: two views of one provider, two IDs", async () => {
    const answer = await gql(
      `query($c: String!) {
        provider(providerCode: $c) { id providerCode }
        providers(search: $c) { items { id providerCode } }
      }`,
      { c: shown.providerCode },
    );
    const profileId = answer.body.data.provider.id;
    const summaryId = answer.body.data.providers.items[0].id;
    expect(profileId).toBe(globalId("Provider", shown.providerCode));
    expect(summaryId).toBe(globalId("ProviderSummary", shown.providerCode));
    expect((await node(profileId)).body).toEqual({
      data: { node: { __typename: "Provider", id: profileId, providerCode: shown.providerCode, name: "Shown Agent" } },
    });
    expect((await node(summaryId)).body).toEqual({
      data: {
        node: { __typename: "ProviderSummary", id: summaryId, providerCode: shown.providerCode, name: "Shown Agent" },
      },
    });
  });

  test("ProviderVersion and ProviderVersionSummary, keyed by code and version", async () => {
    const answer = await gql(
      `query($c: String!) {
        providerVersion(providerCode: $c, version: 1) { id }
        providerVersions(providerCode: $c) { items { id version } }
      }`,
      { c: shown.providerCode },
    );
    const versionId = answer.body.data.providerVersion.id;
    const summaryId = answer.body.data.providerVersions.items.find((v: { version: number }) => v.version === 1).id;
    expect(versionId).toBe(globalId("ProviderVersion", `${shown.providerCode}:1`));
    expect((await node(versionId)).body.data.node).toEqual({
      __typename: "ProviderVersion",
      id: versionId,
      providerCode: shown.providerCode,
      version: 1,
      snapshot: { name: "Shown Agent" },
    });
    expect((await node(summaryId)).body.data.node).toEqual({
      __typename: "ProviderVersionSummary",
      id: summaryId,
      providerCode: shown.providerCode,
      version: 1,
    });
  });

  test("Review, with what is selected beneath it", async () => {
    const rv = await reviewerToken();
    const answer = await gql(
      `query($r: String!) { review(reviewCode: $r) { id } }`,
      { r: hidden.reviewCode },
      { token: rv },
    );
    const id = answer.body.data.review.id;
    expect(id).toBe(globalId("Review", hidden.reviewCode));
    for (const token of [rv, hidden.accessToken]) {
      expect((await node(id, token)).body).toEqual({
        data: {
          node: {
            __typename: "Review",
            id,
            reviewCode: hidden.reviewCode,
            providerCode: hidden.providerCode,
            providerName: "Hidden Agent",
          },
        },
      });
    }
  });

  test("AccessToken, for its provider's owner and reviewers", async () => {
    const answer = await gql(
      `query($c: String!) { provider(providerCode: $c) { tokens { id tokenId prefix } } }`,
      { c: hidden.providerCode },
      { token: hidden.accessToken },
    );
    const [token] = answer.body.data.provider.tokens;
    expect(token.id).toBe(globalId("AccessToken", token.tokenId));
    for (const caller of [hidden.accessToken, await reviewerToken()]) {
      expect((await node(token.id, caller)).body.data.node).toEqual({ __typename: "AccessToken", ...token });
    }
  });
});

describe("node(id) sees what the look-ups see", () => {
  test("a private provider's IDs are null for the public and for another agent, as its look-up is", async () => {
    for (const id of [
      globalId("Provider", hidden.providerCode),
      globalId("ProviderSummary", hidden.providerCode),
      globalId("ProviderVersion", `${hidden.providerCode}:1`),
    ]) {
      for (const token of [undefined, shown.accessToken]) {
        const answer = await node(id, token);
        expect(answer.status).toBe(200);
        expect(answer.body).toEqual({
          data: { node: null },
          errors: [expect.objectContaining({ path: ["node"], extensions: { code: "NOT_FOUND" } })],
        });
        expect(answer.text).not.toContain("Hidden Agent");
      }
      // Its owner and reviewers find it.
      expect((await node(id, hidden.accessToken)).body.data.node.providerCode).toBe(hidden.providerCode);
      expect((await node(id, await reviewerToken())).body.data.node.providerCode).toBe(hidden.providerCode);
    }
  });

  test("a review's ID is null without credentials and for another agent", async () => {
    const id = globalId("Review", shown.reviewCode);
    const anonymous = await node(id);
    expect(anonymous.body.data.node).toBeNull();
    expect(anonymous.body.errors[0].extensions.code).toBe("UNAUTHENTICATED");
    const other = await node(id, hidden.accessToken);
    expect(other.body.data.node).toBeNull();
    expect(other.body.errors[0].extensions.code).toBe("NOT_FOUND");
  });

  test("a token's ID is null for anyone but its owner and reviewers", async () => {
    const answer = await gql(
      `query($c: String!) { provider(providerCode: $c) { tokens { id } } }`,
      { c: shown.providerCode },
      { token: shown.accessToken },
    );
    const { id } = answer.body.data.provider.tokens[0];
    for (const token of [undefined, hidden.accessToken]) {
      const refused = await node(id, token);
      expect(refused.body.data.node).toBeNull();
      expect(refused.body.errors[0].extensions.code).toBe("NOT_FOUND");
    }
  });

  test("an ID of nothing is NOT_FOUND; a string that is no ID is BAD_USER_INPUT naming it", async () => {
    for (const id of [
      globalId("Provider", "no-such-agent"),
      globalId("ProviderVersion", `${shown.providerCode}:99`),
      globalId("ProviderVersion", "no-version"),
      globalId("Capability", "x"),
      globalId("Query", "x"),
    ]) {
      const answer = await node(id);
      expect({ id, node: answer.body.data.node, code: answer.body.errors?.[0]?.extensions?.code }).toEqual({
        id,
        node: null,
        code: "NOT_FOUND",
      });
    }
    const bad = await node("not an id");
    expect(bad.body.data.node).toBeNull();
    expect(bad.body.errors[0].extensions).toEqual({
      code: "BAD_USER_INPUT",
      errors: [{ path: "id", message: "not a global ID" }],
    });
  });
});
