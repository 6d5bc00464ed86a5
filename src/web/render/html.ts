/**
 * The server's HTML builder: `html` is a tagged template whose every interpolation is escaped
 * unless it is already `Html` (made by this module). Untrusted text therefore cannot become markup
 * by accident: the only way to insert raw HTML is `trustedHtml`, kept for the Markdown renderer,
 * whose output is safe by its own configuration.
 */

/** A piece of HTML this module made (or was told to trust): inserted as is. */
export class Html {
  constructor(readonly value: string) {}
  toString(): string {
    return this.value;
  }
}

/** What an interpolation may be: text (escaped), HTML, a number, nothing, or a list of these. */
export type Part = Html | string | number | boolean | null | undefined | readonly Part[];

const ESCAPES: Record<string, string> = { "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#39;" };

/** Text made safe for an element's content and for a quoted attribute value alike. */
export function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (c) => ESCAPES[c] as string);
}

function partToString(part: Part): string {
  if (part === null || part === undefined || part === false || part === true) return "";
  if (part instanceof Html) return part.value;
  if (Array.isArray(part)) return part.map(partToString).join("");
  return escapeHtml(String(part));
}

/** HTML from a template: each `${…}` is escaped, lists are joined, `null`/`undefined`/booleans are left out. */
export function html(strings: TemplateStringsArray, ...parts: Part[]): Html {
  let out = strings[0] ?? "";
  for (let i = 0; i < parts.length; i += 1) out += partToString(parts[i] as Part) + (strings[i + 1] ?? "");
  return new Html(out);
}

/** HTML that was made safe elsewhere (the Markdown renderer's output). */
export function trustedHtml(value: string): Html {
  return new Html(value);
}

/**
 * Attributes from a record: names are the caller's own (never data), values escaped; `true` is a
 * bare attribute, `false`/`null`/`undefined` leave it out.
 */
export function attrs(record: Record<string, string | number | boolean | null | undefined>): Html {
  let out = "";
  for (const [name, value] of Object.entries(record)) {
    if (value === false || value === null || value === undefined) continue;
    out += value === true ? ` ${name}` : ` ${name}="${escapeHtml(String(value))}"`;
  }
  return new Html(out);
}

/** JSON inside a `<script type="application/json">`: `<` escaped, so no text can close the element. */
export function jsonScript(id: string, value: unknown): Html {
  const json = JSON.stringify(value)
    .replace(/</g, "\\u003c")
    .replace(/\u2028/g, "\\u2028")
    .replace(/\u2029/g, "\\u2029");
  return new Html(`<script type="application/json" id="${escapeHtml(id)}">${json}</script>`);
}
