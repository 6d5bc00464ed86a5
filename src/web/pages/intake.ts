/**
 * `/intake`: the intake form. It covers every intake field of API.md §1, validates with the very
 * rules the server runs (src/providers/provider.rules.ts, bundled), shows problems — its own or the
 * server's `errors[]` — beside the fields they name, and sends exactly the JSON body of
 * `POST /api/v1/providers`. On success it shows the review code and the access token, once.
 */
import "../client/zod.jitless.ts";
import { ApiError, api } from "../client/api.ts";
import { type Child, h, mainElement, replace, uid } from "../client/dom.ts";
import {
  AGENT_TYPES,
  AUTH_SCHEMES,
  HUMAN_OVERSIGHT,
  MODEL_ROLES,
  PACKAGE_REGISTRIES,
  PACKAGE_TRANSPORTS,
  PROTOCOLS,
  ROLE_KINDS,
  TOOL_KINDS,
  TOOL_SCOPES,
  VISIBILITIES,
} from "../client/enums.ts";
import { fieldErrors } from "../client/field.errors.ts";
import { mountAccount } from "../client/session.ts";
import type { IntakeResult } from "../client/types.ts";
import { describeError, field, humanize, options, Status, setTitle, splitList } from "../client/ui.ts";

type Control = HTMLInputElement | HTMLSelectElement | HTMLTextAreaElement;

const main = mainElement();
void mountAccount();
const live = new Status("sr-status");

// ---------------------------------------------------------------- controls

function input(path: string, attrs: Record<string, string | number | boolean> = {}): HTMLInputElement {
  return h("input", { type: "text", "data-path": path, autocomplete: "off", ...attrs });
}
function textarea(path: string, attrs: Record<string, string | number | boolean> = {}): HTMLTextAreaElement {
  return h("textarea", { "data-path": path, rows: 3, ...attrs });
}
function select(path: string, values: readonly string[], placeholder?: string, selected?: string): HTMLSelectElement {
  return h("select", { "data-path": path }, options(values, selected ?? null, placeholder));
}

const code = input("providerCode", { maxlength: 63, spellcheck: false, pattern: "[a-z0-9][a-z0-9-]{1,61}[a-z0-9]" });
const name = input("name", { maxlength: 120, required: true });
const summary = input("summary", { maxlength: 280, required: true });
const description = textarea("description", { maxlength: 10_000, rows: 6 });
const homepageUrl = input("homepageUrl", { type: "url", maxlength: 2048, spellcheck: false, placeholder: "https://" });
const serverName = input("serverName", { maxlength: 200, spellcheck: false, placeholder: "io.github.owner/name" });
const releaseVersion = input("releaseVersion", { maxlength: 255, spellcheck: false, placeholder: "1.0.0" });
const repositoryUrl = input("repository.url", {
  type: "url",
  maxlength: 2048,
  spellcheck: false,
  placeholder: "https://",
});
const repositorySource = input("repository.source", { maxlength: 40, spellcheck: false, placeholder: "github" });
const labels = input("labels", { spellcheck: false });
const agentType = select("agentType", AGENT_TYPES, "Choose a type…");
agentType.required = true;
const visibility = select("visibility", VISIBILITIES, undefined, "PUBLIC");
const contactEmail = input("contactEmail", { type: "email", autocomplete: "email", required: true, spellcheck: false });
const endpointUrl = input("endpoint.url", { type: "url", spellcheck: false, placeholder: "https://" });
const protocol = select("endpoint.protocol", PROTOCOLS, "Choose a protocol…");
const authScheme = select("endpoint.authScheme", AUTH_SCHEMES, "Choose a scheme…");
const healthUrl = input("endpoint.healthUrl", { type: "url", spellcheck: false, placeholder: "https://" });
const oversight = select("policy.humanOversight", HUMAN_OVERSIGHT, "Not stated");
const retention = input("policy.dataRetentionDays", {
  type: "number",
  min: 0,
  max: 36_500,
  step: 1,
  inputmode: "numeric",
});
const allowed = textarea("policy.allowedUseCases");
const prohibited = textarea("policy.prohibitedUseCases");
const termsUrl = input("policy.termsUrl", { type: "url", spellcheck: false, placeholder: "https://" });
const privacyUrl = input("policy.privacyUrl", { type: "url", spellcheck: false, placeholder: "https://" });

