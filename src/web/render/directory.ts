/**
 * The directory (`/`) as the server sends it: the search form filled from the address, and the
 * first page of agents for it as the list operation answered (or, when it could not, an empty list
 * the page's script loads). The markup is the browser's own (pages/directory.ts), which adopts it.
 */

import {
  AGENT_TYPES,
  PACKAGE_REGISTRIES,
  PACKAGE_TRANSPORTS,
  REVIEW_STAGES,
  TRUST_TIERS,
  VISIBILITIES,
} from "../../providers/provider.enums.ts";
import type { ProviderPage, ProviderSummary } from "../client/types.ts";
import { type Html, html } from "./html.ts";
import { badge, healthBadge, lifecycleBadge, lifecycleNotice, stageBadge, tierBadge, time } from "./parts.ts";
import { HEALTH_CHOICES, healthChoiceWords, healthStatesOf, humanize } from "./words.ts";

/** The filters: query parameters of GET /api/v1/providers, by the same names. */
export const DIRECTORY_FILTERS = [
  "search",
  "agentType",
  "visibility",
  "trustTier",
  "reviewStage",
  "labels",
  "packageRegistry",
  "transport",
  "health",
  "includeRetired",
] as const;
export const DIRECTORY_PAGE_SIZE = 20;

/** The list's query for an address: its filters (trimmed, labels lower-cased), the first page. */
export function directoryQuery(params: URLSearchParams): URLSearchParams {
  const out = new URLSearchParams();
  for (const name of DIRECTORY_FILTERS) {
    let value = (params.get(name) ?? "").trim();
    if (name === "labels")
      value = value
        .toLowerCase()
        .split(",")
        .map((s) => s.trim())
        .filter(Boolean)
        .join(",");
    if (name === "includeRetired" && value !== "true") value = "";
    if (value) out.set(name, value);
  }
  out.set("limit", String(DIRECTORY_PAGE_SIZE));
  return out;
}

function select(name: string, label: string, values: readonly string[], any: string, chosen: string): Html {
  return html`<div class="field"><label for="f-${name}">${label}</label><select name="${name}" id="f-${name}"><option value=""${chosen ? "" : html` selected`}>${any}</option>${values.map(
    (v) => html`<option value="${v}"${v === chosen ? html` selected` : ""}>${humanize(v)}</option>`,
  )}</select></div>`;
}

function withHint(control: Html, name: string, label: string, hint: string): Html {
  return html`<div class="field"><label for="f-${name}">${label}</label>${control}<p class="hint" id="f-${name}-hint">${hint}</p></div>`;
}

function form(params: URLSearchParams): Html {
  const get = (name: string) => params.get(name) ?? "";
  const healthAsked = healthStatesOf(get("health")).join(",");
  const health = html`<select name="health" id="f-health" aria-describedby="f-health-hint"><option value=""${
    healthAsked ? "" : html` selected`
  }>Any health</option>${HEALTH_CHOICES.map(
    (c) => html`<option value="${c.value}"${c.value === healthAsked ? html` selected` : ""}>${c.words}</option>`,
  )}${
    healthAsked && !HEALTH_CHOICES.some((c) => c.value === healthAsked)
      ? html`<option value="${healthAsked}" selected>${healthChoiceWords(healthStatesOf(healthAsked))}</option>`
      : ""
  }</select>`;
  const hinted = (name: string, label: string, values: readonly string[], any: string, hint: string) =>
    withHint(
      html`<select name="${name}" id="f-${name}" aria-describedby="f-${name}-hint"><option value=""${get(name) ? "" : html` selected`}>${any}</option>${values.map(
        (v) => html`<option value="${v}"${v === get(name) ? html` selected` : ""}>${humanize(v)}</option>`,
      )}</select>`,
      name,
      label,
      hint,
    );
  return html`<form class="filters" role="search" aria-label="Search agents" method="get" action="/">
<div class="search-row"><div class="field"><label for="f-search">Search</label><input type="search" name="search" id="f-search" maxlength="200" autocomplete="off" spellcheck="false" placeholder="Name, code, summary, label or package" value="${get("search")}"></div></div>
<div class="filter-grid">
${select("agentType", "Agent type", AGENT_TYPES, "Any type", get("agentType"))}
${select("trustTier", "Trust tier", TRUST_TIERS, "Any tier", get("trustTier"))}
${select("reviewStage", "Review stage", REVIEW_STAGES, "Any stage", get("reviewStage"))}
${select("visibility", "Visibility", VISIBILITIES, "Any visibility", get("visibility"))}
${withHint(html`<input type="text" name="labels" id="f-labels" aria-describedby="f-labels-hint" autocomplete="off" spellcheck="false" placeholder="e.g. maps, routing" value="${get("labels")}">`, "labels", "Labels", "Comma-separated; agents must carry all of them.")}
${hinted("packageRegistry", "Package registry", PACKAGE_REGISTRIES, "Any registry", "MCP servers shipping a package from it.")}
${hinted("transport", "Transport", PACKAGE_TRANSPORTS, "Any transport", "With a registry: one package from it over this transport.")}
${withHint(health, "health", "Health", "As the registry last found the endpoint; agents it does not probe are left out.")}
<label class="check"><input type="checkbox" name="includeRetired" value="true"${get("includeRetired") === "true" ? html` checked` : ""}> Include retired agents</label>
</div>
<div class="actions"><button type="submit" class="button">Search</button> <button type="button" class="button secondary" data-action="clear">Clear filters</button></div>
</form>`;
}

