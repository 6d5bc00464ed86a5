/**
 * `/admin/mirror-sources`: admins manage the registries this one mirrors (add a source with its
 * URL, kind, filter, review policy and interval; change it; remove it; start a sync now) and watch
 * each source's sync: its state, when it last ran and last succeeded, what it has seen, created,
 * updated, retired and skipped, the entries it skipped and its last errors. While a source syncs,
 * or was just asked to, the page reads that source again every 1.5 s, so its counts move as the sync
 * goes; it stops when the sync is over and while the tab is hidden. Signed in as on /admin/api-keys:
 * the registry's session, or a pasted reviewer JWT with the admin role (this tab only).
 */
import { ApiError, api, type FieldError, jwtClaims, query, reviewerToken, setReviewerToken } from "../client/api.ts";
import { type Child, h, mainElement, replace, uid } from "../client/dom.ts";
import { PACKAGE_REGISTRIES, TRUST_TIERS } from "../client/enums.ts";
import { fieldErrors } from "../client/field.errors.ts";
import { mountAccount, session, sessionHas, signInLink, signOutForm } from "../client/session.ts";
import type { MirrorSource, MirrorSourcePage, Schemas } from "../client/types.ts";
import {
  badge,
  errorBox,
  field,
  humanize,
  options,
  Status,
  splitList,
  time,
  timeAgo,
  tokenForm,
} from "../client/ui.ts";

type Source = MirrorSource;
type Kind = Schemas["MirrorKind"];
type Only = Schemas["MirrorOnly"];
type Policy = Schemas["MirrorPolicy"];
type State = Schemas["MirrorState"];
type CountName = keyof Schemas["MirrorCounts"];

const main = mainElement();
const announcer = new Status("sr-status");
const PAGE_SIZE = 100;
/** How often a syncing source is read again: often enough that its counts are seen to move. */
const POLL_MS = 1500;
/**
 * How long a source that was asked to sync (or is due) is watched before a mirror starts it: a
 * registry whose replicas all run with MIRROR=off never does, and the page must not poll for ever.
 */
const WAIT_FOR_START_MS = 30_000;
const SESSION_ENDED = "Your session has ended (the token expired or was refused). Sign in again.";
const NOT_ADMIN =
  "You are signed in without the admin role: mirror sources are managed by admins. Sign in with an account, or paste a token, that carries it.";

// Records rather than lists: a value the API adds or drops is a type error here.
const KINDS: Record<Kind, string> = { MCP_REGISTRY: "MCP registry", AGENT_REGISTRY: "Agent Registry" };
const ONLY: Record<Only, string> = { ANY: "Any server", REMOTES: "Remotes only", PACKAGES: "Packages only" };
const POLICIES: Record<Policy, string> = {
  REVIEW: "Review: each new entry opens an intake review",
  TRUSTED: "Trusted: entries are approved at once, at the tier chosen below",
};
const STATES: Record<State, [label: string, tone: string]> = {
  IDLE: ["Idle", "good"],
  SYNCING: ["Syncing", "info"],
  FAILED: ["Failed", "bad"],
};
const COUNTS: Record<CountName, string> = {
  seen: "Seen",
  created: "Created",
  updated: "Updated",
  retired: "Retired",
  skipped: "Skipped",
};
const COUNT_NAMES = Object.keys(COUNTS) as CountName[];

/** Who manages the sources: a pasted token, or (token null) the session, whose requests carry the cookie. */
interface Admin {
  token: string | null;
  me: string;
  expires: string | null;
}

let signInUrl: string | null = null;

function fromToken(token: string): Admin {
  const claims = jwtClaims(token);
  return {
    token,
    me: typeof claims?.sub === "string" ? claims.sub : "",
    expires: typeof claims?.exp === "number" ? new Date(claims.exp * 1000).toISOString() : null,
  };
}

function head(...aside: Child[]): HTMLElement {
  return h(
    "div",
    { class: aside.length ? "page-head with-aside" : "page-head" },
    h("h1", null, "Mirror sources"),
    ...aside,
  );
}

const LEDE =
  "Registries this one pulls agents from. What a source brings in goes through the same import, reviews and event log as an owner's intake; its policy says whether reviewers decide each entry.";

async function start(): Promise<void> {
  void mountAccount();
  const token = reviewerToken();
  if (token) return withToken(token);
  const s = await session();
  signInUrl = s.signInUrl ?? null;
  if (s.signedIn && sessionHas(s, "admin")) {
    return dashboard({ token: null, me: s.subject ?? "", expires: s.expiresAt ?? null });
  }
  signIn(s.signedIn ? NOT_ADMIN : undefined);
}

