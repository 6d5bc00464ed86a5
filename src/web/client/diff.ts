/**
 * A version's changes as rows a person can read, from the RFC 6902 JSON Patch the server computes
 * (GET /api/v1/providers/{code}/versions/{from}/diff/{to}): which field (by path, like
 * `capabilities.0.name`) was added, removed or changed, with the value before and after. Changes
 * inside a list of plain values (labels, tags, scopes) show the whole list; lists of objects item
 * by item. The "before" values come from the earlier version's snapshot, the patch applied to it
 * one operation at a time.
 */

import type { PatchOperation } from "./types.ts";

/** One RFC 6902 operation as the API answers it (members an operation does not use are null). */
export type { PatchOperation };

export interface Change {
  path: string;
  kind: "added" | "removed" | "changed";
  before: unknown;
  after: unknown;
}

type Container = Record<string, unknown> | unknown[];

const isEmpty = (v: unknown) => v === null || v === undefined;
const isPlain = (v: unknown) => v === null || typeof v !== "object";
const clone = <T>(v: T): T => (v === undefined ? v : (JSON.parse(JSON.stringify(v)) as T));

function segmentsOf(pointer: string): string[] {
  return pointer === ""
    ? []
    : pointer
        .slice(1)
        .split("/")
        .map((s) => s.replace(/~1/g, "/").replace(/~0/g, "~"));
}

function get(document: unknown, segments: string[]): unknown {
  let node = document;
  for (const s of segments) {
    if (node === null || typeof node !== "object") return undefined;
    node = (node as Record<string, unknown>)[s];
  }
  return node;
}

/** Applies one add, remove or replace to `document` in place (what the server's patches hold). */
function apply(document: unknown, op: PatchOperation): void {
  const segments = segmentsOf(op.path);
  const last = segments.pop();
  const parent = get(document, segments) as Container | undefined;
  if (last === undefined || parent === null || typeof parent !== "object") {
    throw new Error(`The change ${op.op} ${op.path} does not fit the earlier version`);
  }
  if (Array.isArray(parent)) {
    const index = last === "-" ? parent.length : Number(last);
    if (op.op === "add") parent.splice(index, 0, clone(op.value));
    else if (op.op === "remove") parent.splice(index, 1);
    else if (op.op === "replace") parent[index] = clone(op.value);
  } else if (op.op === "remove") {
    delete parent[last];
  } else if (op.op === "add" || op.op === "replace") {
    parent[last] = clone(op.value);
  }
}

/** The rows of the changes a patch makes to `before` (which is not modified). */
export function patchChanges(before: unknown, patch: readonly PatchOperation[]): Change[] {
  const document = clone(before);
  const rows: (Change & { list?: string[] })[] = [];
  for (const op of patch) {
    if (op.op !== "add" && op.op !== "remove" && op.op !== "replace") continue; // never sent by the server
    const segments = segmentsOf(op.path);
    const parentPath = segments.slice(0, -1);
    const parent = get(document, parentPath);
    const inPlainList = Array.isArray(parent) && parent.every(isPlain) && (op.op === "remove" || isPlain(op.value));
    if (inPlainList) {
      // The whole list is one row, however many operations it takes.
      const path = parentPath.join(".");
      const previous = rows.at(-1);
      if (!previous || previous.path !== path || !previous.list) {
        rows.push({ path, kind: "changed", before: clone(parent), after: null, list: parentPath });
      }
      apply(document, op);
      const row = rows.at(-1) as Change & { list: string[] };
      row.after = clone(get(document, row.list));
      continue;
    }
    const last = segments.at(-1);
    if (Array.isArray(parent) && last === "-") segments[segments.length - 1] = String(parent.length);
    const previousValue = op.op === "add" ? null : clone(get(document, segments));
    apply(document, op);
    const after = op.op === "remove" ? null : clone(op.value);
    const kind = isEmpty(previousValue) ? "added" : isEmpty(after) ? "removed" : "changed";
    rows.push({ path: segments.join("."), kind, before: previousValue ?? null, after: after ?? null });
  }
  return rows.map(({ list: _list, ...row }) => row);
}

/** One operation of a patch in words, without the document it applies to. */
export interface PatchStep {
  kind: "added" | "removed" | "changed" | "moved" | "copied";
  /** The pointer's segments; `-` (the end of a list) is kept. */
  path: string[];
  /** Where a move or copy took the value from. */
  from: string[] | null;
  /** The value added or put in place; undefined for a remove, move or copy. */
  value: unknown;
}

const STEP_KIND: Record<string, PatchStep["kind"] | undefined> = {
  add: "added",
  remove: "removed",
  replace: "changed",
  move: "moved",
  copy: "copied",
};

/**
 * The operations of a patch whose "before" document the page does not hold (the live agent's drift:
 * the prober keeps what it saw, not the page), one step each. Anything that is not an RFC 6902
 * operation, and `test`, which changes nothing, is left out.
 */
export function patchSteps(patch: unknown): PatchStep[] {
  if (!Array.isArray(patch)) return [];
  const steps: PatchStep[] = [];
  for (const op of patch as unknown[]) {
    if (op === null || typeof op !== "object") continue;
    const { op: name, path, from, value } = op as Record<string, unknown>;
    const kind = typeof name === "string" ? STEP_KIND[name] : undefined;
    if (!kind || typeof path !== "string") continue;
    steps.push({
      kind,
      path: segmentsOf(path),
      from: typeof from === "string" ? segmentsOf(from) : null,
      value: kind === "added" || kind === "changed" ? value : undefined,
    });
  }
  return steps;
}
