/**
 * `/admin/api-keys`: admins make read keys for clients that cannot sign in (a name, an optional
 * expiry; the key shown once, with a copy button), see every key with when it was last used, and
 * revoke one. Signed in through the registry's identity provider, or, without one, with a pasted
 * reviewer token that carries the admin role (the /reviews page's, this tab only).
 */
import { ApiError, api, query, reviewerToken, setReviewerToken } from "../client/api.ts";
import { type Child, h, mainElement, replace, uid } from "../client/dom.ts";
import { mountAccount, session, sessionHas, signInLink } from "../client/session.ts";
import type { ApiKeyPage, CreatedApiKey } from "../client/types.ts";
import { badge, errorBox, field, Status, time, timeAgo, tokenForm } from "../client/ui.ts";

type ApiKey = ApiKeyPage["items"][number];

const main = mainElement();
const announcer = new Status("sr-status");
const PAGE_SIZE = 100;

function head(...aside: Child[]): HTMLElement {
  return h("div", { class: aside.length ? "page-head with-aside" : "page-head" }, h("h1", null, "API keys"), ...aside);
}

async function start(): Promise<void> {
  void mountAccount();
  const token = reviewerToken();
  if (token) return keys(token);
  const s = await session();
  if (s.signedIn && sessionHas(s, "admin")) return keys(null);
  signIn(s.signedIn ? "Your account does not carry the admin role: API keys are for admins." : undefined, s.signInUrl);
}

function signIn(notice?: string, signInUrl?: string | null): void {
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
    probe: (token) => api<ApiKeyPage>("GET", `/api-keys${query({ limit: 1 })}`, { token }),
    refused: {
      unauthenticated: "This token was refused: it is malformed, expired, or not signed for this registry.",
      forbidden: "This token is valid but does not carry the admin role.",
    },
    signedIn: (token) => {
      setReviewerToken(token);
      keys(token);
    },
  });
  replace(
    main,
    head(),
    h("p", { class: "lede" }, "Read keys let clients that cannot sign in (an editor, a CLI) read this registry."),
    notice ? h("p", { class: "notice warning", role: "alert" }, notice) : null,
    signInUrl ? h("p", null, signInLink("Sign in", "button primary")) : null,
    form,
    announcer.element,
  );
}

/** The key, to copy now: the registry never shows it again. */
function secretBox(created: CreatedApiKey): HTMLElement {
  const id = uid("key-secret");
  const secret = h("input", { id, class: "token", type: "text", readonly: true, value: created.secret });
  const copied = new Status("key-copy-status");
  const copy = h("button", { type: "button", class: "button primary" }, "Copy key");
  copy.addEventListener("click", async () => {
    try {
      await navigator.clipboard.writeText(created.secret);
      copied.message("Copied to the clipboard.");
    } catch {
      secret.select();
      copied.message("Select the key and copy it (Ctrl+C).");
    }
  });
  return h(
    "div",
    { class: "token-box", id: "new-key" },
    h("label", { for: id }, `Key "${created.apiKey.name}"`),
    h("div", { class: "token-row" }, secret, copy),
    copied.element,
    h(
      "p",
      { class: "notice warning", role: "note" },
      h("strong", null, "Copy this key now: it will not be shown again. "),
      "Clients send it as ",
      h("code", null, "Authorization: Bearer <key>"),
      "; it reads, and does nothing else.",
    ),
  );
}

