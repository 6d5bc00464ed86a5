/**
 * PostgreSQL's connections (src/db/postgres.ts): pools sized by configuration, named statements, raw
 * transactions on one connection, plans kept for the raw reads and made per execution for Prisma
 * and value-dependent reads, the values the direct reads answer, and the search's walk past fresh
 * submissions. On a database of its own, in the suite's PostgreSQL run (jest.config.js).
 */
import { execFileSync } from "node:child_process";
import { afterAll, beforeAll, describe, expect, test } from "@jest/globals";
import pg from "pg";
import { type Db, openDb, queryRows, rawTransaction } from "../../src/db/client.ts";
import { statementNames } from "../../src/db/postgres.ts";
import { Prisma } from "../../src/generated/prisma/client.ts";
import { searchProviders } from "../../src/providers/provider.search.store.ts";
import { listableWhere } from "../../src/providers/provider.visibility.ts";
import { copyOfTemplate } from "../database.ts";

let URL_OF_DB: string;
let db: Db;
beforeAll(async () => {
  URL_OF_DB = await copyOfTemplate();
  db = await openDb(URL_OF_DB, { poolSize: 2 });
});
afterAll(async () => {
  await db.$disconnect();
});

const VALUES = Prisma.sql`SELECT CAST('2026-01-02 03:04:05.678' AS timestamp(3)) AS "at", CAST(${5} AS bigint) AS "n",
  CAST('{"a":[1]}' AS jsonb) AS "j", ${new Date("2026-03-04T05:06:07.089Z")}::timestamp(3) AS "echo"`;
const backend = Prisma.sql`SELECT pg_backend_pid() AS "pid", current_setting('plan_cache_mode') AS "plans", pg_sleep(0.05)::text AS "slept"`;

describe("statement names", () => {
  test("one name per text, the same every time, none past the bound", () => {
    const nameOf = statementNames(2);
    const a = nameOf("SELECT 1");
    const b = nameOf("SELECT 2");
    expect(a).toBeDefined();
    expect(b).toBeDefined();
    expect(a).not.toBe(b);
    expect(nameOf("SELECT 1")).toBe(a);
    expect(nameOf("SELECT 3")).toBeUndefined();
    expect(nameOf("SELECT 2")).toBe(b);
  });
});

describe("pools", () => {
  test("raw reads use at most DATABASE_POOL_SIZE connections, each keeping its plans", async () => {
    const rows = (await Promise.all(Array.from({ length: 12 }, () => queryRows(db, backend)))).flat();
    expect(new Set(rows.map((r) => r.pid)).size).toBeLessThanOrEqual(2);
    expect(new Set(rows.map((r) => r.plans))).toEqual(new Set(["force_generic_plan"]));
  });

  test("reads whose plan depends on their values, and Prisma's statements, are planned per execution", async () => {
    const each = (
      await Promise.all(Array.from({ length: 6 }, () => queryRows(db, backend, { planEach: true })))
    ).flat();
    expect(new Set(each.map((r) => r.pid)).size).toBeLessThanOrEqual(2);
    expect(new Set(each.map((r) => r.plans))).toEqual(new Set(["force_custom_plan"]));
    const prisma = await db.$queryRaw<{ plans: string }[]>`SELECT current_setting('plan_cache_mode') AS "plans"`;
    expect(prisma[0]?.plans).toBe("force_custom_plan");
    const inTransaction = await db.$transaction((tx) => queryRows(tx, backend));
    expect(inTransaction[0]?.plans).toBe("force_custom_plan");
  });

  test("a read is a named statement, prepared once on its connection", async () => {
    const one = await openDb(URL_OF_DB, { poolSize: 1 });
    try {
      const read = Prisma.sql`SELECT "providerCode" FROM "providers" WHERE "providerCode" = ${"nobody"}`;
      await queryRows(one, read);
      await queryRows(one, read);
      const prepared = await queryRows(one, Prisma.sql`SELECT "statement" FROM pg_prepared_statements`);
      expect(prepared.filter((p) => p.statement === read.text)).toHaveLength(1);
    } finally {
      await one.$disconnect();
    }
  });
});

describe("raw transactions", () => {
  const setup = Prisma.sql`CREATE TABLE IF NOT EXISTS "raw_tx_probe" ("k" text PRIMARY KEY)`;
  const count = async (k: string) =>
    Number((await queryRows(db, Prisma.sql`SELECT count(*) AS "n" FROM "raw_tx_probe" WHERE "k" = ${k}`))[0]?.n);

  test("run on one connection of the per-execution pool, and commit", async () => {
    await queryRows(db, setup);
    const seen = await rawTransaction(db, async (tx) => {
      const first = await queryRows(tx, backend);
      await queryRows(tx, Prisma.sql`INSERT INTO "raw_tx_probe" ("k") VALUES (${"kept"})`);
      const second = await queryRows(tx, backend);
      const [level] = await queryRows(
        tx,
        Prisma.sql`SELECT transaction_timestamp() = statement_timestamp() AS "fresh"`,
      );
      return { first: first[0], second: second[0], level };
    });
    expect(seen.first?.pid).toBe(seen.second?.pid);
    expect(seen.first?.plans).toBe("force_custom_plan");
    // Inside a transaction begun before the statement: not autocommitted one by one.
    expect(seen.level?.fresh).toBe(false);
    expect(await count("kept")).toBe(1);
  });

  test("roll back everything when the work throws, and give its error; a unique violation is SQLSTATE 23505", async () => {
    await queryRows(db, setup);
    const failing = rawTransaction(db, async (tx) => {
      await queryRows(tx, Prisma.sql`INSERT INTO "raw_tx_probe" ("k") VALUES (${"undone"})`);
      await queryRows(tx, Prisma.sql`INSERT INTO "raw_tx_probe" ("k") VALUES (${"undone"})`);
    });
    await expect(failing).rejects.toMatchObject({ code: "23505", constraint: "raw_tx_probe_pkey" });
    expect(await count("undone")).toBe(0);
    // The connection went back to the pool usable: the next transaction on it commits.
    await rawTransaction(db, (tx) => queryRows(tx, Prisma.sql`INSERT INTO "raw_tx_probe" ("k") VALUES (${"after"})`));
    expect(await count("after")).toBe(1);
  });
});