/**
 * The server's own validation rules, loaded when the form is first used (they bring the validation
 * library, the largest part of the pages, whose evaluation would otherwise hold a phone's main thread
 * just as the form appears): the form works without them — the server validates anyway — but with
 * them a mistake is named before anything is sent. A failed load is tried again the next time.
 */
type Rules = typeof import("../../providers/provider.rules.ts");
let loadingRules: Promise<Rules | null> | null = null;
function rules(): Promise<Rules | null> {
  loadingRules ??= import("../../providers/provider.rules.ts").catch(() => {
    loadingRules = null;
    return null;
  });
  return loadingRules;
}

const codeHint = h("span", null);
async function updateCodeHint(): Promise<void> {
  const derive = (await rules())?.deriveProviderCode;
  const derived = derive && name.value.trim() ? derive(name.value) : "";
  codeHint.textContent = derived
    ? `Optional. Left empty, it is made from the name: ${derived} (with a suffix if that is taken). It never changes.`
    : "Optional. Left empty, it is made from the name. 3–63 characters of a-z, 0-9 and -. It never changes.";
}
name.addEventListener("input", () => void updateCodeHint());
void updateCodeHint();

// ---------------------------------------------------------------- repeatable lists

interface ListSpec {
  key: "capabilities" | "models" | "tools" | "packages" | "roles";
  title: string;
  singular: string;
  max: number;
  intro: string;
  /** The fields of one item; each control carries `data-name` (its key within the item). */
  fields(): HTMLElement[];
  /** One item's JSON from its row. */
  read(row: HTMLElement): Record<string, unknown>;
}

const named = <T extends Control>(control: T, key: string): T => {
  control.dataset.name = key;
  return control;
};
const fieldValue = (row: HTMLElement, key: string): string =>
  (row.querySelector<Control>(`[data-name="${key}"]`)?.value ?? "").trim();
const optionalValue = (row: HTMLElement, key: string): string | undefined => fieldValue(row, key) || undefined;
const listValue = (row: HTMLElement, key: string): string[] | undefined => {
  const list = splitList(fieldValue(row, key));
  return list.length ? list : undefined;
};
function numberValue(control: HTMLInputElement | null): number | undefined {
  if (!control) return undefined;
  // A number input answers "" for text it cannot read: send it as typed, for the validator to name.
  if (control.validity.badInput) return Number.NaN;
  return control.value.trim() === "" ? undefined : Number(control.value);
}

