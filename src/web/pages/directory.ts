/**
 * `/`: the directory. Search as you type (debounced), filters, cursor paging, an empty state;
 * each card links to its profile and says, in words, how the registry last found its endpoint
 * (health). The filters live in the address bar, so a search can be shared.
 * A reviewer signed in on this tab (see /reviews) sees every agent; everyone else the public,
 * approved ones (API.md §2).
 */
import { ApiError, isAbort, query, readAsViewer, reviewerToken } from "../client/api.ts";
import { adoptMain, h, replace } from "../client/dom.ts";
import { healthBadge } from "../client/health.ts";
import { lifecycleBadge, lifecycleNotice } from "../client/lifecycle.ts";
import { mountAccount } from "../client/session.ts";
import type { ProviderPage, ProviderSummary, Query } from "../client/types.ts";
import { badge, debounce, errorBox, humanize, Status, splitList, stageBadge, tierBadge, time } from "../client/ui.ts";

const PAGE_SIZE = 20;
/** The filters: query parameters of GET /api/v1/providers, by the same names. */
const FILTERS = [
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
] as const satisfies readonly (keyof Query<"/api/v1/providers">)[];
type Filter = (typeof FILTERS)[number];

const main = adoptMain();
void mountAccount();

// The server sent the form filled from the address and, usually, the first page of agents: the
// script takes them over as they are (nothing is drawn again, so nothing moves).
const form = main.querySelector<HTMLFormElement>("form.filters") as HTMLFormElement;
const control = <T extends HTMLInputElement | HTMLSelectElement>(name: string) => form.elements.namedItem(name) as T;
const search = control<HTMLInputElement>("search");
const agentType = control<HTMLSelectElement>("agentType");
const visibility = control<HTMLSelectElement>("visibility");
const trustTier = control<HTMLSelectElement>("trustTier");
const reviewStage = control<HTMLSelectElement>("reviewStage");
const packageRegistry = control<HTMLSelectElement>("packageRegistry");
const transport = control<HTMLSelectElement>("transport");
const health = control<HTMLSelectElement>("health");
const labels = control<HTMLInputElement>("labels");
const includeRetired = control<HTMLInputElement>("includeRetired");
const controls: Record<Exclude<Filter, "includeRetired">, HTMLInputElement | HTMLSelectElement> = {
  search,
  agentType,
  visibility,
  trustTier,
  reviewStage,
  labels,
  packageRegistry,
  transport,
  health,
};

const status = Status.adopt(main.querySelector<HTMLElement>(".status") as HTMLElement);
const scope = main.querySelector<HTMLElement>(".scope") as HTMLElement;
const results = main.querySelector<HTMLElement>(".results") as HTMLElement;
const pager = main.querySelector<HTMLElement>(".pager") as HTMLElement;
const [previous, next] = [...pager.querySelectorAll("button")] as [HTMLButtonElement, HTMLButtonElement];
const pageLabel = pager.querySelector<HTMLElement>(".page-number") as HTMLElement;

form.addEventListener("submit", (e) => {
  e.preventDefault();
  restart();
});
// Buttons the server drew carry what they do as data (a card's label, "Clear filters").
main.addEventListener("click", (e) => {
  const button = (e.target as Element).closest<HTMLButtonElement>("button[data-label], button[data-action=clear]");
  if (!button) return;
  if (button.dataset.label) addLabel(button.dataset.label);
  else clearFilters();
});

/** Cursors of the pages seen so far: `cursors[i]` loads page i + 1. */
let cursors: (string | null)[] = [null];
let pageIndex = 0;
let inflight: AbortController | undefined;

function filterValues(): Record<Filter, string> {
  const values = {} as Record<Filter, string>;
  for (const name of FILTERS) values[name] = name === "includeRetired" ? "" : controls[name].value.trim();
  values.includeRetired = includeRetired.checked ? "true" : "";
  values.labels = splitList(values.labels.toLowerCase()).join(",");
  return values;
}

function syncAddress(values: Record<Filter, string>): void {
  const next = new URLSearchParams();
  for (const name of FILTERS) if (values[name]) next.set(name, values[name]);
  const text = next.toString();
  history.replaceState(null, "", text ? `/?${text}` : "/");
}

