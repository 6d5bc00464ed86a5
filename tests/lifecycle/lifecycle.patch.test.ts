/**
 * The lifecycle through PATCH (API.md §1: `lifecycle`, `lifecycleMessage` and `successorCode` are
 * owner-settable, and a PATCH body takes any owner-settable field): the same rules as the lifecycle
 * route, fields left out keep their value, errors name the PATCH's fields, and a lifecycle change
 * stands alone in its PATCH.
 */
import { describe, expect, test } from "@jest/globals";
import { approve, call, db, errorPaths, expectProblem, gql, intake, versionCount } from "../helpers.ts";

const patch = (code: string, token: string, body: unknown, headers: Record<string, string> = {}) =>
  call("PATCH", `/api/v1/providers/${code}`, { token, body, headers });

const lifecycleOf = (providerCode: string) =>
  db.provider.findUniqueOrThrow({
    where: { providerCode },
    select: { lifecycle: true, lifecycleMessage: true, successorCode: true, version: true },
  });

describe("PATCH sets the lifecycle", () => {
  test("deprecate, name a successor later (the message kept), reactivate (both cleared), retire", async () => {
    const agent = await intake();
    const successor = await intake();
    await approve(successor.providerCode);

    const deprecated = await patch(agent.providerCode, agent.accessToken, {
      lifecycle: "DEPRECATED",
      lifecycleMessage: "Moving to v2",
    });
    expect(deprecated.status).toBe(200);
    expect(deprecated.body).toMatchObject({ lifecycle: "DEPRECATED", lifecycleMessage: "Moving to v2", version: 2 });

    const named = await patch(agent.providerCode, agent.accessToken, { successorCode: successor.providerCode });
    expect(named.status).toBe(200);
    expect(await lifecycleOf(agent.providerCode)).toEqual({
      lifecycle: "DEPRECATED",
      lifecycleMessage: "Moving to v2",
      successorCode: successor.providerCode,
      version: 3,
    });
    const versions = await call("GET", `/api/v1/providers/${agent.providerCode}/versions/3`, {
      token: agent.accessToken,
    });
    expect(versions.body.changedFields).toEqual(["successorCode"]);

    const active = await patch(agent.providerCode, agent.accessToken, { lifecycle: "ACTIVE" });
    expect(active.status).toBe(200);
    expect(await lifecycleOf(agent.providerCode)).toEqual({
      lifecycle: "ACTIVE",
      lifecycleMessage: null,
      successorCode: null,
      version: 4,
    });

    // GraphQL's updateProvider takes the same fields.
    const retired = await gql(
      `mutation { updateProvider(providerCode: "${agent.providerCode}", lifecycle: RETIRED) { lifecycle version } }`,
      {},
      { token: agent.accessToken },
    );
    expect(retired.body.data.updateProvider).toEqual({ lifecycle: "RETIRED", version: 5 });
    // Final for the owner.
    const back = await patch(agent.providerCode, agent.accessToken, { lifecycle: "ACTIVE" });
    expectProblem(back, 409, "CONFLICT");
    expect((await lifecycleOf(agent.providerCode)).version).toBe(5);
  });

  test("refusals name the PATCH's fields and change nothing", async () => {
    const agent = await intake();
    const cases: [Record<string, unknown>, string][] = [
      [{ lifecycle: "DEPRECATED" }, "lifecycleMessage"],
      [{ lifecycle: "DEPRECATED", lifecycleMessage: "x".repeat(501) }, "lifecycleMessage"],
      [{ lifecycle: "DEPRECATED", lifecycleMessage: "why", successorCode: agent.providerCode }, "successorCode"],
      [{ lifecycle: "DEPRECATED", lifecycleMessage: "why", successorCode: "no-such-agent-here" }, "successorCode"],
      [{ lifecycleMessage: "a message while ACTIVE" }, "lifecycleMessage"],
      [{ lifecycle: "DEPRECATED", lifecycleMessage: "why", summary: "and a new summary" }, "summary"],
    ];
    for (const [body, path] of cases) {
      const answer = await patch(agent.providerCode, agent.accessToken, body);
      expectProblem(answer, 400, "BAD_USER_INPUT");
      expect(errorPaths(answer)).toContain(`/${path}`);
    }
    const stale = await patch(
      agent.providerCode,
      agent.accessToken,
      { lifecycle: "RETIRED" },
      {
        "if-match": '"7"',
      },
    );
    expectProblem(stale, 412, "PRECONDITION_FAILED");
    expect(await lifecycleOf(agent.providerCode)).toEqual({
      lifecycle: "ACTIVE",
      lifecycleMessage: null,
      successorCode: null,
      version: 1,
    });
    expect(await versionCount(agent.providerCode)).toBe(1);
  });
});
