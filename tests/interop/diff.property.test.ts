/**
 * Property: for random edit sequences made through the real PATCH route (random valid bodies over
 * scalars, lists of plain values and lists of objects), and random pairs of versions (from, to) —
 * forwards, backwards or equal — the JSON Patch the diff route answers, applied as it comes to
 * from's snapshot (as GET …/versions/{from} shows it), gives to's snapshot exactly.
 *
 * Bounded for CI: seed 20261121, 12 runs of up to 6 PATCHes and 5 pairs (~5 s). Another run:
 *   DIFF_RUNS=100 DIFF_SEED=42 npm test -- tests/interop/diff.property
 */
import { describe, expect, test } from "@jest/globals";
import fc from "fast-check";
import { applyPatch } from "rfc6902";
import { call, intake } from "../helpers.ts";

const RUNS = Number(process.env.DIFF_RUNS ?? 12);
const SEED = Number(process.env.DIFF_SEED ?? 20261121);

const nullable = <T>(arb: fc.Arbitrary<T>) => fc.option(arb, { nil: null });
const pick = <T>(...values: T[]) => fc.constantFrom(...values);

const capability = fc.record({
  key: pick("plan", "eta", "geo", "rank", "price"),
  name: pick("Plan a route", "Estimate arrival", "Geocode"),
  description: nullable(pick("Plans one route", "Answers in JSON")),
  tags: fc.subarray(["maps", "eta", "fast", "eu"]),
  inputModes: fc.subarray(["text/plain", "application/json", "image/png"]),
  outputModes: fc.subarray(["text/plain", "application/json"]),
});
const tool = fc.record({
  name: pick("geocode", "route", "weather", "calendar"),
  kind: pick("MCP", "FUNCTION", "HTTP", "BUILTIN"),
  description: nullable(pick("Looks things up", "Writes things")),
  scopes: fc.subarray(["READ_ONLY", "WRITE", "DESTRUCTIVE", "EXTERNAL"]),
});
const model = fc.record({
  vendor: pick("Example AI", "Other Labs"),
  model: pick("m-1", "m-2", "m-3"),
  role: pick("PRIMARY", "FALLBACK", "EMBEDDING", "OTHER"),
  contextWindow: nullable(pick(8000, 32000, 128000)),
});

/** A valid PATCH body: one to all of these fields. */
const patchBody = fc
  .record(
    {
      name: pick("Route Planner", "Route Planner Pro", "Planner"),
      summary: pick("Plans routes", "Plans delivery routes", "Plans routes for vans and bikes"),
      description: nullable(pick("Routes vans.", "Routes vans.\nAlso bikes.", "Markdown *here*")),
      labels: fc.uniqueArray(pick("maps", "routing", "bikes", "vans", "eu", "fast"), { maxLength: 5 }),
      visibility: pick("PUBLIC", "UNLISTED"),
      capabilities: fc.uniqueArray(capability, { selector: (c) => c.key, maxLength: 4 }),
      tools: fc.uniqueArray(tool, { selector: (t) => t.name, maxLength: 3 }),
      models: fc.array(model, { maxLength: 3 }),
      policy: nullable(
        fc.record({
          humanOversight: pick("NONE", "ON_REQUEST", "ALWAYS"),
          allowedUseCases: fc.subarray(["Routing", "Planning", "Reporting"]),
          dataRetentionDays: nullable(pick(0, 30, 365)),
        }),
      ),
      roles: fc.array(fc.record({ subject: pick("ops@example.com", "@acme"), role: pick("OWNER", "MAINTAINER") }), {
        maxLength: 2,
      }),
      endpoint: fc.record({
        url: pick("https://agent.example.com/a2a", "https://agent.example.com/v2"),
        protocol: pick("A2A", "MCP"),
        authScheme: pick("NONE", "BEARER"),
      }),
    },
    { requiredKeys: [] },
  )
  .filter((body) => Object.keys(body).length > 0);

describe("the diff route, as a property", () => {
  test("applying diff(from, to) to from's snapshot gives to's snapshot", async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(patchBody, { minLength: 1, maxLength: 6 }),
        fc.array(fc.tuple(fc.nat(), fc.nat()), { minLength: 1, maxLength: 5 }),
        async (edits, pairs) => {
          const p = await intake();
          const auth = { token: p.accessToken };
          for (const body of edits) {
            const answer = await call("PATCH", `/api/v1/providers/${p.providerCode}`, { body, ...auth });
            if (answer.status !== 200) throw new Error(`PATCH refused: ${answer.status} ${answer.text}`);
          }
          const versions = edits.length + 1;
          const snapshots = new Map<number, unknown>();
          const snapshotOf = async (version: number) => {
            if (!snapshots.has(version)) {
              const answer = await call("GET", `/api/v1/providers/${p.providerCode}/versions/${version}`, auth);
              snapshots.set(version, answer.body.snapshot);
            }
            return structuredClone(snapshots.get(version));
          };
          for (const [a, b] of pairs) {
            const from = (a % versions) + 1;
            const to = (b % versions) + 1;
            const answer = await call("GET", `/api/v1/providers/${p.providerCode}/versions/${from}/diff/${to}`, auth);
            expect(answer.status).toBe(200);
            const document = await snapshotOf(from);
            const results = applyPatch(document, answer.body);
            expect(results.filter((r) => r !== null)).toEqual([]);
            expect(document).toEqual(await snapshotOf(to));
            if (from === to) expect(answer.body).toEqual([]);
          }
        },
      ),
      { numRuns: RUNS, seed: SEED },
    );
  });
});
