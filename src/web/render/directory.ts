/**
 * The directory (`/`): search, then the results with their total, and the facets of the current
 * query (counts from GET /api/v1/providers/facets) — a side panel on wide screens, a "Filters"
 * sheet (a <dialog>) on phones, the same markup either way, so CSS alone decides and nothing moves
 * when the script starts. Every control belongs to one plain GET form, so the page works without
 * JavaScript; the browser's script (pages/directory.ts) draws with these same functions.
 */

import {
  AGENT_TYPES,
  PACKAGE_REGISTRIES,
  PACKAGE_TRANSPORTS,
  PROTOCOLS,
  REVIEW_STAGES,
  TRUST_TIERS,
  VISIBILITIES,
} from "../../providers/provider.enums.ts";
import type { HealthState, ProviderPage, ProviderSummary } from "../client/types.ts";
import { type Html, html, jsonScript } from "./html.ts";
import { badge, healthBadge, lifecycleBadge, lifecycleNotice, stageBadge, tierBadge, time } from "./parts.ts";
import { HEALTH, HEALTH_STATES, healthStatesOf, humanize } from "./words.ts";

/** The filters: query parameters of GET /api/v1/providers (and of its facets), by the same names. */
export const DIRECTORY_FILTERS = [
  "search",
  "agentType",
  "protocol",
  "transport",
  "packageRegistry",
  "trustTier",
  "health",
  "publisherVerified",
  "lifecycle",
  "includeRetired",
  "labels",
  "reviewStage",
  "visibility",
] as const;
export type DirectoryFilter = (typeof DIRECTORY_FILTERS)[number];
export const DIRECTORY_PAGE_SIZE = 20;
export const DIRECTORY_SORTS = ["RELEVANCE", "UPDATED", "NAME"] as const;
const SORT_WORDS: Record<(typeof DIRECTORY_SORTS)[number], string> = {
  RELEVANCE: "Best match",
  UPDATED: "Recently updated",
  NAME: "Name (A–Z)",
};

/** What the address asks for, normalized: every filter (empty when not set) and the sort. */
export type DirectoryState = Record<DirectoryFilter | "sort", string>;

/** Values of a parameter, whether repeated (a form's checkboxes) or comma-separated (the API's form). */
function listOf(params: URLSearchParams, name: string): string[] {
  return params
    .getAll(name)
    .flatMap((v) => v.split(","))
    .map((v) => v.trim())
    .filter(Boolean);
}

/**
 * The state of an address or of the form's data: trimmed, labels lower-cased and de-duplicated,
 * health states known ones only, the sort left empty when it is the default (best match when
 * searching, else recently updated).
 */
export function directoryState(params: URLSearchParams): DirectoryState {
  const state = {} as DirectoryState;
  for (const name of DIRECTORY_FILTERS) state[name] = (params.get(name) ?? "").trim();
  state.labels = [...new Set(listOf(params, "labels").map((l) => l.toLowerCase()))].join(",");
  state.health = healthStatesOf(listOf(params, "health").join(",")).join(",");
  if (state.includeRetired !== "true") state.includeRetired = "";
  if (state.publisherVerified !== "true" && state.publisherVerified !== "false") state.publisherVerified = "";
  const sort = (params.get("sort") ?? "").trim().toUpperCase();
  const fallback = state.search ? "RELEVANCE" : "UPDATED";
  state.sort = (DIRECTORY_SORTS as readonly string[]).includes(sort) && sort !== fallback ? sort : "";
  if (!state.search && state.sort === "RELEVANCE") state.sort = "";
  return state;
}

/** The state as the address shows it (and as the facets read takes it, without the sort). */
export function stateParams(state: DirectoryState, withSort = true): URLSearchParams {
  const out = new URLSearchParams();
  for (const name of DIRECTORY_FILTERS) if (state[name]) out.set(name, state[name]);
  if (withSort && state.sort) out.set("sort", state.sort);
  return out;
}

