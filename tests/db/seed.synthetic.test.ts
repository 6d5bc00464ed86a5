/**
 * The synthetic seed (scripts/synthetic/) writes past Prisma, straight into the tables; these
 * tests check that what it writes is what the API would have written: every agent readable, every
 * profile valid by the rules, lists honest. Always on a temporary SQLite file of its own (never the
 * run's shared database); when the suite runs on PostgreSQL, also on a throwaway PostgreSQL
 * database this file creates and drops.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, test } from "@jest/globals";
import { seedSynthetic } from "../../scripts/synthetic/seed.ts";
import { MARKERS } from "../../scripts/synthetic/vocabulary.ts";
import { type Db, openDb } from "../../src/db/client.ts";
import { AGENT_TYPES, TRUST_TIERS, VISIBILITIES, validateIntake } from "../../src/providers/provider.rules.ts";
import { createApp } from "../../src/yoga.ts";
import { copyOfTemplate, ON_POSTGRES } from "../database.ts";
import { config, reviewerToken } from "../helpers.ts";

const NOW = new Date("2026-01-01T00:00:00Z");

/** A seeded database with its own app, and a REST caller for it. */
async function seeded(databaseUrl: string, count: number, seed: number) {
  const result = await seedSynthetic({ databaseUrl, count, seed, now: NOW });
  const db = await openDb(databaseUrl);
  const app = createApp({ ...config, databaseUrl }, db);
  const get = async (path: string, token?: string) => {
    const res = await app.fetch(`http://registry.test${path}`, {
      headers: token ? { authorization: `Bearer ${token}` } : {},
    });
    return { status: res.status, body: (await res.json()) as any };
  };
  return { result, db, get };
}

