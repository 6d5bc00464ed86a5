/**
 * `/reviews`: the reviewers' dashboard. Signed in through the registry's identity provider (a
 * session cookie the requests carry), or by pasting a reviewer token (kept in sessionStorage: this
 * tab only). The active queue is a table: one row per review with the agent's health, drift and
 * verified domain; sorted and filtered by the API (so the order holds across pages), the table's
 * state kept in the address; j/k move between rows, Enter opens one, `/` goes to the search. An
 * opened review holds its actions: assign, priority, comment, request changes, approve with a trust
 * tier, reject; the queue is read again after each. A panel lists the approved agents that have
 * been down for more than a day.
 */
import { ApiError, api, isAbort, jwtClaims, query, reviewerToken, setReviewerToken } from "../client/api.ts";
import { h, mainElement, replace, uid } from "../client/dom.ts";
import { ACTIVE_STATUSES, PRIORITIES, TRUST_TIERS } from "../client/enums.ts";
import { healthBadge } from "../client/health.ts";
import { mountAccount, session, sessionHas, signInLink, signOutForm } from "../client/session.ts";
import type { DownProviders, Query, Review, ReviewPage } from "../client/types.ts";
import {
  badge,
  debounce,
  errorBox,
  field,
  humanize,
  options,
  relative,
  Status,
  time,
  timeAgo,
  tokenForm,
} from "../client/ui.ts";

const main = mainElement();
const announcer = new Status("sr-status");
const PAGE_SIZE = 20;

/** The queue's orders (its `sort` argument), as the Sort control words them. */
const SORTS = {
  PRIORITY: "Urgency, then age",
  OLDEST: "Oldest first",
  NEWEST: "Newest first",
  RECENTLY_UPDATED: "Recently updated",
  LEAST_RECENTLY_UPDATED: "Least recently updated",
} as const satisfies Record<NonNullable<Query<"/api/v1/reviews/queue">["sort"]>, string>;
type Sort = keyof typeof SORTS;

/**
 * The sortable columns: the order a header's first click gives, the other way on a second click,
 * and what each order is to `aria-sort`.
 */
const SORTABLE = {
  priority: { first: "PRIORITY", second: null },
  opened: { first: "OLDEST", second: "NEWEST" },
  updated: { first: "RECENTLY_UPDATED", second: "LEAST_RECENTLY_UPDATED" },
} as const satisfies Record<string, { first: Sort; second: Sort | null }>;
type Column = keyof typeof SORTABLE;
const ARIA_SORT: Record<Sort, [Column, "ascending" | "descending"]> = {
  PRIORITY: ["priority", "descending"],
  OLDEST: ["opened", "ascending"],
  NEWEST: ["opened", "descending"],
  RECENTLY_UPDATED: ["updated", "descending"],
  LEAST_RECENTLY_UPDATED: ["updated", "ascending"],
};

/** Who works the queue: a pasted token, or the session (its requests carry the cookie, no token). */
interface Reviewer {
  token: string | null;
  me: string;
  expires: string | null;
}

async function start(): Promise<void> {
  void mountAccount();
  const token = reviewerToken();
  if (token) return dashboard(fromToken(token));
  const s = await session();
  signInUrl = s.signInUrl ?? null;
  if (s.signedIn && sessionHas(s, "reviewer")) {
    return dashboard({ token: null, me: s.subject ?? "", expires: s.expiresAt ?? null });
  }
  signIn(s.signedIn ? "Your account does not carry the reviewer role." : undefined);
}

/** Where people sign in, when the registry has an identity provider. */
let signInUrl: string | null = null;

function fromToken(token: string): Reviewer {
  const claims = jwtClaims(token);
  return {
    token,
    me: typeof claims?.sub === "string" ? claims.sub : "",
    expires: typeof claims?.exp === "number" ? new Date(claims.exp * 1000).toISOString() : null,
  };
}

// ---------------------------------------------------------------- sign in