const LISTS: ListSpec[] = [
  {
    key: "capabilities",
    title: "Capabilities",
    singular: "capability",
    max: 50,
    intro: "What the agent can do. Each has a key unique within the agent.",
    fields: () => [
      field("Key", named(input(""), "key"), "Letters, digits, . _ - (e.g. plan-route).", true),
      field("Name", named(input("", { maxlength: 120 }), "name"), undefined, true),
      field("Description", named(textarea("", { maxlength: 2000 }), "description")),
      field("Tags", named(input(""), "tags"), "Comma-separated."),
      field(
        "Input modes",
        named(input("", { placeholder: "text/plain" }), "inputModes"),
        "Media types, comma-separated.",
      ),
      field(
        "Output modes",
        named(input("", { placeholder: "application/json" }), "outputModes"),
        "Media types, comma-separated.",
      ),
    ],
    read: (row) => ({
      key: fieldValue(row, "key"),
      name: fieldValue(row, "name"),
      description: optionalValue(row, "description"),
      tags: listValue(row, "tags"),
      inputModes: listValue(row, "inputModes"),
      outputModes: listValue(row, "outputModes"),
    }),
  },
  {
    key: "models",
    title: "Models",
    singular: "model",
    max: 20,
    intro: "The models the agent runs on.",
    fields: () => [
      field("Vendor", named(input("", { maxlength: 80 }), "vendor"), undefined, true),
      field("Model", named(input("", { maxlength: 120 }), "model"), undefined, true),
      field("Role", named(select("", MODEL_ROLES, undefined, "PRIMARY"), "role"), undefined, true),
      field(
        "Context window",
        named(input("", { type: "number", min: 1, step: 1, inputmode: "numeric" }), "contextWindow"),
        "Tokens; optional.",
      ),
    ],
    read: (row) => ({
      vendor: fieldValue(row, "vendor"),
      model: fieldValue(row, "model"),
      role: fieldValue(row, "role") || undefined,
      contextWindow: numberValue(row.querySelector<HTMLInputElement>('[data-name="contextWindow"]')),
    }),
  },
  {
    key: "tools",
    title: "Tools",
    singular: "tool",
    max: 100,
    intro: "The tools the agent can call, and what they may do. Names are unique within the agent.",
    fields: () => {
      const legend = uid("scopes");
      return [
        field("Name", named(input("", { maxlength: 120 }), "name"), undefined, true),
        field("Kind", named(select("", TOOL_KINDS, "Choose a kind…"), "kind"), undefined, true),
        field("Description", named(textarea("", { maxlength: 2000 }), "description")),
        h(
          "fieldset",
          { class: "checks", "data-name": "scopes", "aria-labelledby": legend },
          h("legend", { id: legend }, "Scopes"),
          TOOL_SCOPES.map((scope) => {
            const box = h("input", { type: "checkbox", value: scope, id: uid("scope") });
            return h("div", { class: "check" }, box, h("label", { for: box.id }, humanize(scope)));
          }),
        ),
      ];
    },
    read: (row) => ({
      name: fieldValue(row, "name"),
      kind: fieldValue(row, "kind") || undefined,
      description: optionalValue(row, "description"),
      scopes: [...row.querySelectorAll<HTMLInputElement>('[data-name="scopes"] input:checked')].map((b) => b.value),
    }),
  },
  {
    key: "packages",
    title: "Packages",
    singular: "package",
    max: 10,
    intro:
      "For an MCP server that clients start themselves: where it is published and what it needs. Name each environment variable and say what it is for; never type a secret's value here.",
    fields: () => [
      h(
        "div",
        { class: "grid-2" },
        field("Registry", named(select("", PACKAGE_REGISTRIES, "Choose a registry…"), "registryType"), undefined, true),
        field("Transport", named(select("", PACKAGE_TRANSPORTS, undefined, "STDIO"), "transport"), undefined, true),
      ),
      field(
        "Identifier",
        named(input("", { spellcheck: false, placeholder: "@scope/server-name" }), "identifier"),
        "The package's name in its registry; for OCI the image with its tag; for MCPB the bundle's https: URL.",
        true,
      ),
      h(
        "div",
        { class: "grid-2" },
        field(
          "Version",
          named(input("", { spellcheck: false, placeholder: "1.2.3" }), "version"),
          "One release, not a range. Not for OCI.",
        ),
        field("Bundle SHA-256", named(input("", { spellcheck: false, maxlength: 64 }), "fileSha256"), "MCPB only."),
      ),
      field(
        "Transport URL",
        named(input("", { spellcheck: false, placeholder: "http://localhost:{port}/mcp" }), "url"),
        "Streamable HTTP and SSE only: where the started package listens.",
      ),
      field(
        "Environment variables",
        named(textarea("", { spellcheck: false, placeholder: "API_KEY: The service's API key" }), "variables"),
        "One per line: NAME, optionally followed by a colon and what it is for.",
      ),
      h(
        "div",
        { class: "grid-2" },
        field("Required variables", named(input("", { spellcheck: false }), "required"), "Names, comma-separated."),
        field("Secret variables", named(input("", { spellcheck: false }), "secret"), "Names, comma-separated."),
      ),
    ],
    read: (row) => {
      const required = new Set(splitList(fieldValue(row, "required")));
      const secret = new Set(splitList(fieldValue(row, "secret")));
      const variables = splitList(fieldValue(row, "variables"), /\r?\n/).map((line) => {
        const [name = "", ...rest] = line.split(":");
        const purpose = rest.join(":").trim();
        return dropUndefined({
          name: name.trim(),
          description: purpose || undefined,
          isRequired: required.has(name.trim()) || undefined,
          isSecret: secret.has(name.trim()) || undefined,
        });
      });
      return {
        registryType: fieldValue(row, "registryType") || undefined,
        identifier: fieldValue(row, "identifier"),
        version: optionalValue(row, "version"),
        fileSha256: optionalValue(row, "fileSha256"),
        transport: dropUndefined({ type: fieldValue(row, "transport") || undefined, url: optionalValue(row, "url") }),
        environmentVariables: variables.length ? variables : undefined,
      };
    },
  },
  {
    key: "roles",
    title: "People and roles",
    singular: "role",
    max: 20,
    intro: "Who owns and maintains the agent, and whom to tell about a security issue.",
    fields: () => [
      field("Subject", named(input("", { spellcheck: false }), "subject"), "An email address or a handle.", true),
      field("Role", named(select("", ROLE_KINDS, undefined, "OWNER"), "role"), undefined, true),
    ],
    read: (row) => ({ subject: fieldValue(row, "subject"), role: fieldValue(row, "role") || undefined }),
  },
];

