/**
 * The webhooks page (`/webhooks`) in a real browser against the real app on a real port: an owner
 * signs in with its agent's token, subscribes a URL, sees the signing secret once, pings and
 * deletes; a reviewer signed in on /reviews manages any agent's subscriptions. No delivery worker
 * runs in this server, so a ping stays a pending delivery: the page shows it as the API answers it.
 */
import { afterAll, beforeAll, describe, expect, jest, test } from "@jest/globals";
import type { Browser, Locator } from "playwright-core";
import { call, intake, reviewerToken } from "../helpers.ts";
import {
  DESKTOP,
  expectClean,
  launchBrowser,
  openContext,
  type Running,
  screenshot,
  startServer,
  unlabelledControls,
} from "./browser.helpers.ts";

jest.setTimeout(120_000);

const REVIEWER_TOKEN_KEY = "agent-registry.reviewer-token";
const WEBHOOKS_TOKEN_KEY = "agent-registry.webhooks-token";
const WAIT = { timeout: 15_000 };
const URL_A = "https://hooks.example.test/x";

let server: Running;
let browser: Browser;

beforeAll(async () => {
  [server, browser] = await Promise.all([startServer(), launchBrowser()]);
});

afterAll(async () => {
  await browser?.close();
  await server?.close();
});

/** A fresh, watched context (its own sessionStorage), with a reviewer signed in on /reviews if given. */
async function open(reviewer?: string) {
  const opened = await openContext(browser, server.url, DESKTOP);
  if (reviewer) {
    await opened.context.addInitScript(
      ({ key, token }) => {
        if (location.protocol === "http:" && !sessionStorage.getItem(`${key}.set`)) {
          sessionStorage.setItem(key, token);
          // Once per tab: signing out must stick across reloads.
          sessionStorage.setItem(`${key}.set`, "1");
        }
      },
      { key: REVIEWER_TOKEN_KEY, token: reviewer },
    );
  }
  return { ...opened, page: await opened.context.newPage() };
}

const text = async (locator: Locator) => ((await locator.textContent()) ?? "").replace(/\s+/g, " ").trim();

