/**
 * The differences between two version snapshots, as rows a person can read: which field (by path,
 * like `capabilities.0.name`) was added, removed or changed, with the value before and after.
 * Lists of plain values (labels, tags, scopes) compare as a whole; lists of objects item by item.
 */

export interface Change {
  path: string;
  kind: "added" | "removed" | "changed";
  before: unknown;
  after: unknown;
}

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === "object" && v !== null && !Array.isArray(v);
const isEmpty = (v: unknown) => v === null || v === undefined;

function equal(a: unknown, b: unknown): boolean {
  return JSON.stringify(a) === JSON.stringify(b);
}

export function diffValues(before: unknown, after: unknown, path = ""): Change[] {
  if (equal(before, after)) return [];
  const at = (key: string | number) => (path ? `${path}.${key}` : String(key));
  if (isEmpty(before)) return [{ path, kind: "added", before: null, after }];
  if (isEmpty(after)) return [{ path, kind: "removed", before, after: null }];
  if (isObject(before) && isObject(after)) {
    const keys = [...new Set([...Object.keys(before), ...Object.keys(after)])];
    return keys.flatMap((key) => diffValues(before[key], after[key], at(key)));
  }
  if (Array.isArray(before) && Array.isArray(after)) {
    const plain = [...before, ...after].every((v) => !isObject(v) && !Array.isArray(v));
    if (plain) return [{ path, kind: "changed", before, after }];
    const changes: Change[] = [];
    for (let i = 0; i < Math.max(before.length, after.length); i++) {
      if (i >= before.length) changes.push({ path: at(i), kind: "added", before: null, after: after[i] });
      else if (i >= after.length) changes.push({ path: at(i), kind: "removed", before: before[i], after: null });
      else changes.push(...diffValues(before[i], after[i], at(i)));
    }
    return changes;
  }
  return [{ path, kind: "changed", before, after }];
}
