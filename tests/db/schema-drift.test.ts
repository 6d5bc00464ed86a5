/**
 * The model in prisma/schema.prisma is the one source of truth; each dialect's migrations must build
 * exactly its tables and columns. CI runs this suite once on SQLite and once on PostgreSQL, so a
 * migration that drifts from the model — in either dialect — fails here.
 */
import { readdirSync, readFileSync } from "node:fs";
import { describe, expect, test } from "@jest/globals";
import { postgresSchema } from "../../scripts/prisma-generate.mjs";
import { dialectOf } from "../../src/db/client.ts";
import { getDatamodel } from "../../src/generated/pothos-prisma-types.ts";
import { config, db, tableNames } from "../helpers.ts";

/** Columns a migration adds beyond the model on purpose (search indexes kept by the database). */
const EXTRA_COLUMNS: Record<string, string[]> = {
  // PostgreSQL: the generated tsvector of 20261121020000_search (full-text search), not in the model.
  providers: ["searchVector"],
};

type Catalog = Map<string, Map<string, { nullable: boolean }>>;

async function catalog(): Promise<Catalog> {
  const tables: Catalog = new Map();
  const postgres = dialectOf(config.databaseUrl) === "postgresql";
  for (const { name } of await tableNames()) {
    const columns = postgres
      ? await db.$queryRawUnsafe<{ name: string; nullable: string }[]>(
          `SELECT column_name AS name, is_nullable AS nullable FROM information_schema.columns WHERE table_schema = current_schema() AND table_name = $1`,
          name,
        )
      : (
          await db.$queryRawUnsafe<{ name: string; notnull: number | bigint; pk: number | bigint }[]>(
            `PRAGMA table_info("${name}")`,
          )
        ).map((c) => ({ name: c.name, nullable: Number(c.notnull) === 0 && Number(c.pk) === 0 ? "YES" : "NO" }));
    tables.set(name, new Map(columns.map((c) => [c.name, { nullable: c.nullable === "YES" }])));
  }
  return tables;
}

/** The model: table name, then each scalar column and whether it may be null. */
function model(): Map<string, Map<string, { nullable: boolean }>> {
  const runtime = (db as unknown as { _runtimeDataModel: { models: Record<string, { dbName: string | null }> } })
    ._runtimeDataModel.models;
  const { models } = getDatamodel().datamodel;
  return new Map(
    Object.entries(models).map(([name, m]) => [
      runtime[name]?.dbName ?? name,
      new Map(
        m.fields
          .filter((f) => f.kind === "scalar")
          .map((f) => [(f as { dbName?: string }).dbName ?? f.name, { nullable: !f.isRequired }]),
      ),
    ]),
  );
}

describe(`the ${dialectOf(config.databaseUrl)} schema built by the migrations`, () => {
  test("has every table of the model with exactly its columns and their nullability", async () => {
    const built = await catalog();
    for (const [table, columns] of model()) {
      const actual = built.get(table);
      expect([table, actual ? "present" : "missing"]).toEqual([table, "present"]);
      const extra = new Set(EXTRA_COLUMNS[table] ?? []);
      const actualColumns = [...(actual?.keys() ?? [])].filter((c) => !extra.has(c)).sort();
      expect([table, actualColumns]).toEqual([table, [...columns.keys()].sort()]);
      for (const [column, { nullable }] of columns) {
        expect([table, column, actual?.get(column)?.nullable]).toEqual([table, column, nullable]);
      }
    }
  });

  test("is recorded in _prisma_migrations, one row per migration of this dialect", async () => {
    const folder = new URL(`../../prisma/migrations/${dialectOf(config.databaseUrl)}/`, import.meta.url);
    const names = readdirSync(folder, { withFileTypes: true })
      .filter((e) => e.isDirectory())
      .map((e) => e.name)
      .sort();
    const rows = await db.$queryRawUnsafe<{ migration_name: string }[]>(
      `SELECT migration_name FROM "_prisma_migrations" WHERE finished_at IS NOT NULL ORDER BY migration_name`,
    );
    expect(rows.map((r) => r.migration_name)).toEqual(names);
  });
});

describe("the dialects", () => {
  test("have the same migration steps", () => {
    const steps = (dialect: string) =>
      readdirSync(new URL(`../../prisma/migrations/${dialect}/`, import.meta.url), { withFileTypes: true })
        .filter((e) => e.isDirectory())
        .map((e) => e.name)
        .sort();
    expect(steps("postgresql")).toEqual(steps("sqlite"));
  });

  test("the PostgreSQL client is generated from the current model", () => {
    const source = readFileSync(new URL("../../prisma/schema.prisma", import.meta.url), "utf8");
    const twin = readFileSync(new URL("../../src/generated/postgresql.prisma", import.meta.url), "utf8");
    expect(twin).toBe(postgresSchema(source));
  });
});
