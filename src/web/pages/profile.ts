/**
 * `/providers/{providerCode}`: the full profile, section by section, the agent's recent changes
 * (from the change log), the review timeline, and the version history with the changes each version
 * made to the one before it, and the endpoint's health as the registry's prober finds it. A reviewer
 * signed in on this tab sees what reviewers see (contact, tokens, notes, review events, private
 * agents); so does the agent's owner after pasting its access token here. Both may ask for a health
 * check now, and see how the live agent drifts from what its profile declares.
 */
import {
  ApiError,
  api,
  isAbort,
  ownerToken,
  query,
  readAsViewer,
  reviewerToken,
  setOwnerToken,
} from "../client/api.ts";
import { type PatchStep, patchChanges, patchSteps } from "../client/diff.ts";
import { adoptMain, type Child, h, replace, uid } from "../client/dom.ts";
import { changedFields, kindWords } from "../client/events.ts";
import { HEALTH, healthBadge, uptimeWords } from "../client/health.ts";
import { mountAccount } from "../client/session.ts";
import type {
  CheckedHealth,
  Drift,
  EventPage,
  Health,
  HealthCheck,
  PatchOperation,
  Provider,
  RegistryEvent,
  Snapshot,
  Version,
  VersionDiff,
  VersionPage,
  VersionSummary,
} from "../client/types.ts";
import { errorBox, relative, Status, setTitle, time, timeAgo, tokenForm } from "../client/ui.ts";
import { notProbed } from "../render/words.ts";
import { diffTable } from "./profile.diff.ts";

const main = adoptMain();
void mountAccount();
const codeFromPath = (() => {
  try {
    return decodeURIComponent(location.pathname.split("/")[2] ?? "");
  } catch {
    return "";
  }
})();
const encoded = encodeURIComponent(codeFromPath);
const status = new Status();
/** Says what signing in or out did, once the page shows it (read by screen readers only). */
const announcer = new Status("sr-status");

// ---------------------------------------------------------------- helpers

function section(id: string, title: string, ...children: Child[]): HTMLElement {
  return h(
    "section",
    { id, class: "profile-section", "aria-labelledby": `${id}-title` },
    h("h2", { id: `${id}-title` }, title),
    ...children,
  );
}

function facts(rows: [string, Child][]): HTMLElement {
  return h(
    "dl",
    { class: "facts" },
    rows.flatMap(([term, value]) => [h("dt", null, term), h("dd", null, value ?? "—")]),
  );
}

/**
 * The copy buttons, the server's and the script's alike: the clipboard API, else a selection and
 * the older copy command (an insecure origin has no clipboard API); the button says what happened.
 */
async function copy(button: HTMLButtonElement): Promise<void> {
  const source = document.getElementById(button.dataset.copy ?? "");
  if (!source) return;
  const text = source.textContent ?? "";
  let copied = false;
  try {
    await navigator.clipboard.writeText(text);
    copied = true;
  } catch {
    const range = document.createRange();
    range.selectNodeContents(source);
    const selection = getSelection();
    selection?.removeAllRanges();
    selection?.addRange(range);
    copied = document.execCommand("copy");
  }
  button.textContent = copied ? "Copied" : "Press Ctrl+C to copy";
  setTimeout(() => {
    button.textContent = "Copy";
  }, 2000);
}
main.addEventListener("click", (e) => {
  const button = (e.target as Element).closest<HTMLButtonElement>("button[data-copy]");
  if (button) void copy(button);
});

function none(text: string): HTMLElement {
  return h("p", { class: "muted" }, text);
}

function list(items: string[], empty = "None"): Child {
  return items.length
    ? h(
        "ul",
        { class: "inline-list" },
        items.map((i) => h("li", null, i)),
      )
    : h("span", { class: "muted" }, empty);
}

/** `agent:x` → "the agent", `reviewer:x` → "reviewer x", `reviewer` → "a reviewer". */
function actor(value: string): string {
  if (value.startsWith("agent:")) return `the agent (${value.slice(6)})`;
  if (value.startsWith("reviewer:")) return `reviewer ${value.slice(9)}`;
  if (value === "reviewer") return "a reviewer";
  return value;
}

// ---------------------------------------------------------------- the profile