class ListSection {
  readonly element: HTMLElement;
  private readonly rows: HTMLElement;
  private readonly add: HTMLButtonElement;
  constructor(readonly spec: ListSpec) {
    this.rows = h("div", { class: "rows" });
    this.add = h("button", { type: "button", class: "button secondary add" }, `Add ${spec.singular}`);
    this.add.addEventListener("click", () => this.addRow());
    const heading = uid("h");
    this.element = h(
      "section",
      { class: "form-section", "aria-labelledby": heading, "data-path": spec.key },
      h("h2", { id: heading }, spec.title),
      h("p", { class: "hint" }, spec.intro, ` Optional; at most ${spec.max}.`),
      this.rows,
      this.add,
    );
  }

  private items(): HTMLElement[] {
    return [...this.rows.children] as HTMLElement[];
  }

  addRow(): void {
    if (this.items().length >= this.spec.max) return;
    const legend = h("legend", null);
    const remove = h("button", { type: "button", class: "button link remove" });
    const row = h("fieldset", { class: "item" }, legend, ...this.spec.fields(), remove);
    remove.addEventListener("click", () => this.removeRow(row));
    this.rows.append(row);
    this.renumber();
    row.querySelector<Control>("input, select, textarea")?.focus();
    live.message(`${humanize(this.spec.singular)} ${this.items().length} added.`);
  }

  private removeRow(row: HTMLElement): void {
    const items = this.items();
    const index = items.indexOf(row);
    row.remove();
    this.renumber();
    const rest = this.items();
    const target = rest[index] ?? rest[index - 1];
    (target?.querySelector<Control>("input, select, textarea") ?? this.add).focus();
    live.message(`${humanize(this.spec.singular)} ${index + 1} removed.`);
  }

  /** Legends, button names and data-paths follow the items' positions. */
  private renumber(): void {
    this.items().forEach((row, index) => {
      const label = `${humanize(this.spec.singular)} ${index + 1}`;
      (row.querySelector("legend") as HTMLElement).textContent = label;
      const remove = row.querySelector(".remove") as HTMLButtonElement;
      remove.textContent = `Remove ${this.spec.singular} ${index + 1}`;
      for (const el of row.querySelectorAll<HTMLElement>("[data-name]")) {
        el.dataset.path = `${this.spec.key}.${index}.${el.dataset.name}`;
        el.dataset.label = `${label}: ${el.dataset.name}`;
      }
    });
    this.add.disabled = this.items().length >= this.spec.max;
  }

