/**
 * `/reviews`: the reviewers' dashboard. Signed in through the registry's identity provider (a
 * session cookie the requests carry), or, without one, by pasting a reviewer token (kept in
 * sessionStorage: this tab only). The active queue with its filters, in the API's order (most
 * urgent, then oldest) or sorted here; and per item: assign, priority, comment, request changes,
 * approve with a trust tier, reject. The queue is read again after each action. Each item says how
 * the registry last found the agent's endpoint, and a panel lists the approved agents that have
 * been down for more than a day.
 */
import { ApiError, api, isAbort, jwtClaims, query, reviewerToken, setReviewerToken } from "../client/api.ts";
import { h, mainElement, replace, uid } from "../client/dom.ts";
import { ACTIVE_STATUSES, PRIORITIES, TRUST_TIERS } from "../client/enums.ts";
import { healthBadge } from "../client/health.ts";
import { mountAccount, session, sessionHas, signInLink, signOutForm } from "../client/session.ts";
import type { DownProviders, Query, Review, ReviewPage } from "../client/types.ts";
import { badge, debounce, errorBox, field, humanize, options, Status, time, timeAgo, tokenForm } from "../client/ui.ts";

const main = mainElement();
const announcer = new Status("sr-status");
const PAGE_SIZE = 20;
/** Sorting other than the API's own reads up to this many items and sorts them here. */
const SORT_WINDOW = 500;

const SORTS = {
  priority: "Urgency, then age",
  oldest: "Oldest first",
  newest: "Newest first",
  updated: "Recently updated",
} as const;
type Sort = keyof typeof SORTS;

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
    signInUrl
      ? h("p", null, signInLink("Sign in", "button primary"), " with your organisation's account, or paste a token:")
      : null,
    form,
    announcer.element,
  );
}

function signOut(notice?: string): void {
  setReviewerToken(null);
  signIn(notice);
  announcer.message(notice ? "" : "Signed out.");
}

