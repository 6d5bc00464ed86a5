/**
 * The server's versions of the small pieces the browser draws with client/ui.ts (badges, dates,
 * lifecycle notices), with the same markup, so the browser's script can keep what the server sent.
 */
import type { HealthState, Lifecycle, ReviewStage, TrustTier } from "../client/types.ts";
import { type Html, html } from "./html.ts";
import { HEALTH, healthTitle, humanize, STAGE_TONE, TIER_TONE } from "./words.ts";

export function badge(text: string, tone = "neutral", title?: string, data?: Html): Html {
  return html`<span class="badge badge-${tone}"${title ? html` title="${title}"` : ""}${data ?? ""}>${text}</span>`;
}

export const stageBadge = (stage: ReviewStage): Html =>
  badge(humanize(stage), STAGE_TONE[stage] ?? "neutral", "Review stage");
export const tierBadge = (tier: TrustTier): Html => badge(humanize(tier), TIER_TONE[tier] ?? "neutral", "Trust tier");

export function healthBadge(state: HealthState): Html {
  const { words, tone } = HEALTH[state];
  return badge(words, tone, healthTitle(state), html` data-health="${state}"`);
}

// The server cannot know the reader's time zone or locale: dates are said in UTC, in one format.
const dateFormat = new Intl.DateTimeFormat("en-GB", { dateStyle: "medium", timeStyle: "short", timeZone: "UTC" });

/** A `<time>` for an ISO instant, in UTC. */
export function time(iso: string | null | undefined): Html | string {
  if (!iso) return "—";
  const date = new Date(iso);
  if (Number.isNaN(date.getTime())) return iso;
  return html`<time datetime="${iso}" title="${iso}">${dateFormat.format(date)} UTC</time>`;
}

export function lifecycleBadge(p: Lifecycle): Html | null {
  if (p.lifecycle === "ACTIVE") return null;
  const retired = p.lifecycle === "RETIRED";
  return badge(
    retired ? "Retired" : "Deprecated",
    retired ? "bad" : "warn",
    "Lifecycle",
    html` data-lifecycle="${p.lifecycle}"`,
  );
}

export function lifecycleNotice(p: Lifecycle, tag: "p" | "div" = "p"): Html | null {
  if (p.lifecycle === "ACTIVE") return null;
  const what = p.lifecycle === "RETIRED" ? "This agent is retired." : "This agent is deprecated.";
  const inner = html`<strong>${what}</strong>${p.lifecycleMessage ? ` ${p.lifecycleMessage}` : ""}${
    p.successorCode
      ? html`<span class="successor"> Use <a href="/providers/${encodeURIComponent(p.successorCode)}" rel="successor">${p.successorCode}</a> instead.</span>`
      : ""
  }`;
  const cls = `lifecycle lifecycle-${p.lifecycle.toLowerCase()}`;
  return tag === "div"
    ? html`<div class="${cls}" role="note">${inner}</div>`
    : html`<p class="${cls}" role="note">${inner}</p>`;
}