  read(): Record<string, unknown>[] | undefined {
    const items = this.items().map((row) => dropUndefined(this.spec.read(row)));
    return items.length ? items : undefined;
  }
}

const lists = LISTS.map((spec) => new ListSection(spec));
const listOf = (key: ListSpec["key"]) => lists.find((l) => l.spec.key === key) as ListSection;

// ---------------------------------------------------------------- the form

function section(title: string, intro: Child, ...children: Child[]): HTMLElement {
  const heading = uid("h");
  return h(
    "section",
    { class: "form-section", "aria-labelledby": heading },
    h("h2", { id: heading }, title),
    intro ? h("p", { class: "hint" }, intro) : null,
    ...children,
  );
}

const endpointSection = section(
  "Endpoint",
  "Where the agent answers; leave it empty for an MCP server that ships only as packages (below). URLs must be https: (http: only for localhost).",
  field("Endpoint URL", endpointUrl),
  h("div", { class: "grid-2" }, field("Protocol", protocol), field("Authentication", authScheme)),
  field("Health check URL", healthUrl, "Optional."),
);
// A problem of the endpoint as a whole (none given, and no package either) is shown beside the section.
endpointSection.dataset.path = "endpoint";

const summaryBox = h("div", { class: "error-summary", role: "alert", tabindex: -1, hidden: true });
const submit = h("button", { type: "submit", class: "button primary" }, "Submit for review");
const submitStatus = new Status();

const form = h(
  "form",
  { class: "intake", novalidate: true, "aria-labelledby": "intake-title" },
  summaryBox,
  section(
    "About the agent",
    "Fields marked * are required.",
    field("Name", name, "The display name, up to 120 characters.", true),
    field("Summary", summary, "One line, up to 280 characters.", true),
    field("Description", description, "Optional. Markdown, up to 10 000 characters."),
    field("Home page", homepageUrl, "Optional. An https: address people can visit to learn about the agent."),
    h(
      "div",
      { class: "grid-2" },
      field("Agent type", agentType, undefined, true),
      field(
        "Visibility",
        visibility,
        "Public agents are listed once approved; unlisted ones only by their address; private ones only to you and reviewers.",
      ),
    ),
    field("Provider code", code, codeHint),
    field("Labels", labels, "Optional. Up to 20, comma-separated; a-z, 0-9, . _ - (stored lower-case)."),
  ),
  section(
    "Source and release",
    "Optional. Where the code is, for anyone who wants to inspect it, and the release this profile describes.",
    h(
      "div",
      { class: "grid-2" },
      field("Repository", repositoryUrl, "An https: address of the source."),
      field("Hosted at", repositorySource, "The hosting service: github, gitlab, …"),
    ),
    h(
      "div",
      { class: "grid-2" },
      field("Release", releaseVersion, "One release, such as 1.4.2; not a range."),
      field("MCP server name", serverName, "An MCP server's reverse-DNS name, unique in the registry."),
    ),
  ),
  section("Contact", "Shown only to you and to reviewers.", field("Contact email", contactEmail, undefined, true)),
  endpointSection,
  listOf("packages").element,
  listOf("capabilities").element,
  listOf("models").element,
  listOf("tools").element,
  section(
    "Usage policy",
    "Optional. If you state one, say how much human oversight the agent has.",
    h(
      "div",
      { class: "grid-2" },
      field("Human oversight", oversight),
      field("Data retention (days)", retention, "0 for none kept."),
    ),
    field("Allowed use cases", allowed, "One per line."),
    field("Prohibited use cases", prohibited, "One per line."),
    h("div", { class: "grid-2" }, field("Terms URL", termsUrl), field("Privacy policy URL", privacyUrl)),
  ),
  listOf("roles").element,
  h("div", { class: "form-actions" }, submit, submitStatus.element),
);

