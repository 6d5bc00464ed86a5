/** Error answers (API.md §5) through both doors: the contract's code and status, nothing internal, masked failures, the same answers once an operation is compiled. */
import { afterEach, describe, expect, jest, test } from "@jest/globals";
import { intakeBody, uniqueCode } from "../builders.ts";
import { type Door, doors, type Field, type Outcome } from "../doors.ts";
import { approve, db, intake } from "../helpers.ts";

afterEach(() => {
  jest.restoreAllMocks();
});

/** Nothing of the machinery leaks into an error body. */
function expectNothingInternal(text: string) {
  expect(text).not.toMatch(/\bat .+:\d+:\d+/); // stack frames
  expect(text).not.toMatch(/\/work\/|node_modules|\.ts\b/); // file paths
  expect(text).not.toMatch(/SELECT|INSERT|UPDATE .+ SET|SQLITE|prisma/i);
  expect(text).not.toContain('"stack"');
}

/** What an INTERNAL refusal says: the problem's `detail` on REST (its title is "Internal server error"), the error's message on GraphQL. */
const MASKED: Record<Door["name"], string> = {
  REST: "An unexpected error occurred",
  GraphQL: "Internal server error",
};

const detailOf = (outcome: Outcome): string | undefined =>
  outcome.answer.body?.detail ?? outcome.answer.body?.errors?.[0]?.message;

/** The people and providers the refusal cases need, made once per door. */
interface Cast {
  visible: string;
  taken: string;
  otherToken: string;
}

interface Refusal {
  title: string;
  field: Field;
  args: (cast: Cast) => Record<string, unknown>;
  /** Who asks: nobody, or another agent than the provider's. */
  as: "anonymous" | "other";
  code: string;
  status: number;
  /** The input paths the refusal names. */
  paths: string[];
}

// biome-ignore format: a table reads best one case a line
const REFUSALS: Refusal[] = [
  { title: "an unknown provider", field: "Query.provider", args: () => ({ providerCode: uniqueCode("none") }), as: "anonymous", code: "NOT_FOUND", status: 404, paths: [] },
  { title: "the review queue without credentials", field: "Query.reviewQueue", args: () => ({}), as: "anonymous", code: "UNAUTHENTICATED", status: 401, paths: [] },
  { title: "the review queue for an agent", field: "Query.reviewQueue", args: () => ({}), as: "other", code: "FORBIDDEN", status: 403, paths: [] },
  { title: "an update without credentials", field: "Mutation.updateProvider", args: (c) => ({ providerCode: c.visible, summary: "x" }), as: "anonymous", code: "UNAUTHENTICATED", status: 401, paths: [] },
  { title: "an update of another agent's provider", field: "Mutation.updateProvider", args: (c) => ({ providerCode: c.visible, summary: "x" }), as: "other", code: "FORBIDDEN", status: 403, paths: [] },
  { title: "a limit out of bounds", field: "Query.providers", args: () => ({ limit: 0 }), as: "anonymous", code: "BAD_USER_INPUT", status: 400, paths: ["limit"] },
  { title: "a limit that is not a number", field: "Query.providers", args: () => ({ limit: "many" }), as: "anonymous", code: "BAD_USER_INPUT", status: 400, paths: ["limit"] },
  { title: "an intake with a taken code", field: "Mutation.createProvider", args: (c) => intakeBody({ providerCode: c.taken }), as: "anonymous", code: "CONFLICT", status: 409, paths: [] },
  { title: "an intake with a bad email", field: "Mutation.createProvider", args: () => intakeBody({ contactEmail: "x" }), as: "anonymous", code: "BAD_USER_INPUT", status: 400, paths: ["contactEmail"] },
  { title: "an intake of an unknown agent type", field: "Mutation.createProvider", args: () => intakeBody({ agentType: "ROBOT" }), as: "anonymous", code: "BAD_USER_INPUT", status: 400, paths: ["agentType"] },
  { title: "an intake with a label that is not one", field: "Mutation.createProvider", args: () => intakeBody({ labels: ["maps", "not a label"] }), as: "anonymous", code: "BAD_USER_INPUT", status: 400, paths: ["labels.1"] },
  { title: "a list filtered by an unknown agent type", field: "Query.providers", args: () => ({ agentType: "ROBOT" }), as: "anonymous", code: "BAD_USER_INPUT", status: 400, paths: ["agentType"] },
];

