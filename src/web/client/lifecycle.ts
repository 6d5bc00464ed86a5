/**
 * How the pages show a provider's lifecycle: a DEPRECATED or RETIRED badge, and a notice
 * with the owner's message and a link to the successor. Nothing while ACTIVE.
 */
import { h } from "./dom.ts";
import type { Lifecycle } from "./types.ts";
import { badge } from "./ui.ts";

/** The lifecycle badge: DEPRECATED (warn) or RETIRED (bad); null while ACTIVE. */
export function lifecycleBadge(p: Lifecycle): HTMLElement | null {
  if (p.lifecycle === "ACTIVE") return null;
  const element = badge(
    p.lifecycle === "RETIRED" ? "Retired" : "Deprecated",
    p.lifecycle === "RETIRED" ? "bad" : "warn",
    "Lifecycle",
  );
  element.dataset.lifecycle = p.lifecycle;
  return element;
}

/** The lifecycle notice: what the owner says, and where to go instead; null while ACTIVE. */
export function lifecycleNotice(p: Lifecycle, options: { tag?: "p" | "div" } = {}): HTMLElement | null {
  if (p.lifecycle === "ACTIVE") return null;
  const what = p.lifecycle === "RETIRED" ? "This agent is retired." : "This agent is deprecated.";
  return h(
    options.tag ?? "p",
    { class: `lifecycle lifecycle-${p.lifecycle.toLowerCase()}`, role: "note" },
    h("strong", null, what),
    p.lifecycleMessage ? ` ${p.lifecycleMessage}` : null,
    p.successorCode
      ? h(
          "span",
          { class: "successor" },
          " Use ",
          h("a", { href: `/providers/${encodeURIComponent(p.successorCode)}`, rel: "successor" }, p.successorCode),
          " instead.",
        )
      : null,
  );
}