replace(
  main,
  h(
    "div",
    { class: "page-head" },
    h("h1", { id: "intake-title" }, "Submit an agent"),
    h(
      "p",
      { class: "lede" },
      "Describe your agent for review. Once a reviewer approves it, it appears in the ",
      h("a", { href: "/" }, "directory"),
      ".",
    ),
  ),
  form,
  live.element,
);
// Focus comes before any typing or sending, by keyboard, pointer or a label's click.
form.addEventListener("focusin", () => void rules(), { once: true });

// ---------------------------------------------------------------- the body

function dropUndefined(value: Record<string, unknown>): Record<string, unknown> {
  return Object.fromEntries(Object.entries(value).filter(([, v]) => v !== undefined));
}
const optional = (control: Control): string | undefined => control.value.trim() || undefined;
const lines = (control: HTMLTextAreaElement): string[] | undefined => {
  const list = splitList(control.value, /\r?\n/);
  return list.length ? list : undefined;
};

/** The JSON body of POST /api/v1/providers, as the form stands: empty optional fields left out. */
function readBody(): Record<string, unknown> {
  const labelList = splitList(labels.value);
  const endpoint = dropUndefined({
    url: optional(endpointUrl),
    protocol: optional(protocol),
    authScheme: optional(authScheme),
    healthUrl: optional(healthUrl),
  });
  const policy = dropUndefined({
    humanOversight: optional(oversight),
    dataRetentionDays: numberValue(retention),
    allowedUseCases: lines(allowed),
    prohibitedUseCases: lines(prohibited),
    termsUrl: optional(termsUrl),
    privacyUrl: optional(privacyUrl),
  });
  return dropUndefined({
    providerCode: optional(code),
    name: name.value.trim(),
    summary: summary.value.trim(),
    description: description.value.trim() ? description.value : undefined,
    homepageUrl: optional(homepageUrl),
    serverName: optional(serverName),
    releaseVersion: optional(releaseVersion),
    repository:
      optional(repositoryUrl) || optional(repositorySource)
        ? { url: repositoryUrl.value.trim(), source: repositorySource.value.trim() }
        : undefined,
    labels: labelList.length ? labelList : undefined,
    agentType: optional(agentType),
    visibility: optional(visibility),
    contactEmail: contactEmail.value.trim(),
    capabilities: listOf("capabilities").read(),
    models: listOf("models").read(),
    tools: listOf("tools").read(),
    endpoint: Object.keys(endpoint).length ? endpoint : undefined,
    packages: listOf("packages").read(),
    policy: Object.keys(policy).length ? policy : undefined,
    roles: listOf("roles").read(),
  });
}

// ---------------------------------------------------------------- errors beside fields

/** The validator's messages in plain words. */
function friendly(message: string): string {
  if (/expected \w+, received undefined/.test(message)) return "is required";
  if (/^Invalid option/.test(message)) return "choose one of the options";
  if (/expected int/.test(message)) return "must be a whole number";
  if (/expected number, received NaN/.test(message)) return "must be a number";
  const small = /^Too small: expected number to be >(=?)(\S+)/.exec(message);
  if (small) return small[1] ? `must be at least ${small[2]}` : `must be more than ${small[2]}`;
  const big = /^Too big: expected number to be <(=?)(\S+)/.exec(message);
  if (big) return big[1] ? `must be at most ${big[2]}` : `must be less than ${big[2]}`;
  return message;
}

// The form's own checks name dotted paths, the server JSON Pointers (`/endpoint/url`). The summary's
// title is an h2 like the sections' own headings.
const errors = fieldErrors(form, summaryBox, { heading: "h2", words: friendly });

// ---------------------------------------------------------------- submit

let sending = false;
form.addEventListener("submit", async (event) => {
  event.preventDefault();
  if (sending) return;
  sending = true;
  try {
    await send();
  } finally {
    sending = false;
  }
});