function signIn(notice?: string): void {
  const form = tokenForm({
    id: "reviewer-token",
    label: "Reviewer token",
    hint: h(
      "span",
      null,
      "Paste a reviewer JWT (locally: ",
      h("code", null, "npm run reviewer-token -- --sub your-name"),
      "). It is kept for this browser tab only and forgotten when the tab closes.",
    ),
    empty: "Paste your reviewer token first.",
    probe: (token) => api<ReviewPage>("GET", `/reviews/queue${query({ limit: 1 })}`, { token }),
    refused: {
      unauthenticated: "This token was refused: it is malformed, expired, or not signed for this registry.",
      forbidden: "This token is valid but does not carry the reviewer role.",
    },
    signedIn: (token) => {
      setReviewerToken(token);
      dashboard(fromToken(token));
    },
  });
  replace(
    main,
    h(
      "div",
      { class: "page-head" },
      h("h1", null, "Review queue"),
      h("p", { class: "lede" }, "For reviewers: sign in to see and decide the active reviews."),
    ),
    notice ? h("p", { class: "notice warning", role: "alert" }, notice) : null,
    // With an identity provider, its sign-in leads; a pasted token stays for those without an account.
    signInUrl
      ? [
          h(
            "p",
            { class: "signin-lead" },
            signInLink("Sign in", "button primary"),
            " with your organisation's account.",
          ),
          h(
            "details",
            { class: "token-fallback" },
            h("summary", { class: "token-fallback-summary" }, "Or paste a reviewer token"),
            form,
          ),
        ]
      : form,
    announcer.element,
  );
}

function signOut(notice?: string): void {
  setReviewerToken(null);
  signIn(notice);
  announcer.message(notice ? "" : "Signed out.");
}

// ---------------------------------------------------------------- the dashboard

/** The table's state in the address, so that a reload or a shared link shows the same table. */
const STATE_KEYS = ["sort", "status", "priority", "endpointVerified", "assignedTo", "providerCode", "search"] as const;

/** Whether a key press belongs to a field being typed in (where j, k, / and Enter are text). */
function typing(target: EventTarget | null): boolean {
  if (!(target instanceof HTMLElement)) return false;
  return target.isContentEditable || target.matches("input, textarea, select");
}

