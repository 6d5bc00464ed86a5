/**
 * Pieces every page uses: the progress/status line, error boxes with a retry, badges, dates,
 * human labels for enumeration values, and a debounce.
 */

import { humanize, STAGE_TONE, TIER_TONE } from "../render/words.ts";
import { ApiError } from "./api.ts";
import { type Child, h, replace, uid } from "./dom.ts";
import type { ReviewStage, TrustTier } from "./types.ts";

export { humanize };

/** `<option>`s for an enumeration, with an optional first "any" entry of value "". */
export function options(
  values: readonly string[],
  selected: string | null = null,
  empty?: string,
): HTMLOptionElement[] {
  const list = values.map((v) => h("option", { value: v, selected: v === selected }, humanize(v)));
  return empty === undefined ? list : [h("option", { value: "", selected: !selected }, empty), ...list];
}

const dateFormat = new Intl.DateTimeFormat(undefined, { dateStyle: "medium", timeStyle: "short" });

/** A `<time>` for an ISO instant. */
export function time(iso: string | null | undefined): Child {
  if (!iso) return "—";
  const date = new Date(iso);
  if (Number.isNaN(date.getTime())) return iso;
  return h("time", { datetime: iso, title: iso }, dateFormat.format(date));
}

const relativeFormat = new Intl.RelativeTimeFormat(undefined, { numeric: "auto" });
const UNITS: [Intl.RelativeTimeFormatUnit, number][] = [
  ["year", 365 * 86_400],
  ["month", 30 * 86_400],
  ["day", 86_400],
  ["hour", 3600],
  ["minute", 60],
  ["second", 1],
];

/** How long ago (or from now) an instant is, in words: "5 minutes ago", "in 2 hours", "now". */
export function relative(iso: string, now = Date.now()): string {
  const seconds = Math.round((new Date(iso).getTime() - now) / 1000);
  for (const [unit, size] of UNITS) {
    if (Math.abs(seconds) >= size || unit === "second") {
      return relativeFormat.format(Math.trunc(seconds / size), unit);
    }
  }
  return iso;
}

/** A `<time>` saying how long ago an instant was, with the date and time beside it. */
export function timeAgo(iso: string | null | undefined): Child {
  if (!iso) return "—";
  const date = new Date(iso);
  if (Number.isNaN(date.getTime())) return iso;
  const absolute = dateFormat.format(date);
  return h("time", { datetime: iso, title: iso }, relative(iso), h("span", { class: "muted" }, ` (${absolute})`));
}

/** A small label; `tone` picks its colour. */
export function badge(text: string, tone = "neutral", title?: string): HTMLElement {
  return h("span", { class: `badge badge-${tone}`, title: title ?? null }, text);
}

export const stageBadge = (stage: ReviewStage) =>
  badge(humanize(stage), STAGE_TONE[stage] ?? "neutral", "Review stage");
export const tierBadge = (tier: TrustTier) => badge(humanize(tier), TIER_TONE[tier] ?? "neutral", "Trust tier");

/** The status line of a region: progress while loading, then a short message. Polite live region. */
export class Status {
  readonly element: HTMLElement;
  private timer: ReturnType<typeof setTimeout> | undefined;
  constructor(className = "status", element?: HTMLElement) {
    this.element = element ?? h("div", { class: className, role: "status", "aria-live": "polite" });
  }
  /** The status line the server drew, taken over. */
  static adopt(element: HTMLElement): Status {
    return new Status(element.className, element);
  }
  /** Shows progress (after a short delay, so fast answers don't flicker). */
  loading(text = "Loading…", delayMs = 120): void {
    clearTimeout(this.timer);
    this.timer = setTimeout(() => {
      replace(this.element, h("span", { class: "spinner", "aria-hidden": "true" }), ` ${text}`);
      this.element.dataset.state = "loading";
    }, delayMs);
  }
  message(...content: Child[]): void {
    clearTimeout(this.timer);
    replace(this.element, ...content);
    this.element.dataset.state = "done";
  }
  clear(): void {
    this.message();
    delete this.element.dataset.state;
  }
}

/** What to say about an error. */
export function describeError(error: unknown): { title: string; detail: string } {
  if (error instanceof ApiError) {
    return { title: error.problem.title || "Error", detail: error.problem.detail || "Something went wrong." };
  }
  return { title: "Something went wrong", detail: error instanceof Error ? error.message : String(error) };
}

