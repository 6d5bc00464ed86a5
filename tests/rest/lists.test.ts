/** GET /api/v1/providers: filters, limit bounds and cursor paging. Each test scopes itself by a unique label. */
import { describe, expect, test } from "@jest/globals";
import { approve, call, db, errorPaths, expectProblem, intake, reviewerToken, uniqueCode } from "../helpers.ts";

const codes = (answer: { body: { items: { providerCode: string }[] } }) => answer.body.items.map((i) => i.providerCode);

async function approvedWith(label: string, count: number, overrides: Record<string, unknown> = {}) {
  const made: string[] = [];
  for (let i = 0; i < count; i++) {
    const created = await intake({ labels: [label], ...overrides });
    await approve(created.providerCode);
    made.push(created.providerCode);
  }
  return made;
}

describe("filters", () => {
  test("agentType, visibility, trustTier and reviewStage each narrow the list", async () => {
    const label = uniqueCode("filters");
    const tool = await intake({ labels: [label], agentType: "TOOL_SERVER" });
    const unlisted = await intake({ labels: [label], visibility: "UNLISTED" });
    const trusted = await intake({ labels: [label] });
    await db.provider.update({ where: { providerCode: trusted.providerCode }, data: { trustTier: "TRUSTED" } });
    const approved = await intake({ labels: [label] });
    await approve(approved.providerCode);
    const token = await reviewerToken();
    const list = (query: string) => call("GET", `/api/v1/providers?labels=${label}&${query}`, { token });

    const all = await list("limit=100");
    expect(all.status).toBe(200);
    expect(codes(all).sort()).toEqual(
      [tool.providerCode, unlisted.providerCode, trusted.providerCode, approved.providerCode].sort(),
    );
    expect(codes(await list("agentType=TOOL_SERVER"))).toEqual([tool.providerCode]);
    expect(codes(await list("visibility=UNLISTED"))).toEqual([unlisted.providerCode]);
    expect(codes(await list("trustTier=TRUSTED"))).toEqual([trusted.providerCode]);
    expect(codes(await list("reviewStage=APPROVED"))).toEqual([approved.providerCode]);
    expect(codes(await list("reviewStage=SUBMITTED&agentType=TOOL_SERVER"))).toEqual([tool.providerCode]);
    expect(codes(await list("reviewStage=SUBMITTED&agentType=WORKFLOW"))).toEqual([]);
  });

  test("an unknown enumeration value is a 400", async () => {
    const answer = await call("GET", "/api/v1/providers?agentType=ROBOT");
    expectProblem(answer, 400, "BAD_USER_INPUT");
  });

  test("labels (comma-separated) must all match", async () => {
    const a = uniqueCode("la");
    const b = uniqueCode("lb");
    const both = await intake({ labels: [a, b] });
    const onlyA = await intake({ labels: [a] });
    await approve(both.providerCode);
    await approve(onlyA.providerCode);
    expect(codes(await call("GET", `/api/v1/providers?labels=${a}`)).sort()).toEqual(
      [both.providerCode, onlyA.providerCode].sort(),
    );
    expect(codes(await call("GET", `/api/v1/providers?labels=${a},${b}`))).toEqual([both.providerCode]);
    expect(codes(await call("GET", `/api/v1/providers?labels=${b.toUpperCase()},${a}`))).toEqual([both.providerCode]);
    expect(codes(await call("GET", `/api/v1/providers?labels=${a},${uniqueCode("none")}`))).toEqual([]);
  });

  test("search matches words of code, name, summary, description and labels, case-insensitively", async () => {
    const word = uniqueCode("zq").replace("-", "");
    const label = uniqueCode("search");
    const inName = await intake({ labels: [label], name: `Alpha ${word}` });
    const inDescription = await intake({ labels: [label], description: `Knows about ${word.toUpperCase()} things` });
    const inLabel = await intake({ labels: [label, `${word}-tag`] });
    const other = await intake({ labels: [label] });
    for (const p of [inName, inDescription, inLabel, other]) await approve(p.providerCode);

    const found = await call("GET", `/api/v1/providers?search=${word.toUpperCase()}`);
    expect(found.status).toBe(200);
    expect(codes(found).sort()).toEqual([inName.providerCode, inDescription.providerCode, inLabel.providerCode].sort());
    const twoWords = await call("GET", `/api/v1/providers?search=${encodeURIComponent(`alpha ${word}`)}`);
    expect(codes(twoWords)).toEqual([inName.providerCode]);
    const byCode = await call("GET", `/api/v1/providers?search=${other.providerCode}`);
    expect(codes(byCode)).toEqual([other.providerCode]);
  });

  test("search longer than 200 characters is a 400", async () => {
    const answer = await call("GET", `/api/v1/providers?search=${"a".repeat(201)}`);
    expectProblem(answer, 400, "BAD_USER_INPUT");
    expect(errorPaths(answer)).toEqual(["search"]);
  });
});

