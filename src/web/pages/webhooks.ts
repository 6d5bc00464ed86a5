/**
 * `/webhooks`: webhook subscriptions for an agent's owner (its access token) or a reviewer (signed
 * in through the registry's identity provider, or a reviewer JWT; a reviewer signed in on /reviews
 * in this tab is signed in here too). Tokens are pasted (kept in sessionStorage: this tab only). List the subscriptions, subscribe a URL
 * (the signing secret is shown this once), delete one, and see a subscription's deliveries with a
 * redelivery per message and a test ping.
 */
import {
  ApiError,
  api,
  isAbort,
  isAgentToken,
  jwtClaims,
  query,
  reviewerToken,
  setReviewerToken,
  setWebhooksToken,
  webhooksToken,
} from "../client/api.ts";
import { type Child, h, mainElement, replace, uid } from "../client/dom.ts";
import { EVENT_KINDS, kindWords } from "../client/events.ts";
import { mountAccount, session, sessionHas, signOutForm } from "../client/session.ts";
import type { CreatedWebhook, Delivery, DeliveryPage, Webhook, WebhookPage } from "../client/types.ts";
import { badge, errorBox, field, Status, time, tokenForm } from "../client/ui.ts";

const main = mainElement();
const announcer = new Status("sr-status");
const PAGE_SIZE = 20;
const SESSION_ENDED = "Your session has ended (the token expired, was revoked or was refused). Sign in again.";

/** The reviewer signed in through the identity provider, when the page runs on the session (no token). */
let sessionSubject = "";

async function start(): Promise<void> {
  void mountAccount();
  const token = webhooksToken() ?? reviewerToken();
  if (token) return dashboard(token);
  const s = await session();
  if (s.signedIn && sessionHas(s, "reviewer")) {
    sessionSubject = s.subject ?? "";
    return dashboard(null);
  }
  signIn();
}

function head(...aside: Child[]): HTMLElement {
  return h("div", { class: aside.length ? "page-head with-aside" : "page-head" }, h("h1", null, "Webhooks"), ...aside);
}

// ---------------------------------------------------------------- sign in

function signIn(notice?: string): void {
  const form = tokenForm({
    id: "webhooks-token",
    label: "Access token",
    hint: h(
      "span",
      null,
      "An agent's access token (",
      h("code", null, "agr_…"),
      ", shown when the agent was submitted) to manage that agent's webhooks, or a reviewer JWT to manage any. It is kept for this browser tab only and forgotten when the tab closes.",
    ),
    empty: "Paste your token first.",
    probe: (token) => api<WebhookPage>("GET", `/webhooks${query({ limit: 1 })}`, { token }),
    refused: {
      unauthenticated: "This token was refused: it is malformed, expired, revoked, or not one of this registry's.",
      forbidden: "This token is valid but may not manage webhooks (a JWT needs the reviewer role).",
    },
    signedIn: (token) => {
      setWebhooksToken(token);
      dashboard(token);
    },
  });
  replace(
    main,
    head(),
    h(
      "p",
      { class: "lede" },
      "Have the registry push the changes of your agent (or, for reviewers, of any agent) to a URL of yours, signed as the Standard Webhooks specification says.",
    ),
    notice ? h("p", { class: "notice warning", role: "alert" }, notice) : null,
    form,
    announcer.element,
  );
}

function signOut(token: string | null, notice?: string): void {
  setWebhooksToken(null);
  // A reviewer's session of /reviews that this page used ends with it.
  if (reviewerToken() === token) setReviewerToken(null);
  signIn(notice);
  announcer.message(notice ? "" : "Signed out.");
}

// ---------------------------------------------------------------- the dashboard

/** Who the page acts for: an agent's token, a reviewer's JWT, or (null) the reviewer's session. */
function who(token: string | null): Child {
  if (token === null) return ["Signed in as reviewer ", h("strong", { id: "webhooks-who" }, sessionSubject)];
  if (isAgentToken(token)) {
    return ["Signed in with an agent's token ", h("code", { id: "webhooks-who" }, `${token.slice(0, 10)}…`)];
  }
  const claims = jwtClaims(token);
  const sub = typeof claims?.sub === "string" ? claims.sub : "";
  const expires = typeof claims?.exp === "number" ? new Date(claims.exp * 1000).toISOString() : null;
  return [
    "Signed in as reviewer ",
    h("strong", { id: "webhooks-who" }, sub || "(unnamed)"),
    expires ? [" until ", time(expires)] : null,
  ];
}