/**
 * The renderer the server draws a profile with (render/profile.ts), loaded only before this script
 * draws one itself (for a reader with a token): with markdown-it it is most of the page's weight,
 * and a page the server rendered for everyone else never needs it.
 */
const renderer = () => import("../render/profile.ts");
type Renderer = Awaited<ReturnType<typeof renderer>>;

/** Dates in the reader's own time zone and format, where the server can only say UTC. */
function localTimes(root: ParentNode): void {
  for (const t of root.querySelectorAll<HTMLTimeElement>("time[datetime]")) {
    const date = new Date(t.dateTime);
    if (!Number.isNaN(date.getTime())) t.textContent = dateTime.format(date);
  }
}

/**
 * The profile as this viewer reads it, drawn by the server's renderer (the same markup, escaped by
 * construction), then given what acts: the sign-in or signed-in line, Check now and drift, and the
 * sections read after it.
 */
function draw(p: Provider, viewer: Viewer, { renderProfile }: Renderer): void {
  setTitle(p.name);
  const drawn = document.createElement("template");
  drawn.innerHTML = renderProfile(p, location.origin).value;
  localTimes(drawn.content);
  const head = drawn.content.querySelector(".profile-head");
  if (viewer.asOwner)
    head?.append(
      h(
        "p",
        { class: "hint owner-session" },
        "You are signed in with this agent's access token: contact, tokens and drift are shown. ",
        h("button", { type: "button", class: "button link", onclick: () => signOutOwner() }, "Sign out"),
        " ",
        editButton(p, viewer),
      ),
    );
  else if (viewer.asReviewer)
    head?.append(h("p", { class: "hint" }, "You are signed in as a reviewer: contact, tokens and notes are shown."));
  // The state in the heading too, kept in step with the Health section's "Check now".
  const headHealth = drawn.content.querySelector<HTMLElement>(".health-slot");
  drawn.content
    .querySelector("#health")
    ?.replaceWith(healthSection(p, viewer, (checked) => headHealth && replace(headHealth, healthBadge(checked.state))));
  replace(main, drawn.content);
  enhance();
}

/** What every drawn profile (the server's or this script's) gets: the owner's sign-in, and the sections read after it. */
function enhance(): void {
  for (const slot of main.querySelectorAll('[data-slot="owner-signin"]')) slot.replaceWith(ownerSignIn());
  // The same heading and hint as the server's, then the list as it arrives: nothing above moves.
  main.querySelector("#changes")?.replaceWith(changesSection());
  main.querySelector("#versions")?.replaceWith(versionsSection());
}

// ---------------------------------------------------------------- health and drift

/** Who reads the profile: the token its requests carry, and what the server makes of it. */
interface Viewer {
  /** The owner's or a reviewer's pasted token; null for anyone else (a session cookie goes by itself). */
  token: string | null;
  asOwner: boolean;
  asReviewer: boolean;
}

const numberFormat = new Intl.NumberFormat();
const ms = (value: number | null): string => (value === null ? "No answer" : `${numberFormat.format(value)} ms`);

const dateTime = new Intl.DateTimeFormat(undefined, { dateStyle: "medium", timeStyle: "short" });

/**
 * How long ago a check or a change of state was, with the date beside it: "3 minutes ago", and "a
 * moment ago" rather than "since now" for one a check has just made.
 */
function ago(iso: string): Child {
  const words = relative(iso);
  return h(
    "time",
    { datetime: iso, title: iso },
    words === "now" ? "a moment ago" : words,
    h("span", { class: "muted" }, ` (${dateTime.format(new Date(iso))})`),
  );
}

/** "in 45 seconds", "in 2 minutes": how long until a number of seconds from now. */
const inWords = (seconds: number): string => relative(new Date(Date.now() + seconds * 1000).toISOString());

function uptime(health: Health): HTMLElement {
  const windows: [string, number | null][] = [
    ["24 hours", health.uptime24h],
    ["7 days", health.uptime7d],
    ["30 days", health.uptime30d],
  ];
  return h(
    "ul",
    { class: "uptime", "aria-label": "Uptime: share of checks that found it answering" },
    windows.map(([span, share]) =>
      h(
        "li",
        { "data-window": span },
        h("span", { class: "uptime-value" }, uptimeWords(share)),
        " ",
        h("span", { class: "uptime-span" }, `last ${span}`),
      ),
    ),
  );
}

