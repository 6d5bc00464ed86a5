/**
 * The reviewers' queue as a table in a real browser, against the real app on a real port: each row
 * with the agent's health, drift and verified domain (a real check of an MCP peer on loopback, a
 * real domain proof served by a file server), sorting by a column header (the API's order, kept in
 * the address), a filter that narrows it, a reload that keeps both, and the keyboard (j/k, Enter,
 * Esc, /) — ignored while typing in the search. Sign-in through the identity provider landing on
 * the table is in signin.page.test.ts, which runs a real OpenID provider.
 *
 * Over ten seconds (11–15 s alone on the two-core machine under load; the two tests themselves take
 * about 5 s) because of what every browser file pays once: the page bundle's first build, the app's
 * import and Chromium's start. The two tests share them.
 */
import { afterAll, beforeAll, describe, expect, jest, test } from "@jest/globals";
import type { Browser, Locator, Page } from "playwright-core";
import { intakeBody, uniqueCode } from "../builders.ts";
import { OPEN_TOOLS, type Peers, startPeers } from "../health/peers.ts";
import { type App, appWith, call, closeAfterAll, type Listening, listen, reviewerToken } from "../helpers.ts";
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

jest.setTimeout(60_000);

const WAIT = { timeout: 15_000 };
const TOKEN_KEY = "agent-registry.reviewer-token";

let peers: Peers;
let files: Listening;
/** The well-known files the domain proof reads, by path. */
const served = new Map<string, string>();
let app: App;
let server: Running;
let browser: Browser;

beforeAll(async () => {
  const fileServer = listen((req, res) => {
    const body = served.get(req.url ?? "");
    if (body === undefined) res.writeHead(404).end();
    else res.writeHead(200, { "content-type": "text/plain" }).end(body);
  });
  [peers, files, browser] = await Promise.all([startPeers(), fileServer, launchBrowser()]);
  closeAfterAll(() => peers.close());
  closeAfterAll(() => files.close());
  app = appWith({
    OUTBOUND_TEST_HOSTS: `${peers.testHosts},example.test=127.0.0.1:${new URL(files.url).port}`,
    HEALTH_TIMEOUT_MS: "2000",
  });
  server = await startServer(app);
});

afterAll(async () => {
  await browser?.close();
  await server?.close();
});

interface Submitted {
  providerCode: string;
  reviewCode: string;
  accessToken: string;
}

async function submit(name: string, extra: Record<string, unknown> = {}): Promise<Submitted> {
  const answer = await call("POST", "/api/v1/providers", {
    app,
    body: intakeBody({ providerCode: uniqueCode("rt"), name, ...extra }),
  });
  expect(answer.status).toBe(201);
  return answer.body as Submitted;
}

/** Proves example.test for the agent: its token served where the registry looks for it. */
async function verifyDomain(agent: Submitted): Promise<void> {
  const path = `/api/v1/providers/${agent.providerCode}/domains`;
  const asked = await call("POST", path, { app, token: agent.accessToken, body: { domain: "example.test" } });
  expect(asked.status).toBe(201);
  served.set(`/.well-known/agent-registry/${agent.providerCode}.txt`, `${asked.body.token}\n`);
  const checked = await call("POST", `${path}/example.test/check`, { app, token: agent.accessToken });
  expect(checked.body.verified).toBe(true);
}

/** Three reviews: one whose agent is up but drifts, one with a verified domain, one urgent. */
async function threeReviews(word: string) {
  // Declares one of the peer's tools and one it does not list: drift after a check.
  const drifting = await submit(`${word} Drifting`, {
    endpoint: { url: peers.mcpOpen.url, protocol: "MCP", authScheme: "NONE" },
    tools: [
      { name: OPEN_TOOLS[0], kind: "FUNCTION" },
      { name: "retired_tool", kind: "FUNCTION" },
    ],
  });
  const verified = await submit(`${word} Verified`, {
    endpoint: { url: "https://api.example.test/a2a", protocol: "A2A", authScheme: "BEARER" },
  });
  const urgent = await submit(`${word} Urgent`);
  const checked = await call("POST", `/api/v1/providers/${drifting.providerCode}/health/check`, {
    app,
    token: drifting.accessToken,
  });
  expect(checked.body.state).toBe("UP");
  await verifyDomain(verified);
  const raised = await call("PATCH", `/api/v1/reviews/${urgent.reviewCode}`, {
    app,
    token: await reviewerToken("table-setup"),
    body: { priority: "URGENT" },
  });
  expect(raised.status).toBe(200);
  return { drifting, verified, urgent };
}

