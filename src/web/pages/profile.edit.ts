/**
 * The owner's edit form on a profile (signed in with the agent's token). A change is checked in
 * the browser by the rules the server runs (src/providers/provider.rules.ts, bundled) and each
 * problem, the form's or the API's, is shown beside the field its JSON Pointer names. A save is
 * previewed first as the diff the version history shows (the server's own snapshot diff), and sent
 * as a merge patch of what changed with `If-Match` of the version the form was loaded from; when
 * that version is no longer current (412) it shows what changed meanwhile and offers to put the
 * owner's edit on top of the newer version.
 */
import "../client/zod.jitless.ts";
import { ApiError, api, type FieldError, query } from "../client/api.ts";
import { type Change, patchChanges } from "../client/diff.ts";
import { type Child, h, replace, uid } from "../client/dom.ts";
import { AGENT_TYPES, AUTH_SCHEMES, PROTOCOLS, VISIBILITIES } from "../client/enums.ts";
import { fieldErrors } from "../client/field.errors.ts";
import type { Provider, Snapshot, Version, VersionDiff, VersionPage } from "../client/types.ts";
import { describeError, field, options, splitList, time } from "../client/ui.ts";
import { changesTable } from "./profile.diff.ts";

type Rules = typeof import("../../providers/provider.rules.ts");
type SnapshotDiff = typeof import("../../providers/version.diff.ts");
type FieldName = Rules["OWNER_FIELDS"][number];
/** The owner-editable part of a profile, as a version snapshot holds it. */
type Values = Record<FieldName, unknown>;
type Control = HTMLInputElement | HTMLSelectElement | HTMLTextAreaElement;

/**
 * The server's rules and its snapshot diff, loaded when the form is asked for: they bring the
 * validation library, the largest part of the pages, which a profile read without editing never needs.
 */
let checks: Promise<{ rules: Rules; diff: SnapshotDiff }> | null = null;
function loadChecks(): Promise<{ rules: Rules; diff: SnapshotDiff }> {
  checks ??= Promise.all([import("../../providers/provider.rules.ts"), import("../../providers/version.diff.ts")]).then(
    ([rules, diff]) => ({ rules, diff }),
  );
  // A failed load (the network) is tried again the next time.
  checks.catch(() => {
    checks = null;
  });
  return checks;
}

/** Sections a PATCH merges member by member (JSON Merge Patch): the form sends only the members that differ. */
const SECTIONS: ReadonlySet<FieldName> = new Set(["endpoint", "policy"]);
/** The endpoint's members the form has controls for; the others (transport, variables, headers) are kept. */
const ENDPOINT_MEMBERS = ["url", "protocol", "authScheme", "healthUrl"] as const;
/** Lists and objects the form edits as JSON text. */
const AS_JSON: FieldName[] = ["repository", "capabilities", "models", "tools", "packages", "policy", "roles"];

export interface EditorOptions {
  providerCode: string;
  token: string;
  /** Shows the profile again (after a save, or to leave the form), announcing `said`. */
  reload: (said: string) => void;
  /** The token was refused: forget it and show the profile as anyone sees it. */
  refused: () => void;
  /** Leaves the form without saving. */
  close: () => void;
}

const isObject = (v: unknown): v is Record<string, unknown> => v !== null && typeof v === "object" && !Array.isArray(v);

/** Equal as JSON, whatever the order of an object's members; an absent member equals null. */
function same(a: unknown, b: unknown): boolean {
  if (a === b || ((a === null || a === undefined) && (b === null || b === undefined))) return true;
  if (Array.isArray(a) && Array.isArray(b)) return a.length === b.length && a.every((v, i) => same(v, b[i]));
  if (isObject(a) && isObject(b)) {
    return [...new Set([...Object.keys(a), ...Object.keys(b)])].every((k) => same(a[k], b[k]));
  }
  return false;
}

/** A path of the rules (`endpoint.url`, `labels.1`) as the API's problems name it: a JSON Pointer. */
const pointer = (path: string): string =>
  path === "(body)" || path.startsWith("/")
    ? path
    : path
        .split(".")
        .map((s) => `/${s.replace(/~/g, "~0").replace(/\//g, "~1")}`)
        .join("");

const jsonText = (v: unknown): string => (v === null || v === undefined ? "" : JSON.stringify(v, null, 2));