function card(item: ProviderSummary): HTMLElement {
  return h(
    "li",
    { class: "card" },
    h(
      "article",
      { "aria-labelledby": `card-${item.providerCode}` },
      h(
        "h2",
        { id: `card-${item.providerCode}` },
        h("a", { href: `/providers/${encodeURIComponent(item.providerCode)}` }, item.name),
      ),
      h("p", { class: "code" }, item.providerCode),
      h("p", { class: "summary" }, item.summary),
      lifecycleNotice(item),
      h(
        "p",
        { class: "badges" },
        badge(humanize(item.agentType), "neutral", "Agent type"),
        item.endpoint
          ? badge(humanize(item.endpoint.protocol), "neutral", "Protocol")
          : badge("Packages", "neutral", "Ships as packages a client starts; no endpoint"),
        item.healthState ? healthBadge(item.healthState) : null,
        tierBadge(item.trustTier),
        // In words, not only colour, as on the profile; the summary carries the flag (no extra request).
        item.publisherVerified
          ? badge("Verified publisher", "good", "The endpoint's domain is verified as the publisher's")
          : null,
        lifecycleBadge(item),
        item.reviewStage !== "APPROVED" ? stageBadge(item.reviewStage) : null,
        item.visibility !== "PUBLIC" ? badge(humanize(item.visibility), "warn", "Visibility") : null,
      ),
      item.labels.length
        ? h(
            "ul",
            { class: "labels", "aria-label": `Labels of ${item.name}` },
            item.labels.map((label) =>
              h(
                "li",
                null,
                h(
                  "button",
                  {
                    type: "button",
                    class: "label",
                    title: `Show agents labelled ${label}`,
                    "data-label": label,
                  },
                  label,
                ),
              ),
            ),
          )
        : null,
      h("p", { class: "meta" }, "Updated ", time(item.updatedAt)),
    ),
  );
}

function addLabel(label: string): void {
  const current = splitList(labels.value.toLowerCase());
  if (!current.includes(label)) labels.value = [...current, label].join(", ");
  restart();
}

function emptyState(values: Record<Filter, string>): HTMLElement {
  const filtered = FILTERS.some((name) => values[name]);
  return h(
    "div",
    { class: "empty" },
    h("h2", null, filtered ? "No agents match" : "No agents yet"),
    h(
      "p",
      null,
      filtered
        ? "Nothing matches this search and these filters. Try fewer words or clear a filter."
        : "The directory is empty so far.",
    ),
    h(
      "p",
      null,
      filtered
        ? h("button", { type: "button", class: "button secondary", "data-action": "clear" }, "Clear filters")
        : null,
      " ",
      h("a", { class: "button", href: "/intake" }, "Submit an agent"),
    ),
  );
}

async function load(): Promise<void> {
  inflight?.abort();
  const controller = new AbortController();
  inflight = controller;
  const values = filterValues();
  syncAddress(values);
  results.setAttribute("aria-busy", "true");
  status.loading("Loading agents…", 0);
  try {
    const path = `/providers${query({ ...values, limit: PAGE_SIZE, cursor: cursors[pageIndex] })}`;
    const { data, asReviewer, droppedToken } = await readAsViewer<ProviderPage>(path, {
      signal: controller.signal,
    });
    if (controller.signal.aborted) return;
    scope.textContent = asReviewer
      ? "Signed in as a reviewer: every agent is listed, whatever its stage or visibility."
      : droppedToken
        ? "Your reviewer session has expired, so only public, approved agents are listed."
        : "";
    cursors = cursors.slice(0, pageIndex + 1);
    if (data.nextCursor) cursors.push(data.nextCursor);
    if (data.items.length === 0) {
      replace(results, emptyState(values));
      status.message(pageIndex === 0 ? "No agents found." : "No more agents.");
    } else {
      replace(results, h("ul", { class: "cards" }, data.items.map(card)));
      const n = data.items.length;
      status.message(
        `${n} agent${n === 1 ? "" : "s"} on page ${pageIndex + 1}${data.nextCursor ? "; more on the next page" : ""}.`,
      );
    }
    pager.hidden = pageIndex === 0 && !data.nextCursor;
    previous.disabled = pageIndex === 0;
    next.disabled = !data.nextCursor;
    pageLabel.textContent = `Page ${pageIndex + 1}`;
  } catch (error) {
    if (isAbort(error)) return;
    status.message(error instanceof ApiError && error.status === 400 ? "Check the search and filters." : "");
    replace(
      results,
      errorBox(error, () => void load(), "Could not load the agents."),
    );
    pager.hidden = true;
  } finally {
    if (inflight === controller) results.removeAttribute("aria-busy");
  }
}

/** A new search or filter starts again at page 1. */
function restart(): void {
  cursors = [null];
  pageIndex = 0;
  void load();
}

const typed = debounce(restart, 300);
search.addEventListener("input", typed);
labels.addEventListener("input", typed);
for (const control of [
  agentType,
  visibility,
  trustTier,
  reviewStage,
  packageRegistry,
  transport,
  health,
  includeRetired,
]) {
  control.addEventListener("change", restart);
}
function clearFilters(): void {
  for (const name of FILTERS) if (name !== "includeRetired") controls[name].value = "";
  includeRetired.checked = false;
  restart();
  search.focus();
}
previous.addEventListener("click", () => {
  if (pageIndex === 0) return;
  pageIndex -= 1;
  void load().then(() => results.scrollIntoView({ block: "start" }));
});
next.addEventListener("click", () => {
  if (pageIndex + 1 >= cursors.length) return;
  pageIndex += 1;
  void load().then(() => results.scrollIntoView({ block: "start" }));
});

// The server's first page stands unless a reviewer signed in on this tab sees more, or the server
// could not list the agents.
if (results.dataset.loaded === "true" && !reviewerToken()) {
  const nextCursor = results.dataset.nextCursor ?? null;
  if (nextCursor) cursors.push(nextCursor);
} else {
  void load();
}