async function reviewer(page?: string) {
  const opened = await openContext(browser, server.url, DESKTOP);
  const token = await reviewerToken("table-reviewer");
  await opened.context.addInitScript(
    ({ key, value }) => {
      if (location.protocol === "http:") sessionStorage.setItem(key, value);
    },
    { key: TOKEN_KEY, value: token },
  );
  const tab = await opened.context.newPage();
  if (page) await tab.goto(page);
  return { ...opened, page: tab };
}

const text = async (locator: Locator) => ((await locator.textContent()) ?? "").replace(/\s+/g, " ").trim();
/** Waits until the table shows exactly these reviews in this order. */
const showing = (page: Page, codes: string[]) =>
  page.waitForFunction(
    (wanted) =>
      JSON.stringify([...document.querySelectorAll<HTMLElement>("tbody.review")].map((b) => b.dataset.review)) ===
      JSON.stringify(wanted),
    codes,
    WAIT,
  );
/** The review code of the row j/k last moved to. */
const currentRow = (page: Page) =>
  page.evaluate(
    () => document.querySelector<HTMLElement>('tr.review-row[aria-current="true"]')?.closest("tbody")?.dataset.review,
  );

describe("the review queue as a table", () => {
  test("rows say health, drift and domain; a header sorts (in the address), a filter narrows, a reload keeps both", async () => {
    const word = `Tabl${uniqueCode("").slice(-6)}`;
    const { drifting, verified, urgent } = await threeReviews(word);
    const { context, watch, page } = await reviewer(`/reviews?search=${word}`);
    const queued: URLSearchParams[] = [];
    page.on("request", (r) => {
      const url = new URL(r.url());
      if (url.pathname === "/api/v1/reviews/queue") queued.push(url.searchParams);
    });

    // The API's order: the urgent review first, then the oldest.
    await showing(page, [urgent.reviewCode, drifting.reviewCode, verified.reviewCode]);
    expect(await page.getByLabel("Search", { exact: true }).inputValue()).toBe(word);
    await page.getByRole("table", { name: "Active reviews, urgency, then age" }).waitFor(WAIT);
    const table = page.locator("table.queue-table");
    expect(await table.locator("thead th").allTextContents()).toEqual([
      "Review",
      "Agent",
      "Status",
      "Priority ▼",
      "Health",
      "Drift",
      "Domain",
      "Assigned to",
      "Opened",
      "Updated",
    ]);
    expect(await table.locator("thead th[scope=col]").count()).toBe(10);
    expect(await table.locator("th[aria-sort]").evaluateAll((t) => t.map((th) => th.textContent))).toEqual([
      "Priority ▼",
    ]);
    expect(await table.locator("th[aria-sort]").getAttribute("aria-sort")).toBe("descending");

    const cell = (review: Submitted, column: string) =>
      page.locator(`tbody[data-review="${review.reviewCode}"] td[data-col="${column}"]`);
    expect(await text(cell(drifting, "health"))).toBe("Up");
    expect(await text(cell(drifting, "drift"))).toContain("declared tools are not listed (retired_tool)");
    expect(await text(cell(drifting, "domain"))).toBe("Domain not verified");
    expect(await text(cell(verified, "domain"))).toBe("Verified domain");
    expect(await text(cell(verified, "health"))).toBe("Not probed");
    expect(await text(cell(verified, "drift"))).toBe("None");
    expect(await text(cell(urgent, "priority"))).toBe("Urgent");
    expect(
      await page.locator(`tbody[data-review="${urgent.reviewCode}"] th[scope=row]`).getByRole("button").textContent(),
    ).toBe(urgent.reviewCode);

    // A header sorts through the API: Opened is oldest first, a second click newest first.
    await table.getByRole("button", { name: "Opened" }).click();
    await showing(page, [drifting.reviewCode, verified.reviewCode, urgent.reviewCode]);
    expect(new URL(page.url()).searchParams.get("sort")).toBe("OLDEST");
    expect(queued.at(-1)?.get("sort")).toBe("OLDEST");
    expect(await table.locator('th[data-column="opened"]').getAttribute("aria-sort")).toBe("ascending");
    await table.getByRole("button", { name: "Opened" }).click();
    await showing(page, [urgent.reviewCode, verified.reviewCode, drifting.reviewCode]);
    expect(new URL(page.url()).searchParams.get("sort")).toBe("NEWEST");
    expect(await table.locator('th[data-column="opened"]').getAttribute("aria-sort")).toBe("descending");
    expect(await page.getByLabel("Sort").inputValue()).toBe("NEWEST");
    expect(await page.locator("caption").textContent()).toBe("Active reviews, newest first");

    // A filter narrows it, through the API, and joins the address.
    await page.getByLabel("Endpoint domain").selectOption({ label: "Verified domain" });
    await showing(page, [verified.reviewCode]);
    expect(queued.at(-1)?.get("endpointVerified")).toBe("true");
    const address = new URL(page.url()).searchParams;
    expect([address.get("search"), address.get("sort"), address.get("endpointVerified")]).toEqual([
      word,
      "NEWEST",
      "true",
    ]);

    // A reload (or the link shared) shows the same table.
    await page.reload();
    await showing(page, [verified.reviewCode]);
    expect(await page.getByLabel("Endpoint domain").inputValue()).toBe("true");
    expect(await page.getByLabel("Sort").inputValue()).toBe("NEWEST");
    await page.getByLabel("Endpoint domain").selectOption({ label: "Any domain" });
    await showing(page, [urgent.reviewCode, verified.reviewCode, drifting.reviewCode]);
    expect(new URL(page.url()).searchParams.has("endpointVerified")).toBe(false);
    expect(await unlabelledControls(page)).toEqual([]);
    await screenshot(page, "reviews-table-desktop");
    await context.close();
    expectClean(watch);
  });

  test("j and k move the current row, Enter opens the review and Esc closes it, / searches; typed in the search they are text", async () => {
    // A word with a j and a k in it, to be typed into the search.
    const word = `jk${uniqueCode("").slice(-6)}kj`;
    const { drifting, verified, urgent } = await threeReviews(word);
    const { context, watch, page } = await reviewer(`/reviews?search=${word}&sort=OLDEST`);
    const codes = [drifting.reviewCode, verified.reviewCode, urgent.reviewCode];
    await showing(page, codes);
    const row = (code: string) => page.locator(`tbody[data-review="${code}"] tr.review-row`);
    const focused = () =>
      page.evaluate(() => document.activeElement?.closest<HTMLElement>("tbody.review")?.dataset.review ?? null);

    // Off the fields: j comes to the current row (the first), then moves down, k back up, never past the ends.
    await page.locator("h1").click();
    await page.keyboard.press("j");
    expect([await currentRow(page), await focused()]).toEqual([codes[0], codes[0]]);
    await page.keyboard.press("j");
    await page.keyboard.press("j");
    await page.keyboard.press("j");
    expect([await currentRow(page), await focused()]).toEqual([codes[2], codes[2]]);
    await page.keyboard.press("k");
    expect([await currentRow(page), await focused()]).toEqual([codes[1], codes[1]]);
    // One tab stop in the table: the current row.
    expect(await page.locator('tr.review-row[tabindex="0"]').count()).toBe(1);
    expect(await row(codes[1] as string).getAttribute("tabindex")).toBe("0");

    // Enter opens the review beneath its row, with its actions; Esc closes it and keeps the row.
    await page.keyboard.press("Enter");
    const opened = page.getByRole("group", { name: `Act on ${verified.reviewCode}` });
    await opened.waitFor(WAIT);
    expect(
      await row(verified.reviewCode).getByRole("button", { name: verified.reviewCode }).getAttribute("aria-expanded"),
    ).toBe("true");
    expect(await opened.getByRole("button", { name: "Approve" }).isVisible()).toBe(true);
    // Typing in the review's note is text too.
    const note = opened.getByLabel("Note");
    await note.press("j");
    await note.press("/");
    expect([await note.inputValue(), await note.evaluate((el) => el === document.activeElement)]).toEqual(["j/", true]);
    expect(await currentRow(page)).toBe(codes[1]);
    await row(verified.reviewCode).focus();
    await page.keyboard.press("Escape");
    await opened.waitFor({ state: "hidden", ...WAIT });
    expect(await focused()).toBe(codes[1]);

    // "/" goes to the search (its text selected); there j, k and Enter are text, and the current
    // row and the closed reviews stay as they were once the typed search has been answered.
    await page.keyboard.press("/");
    const search = page.getByLabel("Search", { exact: true });
    expect(await search.evaluate((el) => el === document.activeElement)).toBe(true);
    const answered = page.waitForResponse(
      (r) =>
        new URL(r.url()).pathname === "/api/v1/reviews/queue" && new URL(r.url()).searchParams.get("search") === word,
    );
    await search.pressSequentially(word);
    await search.press("Enter");
    await answered;
    await showing(page, codes);
    expect(await search.inputValue()).toBe(word);
    expect(await currentRow(page)).toBe(codes[1]);
    expect(await page.locator("tr.review-detail:not([hidden])").count()).toBe(0);
    expect(await search.evaluate((el) => el === document.activeElement)).toBe(true);
    await context.close();
    expectClean(watch);
  });
});
