/**
 * `/`: the directory. The server sent the whole page for its address (render/directory.ts): the
 * search form, the facets with their counts and the first page of agents. This script takes that
 * DOM over as it is and enhances it: search as you type (debounced), a facet or the sort applies at
 * once, without a reload, the counts follow the query, the address follows the state
 * (pushState for a choice, so Back undoes it; replaceState while typing), and cursor paging.
 * It draws with the server's own functions, so what it draws is what the server would have sent.
 * A reviewer signed in on this tab (see /reviews) sees every agent; everyone else the public,
 * approved ones (API.md §2).
 */
import { ApiError, isAbort, readAsViewer, reviewerToken } from "../client/api.ts";
import { adoptMain } from "../client/dom.ts";
import { mountAccount } from "../client/session.ts";
import type { ProviderPage } from "../client/types.ts";
import { debounce, errorBox, Status } from "../client/ui.ts";
import {
  DIRECTORY_PAGE_SIZE,
  type DirectoryFacets,
  type DirectoryState,
  directoryState,
  facetGroups,
  filtersButtonText,
  renderDirectory,
  resultsHtml,
  sortOptions,
  stateParams,
  statusText,
  totalText,
} from "../render/directory.ts";

const main = adoptMain();
void mountAccount();

// Without the server's rendering (a registry it could not read for), the same page is drawn here.
if (!main.querySelector("#directory-form")) {
  main.innerHTML = renderDirectory(new URLSearchParams(location.search), null, null).value;
}

const form = main.querySelector<HTMLFormElement>("#directory-form") as HTMLFormElement;
const search = form.elements.namedItem("search") as HTMLInputElement;
const sort = main.querySelector<HTMLSelectElement>("#f-sort") as HTMLSelectElement;
const sheet = main.querySelector<HTMLDialogElement>("dialog.facets") as HTMLDialogElement;
const groups = sheet.querySelector<HTMLElement>(".facet-groups") as HTMLElement;
const toggle = main.querySelector<HTMLButtonElement>(".filters-toggle") as HTMLButtonElement;
const total = main.querySelector<HTMLElement>(".total") as HTMLElement;
const status = Status.adopt(main.querySelector<HTMLElement>(".status") as HTMLElement);
const scope = main.querySelector<HTMLElement>(".scope") as HTMLElement;
const results = main.querySelector<HTMLElement>(".results") as HTMLElement;
const pager = main.querySelector<HTMLElement>(".pager") as HTMLElement;
const [previous, next] = [...pager.querySelectorAll("button")] as [HTMLButtonElement, HTMLButtonElement];
const pageLabel = pager.querySelector<HTMLElement>(".page-number") as HTMLElement;

// Browsers without invoker commands (command/commandfor) open and close the sheet through here.
if (!("commandForElement" in HTMLButtonElement.prototype)) {
  toggle.addEventListener("click", () => sheet.showModal());
  sheet.querySelector(".facets-close")?.addEventListener("click", () => sheet.close());
}

/**
 * The sort the reader chose, empty while it is the default. The select always shows a value, so
 * its value alone would turn the default into a choice: typing a first word would keep "Recently
 * updated" instead of moving to the best match.
 */
let chosenSort = directoryState(new URLSearchParams(location.search)).sort;

/** The state the form holds now: its data, read as the server reads an address. */
function formState(): DirectoryState {
  const params = new URLSearchParams();
  for (const [name, value] of new FormData(form)) {
    if (typeof value === "string" && name !== "sort") params.append(name, value);
  }
  params.set("sort", chosenSort);
  return directoryState(params);
}

function addressOf(state: DirectoryState): string {
  const text = stateParams(state).toString();
  return text ? `/?${text}` : "/";
}

/** Cursors of the pages seen so far: `cursors[i]` loads page i + 1. */
let cursors: (string | null)[] = [null];
let pageIndex = 0;
let inflight: AbortController | undefined;
/** The last counts read (the server's, to begin with): options are drawn with them until new ones answer. */
let lastFacets: DirectoryFacets | null = JSON.parse(document.getElementById("directory-facets")?.textContent || "null");

/**
 * Redraws the facet groups for a state and its counts, keeping the focused option focused (and
 * the sheet's scroll), since a keyboard user is usually on the option that changed them.
 */
function drawFacets(state: DirectoryState, facets: DirectoryFacets | null): void {
  const focused = document.activeElement;
  const key =
    focused instanceof HTMLInputElement && groups.contains(focused) ? [focused.name, focused.value] : undefined;
  const scrolled = sheet.scrollTop;
  groups.innerHTML = facetGroups(state, facets).value;
  sheet.scrollTop = scrolled;
  if (key) {
    const again = [...groups.querySelectorAll<HTMLInputElement>("input")].find(
      (input) => input.name === key[0] && input.value === key[1],
    );
    again?.focus();
  }
  toggle.textContent = filtersButtonText(state);
}

/** The sort's options follow the search: best match only while there is one. */
function drawSort(state: DirectoryState): void {
  const wanted = sortOptions(state).value;
  if (sort.innerHTML !== wanted) sort.innerHTML = wanted;
}