describe("the webhooks page", () => {
  test("an owner pastes its token, subscribes, sees the secret once, sends a test ping, redelivers and deletes", async () => {
    const p = await intake();
    const owner = await open();
    const page = owner.page;
    await page.goto("/webhooks");
    expect(await page.getByRole("link", { name: "Webhooks" }).getAttribute("aria-current")).toBe("page");

    // Signing in: a refused token is said, beside the field.
    const tokenInput = page.getByLabel("Access token");
    await tokenInput.fill("agr_not-a-token");
    await page.getByRole("button", { name: "Sign in" }).click();
    await page.getByRole("alert").filter({ hasText: "This token was refused" }).waitFor(WAIT);
    expect(await tokenInput.getAttribute("aria-invalid")).toBe("true");
    await tokenInput.fill(p.accessToken);
    await page.getByRole("button", { name: "Sign in" }).click();
    await page.getByText("Signed in with an agent's token").waitFor(WAIT);
    expect(await text(page.locator("#webhooks-who"))).toBe(`${p.accessToken.slice(0, 10)}…`);
    await page.getByText("No subscriptions yet").waitFor(WAIT);
    expect(await page.evaluate((key) => sessionStorage.getItem(key), WEBHOOKS_TOKEN_KEY)).toBe(p.accessToken);
    // An agent subscribes to its own agent's events: no agent field.
    expect(await page.getByLabel("Agent code").count()).toBe(0);
    expect(await unlabelledControls(page)).toEqual([]);

    // The server's refusal is shown with the field it names.
    const form = page.getByRole("form", { name: "New subscription" });
    await form.getByLabel("URL").fill("http://hooks.example.test/x");
    await form.getByRole("button", { name: "Subscribe" }).click();
    const refused = form.getByRole("alert").filter({ hasText: "Could not subscribe." });
    await refused.waitFor(WAIT);
    expect(await text(refused)).toContain("must be an https: URL");
    expect(await form.getByLabel("URL").getAttribute("aria-invalid")).toBe("true");

    // Subscribed: the secret, once, with a copy button and a warning.
    const creates: string[] = [];
    page.on("request", (r) => {
      if (r.method() === "POST" && new URL(r.url()).pathname === "/api/v1/webhooks") creates.push(r.postData() ?? "");
    });
    await form.getByLabel("URL").fill(URL_A);
    await form.getByLabel("Profile updated").check();
    await form.getByLabel("Review decided").check();
    await form.getByRole("button", { name: "Subscribe" }).click();
    const secret = page.getByRole("textbox", { name: "Signing secret" });
    await secret.waitFor(WAIT);
    const secretValue = await secret.inputValue();
    expect(secretValue).toMatch(/^whsec_/);
    expect(creates.map((b) => JSON.parse(b))).toEqual([{ url: URL_A, kinds: ["PROVIDER_UPDATED", "REVIEW_DECIDED"] }]);
    const box = page.getByRole("region", { name: "Subscribed: copy the signing secret" });
    expect(await text(box)).toContain("Copy this secret now: it will not be shown again.");
    await box.getByRole("button", { name: "Copy secret" }).waitFor(WAIT);
    expect(await page.evaluate(() => document.activeElement?.getAttribute("aria-labelledby"))).toBe("secret-title");
    await page.locator(".sr-status").getByText("Subscribed. Copy the signing secret now").waitFor(WAIT);
    expect(await form.getByLabel("URL").inputValue()).toBe("");

    // Listed.
    const card = page.locator("article.webhook");
    await card.waitFor(WAIT);
    const listed = await call("GET", "/api/v1/webhooks", { token: p.accessToken });
    const [webhook] = listed.body.items;
    expect(listed.body.items).toHaveLength(1);
    expect(await card.getAttribute("data-webhook")).toBe(webhook.webhookId);
    expect(await text(card.locator("h3"))).toBe(URL_A);
    expect(await text(card.locator(".badges"))).toContain("Enabled");
    expect(await text(card.locator(".facts"))).toContain(`Agent${p.providerCode}`);
    expect(await text(card.locator(".facts"))).toContain("Profile updated");
    expect(await text(card.locator(".facts"))).toContain("Review decided");
    expect(await text(card.locator(".facts"))).toContain(`agent:${p.providerCode}`);
    await page.getByText("1 subscription.").waitFor(WAIT);
    await screenshot(page, "webhooks-created");

    // Reloaded: still signed in, listed, and the secret is gone for good.
    await page.reload();
    await card.waitFor(WAIT);
    expect(await page.getByRole("textbox", { name: "Signing secret" }).count()).toBe(0);
    expect(await page.content()).not.toContain(secretValue);

    // A test ping: its delivery row appears, as the API answers it.
    await card.getByRole("button", { name: "Send test ping" }).click();
    const row = card.locator("tr[data-delivery]");
    await row.first().waitFor(WAIT);
    expect(await card.getByRole("button", { name: "Hide deliveries" }).getAttribute("aria-expanded")).toBe("true");
    await page.locator(".sr-status").getByText("Test ping queued").waitFor(WAIT);
    const [delivery] = (await call("GET", `/api/v1/webhooks/${webhook.webhookId}/deliveries`, { token: p.accessToken }))
      .body.items;
    expect(await row.getAttribute("data-delivery")).toBe(delivery.deliveryId);
    // With no worker in this server (and a host that does not resolve) it waits, or has failed.
    expect(["PENDING", "FAILED"]).toContain(await row.getAttribute("data-status"));
    const cells = await row.locator("td").allTextContents();
    expect(cells.slice(0, 4)).toEqual([
      "Test ping",
      "Ping",
      delivery.status === "PENDING" ? "Pending" : "Failed",
      String(delivery.attempts),
    ]);
    expect(await card.getByRole("columnheader").allTextContents()).toEqual([
      "Event",
      "Kind",
      "Status",
      "Attempts",
      "Latency",
      "Last error",
      "Next attempt",
      "Action",
    ]);

    // Redeliver it.
    const retries: string[] = [];
    page.on("request", (r) => {
      if (r.method() === "POST" && r.url().endsWith("/retry")) retries.push(new URL(r.url()).pathname);
    });
    await row.getByRole("button", { name: `Redeliver test ping ${delivery.deliveryId}` }).click();
    await page.locator(".sr-status").getByText(`Redelivery of test ping ${delivery.deliveryId} queued.`).waitFor(WAIT);
    expect(retries).toEqual([`/api/v1/webhooks/${webhook.webhookId}/deliveries/${delivery.deliveryId}/retry`]);
    expect(await unlabelledControls(page)).toEqual([]);
    await screenshot(page, "webhooks-deliveries");

    // Deleting asks first; Cancel keeps it.
    await card.getByRole("button", { name: "Delete", exact: true }).click();
    const confirm = card.getByRole("group", { name: "Confirm deletion" });
    await confirm.waitFor(WAIT);
    await confirm.getByRole("button", { name: "Cancel" }).click();
    expect(await confirm.isHidden()).toBe(true);
    expect((await call("GET", "/api/v1/webhooks", { token: p.accessToken })).body.items).toHaveLength(1);
    await card.getByRole("button", { name: "Delete", exact: true }).click();
    await confirm.getByRole("button", { name: "Delete subscription" }).click();
    await page.getByText("No subscriptions yet").waitFor(WAIT);
    expect(await card.count()).toBe(0);
    await page.locator(".sr-status").getByText(`Subscription to ${URL_A} deleted.`).waitFor(WAIT);
    expect((await call("GET", "/api/v1/webhooks", { token: p.accessToken })).body.items).toEqual([]);

    await owner.context.close();
    expectClean(owner.watch);
  });

  test("a reviewer signed in on /reviews subscribes to one agent's events and signs out", async () => {
    const p = await intake();
    const reviewer = await open(await reviewerToken("hooks-reviewer"));
    const page = reviewer.page;
    await page.goto("/webhooks");
    await page.getByText("Signed in as reviewer").waitFor(WAIT);
    expect(await text(page.locator("#webhooks-who"))).toBe("hooks-reviewer");
    const form = page.getByRole("form", { name: "New subscription" });
    const url = `https://hooks.example.test/${p.providerCode}`;
    await form.getByLabel("URL").fill(url);
    await form.getByLabel("Agent code").fill(p.providerCode);
    await form.getByRole("button", { name: "Subscribe" }).click();
    await page.getByRole("textbox", { name: "Signing secret" }).waitFor(WAIT);
    const card = page.locator("article.webhook").filter({ hasText: url });
    await card.first().waitFor(WAIT);
    const facts = await text(card.first().locator(".facts"));
    expect(facts).toContain(`Agent${p.providerCode}`);
    expect(facts).toContain("Every kind");
    expect(facts).toContain("reviewer:hooks-reviewer");
    expect(await card.first().getByRole("link", { name: p.providerCode }).getAttribute("href")).toBe(
      `/providers/${p.providerCode}`,
    );
    const webhookId = (await card.first().getAttribute("data-webhook")) ?? "";
    await card.first().getByRole("button", { name: "Show deliveries" }).click();
    await card.first().getByText("Nothing delivered yet").waitFor(WAIT);

    // Signing out here ends the tab's reviewer session too.
    await page.getByRole("button", { name: "Sign out" }).click();
    await page.getByLabel("Access token").waitFor(WAIT);
    expect(await page.evaluate((key) => sessionStorage.getItem(key), REVIEWER_TOKEN_KEY)).toBeNull();
    await page.reload();
    await page.getByLabel("Access token").waitFor(WAIT);

    const rv = await reviewerToken();
    const made = await call("GET", `/api/v1/webhooks/${webhookId}`, { token: rv });
    expect([made.status, made.body.providerCode, made.body.createdBy]).toEqual([
      200,
      p.providerCode,
      "reviewer:hooks-reviewer",
    ]);
    await call("DELETE", `/api/v1/webhooks/${webhookId}`, { token: rv });
    await reviewer.context.close();
    expectClean(reviewer.watch);
  });
});
