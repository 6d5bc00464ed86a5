/**
 * A form's problems beside their fields: each one next to the control (or group) its path names,
 * tied to it by `aria-describedby`, and all of them in a summary box of links that focus the
 * control. A path is the API's JSON Pointer (`/endpoint/url`) or a form's own dotted path
 * (`endpoint.url`); the element it names is the nearest one whose `data-path` it starts with, so
 * `/filter/include/0` falls back to the include patterns and `/filter` to the filter's group.
 */
import type { FieldError } from "./api.ts";
import { h, replace, uid } from "./dom.ts";

type Control = HTMLInputElement | HTMLSelectElement | HTMLTextAreaElement;

const CONTROLS = "input, select, textarea";

export interface FieldErrorOptions {
  /** The summary's title: `h2` where the form's own sections are h2s (the intake), else `h3`. */
  heading?: "h2" | "h3";
  /** The message in words a person reads (the intake rewrites the validator's). */
  words?: (message: string) => string;
}

export interface FieldErrors {
  /** The element a path names: the control itself, else the nearest enclosing thing with a path. */
  targetOf(path: string): HTMLElement | null;
  /** Takes every problem away: the notes, the controls' invalid state, the summary. */
  clear(): void;
  /** Shows `errors` (after clearing the earlier ones) under the summary's title `lead`, which takes focus. */
  show(errors: FieldError[], lead: string): void;
}

/** A path's segments: a JSON Pointer's, unescaped, or a dotted path's. */
function segmentsOf(path: string): string[] {
  return (path.startsWith("/") ? path.slice(1).split("/") : path.split(".")).map((s) =>
    s.replace(/~1/g, "/").replace(/~0/g, "~"),
  );
}

/** The ids of aria-describedby without the ones of error notes. */
function withoutNotes(el: Element): string[] {
  return (el.getAttribute("aria-describedby") ?? "").split(" ").filter((id) => id && !id.startsWith("err-"));
}

function describe(el: Element, ids: string[]): void {
  if (ids.length) el.setAttribute("aria-describedby", ids.join(" "));
  else el.removeAttribute("aria-describedby");
}

/** What the summary calls a target: its `data-label`, its label, else its group's heading or legend. */
function labelOf(target: HTMLElement): string {
  if (target.dataset.label) return target.dataset.label;
  const text = (target as Control).labels?.[0]?.textContent ?? target.querySelector("h2, legend")?.textContent ?? "";
  return text.trim() || (target.dataset.path ?? "");
}

/** The problems of `form`, shown beside its `[data-path]` elements and listed in `summaryBox`. */
export function fieldErrors(form: HTMLElement, summaryBox: HTMLElement, options: FieldErrorOptions = {}): FieldErrors {
  const words = options.words ?? ((message: string) => message);

  const targetOf = (path: string): HTMLElement | null => {
    const parts = segmentsOf(path);
    while (parts.length) {
      const found = form.querySelector<HTMLElement>(`[data-path="${CSS.escape(parts.join("."))}"]`);
      if (found) return found;
      parts.pop();
    }
    return null;
  };

  const clear = (): void => {
    for (const note of form.querySelectorAll(".field-error")) note.remove();
    for (const el of form.querySelectorAll<HTMLElement>("[aria-invalid]")) {
      el.removeAttribute("aria-invalid");
      describe(el, withoutNotes(el));
    }
    summaryBox.hidden = true;
    summaryBox.replaceChildren();
  };

  /** One problem beside its target; the summary's item for it. */
  const place = (error: FieldError): HTMLElement => {
    // "(body)" is the rules' name for the whole body: a problem of no field.
    const path = error.path && error.path !== "(body)" ? error.path : "";
    const message = words(error.message);
    const target = path ? targetOf(path) : null;
    if (!target) return h("li", null, path ? [h("code", null, path), `: ${message}`] : message);
    // A problem inside what the target holds (`/labels/1` of the labels) says which item it is in.
    const where = segmentsOf(path).join(".");
    const said = target.dataset.path === where ? message : `${where}: ${message}`;
    const id = uid("err");
    const note = h("p", { class: "field-error", id }, h("span", { class: "visually-hidden" }, "Error: "), said);
    const isControl = target.matches(CONTROLS);
    const slot = isControl ? target.closest(".field") : null;
    const heading = target.querySelector(":scope > h2, :scope > legend");
    if (slot) slot.append(note);
    else if (heading) heading.after(note);
    // A control outside a .field cannot hold the note: it goes right after the control.
    else if (isControl) target.after(note);
    else target.prepend(note);
    target.setAttribute("aria-invalid", "true");
    target.setAttribute("aria-describedby", `${target.getAttribute("aria-describedby") ?? ""} ${id}`.trim());
    // A problem in a closed <details> would be neither seen nor focusable.
    for (let closed = target.closest("details"); closed; closed = closed.parentElement?.closest("details") ?? null) {
      closed.open = true;
    }
    // A list with no item yet is reached by its Add button.
    const focusable = isControl ? target : target.querySelector<HTMLElement>(`${CONTROLS}, button`);
    if (focusable && !focusable.id) focusable.id = uid("c");
    return h(
      "li",
      null,
      h(
        "a",
        {
          href: focusable ? `#${focusable.id}` : "#",
          onclick: (event: Event) => {
            event.preventDefault();
            focusable?.focus();
          },
        },
        `${labelOf(target)}: ${said}`,
      ),
    );
  };

  const show = (errors: FieldError[], lead: string): void => {
    clear();
    const items = errors.map(place);
    replace(summaryBox, h(options.heading ?? "h3", { class: "error-title" }, lead), h("ul", null, items));
    summaryBox.hidden = false;
    summaryBox.focus();
  };

  // A control (or group) being corrected loses its own error notes, and only those.
  form.addEventListener("input", (event) => {
    const owner = (event.target as HTMLElement).closest<HTMLElement>("[aria-invalid]");
    if (!owner || !form.contains(owner)) return;
    owner.removeAttribute("aria-invalid");
    for (const id of (owner.getAttribute("aria-describedby") ?? "").split(" ")) {
      if (id.startsWith("err-")) form.querySelector(`#${CSS.escape(id)}`)?.remove();
    }
    describe(owner, withoutNotes(owner));
  });

  return { targetOf, clear, show };
}
