/**
 * The Prisma model as the raw statements see it: each model's columns and how a raw row's values
 * become the values Prisma's client would answer. Derived from the generated datamodel, so a column
 * added to `prisma/schema.prisma` is read by every raw statement without another edit.
 */

import { getDatamodel } from "../generated/pothos-prisma-types.ts";
import type { Prisma } from "../generated/prisma/client.ts";

/** A DateTime as the drivers answer it: a Date, an ISO string (SQLite, JSON) or epoch ms. */
export function asDate(value: unknown): Date {
  if (value instanceof Date) return value;
  if (typeof value === "number" || typeof value === "bigint") return new Date(Number(value));
  const text = String(value);
  // PostgreSQL's JSON renders `timestamp(3)` (UTC, without zone) without an offset: it is UTC.
  return new Date(/(?:[zZ]|[+-]\d\d:?\d\d)$/.test(text) ? text : `${text}Z`);
}

/** A Json column as the drivers answer it: parsed already (PostgreSQL) or text (SQLite). */
export function asJson(value: unknown): Prisma.JsonValue {
  return typeof value === "string" ? (JSON.parse(value) as Prisma.JsonValue) : (value as Prisma.JsonValue);
}

const absent = (value: unknown) => value === null || value === undefined;

/** How a raw value of each Prisma scalar type becomes Prisma's value. */
const READERS: Record<string, (value: unknown) => unknown> = {
  Int: Number,
  Float: Number,
  Boolean: (value) => value === true || value === 1 || value === 1n,
  DateTime: asDate,
  Json: asJson,
  String: (value) => value,
};

export interface Column {
  name: string;
  /** The Prisma scalar type: `String`, `Int`, `DateTime`, `Json`… */
  type: string;
  required: boolean;
  read: (value: unknown) => unknown;
}

const models = getDatamodel().datamodel.models as unknown as Record<
  string,
  { fields: { name: string; kind: string; type: string; isRequired: boolean }[] }
>;

/** The scalar columns of a model, in the model's order, but those left out. */
export function columnsOf(model: Prisma.ModelName, except: readonly string[] = []): readonly Column[] {
  const fields = models[model]?.fields;
  if (!fields) throw new Error(`No model ${model}`);
  return fields
    .filter((f) => f.kind === "scalar" && !except.includes(f.name))
    .map((f) => {
      const read = READERS[f.type];
      if (!read) throw new Error(`${model}.${f.name}: no reader for ${f.type}`);
      return { name: f.name, type: f.type, required: f.isRequired, read };
    });
}

/** Only the named columns of a model, in the order given. */
export function pickColumns(model: Prisma.ModelName, names: readonly string[]): readonly Column[] {
  const all = columnsOf(model);
  return names.map((name) => {
    const column = all.find((c) => c.name === name);
    if (!column) throw new Error(`${model} has no column ${name}`);
    return column;
  });
}

/**
 * Turns a raw row into the object Prisma would answer for these columns: every key present, in
 * the columns' order (one object shape), a missing optional value as null.
 */
export function rowReader<T>(columns: readonly Column[]): (raw: Record<string, unknown>) => T {
  return (raw) => {
    const row: Record<string, unknown> = {};
    for (const column of columns) {
      const value = raw[column.name];
      row[column.name] = absent(value) ? null : column.read(value);
    }
    return row as T;
  };
}

/** `"alias"."column", …` for a SELECT; names come from the model, never from input. */
export function columnList(columns: readonly Column[], alias?: string): string {
  return columns.map((c) => (alias ? `"${alias}"."${c.name}"` : `"${c.name}"`)).join(", ");
}
