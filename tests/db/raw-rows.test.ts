/**
 * `queryRows` (src/db/client.ts) on the service's own SQLite connection takes its rows straight from
 * better-sqlite3 as objects (src/db/sqlite.ts); a connection without that path — here a test's
 * counting adapter, which the round-trip tests read through — answers through the driver adapter's
 * `queryRaw`. Both must bind the arguments alike (a Date, a boolean, null) and answer the same values,
 * and a statement that returns no rows must still run. On PostgreSQL both are `$queryRaw`.
 */
import { afterAll, describe, expect, test } from "@jest/globals";
import { queryRows } from "../../src/db/client.ts";
import { asDate, asJson } from "../../src/db/model.ts";
import { Prisma } from "../../src/generated/prisma/client.ts";
import { config, db, intake } from "../helpers.ts";
import { openCountingDb } from "../perf/counting.db.ts";

const adapter = await openCountingDb(config.databaseUrl);
afterAll(() => adapter.db.$disconnect());

describe("raw rows", () => {
  test("the service's connection answers what the driver adapter answers, arguments bound alike", async () => {
    const created = await intake();
    const soon = new Date(Date.now() + 60_000);
    const select = (code: string, until: Date, flag: boolean) =>
      Prisma.sql`SELECT p."id", p."providerCode", p."capabilities", p."policy", p."successorCode", p."createdAt", p."version"
        FROM "providers" AS p
        WHERE p."providerCode" = ${code} AND p."createdAt" <= ${until} AND (${flag} OR p."id" < 0) AND COALESCE(${null}, p."providerCode") = p."providerCode"`;

    const direct = await queryRows(db, select(created.providerCode, soon, true));
    expect(direct).toEqual(await queryRows(adapter.db, select(created.providerCode, soon, true)));
    expect(direct).toHaveLength(1);
    const [row] = direct as [Record<string, unknown>];
    expect(row.providerCode).toBe(created.providerCode);
    expect(row.version).toBe(1);
    expect(row.successorCode).toBeNull();
    expect(asDate(row.createdAt).getTime()).toBeLessThanOrEqual(soon.getTime());
    expect(asJson(row.capabilities)).toEqual(expect.any(Array));

    // Each bound argument decides: a Date before the row, `false`, another code — no row.
    const past = new Date(Date.now() - 3_600_000);
    expect(await queryRows(db, select(created.providerCode, past, true))).toEqual([]);
    expect(await queryRows(db, select(created.providerCode, soon, false))).toEqual([]);
    expect(await queryRows(db, select(`${created.providerCode}-x`, soon, true))).toEqual([]);
  });

  test("a statement that returns no rows runs, and answers none", async () => {
    const created = await intake();
    const when = new Date("2030-01-02T03:04:05.678Z");
    const update = Prisma.sql`UPDATE "access_tokens" SET "lastUsedAt" = ${when}
      WHERE "providerId" = (SELECT "id" FROM "providers" WHERE "providerCode" = ${created.providerCode})`;
    expect(await queryRows(db, update)).toEqual([]);
    const token = await db.accessToken.findFirstOrThrow({
      where: { provider: { providerCode: created.providerCode } },
    });
    expect(token.lastUsedAt?.toISOString()).toBe(when.toISOString());
    // Stored as the ORM stores its own instants (on SQLite, text: a bound Date has its format).
    const [stored] = (await queryRows(
      adapter.db,
      Prisma.sql`SELECT "lastUsedAt", "createdAt" FROM "access_tokens" WHERE "id" = ${token.id}`,
    )) as [Record<string, unknown>];
    if (typeof stored.createdAt === "string") {
      expect(stored.lastUsedAt).toBe(when.toISOString().replace("Z", stored.createdAt.slice(23)));
    } else {
      expect(asDate(stored.lastUsedAt).toISOString()).toBe(when.toISOString());
    }
  });
});