/** The list's query for an address: its filters and sort, the first page. */
export function directoryQuery(params: URLSearchParams): URLSearchParams {
  const out = stateParams(directoryState(params));
  out.set("limit", String(DIRECTORY_PAGE_SIZE));
  return out;
}

/** The facets' query for an address: the list's filters, nothing of its order or pages. */
export function directoryFacetsQuery(params: URLSearchParams): URLSearchParams {
  return stateParams(directoryState(params), false);
}

// ── Facets ──────────────────────────────────────────────────────────────────────────────────
interface FacetCount {
  value: string;
  count: number;
}
/** The facets' answer, as the pages read it (GET /api/v1/providers/facets). */
export interface DirectoryFacets {
  total: number;
  facets: Partial<Record<string, FacetCount[]>>;
}

interface FacetGroup {
  name: Exclude<DirectoryFilter, "search" | "includeRetired">;
  legend: string;
  /** The radio that sets no filter; none for a multi-select group (checkboxes). */
  any?: string;
  values: readonly string[];
  words?: (value: string) => string;
  hint?: string;
  /** Shown only when two values have agents or one is chosen (what anonymous readers never vary). */
  onlyWhenVaried?: boolean;
}

const FACET_GROUPS: readonly FacetGroup[] = [
  { name: "agentType", legend: "Agent type", any: "Any type", values: AGENT_TYPES },
  { name: "protocol", legend: "Protocol", any: "Any protocol", values: PROTOCOLS },
  {
    name: "transport",
    legend: "Transport",
    any: "Any transport",
    values: PACKAGE_TRANSPORTS,
    hint: "Of a package the client starts; with a registry, the same package.",
  },
  { name: "packageRegistry", legend: "Package registry", any: "Any registry", values: PACKAGE_REGISTRIES },
  { name: "trustTier", legend: "Trust tier", any: "Any tier", values: TRUST_TIERS },
  {
    name: "health",
    legend: "Health",
    values: HEALTH_STATES,
    words: (v) => HEALTH[v as HealthState]?.words ?? humanize(v),
    hint: "As the registry last found the endpoint; any of those chosen.",
  },
  {
    name: "publisherVerified",
    legend: "Verified publisher",
    any: "Any publisher",
    values: ["true", "false"],
    words: (v) => (v === "true" ? "Verified publisher" : "Not verified"),
  },
  { name: "lifecycle", legend: "Lifecycle", any: "Any lifecycle", values: ["ACTIVE", "DEPRECATED", "RETIRED"] },
  { name: "labels", legend: "Labels", values: [], words: (v) => v, hint: "Agents carrying every label chosen." },
  {
    name: "reviewStage",
    legend: "Review stage",
    any: "Any stage",
    values: REVIEW_STAGES,
    onlyWhenVaried: true,
  },
  { name: "visibility", legend: "Visibility", any: "Any visibility", values: VISIBILITIES, onlyWhenVaried: true },
];

const agents = (n: number) => `${n} agent${n === 1 ? "" : "s"}`;

/** How many filters are chosen (the Filters button says it, so a closed sheet does not hide them). */
export function chosenCount(state: DirectoryState): number {
  let n = 0;
  for (const group of FACET_GROUPS) n += state[group.name] ? state[group.name].split(",").length : 0;
  return n + (state.includeRetired ? 1 : 0);
}

function option(group: FacetGroup, value: string, words: string, checked: boolean, count: number | null): Html {
  const type = group.any === undefined ? "checkbox" : "radio";
  // The count is shown as a number and read as words ("Tool server, 3 agents").
  return html`<li><label class="facet-option"><input type="${type}" name="${group.name}" value="${value}" form="directory-form"${
    checked ? html` checked` : ""
  }><span class="facet-word">${words}</span>${
    count === null
      ? ""
      : html`<span class="facet-count" aria-hidden="true">${count}</span><span class="visually-hidden">, ${agents(count)}</span>`
  }</label></li>`;
}

