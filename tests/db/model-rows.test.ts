/**
 * The raw reads (src/providers/provider.store.ts) take their columns and conversions from the Prisma
 * model (src/db/model.ts). This holds them to what Prisma's own client answers for the same rows:
 * random providers — optional sections present or not, patched, with tokens issued, revoked and
 * used, reviewed, deprecated with a successor — read both ways on the run's dialect.
 */
import { describe, expect, test } from "@jest/globals";
import fc from "fast-check";
import { readProvider, SUMMARY_SELECT, summariesByIds } from "../../src/providers/provider.store.ts";
import { approve, call, db, intake, reviewerToken } from "../helpers.ts";

const word = fc.stringMatching(/^[a-z]{3,10}$/);
const maybe = <T>(arb: fc.Arbitrary<T>) => fc.option(arb, { nil: undefined });

/** What varies between providers: the optional sections and what happens to them after intake. */
const shape = fc.record({
  description: maybe(word),
  labels: fc.uniqueArray(word, { maxLength: 4 }),
  visibility: fc.constantFrom("PUBLIC", "UNLISTED", "PRIVATE"),
  policy: maybe(
    fc.record({
      humanOversight: fc.constantFrom("NONE", "ON_REQUEST", "ALWAYS"),
      dataRetentionDays: maybe(fc.nat(365)),
    }),
  ),
  tools: fc.uniqueArray(word, { maxLength: 3 }).map((names) => names.map((name) => ({ name, kind: "FUNCTION" }))),
  patchedName: maybe(word),
  tokens: fc.nat(2),
  revokeOne: fc.boolean(),
  approved: fc.boolean(),
  deprecated: fc.boolean(),
  publisherVerified: fc.boolean(),
});

type Shape = typeof shape extends fc.Arbitrary<infer T> ? T : never;

async function providerOf(s: Shape, successor: string): Promise<string> {
  const created = await intake({
    description: s.description,
    labels: s.labels,
    visibility: s.visibility,
    policy: s.policy,
    tools: s.tools,
  });
  const code = created.providerCode;
  const token = created.accessToken;
  if (s.patchedName) await call("PATCH", `/api/v1/providers/${code}`, { token, body: { name: s.patchedName } });
  const issued: string[] = [];
  for (let i = 0; i < s.tokens; i++) {
    const answer = await call("POST", `/api/v1/providers/${code}/tokens`, { token, body: { label: `t${i}` } });
    issued.push(answer.body.token.tokenId);
  }
  if (s.revokeOne && issued[0]) await call("DELETE", `/api/v1/providers/${code}/tokens/${issued[0]}`, { token });
  // A verified domain and the flag, written as such: what is read back is the question here; how a
  // domain earns them, tests/trust/domains.test.ts.
  if (s.publisherVerified) {
    const at = new Date();
    await db.provider.update({
      where: { providerCode: code },
      data: {
        publisherVerified: true,
        domains: {
          create: {
            domain: "example.com",
            token: "t",
            state: "VERIFIED",
            method: "DNS",
            expiresAt: at,
            verifiedAt: at,
            lastCheckedAt: at,
            nextCheckAt: at,
          },
        },
      },
    });
  }
  if (s.approved) await approve(code);
  if (s.deprecated) {
    await call("POST", `/api/v1/providers/${code}/lifecycle`, {
      token: await reviewerToken(),
      body: { state: "DEPRECATED", message: "moved", successorCode: successor },
    });
  }
  return code;
}

describe("raw reads equal Prisma's", () => {
  test("for random providers, the profile read and the summary read answer what findUnique and findMany answer", async () => {
    const successor = await intake();
    await approve(successor.providerCode);
    // Random, but both sides of what varies most are always among them.
    const [first, second, ...others] = fc.sample(shape, { numRuns: 12 }) as Shape[];
    const samples = [
      { ...first!, policy: undefined, deprecated: true, publisherVerified: true },
      {
        ...second!,
        policy: { humanOversight: "ALWAYS" as const, dataRetentionDays: 30 },
        deprecated: false,
        publisherVerified: false,
      },
      ...others,
    ];
    const codes: string[] = [];
    for (const sample of samples) codes.push(await providerOf(sample, successor.providerCode));

    for (const providerCode of [...codes, successor.providerCode]) {
      const raw = await readProvider(db, providerCode, { tokens: true, events: true, domains: true });
      const orm = await db.provider.findUniqueOrThrow({
        where: { providerCode },
        include: {
          tokens: { orderBy: { id: "asc" }, omit: { hash: true } },
          events: { orderBy: { id: "asc" } },
          domains: { where: { state: "VERIFIED" }, orderBy: { id: "asc" }, omit: { token: true } },
        },
      });
      // Health is read with the row (null: nothing probes in this file), not a column of it.
      const { predecessorRows, healthRow, ...rest } = raw as NonNullable<typeof raw>;
      expect(healthRow).toBeNull();
      expect(rest).toEqual(orm);
      // Predecessors: the providers naming this one as successor, by code.
      const predecessors = await db.provider.findMany({
        where: { successorCode: providerCode },
        select: { id: true, providerCode: true, visibility: true, reviewStage: true },
        orderBy: { providerCode: "asc" },
      });
      expect(predecessorRows).toEqual(predecessors);
    }
    expect(
      (await readProvider(db, successor.providerCode, { tokens: true, events: true, domains: true }))?.predecessorRows
        .length,
    ).toBe(samples.filter((s) => s.deprecated).length);

    const ids = (await db.provider.findMany({ where: { providerCode: { in: codes } }, select: { id: true } })).map(
      (p) => p.id,
    );
    const summaries = await summariesByIds(db, ids);
    const ormSummaries = await db.provider.findMany({
      where: { id: { in: ids } },
      select: { ...SUMMARY_SELECT, version: true },
    });
    const byId = <T extends { id: number }>(rows: T[]) => [...rows].sort((a, b) => a.id - b.id);
    expect(byId(summaries)).toEqual(byId(ormSummaries));
    expect(summaries).toHaveLength(codes.length);
    expect(new Set(summaries.map((s) => s.publisherVerified))).toEqual(new Set([true, false]));
  });

  test("a profile read without its relations answers them empty, the row unchanged", async () => {
    const created = await intake({ policy: null, description: null });
    const raw = await readProvider(db, created.providerCode, { tokens: false, events: false, domains: false });
    const orm = await db.provider.findUniqueOrThrow({ where: { providerCode: created.providerCode } });
    expect(raw).toEqual({ ...orm, tokens: [], events: [], domains: [], predecessorRows: [], healthRow: null });
    expect(
      await readProvider(db, `${created.providerCode}-none`, { tokens: true, events: true, domains: true }),
    ).toBeNull();
  });
});
