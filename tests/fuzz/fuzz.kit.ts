/**
 * What the fuzz files share: the run's size and seed, the served OpenAPI document with its
 * operations, a small world of agents to act as, and snapshots of their rows to prove a refusal
 * changed nothing.
 */
import { expect } from "@jest/globals";
import { pathTemplate, REST_ROUTES, restPath } from "../../src/http/rest/rest.routes.ts";
import { call, db, intake, reviewerToken } from "../helpers.ts";

export type Json = Record<string, any>;
export type Credential = "none" | "bad" | "agent" | "otherAgent" | "reviewer";

/** `npm test` runs FUZZ_RUNS (default 300) cases with FUZZ_SEED (default fixed). */
export const RUNS = Number(process.env.FUZZ_RUNS || 300);
export const SEED = Number(process.env.FUZZ_SEED || 20261121);

/** A share of FUZZ_RUNS for one property (at least `min`), so a longer run lengthens all alike. */
export const runsOf = (share: number, min = 5): number => Math.max(min, Math.round(RUNS * share));

export interface Operation {
  method: string;
  /** As the document has it, `{name}` placeholders. */
  path: string;
  id: string;
  op: Json;
  /** Who may call it (rest.routes.ts). */
  auth: string;
  /** The GraphQL field the route runs, `Query.x` or `Mutation.x`. */
  field: string;
}

/** The served document and its operations, once `loadDocument` has run. */
export const spec = { doc: {} as Json, operations: [] as Operation[] };

function lookup(ref: string): Json {
  return ref
    .replace(/^#\//, "")
    .split("/")
    .reduce((node: Json, key) => node[key.replace(/~1/g, "/").replace(/~0/g, "~")], spec.doc);
}
export const deref = (schema: Json): Json => (schema?.$ref ? deref(lookup(schema.$ref)) : schema);

/** Reads /openapi.json and lists its operations, each with its route's auth and GraphQL field. */
export async function loadDocument(): Promise<void> {
  const served = await call("GET", "/openapi.json");
  expect(served.status).toBe(200);
  spec.doc = served.body;
  const routes = new Map(REST_ROUTES.map((r) => [`${r.method} ${restPath(pathTemplate(r.path), r.base)}`, r]));
  spec.operations = Object.entries(spec.doc.paths as Record<string, Record<string, Json>>).flatMap(([path, ops]) =>
    Object.entries(ops).map(([method, op]) => {
      const route = routes.get(`${method.toUpperCase()} ${path}`);
      return {
        method: method.toUpperCase(),
        path,
        id: op.operationId as string,
        op,
        auth: route?.auth ?? "unknown",
        field: route?.field ?? "unknown",
      };
    }),
  );
  expect(spec.operations.filter((o) => o.auth === "unknown")).toEqual([]);
}

/** The fuzz's own world: two agents with their providers, a reviewer, a spare token. */
export const world = {
  p1: { code: "", token: "", review: "", spareTokenId: "" },
  p2: { code: "", token: "", review: "" },
  reviewer: "",
};

export async function setUpWorld(): Promise<void> {
  const one = await intake();
  const two = await intake();
  world.p1 = { code: one.providerCode, token: one.accessToken, review: one.reviewCode, spareTokenId: "" };
  world.p2 = { code: two.providerCode, token: two.accessToken, review: two.reviewCode };
  world.reviewer = await reviewerToken("fuzz-reviewer");
  const spare = await call("POST", `/api/v1/providers/${one.providerCode}/tokens`, {
    token: one.accessToken,
    body: { label: "spare" },
  });
  expect(spare.status).toBe(201);
  world.p1.spareTokenId = spare.body.token.tokenId;
}

/** A token with a valid shape and checksum that no one was issued. */
export const BAD_TOKEN = "agr_0000000000000000000000000000000000000000";

export function tokenOf(credential: Credential): string | undefined {
  switch (credential) {
    case "agent":
      return world.p1.token;
    case "otherAgent":
      return world.p2.token;
    case "reviewer":
      return world.reviewer;
    case "bad":
      return BAD_TOKEN;
    default:
      return undefined;
  }
}

/** The rows of the given providers and of what hangs off them, as text (bigints included). */
export async function snapshot(codes: string[]): Promise<string> {
  const providers = await db.provider.findMany({
    where: { providerCode: { in: codes } },
    orderBy: { id: "asc" },
    include: {
      versions: { orderBy: { id: "asc" } },
      reviews: { orderBy: { id: "asc" } },
      events: { orderBy: { id: "asc" } },
      tokens: { orderBy: { id: "asc" }, omit: { lastUsedAt: true } },
      labelIndex: { orderBy: { label: "asc" } },
    },
  } as never);
  return JSON.stringify(providers, (_k, v) => (typeof v === "bigint" ? v.toString() : v));
}