/** The checks every seeded database must pass. */
function checks(ctx: () => { db: Db; get: Awaited<ReturnType<typeof seeded>>["get"]; count: number }) {
  test("writes one provider, version 1 and one intake review per agent, and a label row per label", async () => {
    const { db, count } = ctx();
    expect(await db.provider.count()).toBe(count);
    expect(await db.providerVersion.count({ where: { version: 1 } })).toBe(count);
    expect(await db.review.count({ where: { kind: "INTAKE" } })).toBe(count);
    expect(await db.accessToken.count()).toBe(0);
    const providers = await db.provider.findMany({ select: { labels: true } });
    const labelRows = providers.reduce((n, p) => n + (p.labels as string[]).length, 0);
    expect(await db.providerLabel.count()).toBe(labelRows);
    expect(await db.reviewEvent.count()).toBeGreaterThanOrEqual(count);
  });

  test("gives unique provider and review codes of the documented forms", async () => {
    const { db, count } = ctx();
    const providers = await db.provider.findMany({ select: { providerCode: true } });
    const reviews = await db.review.findMany({ select: { reviewCode: true } });
    expect(new Set(providers.map((p) => p.providerCode)).size).toBe(count);
    expect(new Set(reviews.map((r) => r.reviewCode)).size).toBe(count);
    for (const { providerCode } of providers) expect(providerCode).toMatch(/^[a-z0-9](?:[a-z0-9-]{1,61}[a-z0-9])$/);
    for (const { reviewCode } of reviews) expect(reviewCode).toMatch(/^RV-[0-9A-HJKMNP-TV-Z]{8}$/);
  });

  test("stores snapshots that the intake rules accept unchanged", async () => {
    const { db } = ctx();
    const versions = await db.providerVersion.findMany({ select: { snapshot: true } });
    for (const { snapshot } of versions) {
      const valid = validateIntake(snapshot as Record<string, unknown>);
      if (!valid.ok) throw new Error(`invalid snapshot ${JSON.stringify(valid.errors)}: ${JSON.stringify(snapshot)}`);
      const { providerCode: _, ...profile } = valid.value;
      expect(profile).toEqual(snapshot);
    }
  });

  test("every agent answers 200 to a reviewer, with the documented sections", async () => {
    const { db, get } = ctx();
    const token = await reviewerToken("seed-checker");
    const rows = await db.provider.findMany({ select: { providerCode: true, reviewStage: true } });
    for (const { providerCode, reviewStage } of rows) {
      const { status, body } = await get(`/api/v1/providers/${providerCode}`, token);
      expect([providerCode, status]).toEqual([providerCode, 200]);
      expect(body).toMatchObject({ providerCode, reviewStage, version: 1 });
      expect(AGENT_TYPES).toContain(body.agentType);
      expect(VISIBILITIES).toContain(body.visibility);
      expect(TRUST_TIERS).toContain(body.trustTier);
      expect(Array.isArray(body.labels) && body.labels.length <= 6).toBe(true);
      for (const c of body.capabilities) {
        expect(c).toMatchObject({ key: expect.any(String), name: expect.any(String), tags: expect.any(Array) });
        expect(c.inputModes.length).toBeGreaterThan(0);
      }
      for (const m of body.models) expect(m).toMatchObject({ vendor: expect.any(String), model: expect.any(String) });
      for (const t of body.tools) expect(t).toMatchObject({ name: expect.any(String), scopes: expect.any(Array) });
      expect(body.endpoint).toMatchObject({ url: expect.stringMatching(/^https:\/\//), protocol: expect.any(String) });
      if (body.policy !== null) expect(body.policy).toMatchObject({ humanOversight: expect.any(String) });
      expect(body.roles[0]).toMatchObject({ role: "OWNER" });
      expect(body.reviewTimeline[0]).toMatchObject({ kind: "SUBMITTED" });
      expect(new Date(body.updatedAt).getTime()).toBeGreaterThanOrEqual(new Date(body.createdAt).getTime());
    }
  });

  test("the anonymous list shows exactly the PUBLIC and APPROVED agents, newest first", async () => {
    const { db, get } = ctx();
    const expected = await db.provider.count({ where: { visibility: "PUBLIC", reviewStage: "APPROVED" } });
    const seen: { visibility: string; reviewStage: string; updatedAt: string }[] = [];
    let cursor: string | null = null;
    do {
      const { status, body }: { status: number; body: any } = await get(
        `/api/v1/providers?limit=100${cursor ? `&cursor=${cursor}` : ""}`,
      );
      expect(status).toBe(200);
      seen.push(...body.items);
      cursor = body.nextCursor;
    } while (cursor);
    expect(seen.length).toBe(expected);
    for (const item of seen) expect([item.visibility, item.reviewStage]).toEqual(["PUBLIC", "APPROVED"]);
    const times = seen.map((i) => new Date(i.updatedAt).getTime());
    expect(times).toEqual([...times].sort((a, b) => b - a));
  });
}

/** Distribution and determinism, on SQLite only (the generator is the same for both dialects). */
describe("seed:synthetic on a temporary SQLite file", () => {
  const folder = mkdtempSync(join(tmpdir(), "agent-registry-seed-"));
  const COUNT = 500;
  let s: Awaited<ReturnType<typeof seeded>>;

  beforeAll(async () => {
    s = await seeded(`file:${join(folder, "seed.db")}`, COUNT, 7);
  }, 60_000);
  afterAll(async () => {
    await s?.db.$disconnect();
    rmSync(folder, { recursive: true, force: true });
  });

  checks(() => ({ db: s.db, get: s.get, count: COUNT }));

  test("is not degenerate: every type and visibility, mostly approved, Zipf-ish labels, markers selective", async () => {
    const providers = await s.db.provider.findMany({
      select: { agentType: true, visibility: true, reviewStage: true, trustTier: true, labels: true, summary: true },
    });
    const share = (f: (p: (typeof providers)[number]) => boolean) => providers.filter(f).length / providers.length;
    for (const t of AGENT_TYPES) expect([t, share((p) => p.agentType === t) > 0.03]).toEqual([t, true]);
    for (const v of VISIBILITIES) expect([v, share((p) => p.visibility === v) > 0.01]).toEqual([v, true]);
    expect(share((p) => p.reviewStage === "APPROVED")).toBeGreaterThan(0.7);
    expect(share((p) => p.reviewStage === "APPROVED")).toBeLessThan(0.95);
    expect(new Set(providers.map((p) => p.reviewStage)).size).toBeGreaterThanOrEqual(5);
    expect(new Set(providers.map((p) => p.trustTier)).size).toBe(4);
    const counts = new Map<string, number>();
    for (const p of providers) for (const l of p.labels as string[]) counts.set(l, (counts.get(l) ?? 0) + 1);
    const ranked = [...counts.values()].sort((a, b) => b - a);
    expect(ranked.length).toBeGreaterThan(40);
    expect(ranked[0]!).toBeGreaterThan(4 * ranked[19]!);
    expect(share((p) => (p.labels as string[]).length === 0)).toBeGreaterThan(0.02);
    expect(share((p) => (p.labels as string[]).length >= 5)).toBeGreaterThan(0.05);
    for (const m of MARKERS) {
      const hits = providers.filter((p) => p.summary.includes(m.word)).length;
      expect([m.word, hits]).toEqual([m.word, Math.min(COUNT, m.rows)]);
    }
    const updated = await s.db.provider.findMany({ select: { updatedAt: true } });
    const spanDays =
      (Math.max(...updated.map((u) => +u.updatedAt)) - Math.min(...updated.map((u) => +u.updatedAt))) / 864e5;
    expect(spanDays).toBeGreaterThan(300);
  });

  test("leaves the search index merged into one segment, as a bulk load should", async () => {
    // Grown by the triggers batch by batch, the index would be many segments with merges pending,
    // which every later write pays a slice of (scripts/synthetic/writer.sqlite.ts, finish).
    const [segments] = await s.db.$queryRawUnsafe<{ n: bigint | number }[]>(
      `SELECT count(DISTINCT "segid") AS n FROM "provider_search_idx"`,
    );
    expect(Number(segments?.n)).toBe(1);
    // And it still finds every row: a reviewer sees all of them.
    const marker = MARKERS[0];
    const found = await s.get(`/api/v1/providers?search=${marker.word}&limit=100`, await reviewerToken("seed-checker"));
    expect(found.status).toBe(200);
    expect(found.body.items.length).toBe(Math.min(COUNT, marker.rows));
  });

  test("is deterministic for a seed", async () => {
    const again = await seeded(`file:${join(folder, "again.db")}`, 50, 7);
    const other = await seeded(`file:${join(folder, "other.db")}`, 50, 8);
    try {
      const pick = (db: Db) =>
        db.provider.findMany({
          where: { id: { lte: 50 } },
          orderBy: { id: "asc" },
          select: { providerCode: true, name: true, labels: true, updatedAt: true, endpoint: true },
        });
      const first = (await seeded(`file:${join(folder, "first.db")}`, 50, 7)).db;
      expect(await pick(again.db)).toEqual(await pick(first));
      expect(await pick(other.db)).not.toEqual(await pick(first));
      await first.$disconnect();
    } finally {
      await again.db.$disconnect();
      await other.db.$disconnect();
    }
  });
});

// Only when the suite runs on PostgreSQL: a database of its own.
if (ON_POSTGRES) {
  describe("seed:synthetic on a throwaway PostgreSQL database", () => {
    const COUNT = 200;
    let s: Awaited<ReturnType<typeof seeded>>;

    beforeAll(async () => {
      s = await seeded(await copyOfTemplate(), COUNT, 3);
    }, 60_000);
    afterAll(async () => {
      await s?.db.$disconnect();
    });

    checks(() => ({ db: s.db, get: s.get, count: COUNT }));

    test("leaves the id sequences past the reserved ids", async () => {
      const created = await s.db.review.create({
        data: { reviewCode: "RV-TESTSEQ0", providerId: 1, kind: "UPDATE" },
        select: { id: true },
      });
      expect(created.id).toBeGreaterThan(COUNT);
    });
  });
}