/** One agent's card: the same markup as the browser's `card()`. */
export function directoryCard(item: ProviderSummary): Html {
  const id = `card-${item.providerCode}`;
  return html`<li class="card"><article aria-labelledby="${id}"><h2 id="${id}"><a href="/providers/${encodeURIComponent(item.providerCode)}">${item.name}</a></h2><p class="code">${item.providerCode}</p><p class="summary">${item.summary}</p>${lifecycleNotice(item)}<p class="badges">${[
    badge(humanize(item.agentType), "neutral", "Agent type"),
    item.endpoint
      ? badge(humanize(item.endpoint.protocol), "neutral", "Protocol")
      : badge("Packages", "neutral", "Ships as packages a client starts; no endpoint"),
    item.healthState ? healthBadge(item.healthState) : null,
    tierBadge(item.trustTier),
    item.publisherVerified
      ? badge("Verified publisher", "good", "The endpoint's domain is verified as the publisher's")
      : null,
    lifecycleBadge(item),
    item.reviewStage !== "APPROVED" ? stageBadge(item.reviewStage) : null,
    item.visibility !== "PUBLIC" ? badge(humanize(item.visibility), "warn", "Visibility") : null,
  ]}</p>${
    item.labels.length
      ? html`<ul class="labels" aria-label="Labels of ${item.name}">${item.labels.map(
          (label) =>
            html`<li><button type="button" class="label" title="Show agents labelled ${label}" data-label="${label}">${label}</button></li>`,
        )}</ul>`
      : ""
  }<p class="meta">Updated ${time(item.updatedAt)}</p></article></li>`;
}

function emptyState(filtered: boolean): Html {
  return html`<div class="empty"><h2>${filtered ? "No agents match" : "No agents yet"}</h2><p>${
    filtered
      ? "Nothing matches this search and these filters. Try fewer words or clear a filter."
      : "The directory is empty so far."
  }</p><p>${filtered ? html`<button type="button" class="button secondary" data-action="clear">Clear filters</button>` : ""} <a class="button" href="/intake">Submit an agent</a></p></div>`;
}

/**
 * `<main>`'s content. `list` is the first page the list operation answered for this address, or
 * null when it did not answer one (the page's script then loads it, showing its progress).
 */
export function renderDirectory(params: URLSearchParams, list: ProviderPage | null): Html {
  const query = directoryQuery(params);
  const filtered = [...query.keys()].some((k) => k !== "limit");
  const n = list?.items.length ?? 0;
  const statusText = !list
    ? ""
    : n === 0
      ? "No agents found."
      : `${n} agent${n === 1 ? "" : "s"} on page 1${list.nextCursor ? "; more on the next page" : ""}.`;
  return html`<div class="page-head"><h1>Agent directory</h1><p class="lede">Find AI agents by what they do. Agents are listed once a reviewer has approved them. <a href="/intake">Submit your agent</a>.</p></div>
${form(params)}
<p class="hint scope"></p>
<div class="status" role="status" aria-live="polite"${list ? html` data-state="done"` : ""}>${statusText}</div>
<div class="results"${list ? html` data-loaded="true"${list.nextCursor ? html` data-next-cursor="${list.nextCursor}"` : ""}` : ""}>${
    list ? (n ? html`<ul class="cards">${list.items.map(directoryCard)}</ul>` : emptyState(filtered)) : ""
  }</div>
<nav class="pager" aria-label="Result pages"${list?.nextCursor ? "" : html` hidden`}><button type="button" class="button secondary" disabled>← Previous</button><span class="page-number">${list ? "Page 1" : ""}</span><button type="button" class="button secondary"${list?.nextCursor ? "" : html` disabled`}>Next →</button></nav>`;
}