function dashboard(token: string | null): void {
  const reviewer = token === null || !isAgentToken(token);
  const ended = () => signOut(token, SESSION_ENDED);
  /** Runs a request; a refused token (401) ends the session, and the caller then says nothing more. */
  const guarded = async <T>(request: Promise<T>): Promise<T> => {
    try {
      return await request;
    } catch (error) {
      if (error instanceof ApiError && error.status === 401) ended();
      throw error;
    }
  };

  const list = h("div", { class: "queue webhooks", id: "webhook-list" });
  const listStatus = new Status();
  const more = h("button", { type: "button", class: "button secondary", hidden: true }, "Load more");
  const secretSlot = h("div", { class: "secret-slot" });

  replace(
    main,
    head(
      h(
        "p",
        { class: "session" },
        who(token),
        " ",
        token === null
          ? signOutForm("button link")
          : h("button", { type: "button", class: "button link", onclick: () => signOut(token) }, "Sign out"),
      ),
    ),
    h(
      "p",
      { class: "lede" },
      reviewer
        ? "Subscribe a URL to the events of one agent or of every agent, and see what was delivered."
        : "Subscribe a URL to your agent's events, and see what was delivered.",
    ),
    createForm(),
    secretSlot,
    h(
      "section",
      { class: "webhooks-section", "aria-labelledby": "subscriptions-title" },
      h("h2", { id: "subscriptions-title", tabindex: -1 }, reviewer ? "Subscriptions" : "Your subscriptions"),
      listStatus.element,
      list,
      more,
    ),
    announcer.element,
  );

  // ---------------------------------------------------------------- subscribe

  function createForm(): HTMLElement {
    const url = h("input", {
      type: "url",
      name: "url",
      required: true,
      autocomplete: "off",
      spellcheck: false,
      placeholder: "https://hooks.example.com/registry",
      maxlength: 2000,
    });
    const provider = h("input", { type: "text", name: "providerCode", autocomplete: "off", spellcheck: false });
    const kinds = EVENT_KINDS.map((kind) => {
      const box = h("input", { type: "checkbox", name: "kinds", value: kind, id: uid("kind") });
      return h("div", { class: "check" }, box, h("label", { for: box.id }, kindWords(kind)));
    });
    const kindsHint = uid("kinds-hint");
    const feedback = h("div", { class: "item-feedback" });
    const submit = h("button", { type: "submit", class: "button primary" }, "Subscribe");
    const form = h(
      "form",
      { class: "form-section webhook-form", novalidate: true, "aria-labelledby": "new-title" },
      h("h2", { id: "new-title" }, "New subscription"),
      field(
        "URL",
        url,
        "An https: address on a public host. Deliveries are POSTed there with webhook-id, webhook-timestamp and webhook-signature headers.",
        true,
      ),
      reviewer ? field("Agent code", provider, "Only this agent's events. Empty: every agent's.") : null,
      h(
        "fieldset",
        { class: "checks", "aria-describedby": kindsHint },
        h("legend", null, "Event kinds"),
        kinds,
        h("p", { class: "hint", id: kindsHint }, "None checked: every kind."),
      ),
      feedback,
      h("div", { class: "form-actions" }, submit),
    );
    url.addEventListener("input", () => url.removeAttribute("aria-invalid"));
    form.addEventListener("submit", async (event) => {
      event.preventDefault();
      feedback.replaceChildren();
      const target = url.value.trim();
      if (!target) {
        feedback.replaceChildren(h("p", { class: "form-error", role: "alert" }, "Give the URL to deliver to."));
        url.setAttribute("aria-invalid", "true");
        url.focus();
        return;
      }
      const checked = [...form.querySelectorAll<HTMLInputElement>('input[name="kinds"]:checked')].map((b) => b.value);
      const body: Record<string, unknown> = { url: target };
      if (checked.length) body.kinds = checked;
      if (reviewer && provider.value.trim()) body.providerCode = provider.value.trim();
      submit.disabled = true;
      form.setAttribute("aria-busy", "true");
      submit.textContent = "Subscribing…";
      try {
        const created = await guarded(api<CreatedWebhook>("POST", "/webhooks", { token, body }));
        form.reset();
        showSecret(created);
        await load(false);
        // Oldest first: on a long list the new one is on a later page, so it is shown at the end now.
        if (!cardOf(created.webhook.webhookId)) list.append(item(created.webhook));
        showCount();
      } catch (error) {
        if (error instanceof ApiError && error.status === 401) return;
        const paths = error instanceof ApiError ? (error.problem.errors ?? []).map((e) => e.path) : [];
        if (paths.some((p) => p.replace(/^\//, "").startsWith("url"))) url.setAttribute("aria-invalid", "true");
        feedback.replaceChildren(errorBox(error, undefined, "Could not subscribe."));
      } finally {
        submit.disabled = false;
        form.removeAttribute("aria-busy");
        submit.textContent = "Subscribe";
      }
    });
    return form;
  }

  /** The signing secret, this once: the registry keeps it to sign with but never answers it again. */
  function showSecret(created: CreatedWebhook): void {
    const secretField = h("input", {
      id: "webhook-secret",
      class: "token",
      type: "text",
      readonly: true,
      value: created.secret,
      spellcheck: false,
      autocomplete: "off",
    });
    const copied = new Status("copy-status");
    const copy = h("button", { type: "button", class: "button primary" }, "Copy secret");
    copy.addEventListener("click", async () => {
      try {
        await navigator.clipboard.writeText(created.secret);
        copied.message("Copied to the clipboard.");
      } catch {
        secretField.select();
        copied.message(
          document.execCommand("copy") ? "Copied to the clipboard." : "Select the secret and copy it (Ctrl+C).",
        );
      }
    });
    const box = h(
      "section",
      { class: "result secret-box", "aria-labelledby": "secret-title", tabindex: -1 },
      h("h2", { id: "secret-title" }, "Subscribed: copy the signing secret"),
      h("p", null, "Deliveries to ", h("code", null, created.webhook.url), " are signed with this secret."),
      h(
        "div",
        { class: "token-box" },
        h("label", { for: "webhook-secret" }, "Signing secret"),
        h("div", { class: "token-row" }, secretField, copy),
        copied.element,
      ),
      h(
        "p",
        { class: "notice warning", role: "note" },
        h("strong", null, "Copy this secret now: it will not be shown again. "),
        "Keep it where your receiver verifies signatures (the ",
        h("code", null, "standardwebhooks"),
        " package takes it as it is). If it is lost, delete the subscription and subscribe again.",
      ),
      h(
        "button",
        { type: "button", class: "button secondary", onclick: () => secretSlot.replaceChildren() },
        "I have saved it",
      ),
    );
    replace(secretSlot, box);
    box.focus();
    announcer.message("Subscribed. Copy the signing secret now: it will not be shown again.");
  }

  // ---------------------------------------------------------------- the list

  let cursor: string | null = null;
  let inflight: AbortController | undefined;

  async function load(append: boolean): Promise<void> {
    inflight?.abort();
    const controller = new AbortController();
    inflight = controller;
    list.setAttribute("aria-busy", "true");
    listStatus.loading("Loading subscriptions…", 0);
    more.disabled = true;
    try {
      const page = await guarded(
        api<WebhookPage>("GET", `/webhooks${query({ limit: PAGE_SIZE, cursor: append ? cursor : null })}`, {
          token,
          signal: controller.signal,
        }),
      );
      if (controller.signal.aborted) return;
      cursor = page.nextCursor ?? null;
      if (!append) list.replaceChildren();
      // A card already shown (one just created) is not shown twice.
      list.append(...page.items.filter((w) => !cardOf(w.webhookId)).map(item));
      more.hidden = !cursor;
      showCount();
    } catch (error) {
      if (isAbort(error) || (error instanceof ApiError && error.status === 401)) return;
      listStatus.clear();
      replace(
        list,
        errorBox(error, () => void load(false), "Could not load the subscriptions."),
      );
      more.hidden = true;
    } finally {
      if (inflight === controller) list.removeAttribute("aria-busy");
      more.disabled = false;
    }
  }

  const cardOf = (webhookId: string) =>
    [...list.querySelectorAll<HTMLElement>("article.webhook")].find((a) => a.dataset.webhook === webhookId);

  function showCount(): void {
    const shown = list.querySelectorAll("article.webhook").length;
    if (shown === 0) {
      replace(
        list,
        h(
          "div",
          { class: "empty" },
          h("h3", null, "No subscriptions yet"),
          h("p", null, "Subscribe a URL above to have events pushed to it."),
        ),
      );
    } else {
      list.querySelector(".empty")?.remove();
    }
    listStatus.message(`${shown} subscription${shown === 1 ? "" : "s"}${cursor ? "; more to load" : ""}.`);
  }

  // ---------------------------------------------------------------- one subscription

  function item(w: Webhook): HTMLElement {
    const path = `/webhooks/${encodeURIComponent(w.webhookId)}`;
    const feedback = h("div", { class: "item-feedback" });
    const panel = h("div", { class: "deliveries-panel", id: uid("deliveries"), hidden: true });
    const deliveries = deliveriesView(w, path, feedback);
    panel.append(deliveries.element);

    const toggle = h(
      "button",
      { type: "button", class: "button secondary", "aria-expanded": "false", "aria-controls": panel.id },
      "Show deliveries",
    );
    const setOpen = (open: boolean) => {
      toggle.setAttribute("aria-expanded", String(open));
      toggle.textContent = open ? "Hide deliveries" : "Show deliveries";
      panel.hidden = !open;
      if (open) void deliveries.load();
    };
    toggle.addEventListener("click", () => setOpen(toggle.getAttribute("aria-expanded") !== "true"));

    const ping = h("button", { type: "button", class: "button secondary", disabled: !w.enabled }, "Send test ping");
    ping.addEventListener("click", async () => {
      feedback.replaceChildren();
      ping.disabled = true;
      ping.setAttribute("aria-busy", "true");
      try {
        await guarded(api<Delivery>("POST", `${path}/test`, { token }));
        if (toggle.getAttribute("aria-expanded") === "true") await deliveries.load();
        else setOpen(true);
        announcer.message(`Test ping queued for ${w.url}: it is sent in a moment; its row shows how it went.`);
      } catch (error) {
        if (!(error instanceof ApiError && error.status === 401)) {
          feedback.replaceChildren(errorBox(error, undefined, "Could not send a test ping."));
        }
      } finally {
        ping.disabled = !w.enabled;
        ping.removeAttribute("aria-busy");
      }
    });

    const remove = h("button", { type: "button", class: "button bad" }, "Delete");
    const confirmYes = h("button", { type: "button", class: "button bad" }, "Delete subscription");
    const confirmNo = h("button", { type: "button", class: "button secondary" }, "Cancel");
    const confirmBox = h(
      "div",
      { class: "notice warning confirm", role: "group", "aria-label": "Confirm deletion", hidden: true },
      h(
        "p",
        null,
        "Delete this subscription and its delivery log? Nothing more is sent to ",
        h("code", null, w.url),
        ".",
      ),
      h("div", { class: "button-row" }, confirmYes, confirmNo),
    );
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
        await guarded(api<Webhook>("DELETE", path, { token }));
        article.remove();
        showCount();
        document.getElementById("subscriptions-title")?.focus();
        announcer.message(`Subscription to ${w.url} deleted.`);
      } catch (error) {
        if (error instanceof ApiError && error.status === 401) return;
        confirmYes.disabled = false;
        confirmYes.textContent = "Delete subscription";
        feedback.replaceChildren(errorBox(error, undefined, "Could not delete the subscription."));
      }
    });

    const article = h(
      "article",
      { class: "webhook", "data-webhook": w.webhookId, "aria-label": `Webhook to ${w.url}` },
      h("h3", { class: "webhook-url" }, w.url),
      h(
        "p",
        { class: "badges" },
        w.enabled
          ? badge("Enabled", "good", "Deliveries are made")
          : badge("Disabled", "bad", "No more deliveries are made"),
        badge(w.webhookId, "neutral", "Webhook id"),
      ),
      w.enabled
        ? null
        : h(
            "p",
            { class: "notice error", role: "note" },
            h("strong", null, "Disabled "),
            time(w.disabledAt),
            w.disabledReason ? `: ${w.disabledReason}` : ".",
            " Delete it and subscribe again to resume.",
          ),
      h(
        "dl",
        { class: "facts" },
        h("dt", null, "Agent"),
        h(
          "dd",
          null,
          w.providerCode
            ? h("a", { href: `/providers/${encodeURIComponent(w.providerCode)}` }, w.providerCode)
            : "Every agent",
        ),
        h("dt", null, "Event kinds"),
        h(
          "dd",
          null,
          w.kinds?.length
            ? h(
                "ul",
                { class: "inline-list" },
                w.kinds.map((k) => h("li", null, kindWords(k))),
              )
            : "Every kind",
        ),
        h("dt", null, "Created"),
        h("dd", null, time(w.createdAt), " by ", w.createdBy),
      ),
      h("div", { class: "button-row" }, toggle, ping, remove),
      confirmBox,
      feedback,
      panel,
    );
    return article;
  }

  // ---------------------------------------------------------------- a subscription's deliveries

  function deliveriesView(w: Webhook, path: string, feedback: HTMLElement) {
    const status = new Status();
    const body = h("div", { class: "deliveries-body" });
    const more = h(
      "button",
      { type: "button", class: "button secondary small", hidden: true },
      "Load older deliveries",
    );
    const refresh = h("button", { type: "button", class: "button secondary small" }, "Refresh");
    let next: string | null = null;
    let rows: HTMLTableSectionElement | null = null;

    function row(d: Delivery): HTMLTableRowElement {
      const what = d.seq === null ? `test ping ${d.deliveryId}` : `event ${d.seq}`;
      const redeliver = h(
        "button",
        { type: "button", class: "button secondary small", disabled: !w.enabled },
        "Redeliver",
        h("span", { class: "visually-hidden" }, ` ${what}`),
      );
      redeliver.addEventListener("click", async () => {
        feedback.replaceChildren();
        redeliver.disabled = true;
        try {
          await guarded(
            api<Delivery>("POST", `${path}/deliveries/${encodeURIComponent(d.deliveryId)}/retry`, { token }),
          );
          await load();
          announcer.message(`Redelivery of ${what} queued.`);
        } catch (error) {
          if (error instanceof ApiError && error.status === 401) return;
          redeliver.disabled = false;
          feedback.replaceChildren(errorBox(error, undefined, `Could not redeliver ${what}.`));
        }
      });
      const tone = d.status === "SUCCEEDED" ? "good" : d.status === "FAILED" ? "bad" : "info";
      const error = [d.lastStatusCode !== null ? `HTTP ${d.lastStatusCode}` : null, d.lastError]
        .filter(Boolean)
        .join(": ");
      return h(
        "tr",
        { "data-delivery": d.deliveryId, "data-status": d.status },
        h("td", null, d.seq === null ? "Test ping" : `#${d.seq}`),
        h("td", null, d.kind === "PING" ? "Ping" : kindWords(d.kind)),
        h("td", null, badge(d.status.charAt(0) + d.status.slice(1).toLowerCase(), tone, "Delivery status")),
        h("td", null, String(d.attempts)),
        h("td", null, d.latencyMs === null ? "—" : `${d.latencyMs} ms`),
        h("td", { class: "delivery-error" }, error || "—"),
        h(
          "td",
          null,
          d.status === "PENDING" ? time(d.nextAttemptAt) : d.deliveredAt ? ["Delivered ", time(d.deliveredAt)] : "—",
        ),
        h("td", null, redeliver),
      );
    }

    function table(): HTMLElement {
      rows = h("tbody");
      const caption = `Deliveries to ${w.url}`;
      return h(
        "div",
        { class: "table-wrap", tabindex: 0, role: "region", "aria-label": `${caption} (table)` },
        h(
          "table",
          { class: "deliveries" },
          h("caption", { class: "visually-hidden" }, caption),
          h(
            "thead",
            null,
            h(
              "tr",
              null,
              ["Event", "Kind", "Status", "Attempts", "Latency", "Last error", "Next attempt", "Action"].map((c) =>
                h("th", { scope: "col" }, c),
              ),
            ),
          ),
          rows,
        ),
      );
    }

    async function load(append = false): Promise<void> {
      status.loading("Loading deliveries…", 0);
      more.disabled = true;
      try {
        const page = await guarded(
          api<DeliveryPage>("GET", `${path}/deliveries${query({ limit: PAGE_SIZE, cursor: append ? next : null })}`, {
            token,
          }),
        );
        next = page.nextCursor ?? null;
        if (!append || !rows) {
          replace(
            body,
            page.items.length
              ? table()
              : h(
                  "p",
                  { class: "muted" },
                  "Nothing delivered yet: events are delivered as they happen, or send a test ping.",
                ),
          );
        }
        rows?.append(...page.items.map(row));
        more.hidden = !next;
        const shown = rows?.children.length ?? 0;
        status.message(
          `${shown} deliver${shown === 1 ? "y" : "ies"}, newest first${next ? "; older ones to load" : ""}.`,
        );
      } catch (error) {
        if (error instanceof ApiError && error.status === 401) return;
        status.message(errorBox(error, () => void load(), "Could not load the deliveries."));
      } finally {
        more.disabled = false;
      }
    }

    more.addEventListener("click", () => void load(true));
    refresh.addEventListener("click", () => void load());
    const element = h(
      "div",
      { class: "deliveries-view" },
      h("div", { class: "button-row" }, h("h4", null, "Deliveries"), refresh),
      status.element,
      body,
      more,
    );
    return { element, load };
  }

  more.addEventListener("click", () => void load(true));
  void load(false);
}

void start();