function checkItem(c: HealthCheck): HTMLElement {
  return h(
    "li",
    { "data-outcome": c.outcome },
    h(
      "span",
      { class: "when" },
      h("time", { datetime: c.at, title: c.at }, relative(c.at).replace(/^now$/, "a moment ago")),
    ),
    " ",
    healthBadge(c.outcome),
    " ",
    h("span", { class: "latency" }, ms(c.latencyMs)),
    " ",
    h("span", { class: "reason" }, c.reason),
  );
}

/** What the prober found: the state since when, the last check, uptime, the reason, the latest checks. */
function healthBody(p: Provider, health: Health | null): Child[] {
  if (!health) return [h("p", { class: "muted not-probed" }, notProbed(p))];
  const { meaning } = HEALTH[health.state];
  return [
    h("p", { class: "health-state" }, healthBadge(health.state), " since ", ago(health.since)),
    h("p", { class: "hint" }, meaning),
    facts([
      ["Last checked", health.checkedAt ? ago(health.checkedAt) : "Not checked yet"],
      ["Latency", health.checkedAt ? ms(health.latencyMs) : "—"],
      ["Last finding", health.reason ?? "—"],
    ]),
    h("h3", null, "Uptime"),
    uptime(health),
    h("h3", null, "Recent checks"),
    health.recentChecks.length
      ? h("ol", { class: "checks", "aria-label": "Recent checks, newest first" }, health.recentChecks.map(checkItem))
      : none("No checks kept."),
  ];
}

/** A pointer's segments as a place a person can read: `tool lookup › inputSchema`, `skills › (new item)`. */
function place(segments: string[], kind: Drift["kind"]): Child {
  const words = segments.map((s, i) => (s === "-" ? "(new item)" : i === 0 && kind === "MCP_TOOLS" ? `tool ${s}` : s));
  return h("code", null, words.join(" › ") || "(the whole)");
}

/** A value on one line, in plain words: `id: echo; tags: a, b`, nested objects in braces. */
function brief(value: unknown): string {
  if (value === null || value === undefined) return "nothing";
  if (Array.isArray(value)) return value.length ? value.map(brief).join(", ") : "(none)";
  if (typeof value === "object") {
    const entries = Object.entries(value as Record<string, unknown>);
    if (!entries.length) return "(empty)";
    return entries
      .map(([k, v]) => `${k}: ${v !== null && typeof v === "object" && !Array.isArray(v) ? `{${brief(v)}}` : brief(v)}`)
      .join("; ");
  }
  return String(value);
}

function stepItem(step: PatchStep, kind: Drift["kind"]): HTMLElement {
  const what = {
    added: "added",
    removed: "removed",
    changed: "changed to",
    moved: "moved from",
    copied: "copied from",
  }[step.kind];
  return h(
    "li",
    { class: `step step-${step.kind}` },
    place(step.path, kind),
    ` ${what}`,
    step.from ? [" ", place(step.from, kind)] : null,
    step.value !== undefined ? [": ", h("span", { class: "value" }, brief(step.value))] : null,
  );
}

function steps(title: string, patch: unknown, kind: Drift["kind"], empty: string): Child {
  const list = patchSteps(patch);
  return [
    h("h4", null, title),
    list.length
      ? [
          h(
            "ul",
            { class: "steps" },
            list.map((s) => stepItem(s, kind)),
          ),
          h(
            "details",
            { class: "patch" },
            h("summary", null, "As a JSON Patch (RFC 6902)"),
            h("pre", null, JSON.stringify(patch, null, 2)),
          ),
        ]
      : none(empty),
  ];
}

