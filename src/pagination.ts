/**
 * Cursor pagination shared by every list (API.md §4 "Lists"): `limit` 1–100 (default 20), an opaque
 * cursor holding the sort key of the last item, and `nextCursor` null on the last page.
 */
import { badInput } from "./errors.ts";

export const DEFAULT_LIMIT = 20;
export const MAX_LIMIT = 100;

/** The page size asked for, or a 400 naming `limit`. */
export function pageSize(limit: number | null | undefined): number {
  if (limit === null || limit === undefined) return DEFAULT_LIMIT;
  if (!Number.isInteger(limit) || limit < 1 || limit > MAX_LIMIT) {
    throw badInput(`limit must be a whole number from 1 to ${MAX_LIMIT}`, [
      { path: "limit", message: `must be from 1 to ${MAX_LIMIT}` },
    ]);
  }
  return limit;
}

export function encodeCursor(key: readonly (string | number)[]): string {
  return Buffer.from(JSON.stringify(key)).toString("base64url");
}

/** The sort key inside a cursor, checked against the shape the list expects. */
export function decodeCursor<T extends readonly ("string" | "number")[]>(
  cursor: string | null | undefined,
  shape: T,
): { [K in keyof T]: T[K] extends "string" ? string : number } | null {
  if (cursor === null || cursor === undefined) return null;
  let key: unknown;
  try {
    key = JSON.parse(Buffer.from(cursor, "base64url").toString("utf8"));
  } catch {
    key = null;
  }
  if (!Array.isArray(key) || key.length !== shape.length || key.some((v, i) => typeof v !== shape[i])) {
    throw badInput("cursor is not valid; use the nextCursor of a previous page", [
      { path: "cursor", message: "not a cursor this list issued" },
    ]);
  }
  return key as never;
}

/** Splits a fetched `limit + 1` rows into the page and the cursor of the next one. */
export function page<T>(rows: T[], limit: number, keyOf: (row: T) => readonly (string | number)[]) {
  const items = rows.slice(0, limit);
  const last = items[items.length - 1];
  return { items, nextCursor: rows.length > limit && last ? encodeCursor(keyOf(last)) : null };
}