async function load(options: { facets: boolean }): Promise<void> {
  inflight?.abort();
  const controller = new AbortController();
  inflight = controller;
  const state = formState();
  results.setAttribute("aria-busy", "true");
  status.loading("Loading agents…", 0);
  try {
    const listQuery = stateParams(state);
    listQuery.set("limit", String(DIRECTORY_PAGE_SIZE));
    const cursor = cursors[pageIndex];
    if (cursor) listQuery.set("cursor", cursor);
    const counting = options.facets
      ? readAsViewer<DirectoryFacets>(`/providers/facets?${stateParams(state, false)}`, {
          signal: controller.signal,
        }).catch((error: unknown) => (isAbort(error) ? Promise.reject(error) : null))
      : undefined;
    const [{ data, asReviewer, droppedToken }, counted] = await Promise.all([
      readAsViewer<ProviderPage>(`/providers?${listQuery}`, { signal: controller.signal }),
      counting,
    ]);
    if (controller.signal.aborted) return;
    scope.textContent = asReviewer
      ? "Signed in as a reviewer: every agent is listed, whatever its stage or visibility."
      : droppedToken
        ? "Your reviewer session has expired, so only public, approved agents are listed."
        : "";
    cursors = cursors.slice(0, pageIndex + 1);
    if (data.nextCursor) cursors.push(data.nextCursor);
    results.innerHTML = resultsHtml(state, data).value;
    status.message(statusText(data, pageIndex + 1));
    if (counted !== undefined) {
      // Counts that did not answer leave the options without numbers rather than with stale ones.
      lastFacets = counted?.data ?? null;
      drawFacets(state, lastFacets);
      total.textContent = totalText(lastFacets);
    }
    pager.hidden = pageIndex === 0 && !data.nextCursor;
    previous.disabled = pageIndex === 0;
    next.disabled = !data.nextCursor;
    pageLabel.textContent = `Page ${pageIndex + 1}`;
  } catch (error) {
    if (isAbort(error)) return;
    status.message(error instanceof ApiError && error.status === 400 ? "Check the search and filters." : "");
    results.replaceChildren(errorBox(error, () => void load(options), "Could not load the agents."));
    pager.hidden = true;
  } finally {
    if (inflight === controller) results.removeAttribute("aria-busy");
  }
}

/**
 * A new search, facet or sort: page 1 again, the address updated (a choice is a step Back undoes;
 * typing replaces the step it is part of).
 */
function restart(step: "push" | "replace" | "none" = "push"): void {
  const state = formState();
  drawSort(state);
  const address = addressOf(state);
  if (step !== "none" && address !== `${location.pathname}${location.search}`) {
    if (step === "push") history.pushState(null, "", address);
    else history.replaceState(null, "", address);
  }
  cursors = [null];
  pageIndex = 0;
  void load({ facets: true });
}

form.addEventListener("submit", (e) => {
  e.preventDefault();
  restart("push");
  if (sheet.open) sheet.close();
});
search.addEventListener(
  "input",
  debounce(() => restart("replace"), 300),
);
// Every other control is the form's through its `form` attribute; a change applies at once.
main.addEventListener("change", (e) => {
  const target = e.target as HTMLInputElement | HTMLSelectElement;
  if (target === search || target.form !== form) return;
  if (target === sort) {
    chosenSort = directoryState(new URLSearchParams({ search: search.value, sort: sort.value })).sort;
    restart("push");
  } else if (target.type === "checkbox" || target.type === "radio") {
    restart("push");
  }
});

// Buttons and links the server drew carry what they do as data (a card's label, "Clear filters").
main.addEventListener("click", (e) => {
  const target = (e.target as Element).closest<HTMLElement>("[data-label], [data-action=clear]");
  // A link opened in a new tab or window is left to the browser.
  if (!target || e.button !== 0 || e.metaKey || e.ctrlKey || e.shiftKey || e.altKey) return;
  e.preventDefault();
  if (target.dataset.label) addLabel(target.dataset.label);
  else clearFilters();
});

function addLabel(label: string): void {
  const state = formState();
  const labels = new Set(state.labels ? state.labels.split(",") : []);
  labels.add(label);
  state.labels = [...labels].join(",");
  // The label may not be among the options yet: the groups are drawn for the new state first.
  drawFacets(state, lastFacets);
  restart("push");
}

function clearFilters(): void {
  search.value = "";
  chosenSort = "";
  const state = directoryState(new URLSearchParams());
  drawFacets(state, lastFacets);
  drawSort(state);
  if (sheet.open) sheet.close();
  restart("push");
  search.focus();
}

// Back and Forward: the address is the state; the form is set from it and the list read again.
window.addEventListener("popstate", () => {
  const state = directoryState(new URLSearchParams(location.search));
  search.value = state.search;
  chosenSort = state.sort;
  drawFacets(state, lastFacets);
  drawSort(state);
  restart("none");
});

previous.addEventListener("click", () => {
  if (pageIndex === 0) return;
  pageIndex -= 1;
  void load({ facets: false }).then(() => results.scrollIntoView({ block: "start" }));
});
next.addEventListener("click", () => {
  if (pageIndex + 1 >= cursors.length) return;
  pageIndex += 1;
  void load({ facets: false }).then(() => results.scrollIntoView({ block: "start" }));
});

// The server's first page stands unless a reviewer signed in on this tab sees more, or the server
// could not list the agents.
if (results.dataset.loaded === "true" && !reviewerToken()) {
  const nextCursor = results.dataset.nextCursor ?? null;
  if (nextCursor) cursors.push(nextCursor);
} else {
  void load({ facets: true });
}