/** How the live agent differs from the last check and from what its profile declares. */
function driftPanel(drift: Drift | null): HTMLElement | null {
  if (!drift) return null;
  const titleId = uid("drift");
  const mcp = drift.kind === "MCP_TOOLS";
  return h(
    "section",
    { class: "drift-panel", "aria-labelledby": titleId },
    h("h3", { id: titleId }, "Drift"),
    h("p", { class: "drift-summary" }, drift.summary),
    facts([
      ["What drifted", mcp ? "The MCP server's tools" : "The A2A agent card"],
      ["Detected", ago(drift.detectedAt)],
      ...(mcp
        ? ([
            ["Not declared", list(drift.undeclaredTools, "None: every live tool is declared")],
            ["Missing", list(drift.missingTools, "None: every declared tool is live")],
          ] as [string, Child][])
        : []),
    ]),
    steps("Since the check before", drift.sinceLastCheck, drift.kind, "Nothing changed since the check before."),
    mcp
      ? null
      : steps("From the registry's card", drift.fromDeclared, drift.kind, "The live card matches the registry's card."),
    h("p", { class: "hint" }, "Only the agent's owner and reviewers see this."),
  );
}

/** The owner's way in: its access token, kept for this tab and this agent only. */
function ownerSignIn(): HTMLElement {
  return tokenForm({
    id: "owner-token",
    label: "Access token",
    hint: "The agent's own token (agr_…), given when it was submitted. It is kept for this browser tab only.",
    empty: "Paste the agent's access token first.",
    probe: async (token) => {
      const seen = await api<Provider>("GET", `/providers/${encoded}`, { token });
      // Tokens are shown to the owner and reviewers only: anything else is another agent's token.
      if (seen.tokens === null || seen.tokens === undefined) {
        throw new ApiError({ title: "Forbidden", status: 403, code: "FORBIDDEN", detail: "Not this agent's token." });
      }
    },
    refused: {
      unauthenticated: "This token was refused: it is malformed, expired or revoked.",
      forbidden: "This token is valid, but it is not this agent's.",
    },
    signedIn: (token) => {
      setOwnerToken(codeFromPath, token);
      void load("Signed in as the agent's owner.");
    },
  });
}

/**
 * The owner's way to edit: the profile becomes the edit form (its module, and the server's rules it
 * checks by, are loaded when asked for), and any way out of it reads the profile again.
 */
function editButton(p: Provider, viewer: Viewer): HTMLElement {
  const failed = h("span", { class: "field-error", role: "alert" });
  const button = h("button", { type: "button", class: "button secondary small" }, "Edit the profile");
  button.addEventListener("click", async () => {
    button.disabled = true;
    failed.textContent = "";
    try {
      const { openEditor } = await import("./profile.edit.ts");
      const form = await openEditor(p, {
        providerCode: codeFromPath,
        token: viewer.token ?? "",
        reload: (said) => void load(said),
        refused: () => {
          setOwnerToken(codeFromPath, null);
          void load("Your access token was refused (expired or revoked), so you are signed out. Nothing was saved.");
        },
        close: () => void load("Left the form; nothing was saved."),
      });
      setTitle(`Edit ${p.name}`);
      replace(
        main,
        h(
          "header",
          { class: "profile-head" },
          h(
            "nav",
            { class: "crumbs", "aria-label": "Breadcrumb" },
            h("a", { href: "/" }, "Directory"),
            " › ",
            h("a", { href: location.pathname }, p.providerCode),
          ),
          h("h1", null, p.name),
        ),
        form,
        announcer.element,
      );
      form.querySelector<HTMLElement>("h2")?.focus();
    } catch {
      button.disabled = false;
      failed.textContent = " The form could not be loaded; try again.";
    }
  });
  return h("span", null, button, failed);
}

function signOutOwner(): void {
  setOwnerToken(codeFromPath, null);
  void load("Signed out.");
}

/**
 * The Health section. Whoever may ask for a check (the owner, a reviewer: the readers the profile
 * shows its tokens to) gets "Check now"; the answer replaces what is shown, and the profile is read
 * again for the drift the check may have found.
 */
