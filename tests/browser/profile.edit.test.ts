/**
 * The owner's edit form in a real browser against the real app: a change checked by the server's
 * rules before anything is sent, previewed as a diff, saved with If-Match; a save that meets a newer
 * version (412) shows what changed and re-applies on top; markup typed into a field stays text.
 */
import { afterAll, beforeAll, describe, expect, jest, test } from "@jest/globals";
import type { Browser, Page } from "playwright-core";
import { call, intake } from "../helpers.ts";
import { errorOf, expectClean, launchBrowser, openContext, type Running, startServer } from "./browser.helpers.ts";

jest.setTimeout(60_000);

const WAIT = { timeout: 15_000 };
const XSS_SUMMARY = "<img src=x onerror=window.__xss=1> summary";
const XSS_DESCRIPTION = "[click me](javascript:window.__xss=2) and <img src=x onerror=window.__xss=3>";

let server: Running;
let browser: Browser;

beforeAll(async () => {
  [server, browser] = await Promise.all([startServer(), launchBrowser()]);
});

afterAll(async () => {
  await browser?.close();
  await server?.close();
});

/** Nothing that markup typed into a field could have made: no flag set, no image, no script link. */
async function expectInert(page: Page): Promise<void> {
  expect(
    await page.evaluate(() => ({
      xss: (window as unknown as { __xss?: unknown }).__xss,
      images: document.querySelectorAll('img[src="x"], [onerror]').length,
      scriptLinks: document.querySelectorAll('a[href^="javascript:" i]').length,
    })),
  ).toEqual({ xss: undefined, images: 0, scriptLinks: 0 });
}

const profileOf = async (code: string, token: string) =>
  (await call("GET", `/api/v1/providers/${code}`, { token })).body;

describe("the owner's edit form", () => {
  test("checked by the server's rules, previewed, saved with If-Match; a conflict re-applied on top; markup inert", async () => {
    const { providerCode: code, accessToken: token } = await intake();
    const { context, watch } = await openContext(browser, server.url);
    const page = await context.newPage();
    const patches: number[] = [];
    page.on("response", (r) => {
      if (r.request().method() === "PATCH") patches.push(r.status());
    });

    // The owner signs in with the agent's token (an agent waiting for review is theirs to see).
    await page.goto(`/providers/${code}`);
    await page.getByText("Your agent? Sign in with its access token").first().click();
    await page.getByLabel("Access token").fill(token);
    await page.getByRole("button", { name: "Sign in" }).click();
    await page.getByText("You are signed in with this agent's access token").waitFor(WAIT);

    await page.getByRole("button", { name: "Edit the profile" }).click();
    await page.getByRole("heading", { name: "Edit the profile (version 1)" }).waitFor(WAIT);
    const dialog = page.locator("dialog.edit-dialog");

    // 1. A bad value: said beside its field by the server's own rules, nothing sent.
    const homepage = page.getByLabel("Home page");
    await homepage.fill("javascript:alert(1)");
    await page.getByRole("button", { name: "Preview changes" }).click();
    await page.getByRole("alert").filter({ hasText: "Please correct" }).waitFor(WAIT);
    expect(await errorOf(homepage)).toContain("must be an absolute https: URL");
    expect(patches).toEqual([]);
    expect((await profileOf(code, token)).version).toBe(1);

    // 2. Markup in text fields: previewed as text, saved, shown as text on the profile.
    await homepage.fill("");
    await page.getByLabel("Summary").fill(XSS_SUMMARY);
    await page.getByLabel("Description").fill(XSS_DESCRIPTION);
    await page.getByRole("button", { name: "Preview changes" }).click();
    const preview = dialog.getByRole("table", { name: "Your changes to version 1" });
    await preview.waitFor(WAIT);
    expect(await preview.locator('tr[data-path="summary"] td.after').textContent()).toBe(XSS_SUMMARY);
    expect(await preview.locator('tr[data-path="description"] td.after').textContent()).toBe(XSS_DESCRIPTION);
    expect(await preview.locator("tbody tr").count()).toBe(2);
    await expectInert(page);
    const saved = page.waitForResponse((r) => r.request().method() === "PATCH");
    await dialog.getByRole("button", { name: "Save as version 2" }).click();
    expect((await saved).request().headers()["if-match"]).toBe('"1"');
    await page.locator(".profile-head .badge", { hasText: "Version 2" }).waitFor(WAIT);
    const second = await profileOf(code, token);
    expect([second.version, second.summary, second.description]).toEqual([2, XSS_SUMMARY, XSS_DESCRIPTION]);
    expect(await page.locator(".profile-head .lede").textContent()).toBe(XSS_SUMMARY);
    await expectInert(page);

    // 3. A conflict: the form is opened on version 2, the API changes the agent, then the form saves.
    await page.getByRole("button", { name: "Edit the profile" }).click();
    await page.getByRole("heading", { name: "Edit the profile (version 2)" }).waitFor(WAIT);
    await page.getByLabel("Name", { exact: true }).fill("Edited in the browser");
    const meanwhile = await call("PATCH", `/api/v1/providers/${code}`, {
      token,
      body: { labels: ["changed-meanwhile"] },
      headers: { "if-match": '"2"' },
    });
    expect([meanwhile.status, meanwhile.body.version]).toEqual([200, 3]);
    await page.getByRole("button", { name: "Preview changes" }).click();
    const refused = page.waitForResponse((r) => r.request().method() === "PATCH");
    await dialog.getByRole("button", { name: "Save as version 3" }).click();
    expect((await refused).status()).toBe(412);
    const theirs = dialog.getByRole("table", { name: "What changed from version 2 to version 3" });
    await theirs.waitFor(WAIT);
    expect(await theirs.locator('tr[data-path="labels"] td.after').textContent()).toContain("changed-meanwhile");
    expect((await profileOf(code, token)).version).toBe(3);

    // Re-applied: the owner's edit on top of version 3, previewed again and saved as version 4.
    await dialog.getByRole("button", { name: "Re-apply my edit to version 3" }).click();
    const again = dialog.getByRole("table", { name: "Your changes to version 3" });
    await again.waitFor(WAIT);
    expect(await again.locator("tbody tr").evaluateAll((rows) => rows.map((r) => r.getAttribute("data-path")))).toEqual(
      ["name"],
    );
    const resaved = page.waitForResponse((r) => r.request().method() === "PATCH");
    await dialog.getByRole("button", { name: "Save as version 4" }).click();
    expect((await resaved).status()).toBe(200);
    await page.locator(".profile-head .badge", { hasText: "Version 4" }).waitFor(WAIT);
    const last = await profileOf(code, token);
    expect([last.version, last.name, last.labels.includes("changed-meanwhile"), last.summary]).toEqual([
      4,
      "Edited in the browser",
      true,
      XSS_SUMMARY,
    ]);
    expect(patches).toEqual([200, 412, 200]);
    await expectInert(page);

    await context.close();
    expectClean(watch);
  });
});