function keys(token: string | null): void {
  const list = h("ul", { class: "key-list", id: "key-list" });
  const listStatus = new Status();
  const secretSlot = h("div", { class: "secret-slot" });
  const ended = (error: unknown) => {
    if (error instanceof ApiError && (error.status === 401 || error.status === 403)) {
      if (token) setReviewerToken(null);
      signIn("Your session has ended or does not carry the admin role. Sign in again.");
      return true;
    }
    return false;
  };

  const name = h("input", { type: "text", name: "name", required: true, maxlength: 80, autocomplete: "off" });
  const expires = h("input", { type: "date", name: "expiresAt" });
  const error = h("div", { class: "form-error", role: "alert" });
  const make = h("button", { type: "submit", class: "button primary" }, "Make a key");
  const form = h(
    "form",
    { class: "form-section webhook-form", id: "new-key-form", novalidate: true },
    h("h2", null, "A new key"),
    field("Name", name, "Who or what uses it, e.g. “VS Code, platform team”"),
    field("Expires", expires, "Optional: the key stops working at the start of that day (UTC)"),
    error,
    make,
  );
  form.addEventListener("submit", async (event) => {
    event.preventDefault();
    error.replaceChildren();
    if (!name.value.trim()) {
      error.textContent = "Give the key a name.";
      name.focus();
      return;
    }
    make.disabled = true;
    try {
      const created = await api<CreatedApiKey>("POST", "/api-keys", {
        token,
        body: { name: name.value.trim(), ...(expires.value ? { expiresAt: `${expires.value}T00:00:00Z` } : {}) },
      });
      replace(secretSlot, secretBox(created));
      form.reset();
      announcer.message(`Key ${created.apiKey.name} made: copy it now.`);
      await load();
    } catch (e) {
      if (!ended(e)) error.textContent = e instanceof ApiError ? e.message : "The key could not be made.";
    } finally {
      make.disabled = false;
    }
  });

  const row = (key: ApiKey): HTMLElement => {
    const revoke = h("button", { type: "button", class: "button secondary" }, "Revoke");
    revoke.addEventListener("click", async () => {
      if (!confirm(`Revoke the key "${key.name}"? Clients using it are refused from their next request.`)) return;
      revoke.disabled = true;
      try {
        await api("DELETE", `/api-keys/${encodeURIComponent(key.keyId)}`, { token });
        announcer.message(`Key ${key.name} revoked.`);
        await load();
      } catch (e) {
        if (!ended(e)) replace(listStatus.element, errorBox(e));
        revoke.disabled = false;
      }
    });
    return h(
      "li",
      { class: "api-key", "data-key": key.keyId },
      h(
        "div",
        { class: "badges" },
        h("strong", null, key.name),
        " ",
        key.active ? badge("Active", "good") : badge(key.revokedAt ? "Revoked" : "Expired", "bad"),
      ),
      h(
        "p",
        { class: "hint" },
        h("code", null, `${key.prefix}…`),
        " · made ",
        time(key.createdAt),
        ` by ${key.createdBy}`,
        " · last used ",
        key.lastUsedAt ? timeAgo(key.lastUsedAt) : "never",
        key.expiresAt ? [" · expires ", time(key.expiresAt)] : null,
      ),
      key.active ? revoke : null,
    );
  };

  async function load(): Promise<void> {
    try {
      const page = await api<ApiKeyPage>("GET", `/api-keys${query({ limit: PAGE_SIZE })}`, { token });
      // Newest first: the key just made is at the top.
      const items = [...page.items].reverse();
      replace(list, items.length ? items.map(row) : h("li", { class: "empty" }, "No keys yet."));
    } catch (e) {
      if (!ended(e))
        replace(
          list,
          errorBox(e, () => void load()),
        );
    }
  }

  replace(
    main,
    head(
      token
        ? h(
            "p",
            { class: "session" },
            "Signed in with a pasted token ",
            h(
              "button",
              {
                type: "button",
                class: "button link",
                onclick: () => {
                  setReviewerToken(null);
                  signIn();
                },
              },
              "Forget it",
            ),
          )
        : null,
    ),
    h("p", { class: "lede" }, "Read keys let clients that cannot sign in (an editor, a CLI) read this registry."),
    secretSlot,
    form,
    h("h2", null, "Keys"),
    listStatus.element,
    list,
    announcer.element,
  );
  void load();
}

void start();