// ---------------------------------------------------------------- the dashboard

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
  });
  const sortSelect = h(
    "select",
    { name: "sort" },
    (Object.keys(SORTS) as Sort[]).map((key) => h("option", { value: key }, SORTS[key])),
  );
  const mine = h("input", { type: "checkbox", id: uid("mine") });
  mine.addEventListener("change", () => {
    assignedFilter.value = mine.checked ? me : "";
    assignedFilter.disabled = mine.checked;
    restart();
  });

  const status = new Status();
  const list = h("div", { class: "queue" });
  const more = h("button", { type: "button", class: "button secondary", hidden: true }, "Load more");
  const sortNote = h("p", { class: "hint" });

  const filters = h(
    "form",
    { class: "filters", "aria-label": "Filter the queue", onsubmit: (e: Event) => e.preventDefault() },
    h("div", { class: "search-row" }, field("Search", searchFilter)),
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
    sortNote,
    status.element,
    list,
    more,
    announcer.element,
  );

  let inflight: AbortController | undefined;
  let cursor: string | null = null;

  /** The filters: query parameters of GET /api/v1/reviews/queue ("" for none). */
  function params() {
    return {
      status: statusFilter.value,
      priority: priorityFilter.value,
      endpointVerified: verifiedFilter.value,
      assignedTo: assignedFilter.value.trim(),
      providerCode: providerFilter.value.trim(),
      search: searchFilter.value.trim(),
    } satisfies Partial<Record<keyof Query<"/api/v1/reviews/queue">, string>>;
  }

  async function fetchPage(after: string | null, limit: number, signal: AbortSignal): Promise<ReviewPage> {
    return api<ReviewPage>("GET", `/reviews/queue${query({ ...params(), limit, cursor: after })}`, { token, signal });
  }

  async function load(append: boolean, focusAfter?: string): Promise<void> {
    inflight?.abort();
    const controller = new AbortController();
    inflight = controller;
    const sort = sortSelect.value as Sort;
    list.setAttribute("aria-busy", "true");
    status.loading("Loading the queue…", 0);
    more.disabled = true;
    try {
      let items: Review[];
      let next: string | null;
      if (sort === "priority") {
        const page = await fetchPage(append ? cursor : null, PAGE_SIZE, controller.signal);
        items = page.items;
        next = page.nextCursor ?? null;
        sortNote.textContent = "";
      } else {
        // The API orders by priority; other orders are made here, over the first SORT_WINDOW items.
        items = [];
        next = null;
        do {
          const page = await fetchPage(next, 100, controller.signal);
          items.push(...page.items);
          next = page.nextCursor ?? null;
        } while (next && items.length < SORT_WINDOW);
        const by = (k: "createdAt" | "updatedAt", dir: 1 | -1) => (a: Review, b: Review) =>
          dir * a[k].localeCompare(b[k]);
        items.sort(
          sort === "oldest" ? by("createdAt", 1) : sort === "newest" ? by("createdAt", -1) : by("updatedAt", -1),
        );
        sortNote.textContent = next
          ? `Sorted here over the first ${items.length} matching reviews; narrow the filters to see the rest.`
          : "";
        next = null;
      }
      if (controller.signal.aborted) return;
      cursor = next;
      if (!append) list.replaceChildren();
      if (!append && items.length === 0) {
        replace(
          list,
          h(
            "div",
            { class: "empty" },
            h("h2", null, "Nothing to review"),
            h(
              "p",
              null,
              Object.values(params()).some(Boolean)
                ? "No active review matches these filters."
                : "The queue is empty: every review is decided.",
            ),
          ),
        );
      } else {
        list.append(...items.map(item));
      }
      const shown = list.querySelectorAll(".review").length;
      status.message(`${shown} active review${shown === 1 ? "" : "s"} shown${cursor ? "; more to load" : ""}.`);
      more.hidden = !cursor;
      if (focusAfter) {
        (
          list.querySelector<HTMLElement>(`[data-review="${focusAfter}"] summary`) ??
          list.querySelector<HTMLElement>(".review summary")
        )?.focus();
      }
    } catch (error) {
      if (isAbort(error)) return;
      if (error instanceof ApiError && error.status === 401) {
        signOut("Your reviewer session has ended (the token expired or was refused). Sign in again.");
        return;
      }
      status.clear();
      replace(
        list,
        errorBox(error, () => void load(false), "Could not load the queue."),
      );
      more.hidden = true;
    } finally {
      if (inflight === controller) list.removeAttribute("aria-busy");
      more.disabled = false;
    }
  }

  function restart(): void {
    cursor = null;
    void load(false);
  }

  // ---------------------------------------------------------------- one queue item and its actions

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

    const panelId = uid("actions");
    const heading = `${review.reviewCode}`;
    return h(
      "article",
      {
        class: "review",
        "data-review": review.reviewCode,
        "aria-label": `Review ${review.reviewCode} of ${review.providerName}`,
      },
      h(
        "div",
        { class: "review-head" },
        h(
          "h2",
          null,
          h("a", { href: `/providers/${encodeURIComponent(review.providerCode)}` }, review.providerName),
          " ",
          h("span", { class: "code" }, review.providerCode),
        ),
        h(
          "p",
          { class: "badges" },
          badge(review.reviewCode, "neutral", "Review code"),
          badge(humanize(review.kind), review.kind === "UPDATE" ? "info" : "neutral", "Kind"),
          badge(humanize(review.status), review.status === "CHANGES_REQUESTED" ? "warn" : "info", "Status"),
          badge(
            humanize(review.priority),
            review.priority === "URGENT" ? "bad" : review.priority === "HIGH" ? "warn" : "neutral",
            "Priority",
          ),
          // Words, not only a colour: whether the endpoint's domain is proved to be the owner's.
          review.endpointVerified
            ? badge("Verified domain", "good", "The endpoint's domain is verified")
            : badge("Domain not verified", "warn", "Approving needs a note"),
          review.healthState ? healthBadge(review.healthState) : null,
        ),
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
          review.assignedTo ? ["Assigned to ", h("strong", null, review.assignedTo)] : "Unassigned",
          " · opened ",
          time(review.createdAt),
          " · updated ",
          time(review.updatedAt),
        ),
      ),
      h(
        "details",
        { class: "actions-panel" },
        h("summary", null, `Act on ${heading}`),
        h(
          "div",
          { id: panelId, class: "actions-body" },
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
  const body = h("div", { class: "down-body" });
  const progress = new Status();
  const refresh = h("button", { type: "button", class: "button link" }, "Refresh");
  async function load(): Promise<void> {
    refresh.disabled = true;
    progress.loading("Loading…", 0);
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
