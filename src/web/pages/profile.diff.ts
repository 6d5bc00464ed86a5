/**
 * A profile's changes as a table (field, before, after), shared by the version history and the
 * owner's edit form (its preview, and what changed meanwhile when a save meets a newer version).
 */
import type { Change } from "../client/diff.ts";
import { type Child, h } from "../client/dom.ts";

/** A value in a cell: text, a plain list joined, anything else as indented JSON. */
export function show(value: unknown): Child {
  if (value === null || value === undefined) return h("span", { class: "muted" }, "—");
  if (Array.isArray(value) && value.every((v) => typeof v !== "object" || v === null)) {
    return value.length ? value.join(", ") : h("span", { class: "muted" }, "(none)");
  }
  if (typeof value === "object") return h("pre", null, JSON.stringify(value, null, 2));
  return String(value);
}

/** The rows of `changes` under column heads of their own ("Version 2", "Your edit", …). */
export function changesTable(caption: string, before: string, after: string, changes: Change[]): HTMLElement {
  return h(
    "div",
    { class: "table-wrap", tabindex: 0, role: "region", "aria-label": `${caption} (table)` },
    h(
      "table",
      { class: "diff" },
      h("caption", null, caption),
      h(
        "thead",
        null,
        h(
          "tr",
          null,
          h("th", { scope: "col" }, "Field"),
          h("th", { scope: "col" }, before),
          h("th", { scope: "col" }, after),
        ),
      ),
      h(
        "tbody",
        null,
        changes.map((c) =>
          h(
            "tr",
            { class: `diff-${c.kind}`, "data-path": c.path },
            h("th", { scope: "row" }, h("code", null, c.path), c.kind !== "changed" ? ` (${c.kind})` : null),
            h("td", { class: "before" }, show(c.before)),
            h("td", { class: "after" }, show(c.after)),
          ),
        ),
      ),
    ),
  );
}

/** The changes one version made to the one before it (or "nothing", said in words). */
export function diffTable(from: number, to: number, changes: Change[]): HTMLElement {
  if (!changes.length) return h("p", { class: "muted" }, `Version ${to} changed nothing visible to you.`);
  return changesTable(`Changes from version ${from} to version ${to}`, `Version ${from}`, `Version ${to}`, changes);
}