function healthSection(p: Provider, viewer: Viewer, checkedNow: (health: Health) => void): HTMLElement {
  const body = h("div", { class: "health-body" });
  const driftSlot = h("div", { class: "drift-slot" });
  const feedback = new Status();
  const mayCheck = p.tokens !== null && p.tokens !== undefined;
  replace(body, ...healthBody(p, p.health));
  replace(driftSlot, driftPanel(p.drift ?? null));

  const button = h("button", { type: "button", class: "button secondary" }, "Check now");
  let enableTimer: ReturnType<typeof setTimeout> | undefined;
  const waitThenEnable = (seconds: number) => {
    clearTimeout(enableTimer);
    button.disabled = true;
    enableTimer = setTimeout(() => {
      button.disabled = false;
    }, seconds * 1000);
  };
  button.addEventListener("click", async () => {
    button.disabled = true;
    button.setAttribute("aria-busy", "true");
    button.textContent = "Checking…";
    feedback.loading("Checking the endpoint…", 0);
    try {
      const checked = await api<CheckedHealth>("POST", `/providers/${encoded}/health/check`, {
        token: viewer.token,
      });
      replace(body, ...healthBody(p, checked));
      checkedNow(checked);
      feedback.message(`Checked just now: ${HEALTH[checked.state].words}.`);
      button.disabled = false;
      void refreshDrift();
    } catch (error) {
      if (error instanceof ApiError && error.status === 429) {
        const wait = error.retryAfterSeconds;
        feedback.message(
          wait
            ? `A check was asked for less than a minute ago. You can check again ${inWords(wait)}.`
            : "A check was asked for a moment ago. Try again in a minute.",
        );
        waitThenEnable(wait ?? 60);
      } else if (error instanceof ApiError && error.status === 401 && viewer.asOwner) {
        setOwnerToken(codeFromPath, null);
        void load("Your access token was refused (expired or revoked): sign in again to check now.");
        return;
      } else if (error instanceof ApiError && error.status === 409) {
        feedback.message(h("span", { class: "form-error" }, error.problem.detail));
        button.disabled = false;
      } else {
        feedback.message(errorBox(error, undefined, "Could not check now."));
        button.disabled = false;
      }
    } finally {
      button.removeAttribute("aria-busy");
      button.textContent = "Check now";
    }
  });

  async function refreshDrift(): Promise<void> {
    try {
      const seen = await api<Provider>("GET", `/providers/${encoded}`, { token: viewer.token });
      replace(driftSlot, driftPanel(seen.drift ?? null));
    } catch {
      // The health shown is the check's own answer; an older drift panel is kept until the next read.
    }
  }

  return section(
    "health",
    "Health",
    h(
      "p",
      { class: "hint" },
      "As the registry's prober finds the endpoint, checking it every few minutes; not stated by the publisher.",
    ),
    body,
    mayCheck
      ? h("div", { class: "health-actions" }, button, feedback.element)
      : h(
          "details",
          { class: "owner-signin" },
          h("summary", null, "Your agent? Sign in with its access token to check it now"),
          ownerSignIn(),
        ),
    driftSlot,
  );
}

// ---------------------------------------------------------------- recent changes (the change log)

const RECENT_EVENTS = 10;

function eventItem(e: RegistryEvent): HTMLElement {
  const fields = e.kind === "PROVIDER_CREATED" ? [] : changedFields(e);
  return h(
    "li",
    { class: "change", "data-kind": e.kind, "data-seq": e.seq },
    h("span", { class: "when" }, timeAgo(e.at)),
    h(
      "span",
      { class: "what" },
      h("strong", null, kindWords(e.kind)),
      e.version !== null ? ` · version ${e.version}` : null,
      e.reviewCode ? [" · review ", h("code", null, e.reviewCode)] : null,
    ),
    fields.length ? h("p", { class: "hint fields" }, "Changed: ", fields.join(", ")) : null,
    e.note ? h("p", { class: "note" }, e.note) : null,
  );
}

/** The agent's newest events, newest first: what anyone may see, and review events for reviewers. */
function changesSection(): HTMLElement {
  const body = h("div", { class: "changes-body" });
  const changesStatus = new Status();
  async function load(): Promise<void> {
    changesStatus.loading("Loading recent changes…", 0);
    try {
      const { data } = await readAs<EventPage>(`/events${query({ providerCode: codeFromPath, last: RECENT_EVENTS })}`);
      // `last` answers the newest events oldest first.
      const events = [...data.items].sort((a, b) => b.seq - a.seq);
      replace(
        body,
        events.length
          ? h("ol", { class: "changes" }, events.map(eventItem))
          : none("No changes recorded yet that you may see."),
      );
      changesStatus.clear();
    } catch (error) {
      body.replaceChildren();
      changesStatus.message(errorBox(error, () => void load(), "Could not load the recent changes."));
    }
  }
  void load();
  return section(
    "changes",
    "Recent changes",
    h("p", { class: "hint" }, `The ${RECENT_EVENTS} newest, newest first.`),
    body,
    changesStatus.element,
  );
}