function facetGroup(group: FacetGroup, state: DirectoryState, facets: DirectoryFacets | null): Html | null {
  const chosen = state[group.name] ? state[group.name].split(",") : [];
  const counted = facets?.facets[group.name];
  // Without counts (the facets' read failed) every value is offered; with them, those that have agents.
  let values: { value: string; count: number | null }[];
  if (group.name === "labels") {
    const top = counted ?? [];
    values = [
      ...chosen
        .filter((l) => !top.some((c) => c.value === l))
        .map((value) => ({ value, count: facets?.total ?? null })),
      ...top,
    ];
  } else if (!counted) {
    if (facets && group.name === "health") return null; // health checks are off: no such facet
    values = group.values.map((value) => ({ value, count: null }));
  } else {
    values = group.values.map((value) => ({ value, count: counted.find((c) => c.value === value)?.count ?? 0 }));
  }
  const shown = values.filter((v) => v.count === null || v.count > 0 || chosen.includes(v.value));
  const varied = shown.filter((v) => v.count === null || v.count > 0).length >= 2 || chosen.length > 0;
  if (group.onlyWhenVaried && !varied) return null;
  if (shown.length === 0 && group.name !== "lifecycle") return null;
  const words = group.words ?? humanize;
  const hintId = `facet-${group.name}-hint`;
  return html`<fieldset class="facet" data-facet="${group.name}"${group.hint ? html` aria-describedby="${hintId}"` : ""}><legend>${group.legend}</legend>${
    group.hint ? html`<p class="hint" id="${hintId}">${group.hint}</p>` : ""
  }<ul class="facet-options">${
    group.any !== undefined ? option(group, "", group.any, chosen.length === 0, null) : ""
  }${shown.map((v) => option(group, v.value, words(v.value), chosen.includes(v.value), v.count))}${
    group.name === "lifecycle"
      ? html`<li><label class="facet-option"><input type="checkbox" name="includeRetired" value="true" form="directory-form"${
          state.includeRetired ? html` checked` : ""
        }><span class="facet-word">Include retired agents</span></label></li>`
      : ""
  }</ul></fieldset>`;
}

/** The facet groups of a state: what the panel's script redraws when the counts change. */
export function facetGroups(state: DirectoryState, facets: DirectoryFacets | null): Html {
  return html`${FACET_GROUPS.map((g) => facetGroup(g, state, facets))}`;
}

/** The sort's options: best match only while there is a search to rank by. */
export function sortOptions(state: DirectoryState): Html {
  const current = state.sort || (state.search ? "RELEVANCE" : "UPDATED");
  return html`${DIRECTORY_SORTS.filter((s) => s !== "RELEVANCE" || state.search).map(
    (s) => html`<option value="${s}"${s === current ? html` selected` : ""}>${SORT_WORDS[s]}</option>`,
  )}`;
}

/** The results' total as the facets counted it; empty when they did not answer. */
export function totalText(facets: DirectoryFacets | null): string {
  return facets ? `${agents(facets.total)}` : "";
}

export function filtersButtonText(state: DirectoryState): string {
  const n = chosenCount(state);
  return n ? `Filters (${n})` : "Filters";
}

// ── Results ─────────────────────────────────────────────────────────────────────────────────
/**
 * One agent's card. Its name's link covers the whole card (a pseudo-element), so the card is one
 * tap target whose name is the agent's; the labels' links (the script adds a label to the current
 * filters instead) and a successor's link sit above it as siblings, never inside it.
 */