function dashboard({ token, me, expires }: Reviewer): void {
  const statusFilter = h("select", { name: "status" }, options(ACTIVE_STATUSES, null, "Any active status"));
  const priorityFilter = h("select", { name: "priority" }, options(PRIORITIES, null, "Any priority"));
  // The queue's endpointVerified argument: "true", "false", or "" for either.
  const verifiedFilter = h(
    "select",
    { name: "endpointVerified" },
    h("option", { value: "" }, "Any domain"),
    h("option", { value: "true" }, "Verified domain"),
    h("option", { value: "false" }, "Domain not verified"),
  );
  const assignedFilter = h("input", {
    type: "text",
    name: "assignedTo",
    autocomplete: "off",
    spellcheck: false,
    placeholder: "a reviewer's name",
  });
  const providerFilter = h("input", { type: "text", name: "providerCode", autocomplete: "off", spellcheck: false });
  const searchFilter = h("input", {
    type: "search",
    name: "search",
    autocomplete: "off",
    spellcheck: false,
    maxlength: 200,
    placeholder: "Review code, agent code or name",
    "aria-keyshortcuts": "/",
  });
  const sortSelect = h(
    "select",
    { name: "sort" },
    (Object.keys(SORTS) as Sort[]).map((key) => h("option", { value: key }, SORTS[key])),
  );
  const mine = h("input", { type: "checkbox", id: uid("mine") });

  // The address's state into the controls (values the controls do not hold are left out).
  const url = new URL(location.href);
  const controls = {
    sort: sortSelect,
    status: statusFilter,
    priority: priorityFilter,
    endpointVerified: verifiedFilter,
    assignedTo: assignedFilter,
    providerCode: providerFilter,
    search: searchFilter,
  } satisfies Record<(typeof STATE_KEYS)[number], HTMLInputElement | HTMLSelectElement>;
  for (const key of STATE_KEYS) {
    const value = url.searchParams.get(key);
    if (value === null) continue;
    const control = controls[key];
    if (control instanceof HTMLSelectElement && ![...control.options].some((o) => o.value === value)) continue;
    control.value = value;
  }
  if (me && assignedFilter.value === me) {
    mine.checked = true;
    assignedFilter.disabled = true;
  }
  mine.addEventListener("change", () => {
    assignedFilter.value = mine.checked ? me : "";
    assignedFilter.disabled = mine.checked;
    restart();
  });

  const status = new Status();
  const more = h("button", { type: "button", class: "button secondary", hidden: true }, "Load more");
  const caption = h("caption", null);
  const headers = new Map<Column, HTMLTableCellElement>();
  const header = (label: string, column?: Column) => {
    if (!column) return h("th", { scope: "col" }, label);
    const th = h(
      "th",
      { scope: "col", "data-column": column },
      h(
        "button",
        { type: "button", class: "sort-button", onclick: () => sortBy(column) },
        label,
        h("span", { class: "sort-mark", "aria-hidden": "true" }),
      ),
    );
    headers.set(column, th);
    return th;
  };
  const table = h(
    "table",
    { class: "queue-table", id: "queue-table" },
    caption,
    h(
      "thead",
      null,
      h(
        "tr",
        null,
        header("Review"),
        header("Agent"),
        header("Status"),
        header("Priority", "priority"),
        header("Health"),
        header("Drift"),
        header("Domain"),
        header("Assigned to"),
        header("Opened", "opened"),
        header("Updated", "updated"),
      ),
    ),
  );
  const list = h("div", { class: "queue table-scroll" }, table);
  const COLUMNS = 10;

  const filters = h(
    "form",
    { class: "filters", "aria-label": "Filter the queue", onsubmit: (e: Event) => e.preventDefault() },
    h("div", { class: "search-row" }, field("Search", searchFilter, "Press / to come here from the table.")),
    h(
      "div",
      { class: "filter-grid" },
      field("Status", statusFilter),
      field("Priority", priorityFilter),
      field("Endpoint domain", verifiedFilter),
      field("Assigned to", assignedFilter),
      field("Agent code", providerFilter),
      field("Sort", sortSelect),
    ),
    me
      ? h("div", { class: "check mine" }, mine, h("label", { for: mine.id }, `Only reviews assigned to me (${me})`))
      : null,
  );

  replace(
    main,
    h(
      "div",
      { class: "page-head with-aside" },
      h("h1", null, "Review queue"),
      h(
        "p",
        { class: "session" },
        "Signed in as ",
        h("strong", { id: "reviewer-name" }, me || "a reviewer"),
        expires ? [" until ", time(expires)] : null,
        " ",
        token
          ? h("button", { type: "button", class: "button link", onclick: () => signOut() }, "Sign out")
          : signOutForm("button link"),
      ),
    ),
    downPanel(token),
    filters,
    h(
      "p",
      { class: "hint", id: "queue-keys" },
      "Sorted and filtered by the registry, so the order holds as more pages load. Keys: ",
      h("kbd", null, "j"),
      " and ",
      h("kbd", null, "k"),
      " move between reviews, ",
      h("kbd", null, "Enter"),
      " opens one, ",
      h("kbd", null, "Esc"),
      " closes it, ",
      h("kbd", null, "/"),
      " searches.",
    ),
    status.element,
    list,
    more,
    announcer.element,
  );

  let inflight: AbortController | undefined;
  let cursor: string | null = null;
  /** Reviews opened by the reviewer: they stay open while the queue is read again. */
  const opened = new Set<string>();
  /** The review whose row j/k last moved to (the roving tab stop). */
  let current: string | null = null;
  /** What the table says instead of rows: that nothing matches, or that the queue could not be read. */
  let note: HTMLElement | null = null;
  const setNote = (next: HTMLElement | null) => {
    note?.remove();
    note = next;
    table.hidden = next !== null;
    if (next) list.append(next);
  };

  /** The filters and sort: query parameters of GET /api/v1/reviews/queue ("" for none). */
  function params() {
    return {
      sort: sortSelect.value === "PRIORITY" ? "" : sortSelect.value,
      status: statusFilter.value,
      priority: priorityFilter.value,
      endpointVerified: verifiedFilter.value,
      assignedTo: assignedFilter.value.trim(),
      providerCode: providerFilter.value.trim(),
      search: searchFilter.value.trim(),
    } satisfies Partial<Record<keyof Query<"/api/v1/reviews/queue">, string>>;
  }

  /** The address says what the table shows; replaced, not pushed, so Back leaves the page. */
  function keepInAddress(): void {
    const next = new URL(location.href);
    const wanted = params();
    for (const key of STATE_KEYS) {
      if (wanted[key]) next.searchParams.set(key, wanted[key]);
      else next.searchParams.delete(key);
    }
    if (next.href !== location.href) history.replaceState(null, "", next);
  }

  function showSort(): void {
    const sort = sortSelect.value as Sort;
    const [column, direction] = ARIA_SORT[sort];
    for (const [name, th] of headers) {
      if (name === column) th.setAttribute("aria-sort", direction);
      else th.removeAttribute("aria-sort");
      const mark = th.querySelector(".sort-mark");
      if (mark) mark.textContent = name === column ? (direction === "ascending" ? " ▲" : " ▼") : "";
    }
    caption.textContent = `Active reviews, ${SORTS[sort].toLowerCase()}`;
  }

  function sortBy(column: Column): void {
    const { first, second } = SORTABLE[column];
    const now = sortSelect.value as Sort;
    sortSelect.value = now === first && second ? second : first;
    restart();
  }

  const rows = () => [...table.querySelectorAll<HTMLTableRowElement>("tbody.review > tr.review-row")];

  /** Makes a row the current one: the table's one tab stop, marked for the eye and for assistive tech. */
  function focusRow(row: HTMLTableRowElement | undefined, focus = true): void {
    if (!row) return;
    for (const r of rows()) {
      r.tabIndex = r === row ? 0 : -1;
      if (r === row) r.setAttribute("aria-current", "true");
      else r.removeAttribute("aria-current");
    }
    current = row.closest<HTMLElement>("tbody.review")?.dataset.review ?? null;
    if (focus) row.focus();
  }

  function move(by: 1 | -1): void {
    const all = rows();
    if (all.length === 0) return;
    const at = all.findIndex((r) => r.closest<HTMLElement>("tbody.review")?.dataset.review === current);
    // From outside the table the first key press comes back to the current row; then rows move.
    const inTable = table.contains(document.activeElement);
    focusRow(all[at === -1 ? 0 : inTable ? Math.min(all.length - 1, Math.max(0, at + by)) : at]);
  }

  document.addEventListener("keydown", (event) => {
    if (!main.contains(table) || event.defaultPrevented || event.altKey || event.ctrlKey || event.metaKey) return;
    if (typing(event.target)) return;
    const row = event.target instanceof HTMLElement ? event.target.closest<HTMLTableRowElement>("tr.review-row") : null;
    if (event.key === "/") {
      event.preventDefault();
      searchFilter.focus();
      searchFilter.select();
    } else if (event.key === "j" || event.key === "k") {
      event.preventDefault();
      move(event.key === "j" ? 1 : -1);
    } else if (event.key === "Enter" && row && event.target === row) {
      event.preventDefault();
      toggle(row, true);
    } else if (event.key === "Escape") {
      const body = event.target instanceof HTMLElement ? event.target.closest<HTMLElement>("tbody.review") : null;
      const open = body?.querySelector<HTMLTableRowElement>("tr.review-row");
      if (body && open && opened.has(body.dataset.review ?? "")) {
        toggle(open, false);
        focusRow(open);
      }
    }
  });

  /** Opens (or closes) a review: its details and actions appear in the row beneath it. */
  function toggle(row: HTMLTableRowElement, open?: boolean): void {
    const body = row.closest<HTMLElement>("tbody.review");
    const code = body?.dataset.review;
    const detail = body?.querySelector<HTMLTableRowElement>("tr.review-detail");
    const opener = row.querySelector<HTMLButtonElement>("button.review-open");
    if (!code || !detail || !opener) return;
    const show = open ?? detail.hidden;
    detail.hidden = !show;
    opener.setAttribute("aria-expanded", String(show));
    if (show) opened.add(code);
    else opened.delete(code);
    focusRow(row, false);
  }

  async function fetchPage(after: string | null, signal: AbortSignal): Promise<ReviewPage> {
    return api<ReviewPage>("GET", `/reviews/queue${query({ ...params(), limit: PAGE_SIZE, cursor: after })}`, {
      token,
      signal,
    });
  }

  async function load(append: boolean, focusAfter?: string): Promise<void> {
    inflight?.abort();
    const controller = new AbortController();
    inflight = controller;
    list.setAttribute("aria-busy", "true");
    status.loading("Loading the queue…", 0);
    more.disabled = true;
    try {
      const page = await fetchPage(append ? cursor : null, controller.signal);
      if (controller.signal.aborted) return;
      const items = page.items;
      cursor = page.nextCursor ?? null;
      const hadFocus = table.contains(document.activeElement);
      if (!append) for (const body of table.querySelectorAll("tbody")) body.remove();
      if (!append && items.length === 0) {
        setNote(
          h(
            "div",
            { class: "empty" },
            h("h2", null, "Nothing to review"),
            h(
              "p",
              null,
              Object.entries(params()).some(([k, v]) => k !== "sort" && v)
                ? "No active review matches these filters."
                : "The queue is empty: every review is decided.",
            ),
          ),
        );
      } else {
        setNote(null);
        table.append(...items.map(item));
        const all = rows();
        const keep = focusAfter ?? current;
        const row =
          all.find((r) => r.closest<HTMLElement>("tbody.review")?.dataset.review === keep) ??
          (append ? undefined : all[0]);
        // Focus follows only when it was in the table, or after an action on that review.
        focusRow(row, Boolean(focusAfter) || hadFocus);
      }
      const shown = rows().length;
      status.message(`${shown} active review${shown === 1 ? "" : "s"} shown${cursor ? "; more to load" : ""}.`);
      more.hidden = !cursor;
    } catch (error) {
      if (isAbort(error)) return;
      if (error instanceof ApiError && error.status === 401) {
        signOut("Your reviewer session has ended (the token expired or was refused). Sign in again.");
        return;
      }
      status.clear();
      for (const body of table.querySelectorAll("tbody")) body.remove();
      setNote(errorBox(error, () => void load(false), "Could not load the queue."));
      more.hidden = true;
    } finally {
      if (inflight === controller) list.removeAttribute("aria-busy");
      more.disabled = false;
    }
  }

  function restart(): void {
    cursor = null;
    keepInAddress();
    showSort();
    void load(false);
  }

  // ---------------------------------------------------------------- one review: its row and its actions

  function item(review: Review): HTMLElement {
    const note = h("textarea", { rows: 3, maxlength: 2000 });
    const tier = h("select", null, options(TRUST_TIERS, null, "Keep the current tier"));
    const priority = h("select", null, options(PRIORITIES, review.priority));
    const assignee = h("input", {
      type: "text",
      autocomplete: "off",
      spellcheck: false,
      placeholder: me || "yourself",
    });
    const feedback = h("div", { class: "item-feedback" });
    const buttons: HTMLButtonElement[] = [];

    const act = (label: string, className: string, run: () => Promise<string> | null): HTMLButtonElement => {
      const button = h("button", { type: "button", class: `button ${className}` }, label);
      button.addEventListener("click", async () => {
        feedback.replaceChildren();
        let pending: Promise<string> | null;
        try {
          pending = run();
        } catch (e) {
          feedback.replaceChildren(errorBox(e));
          return;
        }
        if (!pending) return;
        for (const b of buttons) b.disabled = true;
        button.setAttribute("aria-busy", "true");
        const text = button.textContent;
        button.textContent = "Working…";
        try {
          const done = await pending;
          // Said once the queue shows the result.
          await load(false, review.reviewCode);
          announcer.message(done);
        } catch (e) {
          if (e instanceof ApiError && e.status === 401) {
            signOut("Your reviewer session has ended (the token expired or was refused). Sign in again.");
            return;
          }
          feedback.replaceChildren(errorBox(e, undefined, `Could not ${label.toLowerCase()}.`));
          for (const b of buttons) b.disabled = false;
          button.textContent = text;
          button.removeAttribute("aria-busy");
        }
      });
      buttons.push(button);
      return button;
    };

    const needNote = (what: string): string | null => {
      const text = note.value.trim();
      if (text) return text;
      feedback.replaceChildren(h("p", { class: "form-error", role: "alert" }, `Write a note to ${what}.`));
      note.setAttribute("aria-invalid", "true");
      note.focus();
      return null;
    };
    note.addEventListener("input", () => note.removeAttribute("aria-invalid"));
    const path = (suffix = "") => `/reviews/${encodeURIComponent(review.reviewCode)}${suffix}`;
    const post = (suffix: string, body: Record<string, unknown>) => api<unknown>("POST", path(suffix), { token, body });

    const isOpen = opened.has(review.reviewCode);
    const detailId = uid("review");
    const row = h(
      "tr",
      { class: "review-row", tabindex: -1, "aria-label": `Review ${review.reviewCode} of ${review.providerName}` },
      h(
        "th",
        { scope: "row" },
        h(
          "button",
          {
            type: "button",
            class: "button link review-open",
            "aria-expanded": String(isOpen),
            "aria-controls": detailId,
            onclick: () => toggle(row),
          },
          review.reviewCode,
        ),
      ),
      h(
        "td",
        { "data-col": "agent" },
        h("a", { href: `/providers/${encodeURIComponent(review.providerCode)}` }, review.providerName),
        " ",
        h("span", { class: "code" }, review.providerCode),
      ),
      h(
        "td",
        { "data-col": "status" },
        badge(humanize(review.status), review.status === "CHANGES_REQUESTED" ? "warn" : "info", "Status"),
        review.kind === "UPDATE" ? [" ", badge("Update", "info", "Kind: an update of an approved agent")] : null,
      ),
      h(
        "td",
        { "data-col": "priority" },
        badge(
          humanize(review.priority),
          review.priority === "URGENT" ? "bad" : review.priority === "HIGH" ? "warn" : "neutral",
          "Priority",
        ),
      ),
      h(
        "td",
        { "data-col": "health" },
        review.healthState ? healthBadge(review.healthState) : h("span", { class: "muted" }, "Not probed"),
      ),
      h(
        "td",
        { "data-col": "drift" },
        review.driftSummary
          ? [
              h("span", { class: "drift-words" }, review.driftSummary),
              review.driftDetectedAt
                ? h(
                    "span",
                    { class: "since" },
                    " · ",
                    h(
                      "time",
                      { datetime: review.driftDetectedAt, title: review.driftDetectedAt },
                      relative(review.driftDetectedAt),
                    ),
                  )
                : null,
            ]
          : h("span", { class: "muted" }, "None"),
      ),
      // Words, not only a colour: whether the endpoint's domain is proved to be the owner's.
      h(
        "td",
        { "data-col": "domain" },
        review.endpointVerified
          ? badge("Verified domain", "good", "The endpoint's domain is verified")
          : badge("Domain not verified", "warn", "Approving needs a note"),
      ),
      h(
        "td",
        { "data-col": "assigned" },
        review.assignedTo ? review.assignedTo : h("span", { class: "muted" }, "Unassigned"),
      ),
      h("td", { "data-col": "opened" }, time(review.createdAt)),
      h("td", { "data-col": "updated" }, time(review.updatedAt)),
    );
    // A click on the row (not on its link or button) opens it too, as a reviewer scanning expects.
    row.addEventListener("click", (event) => {
      if (event.target instanceof Element && event.target.closest("a, button")) return;
      toggle(row);
    });

    const detail = h(
      "tr",
      { class: "review-detail", id: detailId, hidden: !isOpen },
      h(
        "td",
        { colspan: COLUMNS },
        h(
          "div",
          { class: "review-body", role: "group", "aria-label": `Act on ${review.reviewCode}` },
          // What a reviewer approves a client to start: each package and the variables it reads.
          review.providerPackages.length
            ? h(
                "ul",
                { class: "review-packages", "aria-label": "Packages" },
                review.providerPackages.map((pkg) =>
                  h(
                    "li",
                    null,
                    badge(humanize(pkg.registryType), "neutral", "Package registry"),
                    " ",
                    h("code", null, pkg.version ? `${pkg.identifier}@${pkg.version}` : pkg.identifier),
                    pkg.environmentVariables.length
                      ? [
                          " · reads ",
                          pkg.environmentVariables.map((v) => `${v.name}${v.isSecret ? " (secret)" : ""}`).join(", "),
                        ]
                      : null,
                  ),
                ),
              )
            : null,
          h(
            "p",
            { class: "meta" },
            humanize(review.kind),
            " review · ",
            review.assignedTo ? ["Assigned to ", h("strong", null, review.assignedTo)] : "Unassigned",
            " · opened ",
            time(review.createdAt),
            " · updated ",
            time(review.updatedAt),
            " · ",
            h("a", { href: `/providers/${encodeURIComponent(review.providerCode)}#health` }, "the agent's health"),
          ),
          h(
            "div",
            { class: "grid-2" },
            h(
              "div",
              { class: "field-with-action" },
              field("Assign to", assignee, "Empty: yourself."),
              act("Assign", "secondary", () => {
                const who = assignee.value.trim();
                return post("/assign", who ? { assignee: who } : {}).then(
                  () => `${review.reviewCode} assigned to ${who || me || "you"}.`,
                );
              }),
            ),
            h(
              "div",
              { class: "field-with-action" },
              field("Priority", priority),
              act("Set priority", "secondary", () =>
                api("PATCH", path(), { token, body: { priority: priority.value } }).then(
                  () => `${review.reviewCode} priority set to ${humanize(priority.value)}.`,
                ),
              ),
            ),
          ),
          field(
            "Note",
            note,
            "Required to comment, request changes or reject, and to approve an agent whose endpoint's domain is not verified. Shown to the agent's owner and to reviewers.",
          ),
          h(
            "div",
            { class: "button-row" },
            act("Comment", "secondary", () => {
              const text = needNote("comment");
              return text
                ? post("/comments", { note: text }).then(() => `Comment added to ${review.reviewCode}.`)
                : null;
            }),
            act("Request changes", "warn", () => {
              const text = needNote("say what must change");
              return text
                ? post("/decision", { decision: "REQUEST_CHANGES", note: text }).then(
                    () => `Changes requested on ${review.reviewCode}.`,
                  )
                : null;
            }),
          ),
          h(
            "div",
            { class: "decide" },
            field("Trust tier on approval", tier),
            h(
              "div",
              { class: "button-row" },
              act("Approve", "good", () => {
                const body: Record<string, unknown> = { decision: "APPROVE" };
                if (tier.value) body.trustTier = tier.value;
                if (note.value.trim()) body.note = note.value.trim();
                return post("/decision", body).then(
                  () => `${review.reviewCode} approved${tier.value ? ` as ${humanize(tier.value)}` : ""}.`,
                );
              }),
              act("Reject", "bad", () => {
                const text = needNote("say why it is rejected");
                return text
                  ? post("/decision", { decision: "REJECT", note: text }).then(() => `${review.reviewCode} rejected.`)
                  : null;
              }),
            ),
          ),
          feedback,
        ),
      ),
    );
    return h("tbody", { class: "review", "data-review": review.reviewCode }, row, detail);
  }

  const typed = debounce(restart, 300);
  for (const input of [searchFilter, assignedFilter, providerFilter]) input.addEventListener("input", typed);
  for (const select of [statusFilter, priorityFilter, verifiedFilter, sortSelect]) {
    select.addEventListener("change", restart);
  }
  more.addEventListener("click", () => void load(true));
  restart();
}