// ---------------------------------------------------------------- versions and their diffs

const snapshots = new Map<number, Promise<Snapshot>>();
function snapshot(version: number): Promise<Snapshot> {
  let found = snapshots.get(version);
  if (!found) {
    found = readAs<Version>(`/providers/${encoded}/versions/${version}`).then((r) => r.data.snapshot);
    found.catch(() => snapshots.delete(version));
    snapshots.set(version, found);
  }
  return found;
}

/** The patch itself, as the API answers it (without the members an operation does not use). */
function patchDetails(from: number, to: number, patch: PatchOperation[]): HTMLElement {
  const strict = patch.map(({ op, path, from: source, value }) =>
    op === "remove" ? { op, path } : op === "move" || op === "copy" ? { op, from: source, path } : { op, path, value },
  );
  return h(
    "details",
    { class: "patch" },
    h("summary", null, "As a JSON Patch (RFC 6902)"),
    h("pre", null, JSON.stringify(strict, null, 2)),
    h(
      "a",
      { href: `/api/v1/providers/${encoded}/versions/${from}/diff/${to}`, type: "application/json" },
      "Open as JSON",
    ),
  );
}

function versionItem(v: VersionSummary): HTMLElement {
  const panel = h("div", { class: "diff-panel", id: uid("diff"), hidden: true });
  const item = h(
    "li",
    { class: "version", "data-version": v.version },
    h("p", null, h("strong", null, `Version ${v.version}`), " · ", time(v.createdAt), " · by ", actor(v.actor)),
    h(
      "p",
      { class: "hint" },
      v.version === 1 ? "The intake." : ["Changed: ", v.changedFields.length ? v.changedFields.join(", ") : "nothing"],
    ),
  );
  if (v.version > 1) {
    const toggle = h(
      "button",
      { type: "button", class: "button secondary small", "aria-expanded": "false", "aria-controls": panel.id },
      `Show changes from version ${v.version - 1}`,
    );
    let loaded = false;
    toggle.addEventListener("click", async () => {
      const open = toggle.getAttribute("aria-expanded") === "true";
      toggle.setAttribute("aria-expanded", String(!open));
      toggle.textContent = `${open ? "Show" : "Hide"} changes from version ${v.version - 1}`;
      panel.hidden = open;
      if (open || loaded) return;
      const progress = new Status();
      replace(panel, progress.element);
      progress.loading("Loading the changes…", 0);
      try {
        // The server computes the changes (a JSON Patch); the earlier snapshot gives the "before" column.
        const [before, patch] = await Promise.all([
          snapshot(v.version - 1),
          readAs<VersionDiff>(`/providers/${encoded}/versions/${v.version - 1}/diff/${v.version}`).then((r) => r.data),
        ]);
        replace(
          panel,
          diffTable(v.version - 1, v.version, patchChanges(before, patch)),
          patchDetails(v.version - 1, v.version, patch),
        );
        loaded = true;
      } catch (error) {
        replace(
          panel,
          errorBox(
            error,
            () => {
              toggle.click();
              toggle.click();
            },
            "Could not load the changes.",
          ),
        );
      }
    });
    item.append(toggle);
  }
  item.append(panel);
  return item;
}

function versionsSection(): HTMLElement {
  const items = h("ol", { class: "versions" });
  const more = h("button", { type: "button", class: "button secondary", hidden: true }, "Load older versions");
  const versionStatus = new Status();
  let cursor: string | null = null;
  async function load(): Promise<void> {
    more.disabled = true;
    versionStatus.loading("Loading versions…", 0);
    try {
      const { data } = await readAs<VersionPage>(`/providers/${encoded}/versions${query({ limit: 20, cursor })}`);
      items.append(...data.items.map(versionItem));
      cursor = data.nextCursor ?? null;
      more.hidden = !cursor;
      versionStatus.clear();
    } catch (error) {
      versionStatus.message(errorBox(error, () => void load(), "Could not load the versions."));
    } finally {
      more.disabled = false;
    }
  }
  more.addEventListener("click", () => void load());
  void load();
  return section(
    "versions",
    "Version history",
    h("p", { class: "hint" }, "Newest first."),
    items,
    versionStatus.element,
    more,
  );
}