describe("limit", () => {
  test.each(["0", "101", "abc", "-1", "2.5"])("limit=%s is a 400", async (limit) => {
    const answer = await call("GET", `/api/v1/providers?limit=${limit}`);
    expectProblem(answer, 400, "BAD_USER_INPUT");
    expect(errorPaths(answer)).toEqual(["limit"]);
  });

  test("limit=1 and limit=100 are accepted", async () => {
    const one = await call("GET", "/api/v1/providers?limit=1");
    expect(one.status).toBe(200);
    expect(one.body.items.length).toBeLessThanOrEqual(1);
    expect((await call("GET", "/api/v1/providers?limit=100")).status).toBe(200);
  });

  test("the default page is 20", async () => {
    const label = uniqueCode("default");
    const made = await approvedWith(label, 21);
    const first = await call("GET", `/api/v1/providers?labels=${label}`);
    expect(first.status).toBe(200);
    expect(first.body.items).toHaveLength(20);
    expect(first.body.nextCursor).toEqual(expect.any(String));
    const second = await call("GET", `/api/v1/providers?labels=${label}&cursor=${first.body.nextCursor}`);
    expect(second.body.items).toHaveLength(1);
    expect(second.body.nextCursor).toBeNull();
    expect([...codes(first), ...codes(second)].sort()).toEqual([...made].sort());
  });
});

describe("cursor paging", () => {
  test("pages neither skip nor repeat, most recently updated first", async () => {
    const label = uniqueCode("pages");
    const made = await approvedWith(label, 5);
    const seen: string[] = [];
    const sizes: number[] = [];
    let cursor: string | null = null;
    do {
      const answer = await call(
        "GET",
        `/api/v1/providers?labels=${label}&limit=2${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ""}`,
      );
      expect(answer.status).toBe(200);
      seen.push(...codes(answer));
      sizes.push(answer.body.items.length);
      cursor = answer.body.nextCursor;
    } while (cursor !== null && sizes.length < 10);
    expect(sizes).toEqual([2, 2, 1]);
    expect(new Set(seen).size).toBe(5);
    expect([...seen].sort()).toEqual([...made].sort());

    const whole = await call("GET", `/api/v1/providers?labels=${label}&limit=100`);
    expect(codes(whole)).toEqual(seen);
    const rows = await db.provider.findMany({
      where: { providerCode: { in: made } },
      orderBy: [{ updatedAt: "desc" }, { id: "desc" }],
    });
    expect(rows.map((r) => r.providerCode)).toEqual(seen);
  });

  test("providers updated between pages are not repeated", async () => {
    const label = uniqueCode("moving");
    await approvedWith(label, 4);
    const first = await call("GET", `/api/v1/providers?labels=${label}&limit=2`);
    // The first item moves to the top of the order; the next page continues after the cursor.
    await db.provider.update({ where: { providerCode: codes(first)[0] }, data: { summary: "Touched" } });
    const second = await call("GET", `/api/v1/providers?labels=${label}&limit=2&cursor=${first.body.nextCursor}`);
    expect(second.body.items).toHaveLength(2);
    expect(codes(second).some((c) => codes(first).includes(c))).toBe(false);
  });

  test.each(["not-a-cursor", Buffer.from('["x"]').toString("base64url"), Buffer.from("{}").toString("base64url")])(
    "cursor %s is a 400",
    async (cursor) => {
      const answer = await call("GET", `/api/v1/providers?cursor=${cursor}`);
      expectProblem(answer, 400, "BAD_USER_INPUT");
      expect(errorPaths(answer)).toEqual(["cursor"]);
    },
  );
});

describe("query parameters", () => {
  test("an unknown query parameter is a 400 naming it", async () => {
    const answer = await call("GET", "/api/v1/providers?sort=name&limit=5");
    expectProblem(answer, 400, "BAD_USER_INPUT");
    expect(errorPaths(answer)).toEqual(["sort"]);
  });

  test("an unknown query parameter on a detail route is a 400 too", async () => {
    const created = await intake();
    const answer = await call("GET", `/api/v1/providers/${created.providerCode}?expand=all`, {
      token: created.accessToken,
    });
    expectProblem(answer, 400, "BAD_USER_INPUT");
    expect(errorPaths(answer)).toEqual(["expand"]);
  });
});