// ---------------------------------------------------------------- down for more than a day

/**
 * Approved agents whose endpoint has been down for more than a day, longest first: candidates for
 * a word with their owner or a suspension. Read once with the dashboard, and again on request.
 */
function downPanel(token: string | null): HTMLElement {
  // The first read fills a placeholder in the list's own place, which holds the room a short answer
  // takes (.down-body's min-height): a progress line shown and taken away would move the queue below
  // twice as the page loads. A refresh keeps the list and shows its progress beneath it.
  const body = h(
    "div",
    { class: "down-body" },
    h("p", { class: "muted", role: "status" }, h("span", { class: "spinner", "aria-hidden": "true" }), " Loading…"),
  );
  const progress = new Status();
  const refresh = h("button", { type: "button", class: "button link" }, "Refresh");
  let first = true;
  async function load(): Promise<void> {
    refresh.disabled = true;
    if (!first) progress.loading("Loading…", 0);
    first = false;
    try {
      const down = await api<DownProviders>("GET", "/health/down", { token });
      replace(
        body,
        down.length
          ? h(
              "ul",
              { class: "down-list" },
              down.map((d) =>
                h(
                  "li",
                  { "data-provider": d.providerCode },
                  h("a", { href: `/providers/${encodeURIComponent(d.providerCode)}#health` }, d.name),
                  " ",
                  h("span", { class: "code" }, d.providerCode),
                  h("span", { class: "since" }, " · down since ", timeAgo(d.since)),
                  d.reason ? h("p", { class: "reason" }, d.reason) : null,
                ),
              ),
            )
          : h("p", { class: "muted" }, "None: no approved agent has been down for more than a day."),
      );
      progress.clear();
    } catch (error) {
      body.replaceChildren();
      progress.message(errorBox(error, () => void load(), "Could not load the agents that are down."));
    } finally {
      refresh.disabled = false;
    }
  }
  refresh.addEventListener("click", () => void load());
  void load();
  return h(
    "section",
    { class: "down-panel", "aria-labelledby": "down-title" },
    h("div", { class: "down-head" }, h("h2", { id: "down-title" }, "Down for more than a day"), refresh),
    h("p", { class: "hint" }, "Approved agents whose endpoint the registry has found down for over 24 hours."),
    body,
    progress.element,
  );
}

void start();