describe("values", () => {
  test("as Prisma's $queryRaw answers them", async () => {
    const [direct] = await queryRows(db, VALUES);
    const [prisma] = await db.$queryRaw<Record<string, unknown>[]>(VALUES);
    expect(direct).toEqual({
      at: new Date("2026-01-02T03:04:05.678Z"),
      n: 5n,
      j: { a: [1] },
      echo: new Date("2026-03-04T05:06:07.089Z"),
    });
    expect(direct).toEqual(prisma);
  });

  test("timestamps are UTC whatever the process's time zone", () => {
    // A process of its own: the time zone is read when a process starts.
    const script = `
      const { openDb, queryRows } = await import("./src/db/client.ts");
      const { Prisma } = await import("./src/generated/prisma/client.ts");
      const db = await openDb(process.env.DB_URL, { poolSize: 1 });
      const [row] = await queryRows(db, Prisma.sql\`SELECT CAST('2026-01-02 03:04:05.678' AS timestamp(3)) AS "at",
        \${new Date("2026-03-04T05:06:07.089Z")}::timestamp(3) AS "echo"\`);
      process.stdout.write(JSON.stringify(row));
      await db.$disconnect();`;
    const out = execFileSync(process.execPath, ["--import", "tsx", "--input-type=module", "-e", script], {
      env: { ...process.env, TZ: "America/New_York", DB_URL: URL_OF_DB, NODE_OPTIONS: "" },
      encoding: "utf8",
    });
    expect(JSON.parse(out)).toEqual({ at: "2026-01-02T03:04:05.678Z", echo: "2026-03-04T05:06:07.089Z" });
  });

  test("a closed client's reads fail rather than open a pool again", async () => {
    const closed = await openDb(URL_OF_DB, { poolSize: 1 });
    await queryRows(closed, Prisma.sql`SELECT 1 AS "one"`);
    await closed.$disconnect();
    await expect(queryRows(closed, Prisma.sql`SELECT 1 AS "one"`)).rejects.toThrow();
  });
});

describe("the directory's search", () => {
  /** How many times PostgreSQL has walked an index of the providers table, as its statistics say. */
  async function scansOf(index: string): Promise<number> {
    const client = new pg.Client({ connectionString: URL_OF_DB });
    await client.connect();
    try {
      await client.query("SELECT pg_stat_clear_snapshot()");
      const { rows } = await client.query(`SELECT idx_scan FROM pg_stat_user_indexes WHERE indexrelname = $1`, [index]);
      return Number(rows[0]?.idx_scan ?? 0);
    } finally {
      await client.end();
    }
  }

  test("an anonymous search walks the public, approved agents, not the fresh submissions above them", async () => {
    // 300 public, approved agents, then 3,000 newer submissions still in review, all matching the word.
    const agents = (stage: string, from: number, count: number) =>
      queryRows(
        db,
        Prisma.sql`INSERT INTO "providers" ("providerCode", "name", "summary", "labels", "agentType", "visibility",
          "reviewStage", "contactEmail", "capabilities", "models", "tools", "endpoint", "roles", "updatedAt")
        SELECT 'walker-' || n, 'Walker ' || n, 'A walker', '[]', 'ASSISTANT', 'PUBLIC', ${stage}, 'a@example.com',
          '[]', '[]', '[]', '{"url":"https://walker.example.com","protocol":"A2A","authScheme":"NONE"}', '[]', now()
        FROM generate_series(${from}::int, ${from + count - 1}::int) AS n RETURNING "id"`,
      );
    await agents("APPROVED", 1, 300);
    await agents("SUBMITTED", 301, 3000);
    await queryRows(db, Prisma.sql`ANALYZE "providers"`);
    const before = await scansOf("providers_public_id_idx");
    const found = await searchProviders(db, {
      words: ["walker"],
      filters: [listableWhere({ kind: "anonymous" })],
      context: [],
      limit: 20,
      cursor: null,
    });
    expect(found.rows).toHaveLength(20);
    expect(found.rows.every((r) => r.reviewStage === "APPROVED")).toBe(true);
    // Statistics reach other sessions when a backend reports them (at most a second or so later).
    let after = before;
    for (let i = 0; i < 50 && after === before; i++) {
      await new Promise((resolve) => setTimeout(resolve, 200));
      after = await scansOf("providers_public_id_idx");
    }
    expect(after).toBeGreaterThan(before);
  });

  test("keeps each row's search vector in the row, where the walk reads it, not in the toast table", async () => {
    const [column] = await queryRows(
      db,
      Prisma.sql`SELECT "attstorage" FROM pg_attribute WHERE "attrelid" = 'providers'::regclass AND "attname" = 'searchVector'`,
    );
    // `m` (MAIN): moved out of line only when the row cannot fit otherwise; `x`, the default, goes first.
    expect(column?.attstorage).toBe("m");
  });
});