async function send(): Promise<void> {
  const body = readBody();
  const checked = (await rules())?.validateIntake(body) ?? { ok: true as const };
  if (!checked.ok) {
    const n = checked.errors.length;
    errors.show(checked.errors, `Please correct ${n === 1 ? "this problem" : `these ${n} problems`}`);
    return;
  }
  errors.clear();
  submit.disabled = true;
  submit.textContent = "Submitting…";
  form.setAttribute("aria-busy", "true");
  submitStatus.loading("Submitting your agent…", 0);
  try {
    const result = await api<IntakeResult>("POST", "/providers", { body });
    showResult(result);
  } catch (error) {
    submitStatus.clear();
    const refused = "The registry could not accept this intake";
    if (error instanceof ApiError && error.problem.errors?.length) {
      errors.show(error.problem.errors, refused);
    } else if (error instanceof ApiError && error.code === "CONFLICT" && /providerCode/.test(error.message)) {
      // The 409 names no path (errors[]); its detail does.
      errors.show([{ path: "providerCode", message: "is already taken; choose another" }], refused);
    } else {
      const { title, detail } = describeError(error);
      errors.show([{ path: "(body)", message: `${title}: ${detail}` }], "The intake was not sent");
    }
  } finally {
    submit.disabled = false;
    submit.textContent = "Submit for review";
    form.removeAttribute("aria-busy");
  }
}

// ---------------------------------------------------------------- success: the token, once

/** The access token, to copy now: the registry never shows it again. */
function tokenBox(accessToken: string): HTMLElement {
  const tokenField = h("input", {
    id: "access-token",
    class: "token",
    type: "text",
    readonly: true,
    value: accessToken,
    spellcheck: false,
    autocomplete: "off",
  });
  const copied = new Status("copy-status");
  const copy = h("button", { type: "button", class: "button primary" }, "Copy token");
  copy.addEventListener("click", async () => {
    try {
      await navigator.clipboard.writeText(accessToken);
      copied.message("Copied to the clipboard.");
    } catch {
      tokenField.select();
      copied.message(
        document.execCommand("copy") ? "Copied to the clipboard." : "Select the token and copy it (Ctrl+C).",
      );
    }
  });
  return h(
    "div",
    { class: "token-box" },
    h("label", { for: "access-token" }, "Access token"),
    h("div", { class: "token-row" }, tokenField, copy),
    copied.element,
    h(
      "p",
      { class: "notice warning", role: "note" },
      h("strong", null, "Copy this token now: it will not be shown again. "),
      "The registry keeps only a fingerprint of it and cannot recover it. Send it as ",
      h("code", null, "Authorization: Bearer <token>"),
      " to update your profile; keep it secret like a password.",
    ),
  );
}

function showResult(result: IntakeResult): void {
  setTitle("Agent submitted");
  const profile = `/providers/${encodeURIComponent(result.providerCode)}`;
  const done = h(
    "section",
    { class: "result", "aria-labelledby": "result-title", tabindex: -1 },
    h("h1", { id: "result-title" }, "Submitted for review"),
    h("p", { class: "lede" }, "Your agent is in the review queue. A reviewer will approve it, or ask for changes."),
    h(
      "dl",
      { class: "facts" },
      h("dt", null, "Provider code"),
      h("dd", null, h("a", { href: profile, id: "result-code" }, result.providerCode)),
      h("dt", null, "Review code"),
      h("dd", null, h("strong", { id: "result-review" }, result.reviewCode)),
    ),
    // The token is null only when the answer replays an earlier intake (an Idempotency-Key, which
    // this form does not send); the answer's notice then says why.
    result.accessToken
      ? tokenBox(result.accessToken)
      : h(
          "p",
          { class: "notice warning", role: "note" },
          result.notice ?? "This answer carries no access token: it was shown when the agent was first submitted.",
        ),
    h(
      "p",
      null,
      h("a", { class: "button secondary", href: profile }, "View the profile"),
      " ",
      h("a", { class: "button secondary", href: "/intake" }, "Submit another agent"),
    ),
  );
  replace(main, done, live.element);
  done.focus();
  window.scrollTo(0, 0);
}