// ---------------------------------------------------------------- load

/** The owner's token while it is signed in on this page (set by readProfile), for the reads after the profile. */
let ownerCredential: string | null = null;

/** A read of the agent's events and versions as the profile was read: as its owner, else as readAsViewer reads. */
async function readAs<T>(path: string): Promise<{ data: T }> {
  if (ownerCredential) return { data: await api<T>("GET", path, { token: ownerCredential }) };
  return readAsViewer<T>(path);
}

/**
 * The profile as this tab may read it: with the owner's token when one was pasted here for this
 * agent (forgotten if the server refuses it), else as readAsViewer reads (a reviewer's token).
 */
async function readProfile(): Promise<{ data: Provider; viewer: Viewer; droppedOwner: boolean }> {
  const owner = ownerToken(codeFromPath);
  ownerCredential = null;
  snapshots.clear();
  if (owner) {
    try {
      const data = await api<Provider>("GET", `/providers/${encoded}`, { token: owner });
      ownerCredential = owner;
      return { data, viewer: { token: owner, asOwner: true, asReviewer: false }, droppedOwner: false };
    } catch (error) {
      if (!(error instanceof ApiError) || error.status !== 401) throw error;
      setOwnerToken(codeFromPath, null);
    }
  }
  const { data, asReviewer } = await readAsViewer<Provider>(`/providers/${encoded}`);
  return {
    data,
    viewer: { token: asReviewer ? reviewerToken() : null, asOwner: false, asReviewer },
    droppedOwner: owner !== null,
  };
}

/** Reads and shows the profile; `said` is announced once it is shown (after signing in or out). */
async function load(said?: string): Promise<void> {
  // A profile the server drew stays in sight while this tab's own view of it is read.
  if (main.dataset.ssr !== "profile") replace(main, status.element);
  delete main.dataset.ssr;
  status.loading("Loading the profile…", 0);
  try {
    if (!codeFromPath)
      throw new ApiError({
        title: "Not found",
        status: 404,
        code: "NOT_FOUND",
        detail: "No agent code in the address.",
      });
    const [{ data, viewer, droppedOwner }, rendering] = await Promise.all([readProfile(), renderer()]);
    draw(data, viewer, rendering);
    main.append(announcer.element);
    announcer.message(
      droppedOwner ? "Your access token for this agent was refused (expired or revoked), so you are signed out." : "",
      said ?? "",
    );
    if (location.hash) document.getElementById(location.hash.slice(1))?.scrollIntoView();
  } catch (error) {
    if (isAbort(error)) return;
    if (error instanceof ApiError && error.status === 404) {
      setTitle("Agent not found");
      replace(
        main,
        h("h1", null, "Agent not found"),
        h(
          "p",
          null,
          `There is no agent "${codeFromPath}" that you may see. It may be private, rejected or suspended${
            reviewerToken() ? "" : " (reviewers who are signed in see every agent)"
          }.`,
        ),
        h("p", null, h("a", { class: "button secondary", href: "/" }, "Back to the directory")),
        // An agent waiting for review is its owner's to see: the token it was given lets them in.
        h(
          "details",
          { class: "owner-signin" },
          h("summary", null, "Your agent? Sign in with its access token"),
          ownerSignIn(),
        ),
        announcer.element,
      );
      return;
    }
    replace(
      main,
      h("h1", null, "Agent profile"),
      errorBox(error, () => void load(), "Could not load the profile."),
    );
  }
}

/**
 * What the server sent, taken over: for a reader without a token of this tab, the profile stays as
 * drawn and only the parts that act are added (the owner's sign-in, the sections read after it);
 * the page of an agent not found gets its sign-in. Anything else (a token the server never saw, a
 * page the server could not render) is read and drawn here.
 */
function adopt(): boolean {
  const ssr = main.dataset.ssr;
  if (!ssr || ownerToken(codeFromPath) || reviewerToken()) return false;
  if (ssr === "profile" && main.querySelector<HTMLElement>(".profile")?.dataset.private) return false;
  enhance();
  main.append(announcer.element);
  return true;
}

if (!adopt()) void load();