/** The edit form of profile `p`, once the rules it checks by are loaded. */
export async function openEditor(p: Provider, o: EditorOptions): Promise<HTMLElement> {
  return editor(p, await loadChecks(), o);
}

function editor(p: Provider, { rules, diff }: { rules: Rules; diff: SnapshotDiff }, o: EditorOptions): HTMLElement {
  const encoded = encodeURIComponent(o.providerCode);
  type Profile = Parameters<Rules["applyPatch"]>[0];

  /** The owner-editable part of a profile or a snapshot; a package's runCommand is the registry's, not the owner's. */
  function valuesOf(source: Provider | Snapshot): Values {
    const all = source as unknown as Record<string, unknown>;
    const values = Object.fromEntries(rules.OWNER_FIELDS.map((f) => [f, all[f] ?? null])) as Values;
    if (Array.isArray(values.packages)) {
      values.packages = values.packages.map((item) => {
        const { runCommand: _derived, ...owned } = item as Record<string, unknown>;
        return owned;
      });
    }
    return values;
  }

  /** The merge patch that turns `before` into `after`: the fields that differ, a section's members only. */
  function patchBody(before: Values, after: Values): Record<string, unknown> {
    const body: Record<string, unknown> = {};
    for (const f of rules.OWNER_FIELDS) {
      const [b, a] = [before[f], after[f]];
      if (same(b, a)) continue;
      if (SECTIONS.has(f) && isObject(b) && isObject(a)) {
        const members: Record<string, unknown> = {};
        for (const k of new Set([...Object.keys(b), ...Object.keys(a)])) {
          if (!same(b[k], a[k])) members[k] = a[k] ?? null;
        }
        body[f] = members;
      } else {
        body[f] = a;
      }
    }
    return body;
  }

  /**
   * The profile the registry would store for `body` sent over `before`, by the server's own rules
   * (the patch checked, then merged and checked whole), or its problems, each at its JSON Pointer.
   */
  function check(before: Values, body: Record<string, unknown>): { after: Values } | { errors: FieldError[] } {
    const asPointers = (errors: FieldError[]) => errors.map((e) => ({ path: pointer(e.path), message: e.message }));
    const patch = rules.validatePatch(body);
    if (!patch.ok) return { errors: asPointers(patch.errors) };
    const merged = rules.applyPatch(before as unknown as Profile, patch.value);
    if (!merged.ok) return { errors: asPointers(merged.errors) };
    return { after: merged.value as unknown as Values };
  }

  /** The rows of `before` → `after`, from the same JSON Patch the API's version diff answers. */
  const changesOf = (before: Values, after: Values): Change[] =>
    // The API answers the members an operation does not use as null; the diff module's patch omits them.
    patchChanges(
      before,
      diff.snapshotPatch(before, after).map((op) => ({ from: null, value: null, ...op })),
    );

  let base = valuesOf(p);
  let baseVersion = p.version;

  // ------------------------------------------------------------ controls
  const controls = new Map<string, Control>();
  const input = (path: string, attrs: Record<string, string | number | boolean> = {}) => {
    const control = h("input", { type: "text", "data-path": path, autocomplete: "off", ...attrs });
    controls.set(path, control);
    return control;
  };
  const area = (path: string, rowsCount: number, attrs: Record<string, string | number | boolean> = {}) => {
    const control = h("textarea", { "data-path": path, rows: rowsCount, ...attrs });
    controls.set(path, control);
    return control;
  };
  const choice = (path: string, values: readonly string[], empty?: string) => {
    const control = h("select", { "data-path": path }, options(values, null, empty));
    controls.set(path, control);
    return control;
  };

  const about = h(
    "fieldset",
    { class: "edit-group" },
    h("legend", null, "About"),
    field("Name", input("name", { maxlength: 120 }), "Up to 120 characters."),
    field("Summary", input("summary", { maxlength: 280 }), "One line, up to 280 characters."),
    field("Description", area("description", 6), "Markdown, up to 10 000 characters."),
    field("Home page", input("homepageUrl", { type: "url", spellcheck: false, placeholder: "https://" })),
    field(
      "Labels",
      input("labels", { spellcheck: false }),
      "Up to 20, comma-separated; a-z, 0-9, . _ - (stored lower-case).",
    ),
    h(
      "div",
      { class: "grid-2" },
      field("Agent type", choice("agentType", AGENT_TYPES)),
      field("Visibility", choice("visibility", VISIBILITIES)),
    ),
  );
  const contact = h(
    "fieldset",
    { class: "edit-group" },
    h("legend", null, "Contact"),
    field(
      "Contact email",
      input("contactEmail", { type: "email", autocomplete: "email", spellcheck: false }),
      "Shown only to you and to reviewers.",
    ),
  );
  const endpoint = h(
    "fieldset",
    { class: "edit-group", "data-path": "endpoint" },
    h("legend", null, "Endpoint"),
    h("p", { class: "hint" }, "Emptied, the agent has no endpoint (it must then ship as packages)."),
    field("Endpoint URL", input("endpoint.url", { type: "url", spellcheck: false, placeholder: "https://" })),
    h(
      "div",
      { class: "grid-2" },
      field("Protocol", choice("endpoint.protocol", PROTOCOLS, "None")),
      field("Authentication", choice("endpoint.authScheme", AUTH_SCHEMES, "None given")),
    ),
    field(
      "Health check URL",
      input("endpoint.healthUrl", { type: "url", spellcheck: false, placeholder: "https://" }),
      "Optional.",
    ),
  );
  const release = h(
    "fieldset",
    { class: "edit-group" },
    h("legend", null, "Release"),
    h(
      "div",
      { class: "grid-2" },
      field("Release", input("releaseVersion", { spellcheck: false }), "One release, such as 1.4.2."),
      field("MCP server name", input("serverName", { spellcheck: false }), "Reverse-DNS, unique in the registry."),
    ),
  );
  const more = h(
    "details",
    { class: "edit-group edit-json" },
    h("summary", null, "Lists and policy, as JSON"),
    h("p", { class: "hint" }, "Each as the API's profile holds it. A list emptied is an empty list."),
    AS_JSON.map((f) => field(humanField(f), area(f, 6, { spellcheck: false, class: "code-input" }), jsonHint(f))),
  );

  const summaryBox = h("div", { class: "error-summary", role: "alert", tabindex: -1, hidden: true });
  const heading = h("h2", { id: uid("edit"), tabindex: -1 }, "");
  const preview = h("button", { type: "submit", class: "button primary" }, "Preview changes");
  const cancel = h("button", { type: "button", class: "button secondary", onclick: () => o.close() }, "Cancel");
  const form = h(
    "form",
    { class: "edit-form", novalidate: true, "aria-labelledby": heading.id },
    summaryBox,
    about,
    contact,
    endpoint,
    release,
    more,
    h("div", { class: "form-actions" }, preview, cancel),
  );

  const dialog = h("dialog", { class: "edit-dialog", "aria-labelledby": uid("dialog") });
  const dialogTitleId = dialog.getAttribute("aria-labelledby") as string;

  const root = h(
    "section",
    { id: "edit", class: "profile-section edit-profile", "aria-labelledby": heading.id },
    heading,
    h(
      "p",
      { class: "hint" },
      "Each value is checked by the registry's own rules, and Preview shows what changes before anything is saved.",
    ),
    form,
    dialog,
  );

  /** Puts values in the controls, and says which version they start from. */
  function fill(values: Values, version: number): void {
    baseVersion = version;
    heading.textContent = `Edit the profile (version ${version})`;
    root.dataset.version = String(version);
    const set = (path: string, value: unknown) => {
      const control = controls.get(path);
      if (control) control.value = value === null || value === undefined ? "" : String(value);
    };
    for (const f of ["name", "summary", "description", "homepageUrl", "serverName", "releaseVersion"] as const) {
      set(f, values[f]);
    }
    set("labels", ((values.labels as string[] | null) ?? []).join(", "));
    set("agentType", values.agentType);
    set("visibility", values.visibility);
    set("contactEmail", values.contactEmail);
    const e = isObject(values.endpoint) ? values.endpoint : {};
    for (const m of ENDPOINT_MEMBERS) set(`endpoint.${m}`, e[m]);
    for (const f of AS_JSON) set(f, jsonText(values[f]));
  }

  /** The values as the form stands, or the problems that keep it from being sent. */
  function read(): { values: Values } | { errors: FieldError[] } {
    const errors: FieldError[] = [];
    const text = (path: string) => (controls.get(path)?.value ?? "").trim();
    const nullable = (path: string) => text(path) || null;
    const values: Values = { ...base };
    values.name = text("name");
    values.summary = text("summary");
    for (const f of ["description", "homepageUrl", "serverName", "releaseVersion", "contactEmail"] as const) {
      values[f] = nullable(f);
    }
    values.labels = splitList(text("labels"));
    values.agentType = text("agentType");
    values.visibility = text("visibility");
    const members = Object.fromEntries(ENDPOINT_MEMBERS.map((m) => [m, nullable(`endpoint.${m}`)]));
    values.endpoint = Object.values(members).every((v) => v === null)
      ? null
      : { ...(isObject(base.endpoint) ? base.endpoint : {}), ...members };
    for (const f of AS_JSON) {
      const raw = text(f);
      if (!raw) {
        values[f] = f === "repository" || f === "policy" ? null : [];
        continue;
      }
      try {
        values[f] = JSON.parse(raw);
      } catch (error) {
        errors.push({ path: pointer(f), message: `is not valid JSON (${(error as Error).message})` });
      }
    }
    return errors.length ? { errors } : { values };
  }

  // ------------------------------------------------------------ problems beside the fields

  // The API's JSON Pointers and the form's own paths name the controls; a problem in the JSON lists
  // opens their closed <details>, and one inside a list (`/labels/1`) says which item it is in.
  const fieldNotes = fieldErrors(form, summaryBox);

  // ------------------------------------------------------------ the preview, the save, a conflict

  function openDialog(...content: Child[]): void {
    replace(dialog, ...content);
    if (!dialog.open) dialog.showModal();
    // The dialog's title takes focus: a screen reader starts at what the dialog is about.
    dialog.querySelector<HTMLElement>(`#${dialogTitleId}`)?.focus();
  }
  function closeDialog(): void {
    if (dialog.open) dialog.close();
  }
  dialog.addEventListener("close", () => {
    if (!root.isConnected) return;
    if (!summaryBox.hidden) summaryBox.focus();
    else preview.focus();
  });

  const dialogTitle = (text: string) => h("h2", { id: dialogTitleId, tabindex: -1 }, text);

  function showPreview(body: Record<string, unknown>, after: Values): void {
    const status = h("p", { class: "edit-status", role: "status" });
    const save = h("button", { type: "button", class: "button primary" }, `Save as version ${baseVersion + 1}`);
    save.addEventListener("click", () => void send(body, save, status));
    openDialog(
      dialogTitle(`Your changes to version ${baseVersion}`),
      h("p", { class: "hint" }, "Nothing is saved yet."),
      changesTable(
        `Your changes to version ${baseVersion}`,
        `Version ${baseVersion}`,
        "Your edit",
        changesOf(base, after),
      ),
      status,
      h(
        "div",
        { class: "form-actions" },
        save,
        h("button", { type: "button", class: "button secondary", onclick: closeDialog }, "Keep editing"),
      ),
    );
  }

  let sending = false;
  async function send(body: Record<string, unknown>, button: HTMLButtonElement, status: HTMLElement): Promise<void> {
    if (sending) return;
    sending = true;
    button.disabled = true;
    button.setAttribute("aria-busy", "true");
    status.textContent = "Saving…";
    try {
      const saved = await api<Provider>("PATCH", `/providers/${encoded}`, {
        token: o.token,
        body,
        // The ETag the profile was read with: the API answers 412 if another version came since.
        headers: { "If-Match": `"${baseVersion}"` },
      });
      closeDialog();
      o.reload(`Saved: the profile is now version ${saved.version}.`);
    } catch (error) {
      button.disabled = false;
      button.removeAttribute("aria-busy");
      status.textContent = "";
      if (error instanceof ApiError && error.status === 412) return conflict(body);
      closeDialog();
      if (error instanceof ApiError && error.status === 401) return o.refused();
      const refused = "The registry did not save these changes";
      if (error instanceof ApiError && error.problem.errors?.length) fieldNotes.show(error.problem.errors, refused);
      else {
        const { title, detail } = describeError(error);
        fieldNotes.show([{ path: "(body)", message: `${title}: ${detail}` }], refused);
      }
    } finally {
      sending = false;
    }
  }

  /**
   * A save refused because the profile has a newer version: what changed from the version edited
   * to the current one, as the API's diff says, and a way to put the owner's edit on top of it.
   */
  async function conflict(body: Record<string, unknown>): Promise<void> {
    const edited = baseVersion;
    const title = "This profile changed while you were editing";
    openDialog(dialogTitle(title), h("p", { role: "status" }, "Reading the newer version…"));
    try {
      const get = <T>(path: string) => api<T>("GET", path, { token: o.token });
      const newest = (await get<VersionPage>(`/providers/${encoded}/versions${query({ limit: 1 })}`)).items[0];
      if (!newest) throw new Error("The registry answered no version.");
      const [then, now, patch] = await Promise.all([
        get<Version>(`/providers/${encoded}/versions/${edited}`),
        get<Version>(`/providers/${encoded}/versions/${newest.version}`),
        get<VersionDiff>(`/providers/${encoded}/versions/${edited}/diff/${newest.version}`),
      ]);
      const current = valuesOf(now.snapshot);
      const theirs = new Set(patch.map((op) => op.path.split("/")[1] ?? ""));
      const both = Object.keys(body).filter((f) => theirs.has(f));
      const reapply = h(
        "button",
        { type: "button", class: "button primary" },
        `Re-apply my edit to version ${newest.version}`,
      );
      reapply.addEventListener("click", () => {
        // The form then holds the newer version with the owner's fields over it, previewed as any edit.
        const rebased = { ...current };
        for (const [f, v] of Object.entries(body) as [FieldName, unknown][]) {
          const section = current[f];
          rebased[f] = SECTIONS.has(f) && isObject(v) && isObject(section) ? { ...section, ...v } : v;
        }
        base = current;
        fill(rebased, newest.version);
        closeDialog();
        previewForm();
      });
      openDialog(
        dialogTitle(title),
        h(
          "p",
          null,
          `You edited version ${edited}; version ${newest.version} is current now, made `,
          time(newest.createdAt),
          ` by ${newest.actor}. Nothing of yours was saved, and your edit is kept.`,
        ),
        changesTable(
          `What changed from version ${edited} to version ${newest.version}`,
          `Version ${edited}`,
          `Version ${newest.version}`,
          patchChanges(then.snapshot, patch),
        ),
        both.length
          ? h(
              "p",
              { class: "notice warning" },
              `You both changed ${both.join(", ")}: re-applying puts your value in place of version ${newest.version}'s.`,
            )
          : null,
        h(
          "div",
          { class: "form-actions" },
          reapply,
          h(
            "button",
            {
              type: "button",
              class: "button secondary",
              onclick: () => {
                closeDialog();
                o.reload(`Your edit was set aside; showing version ${newest.version}.`);
              },
            },
            "Discard my edit",
          ),
        ),
      );
      root.dataset.conflict = String(newest.version);
    } catch (error) {
      const { title: what, detail } = describeError(error);
      openDialog(
        dialogTitle(title),
        h("p", { class: "notice error", role: "alert" }, `The newer version could not be read. ${what}: ${detail}`),
        h(
          "div",
          { class: "form-actions" },
          h("button", { type: "button", class: "button secondary", onclick: closeDialog }, "Close"),
        ),
      );
    }
  }

  /** The form as it stands, checked by the server's rules: its problems beside their fields, else the preview. */
  function previewForm(): void {
    const problems = (errors: FieldError[]) =>
      fieldNotes.show(
        errors,
        `Please correct ${errors.length === 1 ? "this problem" : `these ${errors.length} problems`}`,
      );
    const got = read();
    if ("errors" in got) {
      problems(got.errors);
      return;
    }
    const body = patchBody(base, got.values);
    if (!Object.keys(body).length) {
      fieldNotes.show([{ path: "(body)", message: "You have not changed anything yet." }], "Nothing to save");
      return;
    }
    const checked = check(base, body);
    if ("errors" in checked) {
      problems(checked.errors);
      return;
    }
    fieldNotes.clear();
    showPreview(body, checked.after);
  }

  form.addEventListener("submit", (event) => {
    event.preventDefault();
    previewForm();
  });

  fill(base, baseVersion);
  return root;
}

function humanField(f: FieldName): string {
  return (
    { repository: "Repository", policy: "Usage policy", roles: "People and roles" }[f as string] ??
    f[0]?.toUpperCase() + f.slice(1)
  );
}

function jsonHint(f: FieldName): string {
  switch (f) {
    case "repository":
      return 'An object: { "url": "https://…", "source": "github" }; empty for none.';
    case "policy":
      return 'An object: { "humanOversight": "ON_REQUEST", … }; empty for none.';
    default:
      return "A list of objects.";
  }
}
