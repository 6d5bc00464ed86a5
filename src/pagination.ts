/**
 * Cursor pagination shared by every list (API.md §4 "Lists"): `limit` 1–100 (default 20), an opaque
 * cursor holding the sort key of the last item, and `nextCursor` null on the last page.
 */
import { badInput } from "./errors.ts";

export const DEFAULT_LIMIT = 20;
export const MAX_LIMIT = 100;

/** The page size asked for, or a 400 naming `limit`; `fallback` when none is asked for. */
export function pageSize(limit: number | null | undefined, fallback = DEFAULT_LIMIT): number {
  if (limit === null || limit === undefined) return fallback;
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

/** What an element of a cursor's sort key is: an id or rank, a timestamp, a short text. */
type KeyKind = "int" | "date" | "string";
type KeyValue<K> = K extends "date" ? Date : K extends "int" ? number : string;

/** A cursor longer than this was not issued by a list. */
const MAX_CURSOR_LENGTH = 512;

/** An element of a decoded key as its kind wants it; undefined when it is not one. */
function keyValue(value: unknown, kind: KeyKind): number | Date | string | undefined {
  switch (kind) {
    case "int":
      return Number.isSafeInteger(value) && (value as number) >= 0 ? (value as number) : undefined;
    case "date": {
      // Exactly as encoded (toISOString), in years both databases hold.
      const date = typeof value === "string" ? new Date(value) : undefined;
      const year = date?.getUTCFullYear() ?? Number.NaN;
      return date && year >= 1 && year <= 9999 && date.toISOString() === value ? date : undefined;
    }
    default:
      return typeof value === "string" && value.length <= 64 ? value : undefined;
  }
}

/**
 * The sort key inside a cursor, each element checked against the kind the list expects; a cursor
 * that does not decode to exactly that shape is a 400 naming `cursor`.
 */
export function decodeCursor<T extends readonly KeyKind[]>(
  cursor: string | null | undefined,
  shape: T,
): { [K in keyof T]: KeyValue<T[K]> } | null {
  if (cursor === null || cursor === undefined) return null;
  let key: unknown;
  try {
    if (cursor.length > MAX_CURSOR_LENGTH || !/^[A-Za-z0-9_-]*$/.test(cursor)) throw new Error("not base64url");
    key = JSON.parse(Buffer.from(cursor, "base64url").toString("utf8"));
  } catch {
    key = null;
  }
  const values =
    Array.isArray(key) && key.length === shape.length ? key.map((v, i) => keyValue(v, shape[i] as KeyKind)) : [];
  if (values.length !== shape.length || values.includes(undefined)) {
    throw badInput("cursor is not valid; use the nextCursor of a previous page", [
      { path: "cursor", message: "not a cursor this list issued" },
    ]);
  }
  return values as never;
}

/** Splits a fetched `limit + 1` rows into the page and the cursor of the next one. */
export function page<T>(rows: T[], limit: number, keyOf: (row: T) => readonly (string | number)[]) {
  const items = rows.slice(0, limit);
  const last = items[items.length - 1];
  return { items, nextCursor: rows.length > limit && last ? encodeCursor(keyOf(last)) : null };
}