/** An alert box for a failed request, with a "Try again" button when a retry is given. */
export function errorBox(error: unknown, retry?: () => void, lead?: string): HTMLElement {
  const { title, detail } = describeError(error);
  const problem = error instanceof ApiError ? error.problem : null;
  return h(
    "div",
    { class: "notice error", role: "alert" },
    h("p", null, h("strong", null, lead ?? title), lead ? ` ${title}: ${detail}` : ` ${detail}`),
    problem?.errors?.length
      ? h(
          "ul",
          null,
          problem.errors.map((e) => h("li", null, h("code", null, e.path), ` ${e.message}`)),
        )
      : null,
    retry ? h("button", { type: "button", class: "button secondary", onclick: retry }, "Try again") : null,
  );
}

/** Calls `fn` once input has paused for `ms`. */
export function debounce<A extends unknown[]>(fn: (...args: A) => void, ms: number): (...args: A) => void {
  let timer: ReturnType<typeof setTimeout> | undefined;
  return (...args: A) => {
    clearTimeout(timer);
    timer = setTimeout(() => fn(...args), ms);
  };
}

/** A labelled control: `<div class="field"><label>…</label>control<p hint></div>`. */
export function field(
  label: string,
  control: HTMLInputElement | HTMLSelectElement | HTMLTextAreaElement,
  hint?: Child,
  required = false,
): HTMLElement {
  if (!control.id) control.id = uid("c");
  const hintId = hint ? `${control.id}-hint` : null;
  if (hintId) control.setAttribute("aria-describedby", hintId);
  return h(
    "div",
    { class: "field" },
    // The marker stays outside the label: the control's name is the label alone ("required" is
    // announced from the control's own `required`).
    required
      ? h(
          "div",
          { class: "label-row" },
          h("label", { for: control.id }, label),
          h("span", { class: "req", "aria-hidden": "true" }, "*"),
        )
      : h("label", { for: control.id }, label),
    control,
    hint ? h("p", { class: "hint", id: hintId }, hint) : null,
  );
}

/** Reads a comma-separated list: trimmed, empty items dropped. */
export function splitList(value: string, separator: RegExp = /,/): string[] {
  return value
    .split(separator)
    .map((s) => s.trim())
    .filter(Boolean);
}

/** Sets the document title for a page. */
export function setTitle(title: string): void {
  document.title = `${title} · Agent Registry`;
}

/**
 * The sign-in form of the pages that take a pasted token (/reviews, /webhooks): the token is tried
 * with `probe` (a read it must be allowed) before `signedIn` keeps it; a refusal says why in words.
 */
export function tokenForm(options: {
  id: string;
  label: string;
  hint: Child;
  /** Said when nothing was pasted. */
  empty: string;
  probe: (token: string) => Promise<unknown>;
  refused: { unauthenticated: string; forbidden: string };
  signedIn: (token: string) => void;
}): HTMLFormElement {
  const input = h("input", {
    id: options.id,
    type: "password",
    autocomplete: "off",
    spellcheck: false,
    required: true,
  });
  const error = h("div", { class: "form-error", role: "alert" });
  const button = h("button", { type: "submit", class: "button primary" }, "Sign in");
  const form = h(
    "form",
    { class: "signin", novalidate: true },
    field(options.label, input, options.hint),
    error,
    button,
  );
  input.addEventListener("input", () => input.removeAttribute("aria-invalid"));
  form.addEventListener("submit", async (event) => {
    event.preventDefault();
    const token = input.value.trim();
    error.replaceChildren();
    if (!token) {
      error.textContent = options.empty;
      input.setAttribute("aria-invalid", "true");
      input.focus();
      return;
    }
    button.disabled = true;
    button.textContent = "Checking…";
    try {
      await options.probe(token);
      options.signedIn(token);
    } catch (e) {
      input.setAttribute("aria-invalid", "true");
      const status = e instanceof ApiError ? e.status : 0;
      error.textContent =
        status === 401
          ? options.refused.unauthenticated
          : status === 403
            ? options.refused.forbidden
            : `${describeError(e).title}: ${describeError(e).detail}`;
      input.focus();
    } finally {
      button.disabled = false;
      button.textContent = "Sign in";
    }
  });
  return form;
}