export function directoryCard(item: ProviderSummary): Html {
  const id = `card-${item.providerCode}`;
  return html`<li class="card"><article aria-labelledby="${id}"><h2 id="${id}"><a class="card-link" href="/providers/${encodeURIComponent(item.providerCode)}">${item.name}</a></h2><p class="code">${item.providerCode}</p><p class="summary">${item.summary}</p>${lifecycleNotice(item)}<p class="badges">${[
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
            html`<li><a class="label" href="/?labels=${encodeURIComponent(label)}" title="Show agents labelled ${label}" data-label="${label}">${label}</a></li>`,
        )}</ul>`
      : ""
  }<p class="meta">Updated ${time(item.updatedAt)}</p></article></li>`;
}

export function emptyState(filtered: boolean): Html {
  return html`<div class="empty"><h2>${filtered ? "No agents match" : "No agents yet"}</h2><p>${
    filtered
      ? "Nothing matches this search and these filters. Try fewer words or clear a filter."
      : "The directory is empty so far."
  }</p><p>${filtered ? html`<button type="button" class="button secondary" data-action="clear">Clear filters</button>` : ""} <a class="button" href="/intake">Submit an agent</a></p></div>`;
}

/** A page of results, or the empty state. */
export function resultsHtml(state: DirectoryState, list: ProviderPage): Html {
  const filtered = DIRECTORY_FILTERS.some((name) => state[name]);
  return list.items.length ? html`<ul class="cards">${list.items.map(directoryCard)}</ul>` : emptyState(filtered);
}

/** The status line under the results' bar. */
export function statusText(list: ProviderPage, pageNumber: number): string {
  const n = list.items.length;
  if (n === 0) return pageNumber === 1 ? "No agents found." : "No more agents.";
  return `${agents(n)} on page ${pageNumber}${list.nextCursor ? "; more on the next page" : ""}.`;
}

/**
 * `<main>`'s content. `list` is the first page the list operation answered for this address, or
 * null when it did not answer one (the page's script then loads it, showing its progress); `facets`
 * the counts for it, or null (the groups are then offered without counts).
 */
export function renderDirectory(
  params: URLSearchParams,
  list: ProviderPage | null,
  facets: DirectoryFacets | null,
): Html {
  const state = directoryState(params);
  return html`<div class="directory">
<div class="page-head"><h1>Agent directory</h1><p class="lede">Find AI agents by what they do. Agents are listed once a reviewer has approved them. <a href="/intake">Submit your agent</a>.</p></div>
<form id="directory-form" class="directory-search" role="search" aria-label="Search agents" method="get" action="/">
<label for="f-search">Search</label>
<div class="search-line"><input type="search" name="search" id="f-search" maxlength="200" autocomplete="off" spellcheck="false" placeholder="Name, code, summary, label or package" value="${state.search}"><button type="submit" class="button primary">Search</button></div>
</form>
<div class="directory-body">
<dialog id="facets" class="facets" aria-labelledby="facets-title" closedby="any">
<div class="facets-head"><h2 id="facets-title">Filters</h2><button type="button" class="button small facets-close" commandfor="facets" command="close">Close</button></div>
<div class="facet-groups">${facetGroups(state, facets)}</div>${facets ? jsonScript("directory-facets", facets) : ""}
<div class="facets-actions"><button type="submit" form="directory-form" class="button primary">Show results</button><a class="button secondary" href="/" data-action="clear">Clear filters</a></div>
</dialog>
<section class="directory-results" aria-label="Results">
<div class="results-bar"><p class="total">${totalText(facets)}</p><button type="button" class="button filters-toggle" commandfor="facets" command="show-modal" aria-haspopup="dialog">${filtersButtonText(state)}</button><div class="sort-field"><label for="f-sort">Sort</label><select name="sort" id="f-sort" form="directory-form">${sortOptions(state)}</select><noscript><button type="submit" form="directory-form" class="button small">Apply</button></noscript></div></div>
<p class="hint scope"></p>
<div class="status" role="status" aria-live="polite"${list ? html` data-state="done"` : ""}>${list ? statusText(list, 1) : ""}</div>
<div class="results"${list ? html` data-loaded="true"${list.nextCursor ? html` data-next-cursor="${list.nextCursor}"` : ""}` : ""}>${
    list ? resultsHtml(state, list) : ""
  }</div>
<nav class="pager" aria-label="Result pages"${list?.nextCursor ? "" : html` hidden`}><button type="button" class="button secondary" disabled>← Previous</button><span class="page-number">${list ? "Page 1" : ""}</span><button type="button" class="button secondary"${list?.nextCursor ? "" : html` disabled`}>Next →</button></nav>
</section>
</div>
</div>`;
}
