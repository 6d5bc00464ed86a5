/**
 * The directory page (`/`) driven through its UI in Chromium, on a real database: a facet narrows
 * the list, its count and the total follow, the address records it and Back undoes it; the sort
 * orders by name and by update; on a phone the first agent is in the first screen and the facets
 * are a Filters sheet that Escape closes; the whole card opens the profile; and with JavaScript off
 * the facets and the sort still work, as the plain GET form they are.
 */
import { afterAll, beforeAll, describe, expect, jest, test } from "@jest/globals";
import type { Browser, Page } from "playwright-core";
import { uniqueCode } from "../builders.ts";
import { approve, intake } from "../helpers.ts";
import {
  DESKTOP,
  expectClean,
  launchBrowser,
  openContext,
  PHONE,
  type Running,
  startServer,
  unlabelledControls,
} from "./browser.helpers.ts";

jest.setTimeout(60_000);
const WAIT = { timeout: 15_000 };

let server: Running;
let browser: Browser;
/** The label every agent of this file carries, so that the page shows these agents only. */
const label = `dirpage-${uniqueCode("").slice(-8)}`;
const word = `Okapi${label.slice(-6)}`;
/** By the order they were approved in: the last one is the most recently updated. */
const agents: { code: string; name: string; agentType: string }[] = [];

beforeAll(async () => {
  [server, browser] = await Promise.all([startServer(), launchBrowser()]);
  // Approved one after another, so their update times are in this order.
  for (const [suffix, agentType] of [
    ["Charlie", "TOOL_SERVER"],
    ["Alpha", "ASSISTANT"],
    ["Bravo", "ASSISTANT"],
  ] as const) {
    const p = await intake({
      name: `${word} ${suffix}`,
      summary: `The ${suffix.toLowerCase()} agent of the directory page test`,
      labels: [label],
      agentType,
    });
    await approve(p.providerCode);
    agents.push({ code: p.providerCode, name: `${word} ${suffix}`, agentType });
  }
});
afterAll(async () => {
  await browser?.close();
  await server?.close();
});

const names = (page: Page) => page.locator(".card h2").allTextContents();
const total = (page: Page) => page.locator(".results-bar .total").textContent();
/** Waits until the page shows exactly these agents, in this order. */
async function waitForNames(page: Page, expected: string[]): Promise<void> {
  await page.waitForFunction(
    (want) => JSON.stringify([...document.querySelectorAll(".card h2")].map((h) => h.textContent)) === want,
    JSON.stringify(expected),
    WAIT,
  );
}
/** An option by its words and count, as read out ("Tool server, 1 agent"; Chromium puts a space before the comma). */
const counted = (words: string, count: string) => new RegExp(`^${words}\\s?, ${count}$`);
const byUpdate = () => [...agents].reverse().map((a) => a.name);
const byName = () => agents.map((a) => a.name).sort();