/**
 * The tab's token (from /reviews, say) is tried before the dashboard is shown: a reviewer without
 * the admin role is told so, and keeps the token for the pages it does open.
 */
async function withToken(token: string): Promise<void> {
  try {
    await api<MirrorSourcePage>("GET", `/mirror/sources${query({ limit: 1 })}`, { token });
  } catch (error) {
    if (error instanceof ApiError && error.status === 403) return signIn(notAdminWith(token));
    if (error instanceof ApiError && error.status === 401) {
      setReviewerToken(null);
      return signIn(SESSION_ENDED);
    }
    // Anything else (the registry unreachable, say) is shown by the dashboard's own read.
  }
  dashboard(fromToken(token));
}

function notAdminWith(token: string): string {
  const who = fromToken(token).me;
  return `The token of this tab${who ? ` (${who})` : ""} does not carry the admin role: mirror sources are managed by admins. Paste a token that carries it.`;
}

// ---------------------------------------------------------------- sign in

function signIn(notice?: string): void {
  const form = tokenForm({
    id: "admin-token",
    label: "Admin token",
    hint: h(
      "span",
      null,
      "Without an identity provider: paste a reviewer JWT with the admin role (locally: ",
      h("code", null, "npm run reviewer-token -- --sub your-name --roles admin"),
      "). It is kept for this browser tab only.",
    ),
    empty: "Paste your admin token first.",
    probe: (token) => api<MirrorSourcePage>("GET", `/mirror/sources${query({ limit: 1 })}`, { token }),
    refused: {
      unauthenticated: "This token was refused: it is malformed, expired, or not signed for this registry.",
      forbidden: "This token is valid but does not carry the admin role.",
    },
    signedIn: (token) => {
      setReviewerToken(token);
      dashboard(fromToken(token));
    },
  });
  replace(
    main,
    head(),
    h("p", { class: "lede" }, LEDE),
    notice ? h("p", { class: "notice warning", role: "alert" }, notice) : null,
    signInUrl ? h("p", null, signInLink("Sign in", "button primary"), " with your organisation's account, or:") : null,
    form,
    announcer.element,
  );
}

// ---------------------------------------------------------------- words

/** `3600` → "every hour", `600` → "every 10 minutes". */
function intervalWords(seconds: number): string {
  for (const [unit, size] of [
    ["day", 86_400],
    ["hour", 3600],
    ["minute", 60],
  ] as const) {
    if (seconds % size === 0) {
      const n = seconds / size;
      return n === 1 ? `every ${unit}` : `every ${n} ${unit}s`;
    }
  }
  return `every ${seconds} seconds`;
}

const countsWords = (s: Source) => COUNT_NAMES.map((c) => `${s.counts[c]} ${COUNTS[c].toLowerCase()}`).join(", ");

const plural = (n: number, one: string, many = `${one}s`) => `${n} ${n === 1 ? one : many}`;

// ---------------------------------------------------------------- the source form (add and edit)

type Body = Record<string, unknown>;

