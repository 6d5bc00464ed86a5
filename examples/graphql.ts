/**
 * The registry's whole flow over GraphQL, with documents typed by graphql-codegen's client preset from
 * the schema the server serves (examples/README.md says how), sent with plain fetch:
 * intake → updateProvider with ifVersion → versions → diff → search, page by page → queue → assign → approve.
 *
 *   REGISTRY_URL=http://localhost:4000 REVIEWER_TOKEN=… npx tsx examples/graphql.ts
 */
import type { ExecutionResult } from "graphql";
import { AGENTS, expect, registryUrl, reviewerToken, runWord, step } from "./flow.ts";
import { graphql } from "./generated/gql/gql.ts";
import type { TypedDocumentString } from "./generated/gql/graphql.ts";

/** Runs a typed document: its variables and its answer are the types codegen wrote for it. */
async function execute<Result, Variables>(
  document: TypedDocumentString<Result, Variables>,
  variables: Variables,
  token?: string,
): Promise<ExecutionResult<Result>> {
  const response = await fetch(`${registryUrl}/graphql`, {
    method: "POST",
    headers: {
      "Content-Type": "application/json",
      Accept: "application/graphql-response+json",
      ...(token ? { Authorization: `Bearer ${token}` } : {}),
    },
    body: JSON.stringify({ query: document, variables }),
  });
  return (await response.json()) as ExecutionResult<Result>;
}

/** The answer's data, or a throw naming its errors' codes and messages. */
function ok<Result>(result: ExecutionResult<Result>, what: string): Result {
  if (result.errors?.length || !result.data) {
    throw new Error(`${what}: ${result.errors?.map((e) => `${e.extensions?.code} ${e.message}`).join("; ")}`);
  }
  return result.data;
}

const CreateProvider = graphql(`
  mutation CreateProvider($name: String!, $summary: String!, $description: String) {
    createProvider(
      name: $name
      summary: $summary
      description: $description
      agentType: ASSISTANT
      contactEmail: "examples@example.com"
      endpoint: { url: "https://agent.example.com/a2a", protocol: A2A, authScheme: BEARER }
      labels: ["example"]
    ) {
      providerCode
      reviewCode
      accessToken
      provider {
        version
      }
    }
  }
`);

const UpdateProvider = graphql(`
  mutation UpdateProvider(
    $providerCode: String!
    $ifVersion: Int
    $summary: String
    $description: String
    $labels: [String!]
  ) {
    updateProvider(
      providerCode: $providerCode
      ifVersion: $ifVersion
      summary: $summary
      description: $description
      labels: $labels
    ) {
      version
      description
    }
  }
`);

const ProviderVersions = graphql(`
  query ProviderVersions($providerCode: String!) {
    providerVersions(providerCode: $providerCode) {
      items {
        version
        changedFields
      }
    }
  }
`);

const VersionDiff = graphql(`
  query VersionDiff($providerCode: String!, $from: Int!, $to: Int!) {
    versionDiff(providerCode: $providerCode, from: $from, to: $to) {
      op
      path
    }
  }
`);

const Search = graphql(`
  query Search($search: String!, $cursor: String) {
    providers(search: $search, limit: 1, cursor: $cursor) {
      items {
        providerCode
      }
      nextCursor
    }
  }
`);

const Queue = graphql(`
  query Queue($providerCode: String!) {
    reviewQueue(providerCode: $providerCode) {
      items {
        reviewCode
        status
      }
    }
  }
`);

const AssignReview = graphql(`
  mutation AssignReview($reviewCode: String!) {
    assignReview(reviewCode: $reviewCode) {
      status
      assignedTo
    }
  }
`);

const Approve = graphql(`
  mutation Approve($reviewCode: String!) {
    decideReview(reviewCode: $reviewCode, decision: APPROVE, trustTier: VERIFIED, note: "Checked the endpoint by hand") {
      status
    }
  }
`);

const Provider = graphql(`
  query Provider($providerCode: String!) {
    provider(providerCode: $providerCode) {
      reviewStage
      trustTier
    }
  }
`);