describe.each(doors)("$name", (door) => {
  let cast: Promise<Cast> | undefined;
  /** Made on first use, so a door's cases share it. */
  const castOnce = () => {
    cast ??= (async () => {
      const visible = await intake();
      await approve(visible.providerCode);
      const other = await intake();
      return { visible: visible.providerCode, taken: other.providerCode, otherToken: other.accessToken };
    })();
    return cast;
  };

  describe("codes", () => {
    test.each(REFUSALS)("$title is $code", async ({ field, args, as, code, status, paths }) => {
      const c = await castOnce();
      const outcome = await door.run(field, args(c), as === "other" ? { token: c.otherToken } : {});
      expect([outcome.code, outcome.status, outcome.paths, outcome.data]).toEqual([code, status, paths, null]);
      expectNothingInternal(outcome.answer.text);
    });

    test("an invalid token is refused before the operation runs: 401 with WWW-Authenticate", async () => {
      const outcome = await door.run("Query.health", {}, { token: "agr_definitelyNotAValidTokenAtAll00000000" });
      expect([outcome.code, outcome.answer.status]).toEqual(["UNAUTHENTICATED", 401]);
      expect(outcome.answer.headers.get("www-authenticate")).toMatch(/^Bearer\b/);
    });
  });

  describe("masked internal errors", () => {
    test("an unexpected failure is INTERNAL (500) and says nothing of it", async () => {
      const c = await castOnce();
      jest
        .spyOn(db.provider, "findUnique")
        .mockRejectedValueOnce(
          new Error('SQLITE_ERROR: near "SELECT * FROM providers" at /work/main/src/providers/version.schema.ts:1:1'),
        );
      // A provider's versions are read through Prisma's findUnique.
      const outcome = await door.run("Query.providerVersions", { providerCode: c.visible, limit: 1 });
      // On GraphQL a field that failed is a field error of an operation that ran: 200 (GraphQL over HTTP).
      expect([outcome.code, outcome.status, outcome.answer.status]).toEqual([
        "INTERNAL",
        500,
        door.name === "REST" ? 500 : 200,
      ]);
      expect(detailOf(outcome)).toBe(MASKED[door.name]);
      expectNothingInternal(outcome.answer.text);
    });

    test("an operation compiled after its first runs (src/http/jit.plugin.ts) answers as it did before: data, codes, masking", async () => {
      const visible = await intake();
      await approve(visible.providerCode);
      const runs = async (field: Field, args: Record<string, unknown>) => {
        const outcomes: Outcome[] = [];
        for (let i = 0; i < 4; i++) outcomes.push(await door.run(field, args));
        return outcomes;
      };
      const reads = await runs("Query.provider", { providerCode: visible.providerCode });
      expect(reads[0]?.data.providerCode).toBe(visible.providerCode);
      for (const outcome of reads) expect(outcome.answer.body).toEqual(reads[0]?.answer.body);

      const missing = await runs("Query.provider", { providerCode: uniqueCode("none") });
      for (const outcome of missing) expect([outcome.code, outcome.status]).toEqual(["NOT_FOUND", 404]);

      // An argument that does not fit its type is a request error: the same answer, status and path, every time.
      const badArgument = await runs("Query.providers", { limit: "x" });
      for (const outcome of badArgument) {
        expect([outcome.code, outcome.status, outcome.paths]).toEqual(["BAD_USER_INPUT", 400, ["limit"]]);
        expect(outcome.answer.body).toEqual(badArgument[0]?.answer.body);
        expectNothingInternal(outcome.answer.text);
      }

      jest.spyOn(db.provider, "findUnique").mockRejectedValue(new Error("SQLITE_BUSY at /work/main/src/db.ts:3:4"));
      const failing = await runs("Query.providerVersions", { providerCode: visible.providerCode, limit: 1 });
      for (const outcome of failing) {
        expect(outcome.code).toBe("INTERNAL");
        expect(detailOf(outcome)).toBe(MASKED[door.name]);
        expectNothingInternal(outcome.answer.text);
      }
    });
  });
});
