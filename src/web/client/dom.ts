/**
 * A tiny helper for building DOM: `h("a", { href }, "text")`. Text is always set as text (never
 * parsed as HTML), so data from the API cannot inject markup.
 */

export type Child = Node | string | number | null | undefined | false | Child[];
type AttrValue = string | number | boolean | null | undefined;
export type Attrs = Record<string, AttrValue | ((event: any) => void)>;

/** An element with attributes (`on…` functions become listeners; `false`/`null` are left out) and children. */
export function h<K extends keyof HTMLElementTagNameMap>(
  tag: K,
  attrs: Attrs | null = null,
  ...children: Child[]
): HTMLElementTagNameMap[K] {
  const element = document.createElement(tag);
  for (const [key, value] of Object.entries(attrs ?? {})) {
    if (typeof value === "function") {
      element.addEventListener(key.slice(2).toLowerCase(), value);
    } else if (value === true) {
      element.setAttribute(key, "");
    } else if (value !== false && value !== null && value !== undefined) {
      element.setAttribute(key, String(value));
    }
  }
  append(element, ...children);
  return element;
}

/** Appends children (strings as text nodes; nested arrays flattened; empty values skipped). */
export function append(parent: Node, ...children: Child[]): void {
  for (const child of children) {
    if (child === null || child === undefined || child === false) continue;
    if (Array.isArray(child)) append(parent, ...child);
    else parent.appendChild(child instanceof Node ? child : document.createTextNode(String(child)));
  }
}

/** Replaces an element's children. */
export function replace(parent: Element, ...children: Child[]): void {
  parent.replaceChildren();
  append(parent, ...children);
}

let nextId = 0;
/** A document-unique id, for label/aria associations. */
export function uid(prefix = "f"): string {
  nextId += 1;
  return `${prefix}-${nextId}`;
}

/** The page's main element, emptied of the shell's "Loading…". */
export function mainElement(): HTMLElement {
  const main = document.getElementById("main");
  if (!main) throw new Error("no #main element");
  main.replaceChildren();
  return main;
}

/**
 * The page's main element as the server sent it, kept: for the pages the server renders, whose
 * scripts take over its elements instead of drawing them again.
 */
export function adoptMain(): HTMLElement {
  const main = document.getElementById("main");
  if (!main) throw new Error("no #main element");
  return main;
}