describe("the directory page", () => {
  test("a facet narrows the list with its count, the total and the address following, and Back undoes it; the sort orders by name and by update; the whole card opens the profile", async () => {
    const { context, watch } = await openContext(browser, server.url, DESKTOP);
    const page = await context.newPage();
    await page.goto(`/?labels=${label}`);
    await waitForNames(page, byUpdate());
    expect(await total(page)).toBe("3 agents");
    expect(await unlabelledControls(page)).toEqual([]);

    // The side panel is shown beside the results; each option says how many agents it has.
    const types = page.getByRole("group", { name: "Agent type" });
    const toolServer = types.getByRole("radio", { name: counted("Tool server", "1 agent") });
    const assistant = types.getByRole("radio", { name: counted("Assistant", "2 agents") });
    await toolServer.waitFor({ state: "visible", ...WAIT });
    expect(await assistant.isVisible()).toBe(true);
    expect(await page.locator(".filters-toggle").isVisible()).toBe(false);

    await toolServer.check();
    await page.waitForURL((url) => url.searchParams.get("agentType") === "TOOL_SERVER", WAIT);
    await waitForNames(page, [`${word} Charlie`]);
    await page.getByText("1 agent", { exact: true }).waitFor(WAIT);
    expect(await total(page)).toBe("1 agent");
    // The counts follow the query: the label's is now the one tool server's; a type's own group
    // still counts the other types, the choices it could switch to.
    const labels = page.getByRole("group", { name: "Labels" });
    expect(await labels.getByRole("checkbox", { name: counted(label, "1 agent") }).isChecked()).toBe(true);
    expect(await types.getByRole("radio", { name: counted("Assistant", "2 agents") }).count()).toBe(1);

    await page.goBack();
    await waitForNames(page, byUpdate());
    await page.waitForFunction(() => document.querySelector(".results-bar .total")?.textContent === "3 agents");
    expect(new URL(page.url()).searchParams.get("agentType")).toBeNull();
    expect(await types.getByRole("radio", { name: "Any type" }).isChecked()).toBe(true);

    // Sort: by name, then back to the default, most recently updated first.
    const sort = page.getByLabel("Sort");
    expect(await sort.inputValue()).toBe("UPDATED");
    await sort.selectOption({ label: "Name (A–Z)" });
    await page.waitForURL((url) => url.searchParams.get("sort") === "NAME", WAIT);
    await waitForNames(page, byName());
    await sort.selectOption({ label: "Recently updated" });
    await page.waitForURL((url) => !url.searchParams.has("sort"), WAIT);
    await waitForNames(page, byUpdate());
    await page.goBack();
    await waitForNames(page, byName());
    expect(await sort.inputValue()).toBe("NAME");

    // A click on the card's text, not on its link, opens the agent's profile.
    const first = agents.find((a) => a.name === byName()[0]) as (typeof agents)[number];
    const box = await page.locator(".card .summary").first().boundingBox();
    if (!box) throw new Error("the card's summary has no box");
    await Promise.all([
      page.waitForURL(`**/providers/${first.code}`, WAIT),
      page.mouse.click(box.x + box.width / 2, box.y + box.height / 2),
    ]);
    await page.getByRole("heading", { level: 1, name: first.name }).waitFor(WAIT);
    await context.close();
    expectClean(watch);
  });

  test("on a phone the first agent is in the first screen, and the facets are a Filters sheet that Escape closes", async () => {
    const { context, watch } = await openContext(browser, server.url, PHONE);
    const page = await context.newPage();
    await page.goto(`/?labels=${label}`);
    await waitForNames(page, byUpdate());
    const top = await page
      .locator(".card")
      .first()
      .evaluate((el) => el.getBoundingClientRect().top);
    expect(top).toBeGreaterThan(0);
    expect(top).toBeLessThan(PHONE.height);

    const sheet = page.getByRole("dialog", { name: "Filters" });
    expect(await sheet.isVisible()).toBe(false);
    const toggle = page.getByRole("button", { name: "Filters (1)" });
    await toggle.click();
    await sheet.waitFor({ state: "visible", ...WAIT });
    expect(await page.locator("dialog.facets").evaluate((d) => d.matches(":modal"))).toBe(true);

    await sheet.getByRole("radio", { name: counted("Tool server", "1 agent") }).check();
    await page.waitForURL((url) => url.searchParams.get("agentType") === "TOOL_SERVER", WAIT);
    await waitForNames(page, [`${word} Charlie`]);
    await page.keyboard.press("Escape");
    await sheet.waitFor({ state: "hidden", ...WAIT });
    // The closed sheet's choices are still told, on its button, which has the focus back.
    const chosen = page.getByRole("button", { name: "Filters (2)" });
    await chosen.waitFor(WAIT);
    expect(await chosen.evaluate((b) => b === document.activeElement)).toBe(true);

    // The default order follows the search: a first word ranks by best match, unasked.
    await page.getByLabel("Search", { exact: true }).fill(word);
    await page.waitForURL((url) => url.searchParams.get("search") === word && !url.searchParams.has("sort"), WAIT);
    expect(await page.getByLabel("Sort").inputValue()).toBe("RELEVANCE");
    await waitForNames(page, [`${word} Charlie`]);
    await context.close();
    expectClean(watch);
  });

  test("with JavaScript off, a facet and the sort apply through the plain form", async () => {
    const context = await browser.newContext({ viewport: DESKTOP, baseURL: server.url, javaScriptEnabled: false });
    const page = await context.newPage();
    await page.goto(`/?labels=${label}`);
    expect(await names(page)).toEqual(byUpdate());
    expect(await total(page)).toBe("3 agents");

    await page
      .getByRole("group", { name: "Agent type" })
      .getByRole("radio", { name: counted("Assistant", "2 agents") })
      .check();
    await Promise.all([
      page.waitForURL(/agentType=ASSISTANT/, WAIT),
      page.getByRole("button", { name: "Show results" }).click(),
    ]);
    expect(await names(page)).toEqual(byUpdate().filter((n) => !n.endsWith("Charlie")));
    expect(await total(page)).toBe("2 agents");

    await page.getByLabel("Sort").selectOption("NAME");
    await Promise.all([page.waitForURL(/sort=NAME/, WAIT), page.getByRole("button", { name: "Apply" }).click()]);
    expect(await names(page)).toEqual([`${word} Alpha`, `${word} Bravo`]);
    expect(new URL(page.url()).searchParams.get("agentType")).toBe("ASSISTANT");

    // A card's label is a link to the agents carrying it.
    await Promise.all([
      page.waitForURL((url) => url.search === `?labels=${label}`, WAIT),
      page.locator(".card").first().getByRole("link", { name: label }).click(),
    ]);
    expect(await names(page)).toEqual(byUpdate());
    await context.close();
  });
});