// Intake: anyone may submit. The answer carries the agent's token, shown this once only.
const intakes = [];
for (let i = 1; i <= AGENTS; i++) {
  const variables = {
    name: `Example ${runWord} ${i}`,
    summary: `Plans routes for the ${runWord} example`,
    description: "Made by examples/graphql.ts.",
  };
  intakes.push(ok(await execute(CreateProvider, variables), "intake").createProvider);
}
const [first] = intakes;
expect(first?.accessToken, "an intake answers the agent's token");
const { providerCode, reviewCode, accessToken } = first;
expect(first.provider.version === 1, "intake writes version 1");
step(
  "intake",
  `${intakes.map((i) => i.providerCode).join(", ")} submitted; ${providerCode} is reviewed as ${reviewCode}`,
);

// updateProvider: the owner changes its profile (null clears a field), naming the version it last
// saw; the same change again, based on a version that is gone, is refused.
const change = {
  providerCode,
  ifVersion: 1,
  summary: `Plans delivery routes for the ${runWord} example`,
  description: null,
  labels: ["example", "routing"],
};
const { updateProvider } = ok(await execute(UpdateProvider, change, accessToken), "updateProvider");
expect(updateProvider.version === 2, `updateProvider makes version 2, got ${updateProvider.version}`);
expect(updateProvider.description === null, "null clears the description");
const stale = await execute(UpdateProvider, change, accessToken);
expect(stale.errors?.[0]?.extensions?.code === "PRECONDITION_FAILED", "a stale ifVersion is refused");
step("update", `ifVersion 1 → version ${updateProvider.version}; ifVersion 1 again → PRECONDITION_FAILED`);

// Versions, newest first, and the JSON Patch from version 1 to version 2.
const { providerVersions } = ok(await execute(ProviderVersions, { providerCode }), "versions");
expect(providerVersions.items.map((v) => v.version).join() === "2,1", "versions 2 and 1, newest first");
step(
  "versions",
  `${providerVersions.items.map((v) => `v${v.version}`).join(", ")} (v2 changed ${providerVersions.items[0]?.changedFields.join(", ")})`,
);

const { versionDiff } = ok(await execute(VersionDiff, { providerCode, from: 1, to: 2 }), "diff");
expect(
  versionDiff.some((op) => op.op === "replace" && op.path === "/summary"),
  "the diff replaces /summary",
);
step("diff", versionDiff.map((op) => `${op.op} ${op.path}`).join(", "));

// Search, one agent a page, following nextCursor to the last page. A reviewer sees agents still in
// review; an anonymous caller would see only approved ones.
const searchPage = async (cursor: string | null) =>
  ok(await execute(Search, { search: runWord, cursor }, reviewerToken), "search").providers;
const found: string[] = [];
let cursor: string | null = null;
do {
  const page = await searchPage(cursor);
  found.push(...page.items.map((p) => p.providerCode));
  cursor = page.nextCursor;
} while (cursor);
expect(
  found.length === AGENTS && intakes.every((i) => found.includes(i.providerCode)),
  `the search finds this run's ${AGENTS} agents, one a page: ${found.join(", ")}`,
);
step("search", `"${runWord}": ${found.length} pages of 1 (${found.join(", ")})`);

// The reviewer's queue, filtered to this agent, then assign (to the caller) and approve.
const { reviewQueue } = ok(await execute(Queue, { providerCode }, reviewerToken), "queue");
expect(
  reviewQueue.items.length === 1 && reviewQueue.items[0]?.reviewCode === reviewCode,
  `the queue holds ${reviewCode}`,
);
step("queue", `${reviewCode} ${reviewQueue.items[0]?.status}`);

const { assignReview } = ok(await execute(AssignReview, { reviewCode }, reviewerToken), "assign");
expect(assignReview.status === "IN_PROGRESS", `assign moves the review IN_PROGRESS, got ${assignReview.status}`);
step("assign", `${reviewCode} ${assignReview.status}, assigned to ${assignReview.assignedTo}`);

const { decideReview } = ok(await execute(Approve, { reviewCode }, reviewerToken), "approve");
expect(decideReview.status === "APPROVED", `approve closes the review, got ${decideReview.status}`);
// A lookup by code answers null (with a NOT_FOUND error) for an agent the caller may not see.
const { provider } = ok(await execute(Provider, { providerCode }), "read");
expect(provider, `${providerCode} is visible to everyone once approved`);
expect(provider.reviewStage === "APPROVED" && provider.trustTier === "VERIFIED", "the agent is approved and verified");
step(
  "approve",
  `${reviewCode} ${decideReview.status}; ${providerCode} is ${provider.reviewStage}, ${provider.trustTier}`,
);