/** The form of a source: empty to add one, filled with `initial` to change it. */
function sourceForm(options_: {
  initial?: Source;
  title: string;
  submit: string;
  busy: string;
  /** Sends the body; a refusal it throws is shown in the form. */
  send: (body: Body) => Promise<void>;
  /** Where a refused credential goes (true: handled, say nothing more). */
  ended: (error: unknown) => boolean;
  cancel?: () => void;
}): HTMLFormElement {
  const { initial } = options_;
  const filter = initial?.filter;
  const url = h("input", {
    type: "url",
    name: "url",
    required: true,
    autocomplete: "off",
    spellcheck: false,
    maxlength: 500,
    placeholder: "https://registry.modelcontextprotocol.io",
    value: initial?.url ?? "",
    "data-path": "url",
  });
  const kind = h(
    "select",
    { name: "kind", "data-path": "kind" },
    (Object.keys(KINDS) as Kind[]).map((k) =>
      h("option", { value: k, selected: k === (initial?.kind ?? "MCP_REGISTRY") }, KINDS[k]),
    ),
  );
  const patterns = (name: string, path: string, value: string[] | undefined) => {
    const area = h("textarea", { name, rows: 2, spellcheck: false, autocomplete: "off", "data-path": path });
    area.defaultValue = (value ?? []).join("\n");
    return area;
  };
  const include = patterns("include", "filter.include", filter?.include);
  const exclude = patterns("exclude", "filter.exclude", filter?.exclude);

  const typeBoxes = PACKAGE_REGISTRIES.map((t) =>
    h("input", {
      type: "checkbox",
      name: "registryTypes",
      value: t,
      id: uid("rt"),
      checked: filter?.registryTypes.includes(t) ?? false,
    }),
  );
  const typesHint = uid("types-hint");
  const types = h(
    "fieldset",
    { class: "checks", "data-path": "filter.registryTypes", "aria-describedby": typesHint },
    h("legend", null, "Package registry types"),
    typeBoxes.map((box) => h("div", { class: "check" }, box, h("label", { for: box.id }, humanize(box.value)))),
    h("p", { class: "hint", id: typesHint }, "An entry must ship a package of one of these. None checked: any."),
  );
  const radios = <V extends string>(name: string, labels: Record<V, string>, checked: V) => {
    const group = uid(name);
    return (Object.keys(labels) as V[]).map((v) => {
      const radio = h("input", { type: "radio", name: group, value: v, id: uid(name), checked: v === checked });
      return h("div", { class: "check" }, radio, h("label", { for: radio.id }, labels[v]));
    });
  };
  const only = h(
    "fieldset",
    { class: "checks", "data-path": "filter.only" },
    h("legend", null, "Servers to take"),
    radios("only", ONLY, filter?.only ?? "ANY"),
  );
  // A registry of this kind is filtered by name only: the package parts are for MCP registries.
  const mcpOnly = h("div", { class: "mcp-only" }, types, only);
  const filterSet = h(
    "fieldset",
    { "data-path": "filter" },
    h("legend", null, "Filter"),
    field(
      "Include",
      include,
      "Server names to take, one per line; * stands for any characters (io.github.acme/*). None: every name.",
    ),
    field("Exclude", exclude, "Server names to leave out, as above."),
    mcpOnly,
  );
  const policy = h(
    "fieldset",
    { class: "checks", "data-path": "policy" },
    h("legend", null, "Policy"),
    radios("policy", POLICIES, initial?.policy ?? "REVIEW"),
  );
  const tier = h(
    "select",
    { name: "trustTier", "data-path": "trustTier" },
    options(TRUST_TIERS, initial?.trustTier ?? null, "Choose a tier"),
  );
  const tierField = field("Trust tier", tier, "The tier every agent of this source is approved at.");
  const interval = h("input", {
    type: "number",
    name: "interval",
    min: 1,
    max: 10_080,
    step: "any",
    inputmode: "numeric",
    required: true,
    value: String((initial?.intervalSeconds ?? 3600) / 60),
    "data-path": "intervalSeconds",
  });
  const contact = h("input", {
    type: "email",
    name: "contactEmail",
    autocomplete: "off",
    spellcheck: false,
    maxlength: 254,
    value: initial?.contactEmail ?? "",
    placeholder: "mirror@<the upstream's host>",
    "data-path": "contactEmail",
  });
  // Write-only: the page never holds a source's credential, only whether one is set. Empty keeps
  // the one there is; a value sets or replaces it; "Remove the credential" clears it (null).
  const hasCredential = initial?.hasCredential ?? false;
  const credential = h("input", {
    type: "password",
    name: "credential",
    autocomplete: "new-password",
    spellcheck: false,
    maxlength: 4096,
    placeholder: hasCredential ? "Empty: keep the one set" : "",
    "data-path": "credential",
  });
  const clearCredential = hasCredential
    ? h("input", { type: "checkbox", name: "clearCredential", id: uid("clear-credential") })
    : null;
  clearCredential?.addEventListener("change", () => {
    credential.disabled = clearCredential.checked;
    if (clearCredential.checked) credential.value = "";
  });
  const credentialField = h(
    "div",
    { class: "credential-field" },
    field(
      hasCredential ? "Replace the credential" : "Credential",
      credential,
      hasCredential
        ? "A credential is set; it is never shown. Type a new one to replace it."
        : "Sent as Authorization: Bearer to the upstream: an API key of a registry whose reads need one, or an MCP registry's token. Optional; never shown once saved.",
    ),
    clearCredential
      ? h("div", { class: "check" }, clearCredential, h("label", { for: clearCredential.id }, "Remove the credential"))
      : null,
  );
  const summary = h("div", { class: "error-summary", role: "alert", tabindex: -1, hidden: true });
  const submit = h("button", { type: "submit", class: "button primary" }, options_.submit);
  const titleId = uid("form-title");
  const form = h(
    "form",
    { class: "form-section mirror-form", novalidate: true, "aria-labelledby": titleId },
    h(initial ? "h4" : "h2", { id: titleId }, options_.title),
    summary,
    field("URL", url, "The upstream's base URL, an https: address.", true),
    field("Kind", kind, "An MCP registry (its /v0.1/servers), or another Agent Registry (its event log)."),
    filterSet,
    policy,
    tierField,
    field("Interval (minutes)", interval, "How often it is synced: from 1 minute to 7 days (10,080 minutes).", true),
    field("Contact email", contact, "The contact its agents carry. Empty: mirror@ and the upstream's host."),
    credentialField,
    h(
      "div",
      { class: "form-actions" },
      submit,
      options_.cancel
        ? h("button", { type: "button", class: "button secondary", onclick: options_.cancel }, "Cancel")
        : null,
    ),
  );
  // The API's JSON Pointers name the controls: `/filter/include/0` falls back to the include
  // patterns, `/filter` to the filter's fieldset.
  const errors = fieldErrors(form, summary);
  const chosen = (set: HTMLElement) => set.querySelector<HTMLInputElement>("input[type=radio]:checked")?.value;
  const sync = () => {
    mcpOnly.hidden = kind.value === "AGENT_REGISTRY";
    tierField.hidden = chosen(policy) !== "TRUSTED";
  };
  kind.addEventListener("change", sync);
  policy.addEventListener("change", sync);
  sync();

  const readBody = (): Body | null => {
    const target = url.value.trim();
    const minutes = Number(interval.value);
    const local: FieldError[] = [];
    if (!target) local.push({ path: "/url", message: "give the upstream's URL" });
    if (interval.value.trim() === "" || !Number.isFinite(minutes)) {
      local.push({ path: "/intervalSeconds", message: "give the interval in minutes" });
    }
    if (local.length) {
      errors.show(local, "Please correct this first");
      return null;
    }
    const mcp = kind.value !== "AGENT_REGISTRY";
    const body: Body = {
      url: target,
      kind: kind.value,
      filter: {
        include: splitList(include.value, /[\s,]+/),
        exclude: splitList(exclude.value, /[\s,]+/),
        ...(mcp
          ? { registryTypes: typeBoxes.filter((b) => b.checked).map((b) => b.value), only: chosen(only) ?? "ANY" }
          : {}),
      },
      policy: chosen(policy) ?? "REVIEW",
      intervalSeconds: Math.round(minutes * 60),
    };
    // A REVIEW source names no tier: one left chosen from before is not sent.
    if (body.policy === "TRUSTED" && tier.value) body.trustTier = tier.value;
    if (contact.value.trim()) body.contactEmail = contact.value.trim();
    if (clearCredential?.checked) body.credential = null;
    else if (credential.value.trim()) body.credential = credential.value.trim();
    return body;
  };

  form.addEventListener("submit", async (event) => {
    event.preventDefault();
    const body = readBody();
    if (!body) return;
    errors.clear();
    submit.disabled = true;
    submit.textContent = options_.busy;
    form.setAttribute("aria-busy", "true");
    try {
      await options_.send(body);
      form.reset();
      credential.disabled = false;
      sync();
    } catch (error) {
      if (options_.ended(error)) return;
      if (error instanceof ApiError && error.problem.errors?.length) {
        // The form asks for minutes, the API's bounds are in seconds.
        const refused = error.problem.errors.map((e) =>
          e.path === "/intervalSeconds" ? { ...e, message: "must be between 1 minute and 7 days" } : e,
        );
        errors.show(refused, "The registry refused this source");
      } else {
        replace(summary, errorBox(error, undefined, "The source was not saved."));
        summary.hidden = false;
        summary.focus();
      }
    } finally {
      submit.disabled = false;
      submit.textContent = options_.submit;
      form.removeAttribute("aria-busy");
    }
  });
  return form;
}

