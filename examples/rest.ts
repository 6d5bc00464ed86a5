/**
 * The registry's whole flow over REST, with openapi-fetch and the types openapi-typescript generated
 * from the OpenAPI document the server serves (examples/README.md says how):
 * intake → PATCH with If-Match → versions → diff → search, page by page → queue → assign → approve.
 *
 *   REGISTRY_URL=http://localhost:4000 REVIEWER_TOKEN=… npx tsx examples/rest.ts
 */
import createClient, { type Client } from "openapi-fetch";
import { AGENTS, expect, registryUrl, reviewerToken, runWord, step } from "./flow.ts";
import type { paths } from "./generated/openapi.ts";

/** One client per caller: the credential goes with every request it makes. */
const clientFor = (token?: string): Client<paths> =>
  createClient<paths>({ baseUrl: registryUrl, headers: token ? { Authorization: `Bearer ${token}` } : {} });

const anonymous = clientFor();
const reviewer = clientFor(reviewerToken);

/** The answer's data, or a throw naming the status and the problem document the server sent. */
function ok<T>(result: { data?: T; error?: unknown; response: Response }, what: string): T {
  if (result.data === undefined) {
    throw new Error(`${what}: ${result.response.status} ${JSON.stringify(result.error)}`);
  }
  return result.data;
}

// Intake: anyone may submit. The answer carries the agent's token, shown this once only.
const intakes = [];
for (let i = 1; i <= AGENTS; i++) {
  const intake = await anonymous.POST("/api/v1/providers", {
    body: {
      name: `Example ${runWord} ${i}`,
      summary: `Plans routes for the ${runWord} example`,
      description: "Made by examples/rest.ts.",
      agentType: "ASSISTANT",
      contactEmail: "examples@example.com",
      endpoint: { url: "https://agent.example.com/a2a", protocol: "A2A", authScheme: "BEARER" },
      labels: ["example"],
    },
  });
  intakes.push(ok(intake, "intake"));
}
const [first] = intakes;
expect(first?.accessToken, "an intake answers the agent's token");
const { providerCode, reviewCode } = first;
expect(first.provider.version === 1, "intake writes version 1");
step(
  "intake",
  `${intakes.map((i) => i.providerCode).join(", ")} submitted; ${providerCode} is reviewed as ${reviewCode}`,
);

// PATCH: the owner changes its profile as a JSON Merge Patch (null clears a field), sending the
// version it last saw; the same change again, based on a version that is gone, is refused.
const owner = clientFor(first.accessToken);
const change = {
  params: { path: { providerCode }, header: { "If-Match": '"1"' } },
  headers: { "Content-Type": "application/merge-patch+json" },
  body: {
    summary: `Plans delivery routes for the ${runWord} example`,
    description: null,
    labels: ["example", "routing"],
  },
};
const patch = await owner.PATCH("/api/v1/providers/{providerCode}", change);
const patched = ok(patch, "PATCH");
const etag = patch.response.headers.get("etag");
expect(patched.version === 2 && etag === '"2"', `PATCH makes version 2, got ${patched.version} (ETag ${etag})`);
expect(patched.description === null, "null clears the description");
const stale = await owner.PATCH("/api/v1/providers/{providerCode}", change);
expect(stale.response.status === 412, `a stale If-Match answers 412, got ${stale.response.status}`);
step("patch", `If-Match "1" → version ${patched.version}, ETag ${etag}; If-Match "1" again → 412`);

// Versions, newest first, and the JSON Patch from version 1 to version 2.
const versions = ok(
  await anonymous.GET("/api/v1/providers/{providerCode}/versions", { params: { path: { providerCode } } }),
  "versions",
);
expect(versions.items.map((v) => v.version).join() === "2,1", "versions 2 and 1, newest first");
step(
  "versions",
  versions.items.map((v) => `v${v.version}`).join(", ") +
    ` (v2 changed ${versions.items[0]?.changedFields.join(", ")})`,
);

const diff = ok(
  await anonymous.GET("/api/v1/providers/{providerCode}/versions/{from}/diff/{to}", {
    params: { path: { providerCode, from: 1, to: 2 } },
  }),
  "diff",
);
expect(
  diff.some((op) => op.op === "replace" && op.path === "/summary"),
  "the diff replaces /summary",
);
step("diff", diff.map((op) => `${op.op} ${op.path}`).join(", "));

// Search, one agent a page, following nextCursor to the last page. A reviewer sees agents still in
// review; an anonymous caller would see only approved ones.
const found: string[] = [];
let cursor: string | undefined;
do {
  const page = ok(
    await reviewer.GET("/api/v1/providers", { params: { query: { search: runWord, limit: 1, cursor } } }),
    "search",
  );
  found.push(...page.items.map((p) => p.providerCode));
  cursor = page.nextCursor ?? undefined;
} while (cursor);
expect(
  found.length === AGENTS && intakes.every((i) => found.includes(i.providerCode)),
  `the search finds this run's ${AGENTS} agents, one a page: ${found.join(", ")}`,
);
step("search", `"${runWord}": ${found.length} pages of 1 (${found.join(", ")})`);

// The reviewer's queue, filtered to this agent, then assign (to the caller) and approve.
const queue = ok(await reviewer.GET("/api/v1/reviews/queue", { params: { query: { providerCode } } }), "queue");
expect(queue.items.length === 1 && queue.items[0]?.reviewCode === reviewCode, `the queue holds ${reviewCode}`);
step("queue", `${reviewCode} ${queue.items[0]?.status}`);

const assigned = ok(
  await reviewer.POST("/api/v1/reviews/{reviewCode}/assign", { params: { path: { reviewCode } }, body: {} }),
  "assign",
);
expect(assigned.status === "IN_PROGRESS", `assign moves the review IN_PROGRESS, got ${assigned.status}`);
step("assign", `${reviewCode} ${assigned.status}, assigned to ${assigned.assignedTo}`);

const approved = ok(
  await reviewer.POST("/api/v1/reviews/{reviewCode}/decision", {
    params: { path: { reviewCode } },
    // A note is required to approve an agent whose endpoint's domain is not verified.
    body: { decision: "APPROVE", trustTier: "VERIFIED", note: "Checked the endpoint by hand" },
  }),
  "approve",
);
expect(approved.status === "APPROVED", `approve closes the review, got ${approved.status}`);
const published = ok(
  await anonymous.GET("/api/v1/providers/{providerCode}", { params: { path: { providerCode } } }),
  "read",
);
expect(
  published.reviewStage === "APPROVED" && published.trustTier === "VERIFIED",
  "the agent is approved and verified",
);
step(
  "approve",
  `${reviewCode} ${approved.status}; ${providerCode} is ${published.reviewStage}, ${published.trustTier}`,
);