// ---------------------------------------------------------------- the dashboard

interface Card {
  element: HTMLElement;
  source: Source;
  update(source: Source): void;
  /** A sync asked for from this page (added, changed, "Sync now"), until a mirror starts one. */
  asked: { at: number; lastSyncAt: string | null } | null;
  /** When the page first saw the source due without a sync under way. */
  dueSince: number | null;
  /** Bumped by each read and each write of the source: an answer overtaken by a newer one is dropped. */
  reads: number;
}

function dashboard(admin: Admin): void {
  const { token } = admin;
  const list = h("div", { class: "queue mirror-sources", id: "source-list" });
  const listStatus = new Status();
  const cards = new Map<string, Card>();
  let timer: ReturnType<typeof setTimeout> | undefined;
  let open = true;

  const close = () => {
    open = false;
    clearTimeout(timer);
    document.removeEventListener("visibilitychange", onVisibility);
  };
  /** A refused credential ends the dashboard; the caller then says nothing more. */
  const ended = (error: unknown): boolean => {
    if (!(error instanceof ApiError) || (error.status !== 401 && error.status !== 403)) return false;
    close();
    if (error.status === 401 && token) setReviewerToken(null);
    signIn(error.status === 401 ? SESSION_ENDED : token ? notAdminWith(token) : NOT_ADMIN);
    return true;
  };
  const path = (s: Source) => `/mirror/sources/${encodeURIComponent(s.sourceId)}`;

  // ---------------------------------------------------------------- watching syncs

  const due = (s: Source) => s.state !== "SYNCING" && Date.parse(s.nextSyncAt) <= Date.now();
  /** Whether a source is read again: while it syncs, and for a while after a sync was asked for or fell due. */
  function watched(card: Card): boolean {
    const s = card.source;
    if (s.state === "SYNCING") return true;
    const now = Date.now();
    // A sync began since the ask (lastSyncAt is when the last one started): the ask was taken.
    if (card.asked && s.lastSyncAt !== card.asked.lastSyncAt) card.asked = null;
    if (card.asked && now - card.asked.at < WAIT_FOR_START_MS) return true;
    if (!due(s)) {
      card.dueSince = null;
      return false;
    }
    card.dueSince ??= now;
    return now - card.dueSince < WAIT_FOR_START_MS;
  }
  const waiting = (card: Card) => card.source.state !== "SYNCING" && watched(card);

  function schedule(): void {
    clearTimeout(timer);
    if (!open || document.hidden) return;
    // A source no longer watched says so (a due sync that no mirror started, say).
    for (const card of cards.values()) card.update(card.source);
    if (![...cards.values()].some(watched)) return;
    timer = setTimeout(() => void poll(), POLL_MS);
  }

  async function poll(): Promise<void> {
    await Promise.all([...cards.values()].filter(watched).map(read));
    schedule();
  }

  async function read(card: Card): Promise<void> {
    const n = ++card.reads;
    try {
      const s = await api<Source>("GET", path(card.source), { token });
      if (open && n === card.reads) card.update(s);
    } catch (error) {
      if (ended(error)) return;
      if (error instanceof ApiError && error.status === 404) {
        removeCard(card);
        announcer.message(`The source ${card.source.url} was removed.`);
      }
      // Any other failure: the next poll reads it again.
    }
  }

  function ask(card: Card): void {
    card.asked = { at: Date.now(), lastSyncAt: card.source.lastSyncAt };
    card.update(card.source);
    schedule();
  }

  // A hidden tab reads nothing; shown again, it reads the list (a sync may have begun meanwhile).
  function onVisibility(): void {
    if (document.hidden) clearTimeout(timer);
    else void load();
  }
  document.addEventListener("visibilitychange", onVisibility);

  // ---------------------------------------------------------------- the list

  const refresh = h("button", { type: "button", class: "button secondary small" }, "Refresh");
  refresh.addEventListener("click", () => void load());

  async function load(): Promise<void> {
    listStatus.loading("Loading sources…", 0);
    list.setAttribute("aria-busy", "true");
    try {
      const items: Source[] = [];
      let cursor: string | null = null;
      do {
        const page: MirrorSourcePage = await api<MirrorSourcePage>(
          "GET",
          `/mirror/sources${query({ limit: PAGE_SIZE, cursor })}`,
          { token },
        );
        items.push(...page.items);
        cursor = page.nextCursor;
      } while (cursor);
      if (!open) return;
      // Cards already shown are updated in place, so an edit under way stays open.
      const ids = new Set(items.map((s) => s.sourceId));
      for (const card of [...cards.values()]) if (!ids.has(card.source.sourceId)) removeCard(card);
      list.querySelector(":scope > .empty, :scope > .notice")?.remove();
      for (const s of items) {
        const card = cards.get(s.sourceId);
        if (card) card.update(s);
        else addCard(s);
      }
      list.append(...items.map((s) => cards.get(s.sourceId)?.element as HTMLElement));
      showCount();
      schedule();
    } catch (error) {
      if (ended(error)) return;
      listStatus.clear();
      replace(
        list,
        errorBox(error, () => void load(), "Could not load the sources."),
      );
      cards.clear();
    } finally {
      list.removeAttribute("aria-busy");
    }
  }

  function showCount(): void {
    const n = cards.size;
    if (n === 0) {
      replace(
        list,
        h(
          "div",
          { class: "empty" },
          h("h3", null, "No sources yet"),
          h(
            "p",
            null,
            "Add a registry below to mirror it; the public MCP registry is ",
            h("code", null, "https://registry.modelcontextprotocol.io"),
            ".",
          ),
        ),
      );
    } else {
      list.querySelector(":scope > .empty")?.remove();
    }
    const syncing = [...cards.values()].filter((c) => c.source.state === "SYNCING").length;
    listStatus.message(`${plural(n, "source")}${syncing ? `, ${syncing} syncing` : ""}.`);
  }

  function addCard(s: Source): Card {
    const card = sourceCard(s);
    cards.set(s.sourceId, card);
    list.querySelector(":scope > .empty")?.remove();
    list.append(card.element);
    return card;
  }

  function removeCard(card: Card): void {
    cards.delete(card.source.sourceId);
    card.element.remove();
    showCount();
  }

  // ---------------------------------------------------------------- one source

  function sourceCard(initial: Source): Card {
    const titleId = uid("source");
    const title = h("h3", { class: "webhook-url", id: titleId });
    const badges = h("p", { class: "badges" });
    const envNote = h("p", { class: "notice warning", role: "note" });
    const syncLine = h("p", { class: "sync-line" });
    const counts = h("dl", { class: "counts" });
    const times = h("dl", { class: "facts" });
    const errorsBox = h("div", { class: "mirror-errors" });
    const skippedSummary = h("summary");
    const skippedBody = h("div", { class: "table-wrap" });
    const skipped = h("details", { class: "mirror-skipped" }, skippedSummary, skippedBody);
    const settings = h("dl", { class: "facts" });
    const feedback = h("div", { class: "item-feedback" });
    const editSlot = h("div", { class: "edit-slot", id: uid("edit") });

    const syncNow = h("button", { type: "button", class: "button primary" }, "Sync now");
    const edit = h(
      "button",
      { type: "button", class: "button secondary", "aria-expanded": "false", "aria-controls": editSlot.id },
      "Edit",
    );
    const remove = h("button", { type: "button", class: "button bad" }, "Delete");
    const confirmText = h("p");
    const confirmYes = h("button", { type: "button", class: "button bad" }, "Delete source");
    const confirmNo = h("button", { type: "button", class: "button secondary" }, "Cancel");
    const confirmBox = h(
      "div",
      { class: "notice warning confirm", role: "group", "aria-label": "Confirm deletion", hidden: true },
      confirmText,
      h("div", { class: "button-row" }, confirmYes, confirmNo),
    );

    const element = h(
      "article",
      { class: "mirror-source", "data-source": initial.sourceId, "aria-labelledby": titleId },
      title,
      badges,
      envNote,
      h("section", { class: "mirror-progress", "aria-label": "Sync" }, syncLine, counts, times, errorsBox, skipped),
      h("h4", null, "Settings"),
      settings,
      h("div", { class: "button-row" }, syncNow, edit, remove),
      confirmBox,
      feedback,
      editSlot,
    );

    const card: Card = { element, source: initial, update, asked: null, dueSince: null, reads: 0 };
    let shown = "";
    let earlierOpen = false;

    function update(s: Source): void {
      const before = card.source;
      card.source = s;
      announceChange(before, s);
      if (before.state !== s.state) showCount();
      // Polls mostly answer what is shown already: the DOM (and a reader's place in it) is left alone then.
      const now = JSON.stringify([s, waiting(card)]);
      if (now === shown) return;
      shown = now;
      render(s);
    }

    function announceChange(before: Source, s: Source): void {
      if (before === s) return;
      if (s.state === "SYNCING" && (before.state !== "SYNCING" || before.lastSyncAt !== s.lastSyncAt)) {
        announcer.message(`Sync of ${s.url} started.`);
      } else if (s.state !== "SYNCING" && (before.state === "SYNCING" || before.lastSyncAt !== s.lastSyncAt)) {
        announcer.message(
          s.state === "FAILED"
            ? `Sync of ${s.url} failed: ${s.lastErrors[0]?.message ?? "no reason given"}.`
            : `Sync of ${s.url} finished: ${countsWords(s)}.`,
        );
      }
    }

    function render(s: Source): void {
      element.dataset.state = s.state;
      title.textContent = s.url;
      const [label, tone] = STATES[s.state];
      replace(
        badges,
        badge(label, tone, "Sync state"),
        waiting(card) ? badge("Sync due", "info", "A mirror starts it in a moment") : null,
        badge(KINDS[s.kind], "neutral", "Kind"),
        s.policy === "TRUSTED"
          ? badge(`Trusted: ${humanize(s.trustTier ?? "")}`, "good", "Policy: approved at once at this tier")
          : badge("Review", "neutral", "Policy: each new entry opens an intake review"),
        s.fromEnv ? badge("From MIRROR_SOURCES", "warn", "Declared by the MIRROR_SOURCES variable") : null,
      );
      envNote.hidden = !s.fromEnv;
      // The API refuses to change or delete it: the variable is where it is kept.
      edit.hidden = s.fromEnv;
      remove.hidden = s.fromEnv;
      replace(
        envNote,
        "Declared by ",
        h("code", null, "MIRROR_SOURCES"),
        ": change or remove it there; each start of the registry applies the variable.",
      );

      replace(syncLine, ...syncWords(s));
      replace(
        counts,
        COUNT_NAMES.map((c) => h("div", null, h("dt", null, COUNTS[c]), h("dd", { "data-count": c }, s.counts[c]))),
      );
      replace(
        times,
        h("dt", null, "Last sync"),
        h("dd", null, s.lastSyncAt ? ["started ", timeAgo(s.lastSyncAt)] : "never"),
        h("dt", null, "Last success"),
        h("dd", null, s.lastSuccessAt ? timeAgo(s.lastSuccessAt) : "never"),
        h("dt", null, "Next sync"),
        h("dd", null, s.state === "SYNCING" ? "after this one" : due(s) ? "due now" : timeAgo(s.nextSyncAt)),
        h("dt", null, "Agents mirrored"),
        h("dd", null, String(s.mirrored)),
        h("dt", null, "Taken up to"),
        h("dd", null, s.highWaterMark ? h("code", null, s.highWaterMark) : "nothing yet"),
      );

      const failed = s.state === "FAILED";
      const errorList = s.lastErrors.length
        ? h(
            failed ? "div" : "details",
            { class: failed ? "notice error" : "earlier-errors", open: !failed && earlierOpen },
            h(
              failed ? "p" : "summary",
              null,
              failed ? h("strong", null, "Last errors") : "Earlier errors",
              ` (${s.lastErrors.length}, newest first)`,
            ),
            h(
              "ul",
              { class: "mirror-error-list" },
              s.lastErrors.map((e) => h("li", null, time(e.at), ": ", e.message)),
            ),
            failed ? h("p", null, "It is tried again ", timeAgo(s.nextSyncAt), ".") : null,
          )
        : null;
      // Re-rendered at each step of a sync: the reader's open list stays open.
      errorList?.addEventListener("toggle", () => {
        earlierOpen = (errorList as HTMLDetailsElement).open;
      });
      replace(errorsBox, errorList);

      skipped.hidden = s.skippedEntries.length === 0;
      skippedSummary.textContent = `Skipped entries (${s.skippedEntries.length}, newest first)`;
      replace(
        skippedBody,
        s.skippedEntries.length
          ? h(
              "table",
              null,
              h("caption", { class: "visually-hidden" }, `Entries of ${s.url} the syncs skipped`),
              h(
                "thead",
                null,
                h(
                  "tr",
                  null,
                  ["Server", "Version", "Reason", "When"].map((c) => h("th", { scope: "col" }, c)),
                ),
              ),
              h(
                "tbody",
                null,
                s.skippedEntries.map((e) =>
                  h(
                    "tr",
                    { "data-skipped": e.name },
                    h("td", null, h("code", null, e.name)),
                    h("td", null, e.version ?? "—"),
                    h("td", { class: "delivery-error" }, e.reason),
                    h("td", null, time(e.at)),
                  ),
                ),
              ),
            )
          : null,
      );

      const f = s.filter;
      const listOr = (items: string[], none: string) =>
        items.length
          ? h(
              "ul",
              { class: "inline-list" },
              items.map((i) => h("li", null, h("code", null, i))),
            )
          : none;
      replace(
        settings,
        h("dt", null, "Policy"),
        h("dd", null, s.policy === "TRUSTED" ? `Trusted, approved as ${humanize(s.trustTier ?? "")}` : POLICIES.REVIEW),
        h("dt", null, "Interval"),
        h("dd", null, intervalWords(s.intervalSeconds)),
        h("dt", null, "Include"),
        h("dd", null, listOr(f.include, "every name")),
        h("dt", null, "Exclude"),
        h("dd", null, listOr(f.exclude, "nothing")),
        s.kind === "MCP_REGISTRY"
          ? [
              h("dt", null, "Package types"),
              h("dd", null, f.registryTypes.length ? f.registryTypes.map(humanize).join(", ") : "any"),
              h("dt", null, "Servers"),
              h("dd", null, ONLY[f.only]),
            ]
          : null,
        h("dt", null, "Contact"),
        h("dd", null, s.contactEmail),
        h("dt", null, "Credential"),
        h("dd", null, s.hasCredential ? "Set (never shown)" : "None"),
        h("dt", null, "Added"),
        h("dd", null, time(s.createdAt)),
      );
      replace(
        confirmText,
        "Delete the source ",
        h("code", null, s.url),
        "? It is synced no more. ",
        s.mirrored
          ? `The ${plural(s.mirrored, "agent")} it made stay, with their origin, and no owner's token can change them.`
          : "It has made no agents.",
      );
    }

    /** What the sync is doing, in a sentence. */
    function syncWords(s: Source): Child[] {
      if (s.state === "SYNCING") {
        return [
          h("span", { class: "spinner", "aria-hidden": "true" }),
          " Syncing: started ",
          timeAgo(s.lastSyncAt),
          `; ${plural(s.counts.seen, "entry", "entries")} so far.`,
        ];
      }
      if (waiting(card)) {
        return [h("span", { class: "spinner", "aria-hidden": "true" }), " A sync is due: it starts in a moment."];
      }
      if (due(s)) {
        return [
          "A sync is due since ",
          timeAgo(s.nextSyncAt),
          ", and no mirror has started it: every replica may run with MIRROR=off.",
        ];
      }
      if (!s.lastSyncAt) return ["Not synced yet."];
      if (s.state === "FAILED") return ["The last sync failed."];
      return [`The last sync saw ${plural(s.counts.seen, "entry", "entries")}.`];
    }

    syncNow.addEventListener("click", async () => {
      feedback.replaceChildren();
      syncNow.disabled = true;
      try {
        const s = await api<Source>("POST", `${path(card.source)}/sync`, { token });
        card.reads += 1;
        card.update(s);
        ask(card);
        announcer.message(
          card.source.state === "SYNCING"
            ? `A sync of ${s.url} is under way: another follows it.`
            : `Sync of ${s.url} asked for: it starts in a moment.`,
        );
      } catch (error) {
        if (!ended(error)) feedback.replaceChildren(errorBox(error, undefined, "Could not start a sync."));
      } finally {
        syncNow.disabled = false;
      }
    });

    const closeEdit = () => {
      editSlot.replaceChildren();
      edit.setAttribute("aria-expanded", "false");
      edit.focus();
    };
    edit.addEventListener("click", () => {
      if (edit.getAttribute("aria-expanded") === "true") return closeEdit();
      edit.setAttribute("aria-expanded", "true");
      const form = sourceForm({
        initial: card.source,
        title: "Change this source",
        submit: "Save changes",
        busy: "Saving…",
        ended,
        cancel: closeEdit,
        send: async (body) => {
          const s = await api<Source>("PATCH", path(card.source), { token, body });
          card.reads += 1;
          card.update(s);
          closeEdit();
          // A change makes the source due at once (and a new URL or kind starts it over).
          ask(card);
          announcer.message(`Source ${s.url} saved.`);
        },
      });
      replace(editSlot, form);
      form.querySelector<HTMLInputElement>("input[name=url]")?.focus();
    });

    remove.addEventListener("click", () => {
      confirmBox.hidden = false;
      remove.disabled = true;
      confirmNo.focus();
    });
    confirmNo.addEventListener("click", () => {
      confirmBox.hidden = true;
      remove.disabled = false;
      remove.focus();
    });
    confirmYes.addEventListener("click", async () => {
      feedback.replaceChildren();
      confirmYes.disabled = true;
      confirmYes.textContent = "Deleting…";
      try {
        await api<Source>("DELETE", path(card.source), { token });
        removeCard(card);
        document.getElementById("sources-title")?.focus();
        announcer.message(`Source ${card.source.url} deleted; the agents it made stay.`);
      } catch (error) {
        if (ended(error)) return;
        confirmYes.disabled = false;
        confirmYes.textContent = "Delete source";
        feedback.replaceChildren(errorBox(error, undefined, "Could not delete the source."));
      }
    });

    update(initial);
    return card;
  }

  // ---------------------------------------------------------------- add a source

  const addForm = sourceForm({
    title: "Add a source",
    submit: "Add source",
    busy: "Adding…",
    ended,
    send: async (body) => {
      const made = await api<Source>("POST", "/mirror/sources", { token, body });
      const card = addCard(made);
      ask(card);
      showCount();
      announcer.message(`Source ${made.url} added: its first sync starts in a moment.`);
    },
  });

  replace(
    main,
    head(
      h(
        "p",
        { class: "session" },
        "Signed in as admin ",
        h("strong", { id: "mirror-who" }, admin.me || "(unnamed)"),
        admin.expires ? [" until ", time(admin.expires)] : null,
        " ",
        token === null
          ? signOutForm("button link")
          : h(
              "button",
              {
                type: "button",
                class: "button link",
                onclick: () => {
                  close();
                  setReviewerToken(null);
                  signIn();
                  announcer.message("Signed out.");
                },
              },
              "Sign out",
            ),
      ),
    ),
    h("p", { class: "lede" }, LEDE),
    h(
      "section",
      { class: "mirror-section", "aria-labelledby": "sources-title" },
      h("div", { class: "section-head" }, h("h2", { id: "sources-title", tabindex: -1 }, "Sources"), refresh),
      listStatus.element,
      list,
    ),
    addForm,
    announcer.element,
  );
  void load();
}

void start();
