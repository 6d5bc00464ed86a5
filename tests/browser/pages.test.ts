/**
 * The pages in a real browser (Debian's Chromium through playwright-core) against the real app on
 * a real port. Every context refuses requests that leave the server under test, and each test
 * fails if a page tried one, threw, or broke its Content-Security-Policy. Screenshots of each page
 * at phone and desktop width go to tests/browser/artifacts/.
 */
import { afterAll, beforeAll, describe, expect, jest, test } from "@jest/globals";
import type { Browser, BrowserContext, Locator, Page } from "playwright-core";
import { uniqueCode } from "../builders.ts";
import { activeReviewCode, approve, appWith, call, intake, type Listening, listen, reviewerToken } from "../helpers.ts";
import {
  DESKTOP,
  expectClean,
  launchBrowser,
  openContext,
  overflowsHorizontally,
  PHONE,
  type Running,
  screenshot,
  startServer,
  unlabelledControls,
  type Watch,
} from "./browser.helpers.ts";

jest.setTimeout(120_000);

const TOKEN_KEY = "agent-registry.reviewer-token";
const WAIT = { timeout: 15_000 };

let server: Running;
let browser: Browser;

beforeAll(async () => {
  [server, browser] = await Promise.all([startServer(), launchBrowser()]);
});

afterAll(async () => {
  await browser?.close();
  await server?.close();
});

/** A fresh context (its own sessionStorage), watched; closed and checked by `done()`. */
async function open(viewport: { width: number; height: number } = DESKTOP, reviewer?: string) {
  const opened = await openContext(browser, server.url, viewport);
  if (reviewer) {
    await opened.context.addInitScript(
      ({ key, token }) => {
        // Pages only: about:blank has no storage.
        if (location.protocol === "http:") sessionStorage.setItem(key, token);
      },
      { key: TOKEN_KEY, token: reviewer },
    );
  }
  const page = await opened.context.newPage();
  return { ...opened, page };
}

async function done(opened: { context: BrowserContext; watch: Watch }): Promise<void> {
  await opened.context.close();
  expectClean(opened.watch);
}

/** The text of the error shown for a control (through its aria-describedby), or "". */
function errorOf(control: Locator): Promise<string> {
  return control.evaluate((el) =>
    (el.getAttribute("aria-describedby") ?? "")
      .split(" ")
      .map((id) => document.getElementById(id))
      .filter((e) => e?.classList.contains("field-error"))
      .map((e) => e?.textContent ?? "")
      .join(" "),
  );
}

const text = async (locator: Locator) => ((await locator.textContent()) ?? "").replace(/\s+/g, " ").trim();

/** Reviewer sign-in through the form. */
async function signIn(page: Page, token: string): Promise<void> {
  await page.goto("/reviews");
  await page.getByLabel("Reviewer token").fill(token);
  await page.getByRole("button", { name: "Sign in" }).click();
  await page.getByRole("heading", { name: "Review queue" }).waitFor(WAIT);
  await page.getByText("Signed in as").waitFor(WAIT);
}

/** The queue item of a review, on the dashboard: its row of the table and, opened, its actions. */
const reviewItem = (page: Page, reviewCode: string) => page.locator(`tbody[data-review="${reviewCode}"]`);

/** Opens a review of the queue (its row's button), unless it is open already. */
async function actOn(item: Locator, reviewCode: string): Promise<void> {
  const opener = item.getByRole("button", { name: reviewCode, exact: true });
  if ((await opener.getAttribute("aria-expanded")) !== "true") await opener.click();
  await item.getByRole("group", { name: `Act on ${reviewCode}` }).waitFor(WAIT);
}

describe("intake, review and directory", () => {
  test("an agent submitted from the form is approved from the dashboard and then found in the directory", async () => {
    const taken = (await intake()).providerCode;
    const code = uniqueCode("form");
    const word = `Albatross${code.slice(-6)}`;
    const owner = await open();
    await owner.context.grantPermissions(["clipboard-read", "clipboard-write"], { origin: server.url });
    const page = owner.page;
    const posts: string[] = [];
    page.on("request", (r) => {
      if (r.method() === "POST" && new URL(r.url()).pathname === "/api/v1/providers") posts.push(r.postData() ?? "");
    });
    await page.goto("/intake");
    const about = page.getByRole("region", { name: "About the agent" });
    await about.getByLabel("Name", { exact: true }).waitFor(WAIT);
    expect(await unlabelledControls(page)).toEqual([]);

    // 1. Checked as the server checks, before anything is sent; problems beside their fields.
    await page.getByRole("button", { name: "Submit for review" }).click();
    await page.getByRole("alert").filter({ hasText: "Please correct" }).waitFor(WAIT);
    expect(await errorOf(about.getByLabel("Name", { exact: true }))).toContain("must not be empty");
    expect(await errorOf(about.getByLabel("Summary"))).toContain("must not be empty");
    expect(await errorOf(page.getByLabel("Contact email"))).toContain("email");
    // No endpoint and no package: said of the endpoint as a whole.
    expect(await errorOf(page.getByRole("region", { name: "Endpoint", exact: true }))).toContain(
      "is required unless the agent ships as at least one package",
    );
    expect(await about.getByLabel("Name", { exact: true }).getAttribute("aria-invalid")).toBe("true");
    expect(posts).toHaveLength(0);

    // 2. Every section, lists added and removed (the first list item by keyboard).
    await about.getByLabel("Name", { exact: true }).fill(`Form Planner ${word}`);
    await about.getByLabel("Summary").fill("Plans delivery routes, submitted from the form");
    await about.getByLabel("Description").fill("Line one.\n\nLine **two**.");
    await about.getByLabel("Home page").fill("https://form.example.com/");
    await about.getByLabel("Agent type").selectOption({ label: "Workflow" });
    await about.getByLabel("Visibility").selectOption({ label: "Public" });
    await about.getByLabel("Provider code").fill(taken);
    await about.getByLabel("Labels").fill("Maps, routing , form-test");
    await page.getByLabel("Contact email").fill("ops@example.com");
    await page.getByLabel("Endpoint URL").fill("https://form.example.com/a2a");
    await page.getByLabel("Protocol").selectOption({ label: "A2A" });
    await page.getByLabel("Authentication").selectOption({ label: "Bearer" });
    await page.getByLabel("Health check URL").fill("https://form.example.com/health");

    await page.getByRole("button", { name: "Add capability" }).focus();
    await page.keyboard.press("Enter");
    expect(await page.evaluate(() => (document.activeElement as HTMLInputElement).labels?.[0]?.textContent)).toMatch(
      /^Key/,
    );
    await page.keyboard.type("plan-route");
    const cap1 = page.getByRole("group", { name: "Capability 1" });
    await cap1.getByLabel("Name", { exact: true }).fill("Plan a route");
    await page.getByRole("button", { name: "Add capability" }).click();
    const cap2 = page.getByRole("group", { name: "Capability 2" });
    await cap2.getByLabel("Key").fill("eta");
    await cap2.getByLabel("Name", { exact: true }).fill("Estimate arrival");
    await cap2.getByLabel("Description").fill("Minutes to arrival");
    await cap2.getByLabel("Tags").fill("time, eta");
    await cap2.getByLabel("Input modes").fill("application/json");
    await cap2.getByLabel("Output modes").fill("application/json, text/plain");
    await page.getByRole("button", { name: "Remove capability 1" }).click();
    // The second became the first, its values kept.
    expect(await page.getByRole("group", { name: /^Capability \d$/ }).count()).toBe(1);
    expect(await page.getByRole("group", { name: "Capability 1" }).getByLabel("Key").inputValue()).toBe("eta");

    await page.getByRole("button", { name: "Add model" }).click();
    const model = page.getByRole("group", { name: "Model 1" });
    await model.getByLabel("Vendor").fill("Example AI");
    await model.getByLabel("Model", { exact: true }).fill("router-large");
    await model.getByLabel("Role").selectOption({ label: "Fallback" });
    await model.getByLabel("Context window").fill("128000");

    await page.getByRole("button", { name: "Add tool" }).click();
    const tool = page.getByRole("group", { name: "Tool 1", exact: true });
    await tool.getByLabel("Name", { exact: true }).fill("geocode");
    await tool.getByLabel("Kind").selectOption({ label: "HTTP" });
    await tool.getByLabel("Description").fill("Address to coordinates");
    await tool.getByLabel("Read only").check();
    await tool.getByLabel("External").check();

    const policy = page.getByRole("region", { name: "Usage policy", exact: true });
    await policy.getByLabel("Human oversight").selectOption({ label: "On request" });
    await policy.getByLabel("Data retention (days)").fill("30");
    await policy.getByLabel("Allowed use cases").fill("Routing\nArrival estimates\n");
    await policy.getByLabel("Prohibited use cases").fill("Surveillance");
    await policy.getByLabel("Terms URL").fill("https://form.example.com/terms");

    await page.getByRole("button", { name: "Add role" }).click();
    await page.getByRole("group", { name: "Role 1" }).getByLabel("Subject").fill("ops@example.com");
    await page.getByRole("button", { name: "Add role" }).click();
    await page.getByRole("group", { name: "Role 2" }).getByLabel("Subject").fill("@route-team");
    await page.getByRole("group", { name: "Role 2" }).getByLabel("Role").selectOption({ label: "Maintainer" });
    expect(await unlabelledControls(page)).toEqual([]);

    // 3. The server's refusal (a code that is taken) is shown beside the field it names.
    await page.getByRole("button", { name: "Submit for review" }).click();
    await page.getByRole("alert").filter({ hasText: "could not accept" }).waitFor(WAIT);
    expect(await errorOf(about.getByLabel("Provider code"))).toContain("already taken");
    expect(posts).toHaveLength(1);

    // 4. Sent: exactly the intake body.
    await about.getByLabel("Provider code").fill(code);
    await page.getByRole("button", { name: "Submit for review" }).click();
    await page.getByRole("heading", { name: "Submitted for review" }).waitFor(WAIT);
    expect(posts).toHaveLength(2);
    expect(JSON.parse(posts[1] as string)).toEqual({
      providerCode: code,
      name: `Form Planner ${word}`,
      summary: "Plans delivery routes, submitted from the form",
      description: "Line one.\n\nLine **two**.",
      homepageUrl: "https://form.example.com/",
      labels: ["Maps", "routing", "form-test"],
      agentType: "WORKFLOW",
      visibility: "PUBLIC",
      contactEmail: "ops@example.com",
      capabilities: [
        {
          key: "eta",
          name: "Estimate arrival",
          description: "Minutes to arrival",
          tags: ["time", "eta"],
          inputModes: ["application/json"],
          outputModes: ["application/json", "text/plain"],
        },
      ],
      models: [{ vendor: "Example AI", model: "router-large", role: "FALLBACK", contextWindow: 128000 }],
      tools: [
        { name: "geocode", kind: "HTTP", description: "Address to coordinates", scopes: ["READ_ONLY", "EXTERNAL"] },
      ],
      endpoint: {
        url: "https://form.example.com/a2a",
        protocol: "A2A",
        authScheme: "BEARER",
        healthUrl: "https://form.example.com/health",
      },
      policy: {
        humanOversight: "ON_REQUEST",
        dataRetentionDays: 30,
        allowedUseCases: ["Routing", "Arrival estimates"],
        prohibitedUseCases: ["Surveillance"],
        termsUrl: "https://form.example.com/terms",
      },
      roles: [
        { subject: "ops@example.com", role: "OWNER" },
        { subject: "@route-team", role: "MAINTAINER" },
      ],
    });

    // 5. The review code and the token, once, with a copy button and a plain warning.
    const reviewCode = await activeReviewCode(code);
    expect(await text(page.locator("#result-review"))).toBe(reviewCode);
    const token = await page.getByLabel("Access token").inputValue();
    expect(token).toMatch(/^agr_[0-9A-Za-z]{38}$/);
    expect(await text(page.getByRole("note"))).toContain("it will not be shown again");
    await page.getByRole("button", { name: "Copy token" }).click();
    await page.getByText("Copied to the clipboard.").waitFor(WAIT);
    expect(await page.evaluate(() => navigator.clipboard.readText())).toBe(token);
    // It is the owner's token indeed.
    const own = await call("GET", `/api/v1/providers/${code}`, { token });
    expect(own.status).toBe(200);
    expect(own.body.contactEmail).toBe("ops@example.com");
    await screenshot(page, "intake-submitted-desktop");
    await page.reload();
    await page.getByRole("button", { name: "Submit for review" }).waitFor(WAIT);
    expect(await page.content()).not.toContain(token);

    // 6. Not in the directory before review.
    const visitor = await open();
    await visitor.page.goto(`/?search=${encodeURIComponent(word)}`);
    await visitor.page.getByRole("heading", { name: "No agents match" }).waitFor(WAIT);

    // 7. A reviewer approves it from the dashboard, with a trust tier; the queue updates.
    const reviewer = await open();
    await reviewer.page.goto("/reviews");
    await reviewer.page.getByLabel("Reviewer token").fill("not-a-token");
    await reviewer.page.getByRole("button", { name: "Sign in" }).click();
    await reviewer.page.getByText("This token was refused").waitFor(WAIT);
    expect(await reviewer.page.evaluate((key) => sessionStorage.getItem(key), TOKEN_KEY)).toBeNull();
    await signIn(reviewer.page, await reviewerToken("approver-ui"));
    await reviewer.page.getByLabel("Search", { exact: true }).fill(word);
    // The search has been applied (the queue's first page may hold this review before it is, and
    // the search's answer then replaces the list under the click).
    await reviewer.page.waitForFunction(() => document.querySelectorAll("tbody.review").length === 1, null, WAIT);
    const item = reviewItem(reviewer.page, reviewCode);
    await item.waitFor(WAIT);
    await actOn(item, reviewCode);
    await item.getByLabel("Trust tier on approval").selectOption({ label: "Verified" });
    // Its endpoint's domain is not verified: approving it takes a note.
    await item.getByLabel("Note").fill("Checked the endpoint by hand");
    await item.getByRole("button", { name: "Approve" }).click();
    await reviewer.page.getByRole("heading", { name: "Nothing to review" }).waitFor(WAIT);
    const approved = await call("GET", `/api/v1/providers/${code}`, { token: await reviewerToken() });
    expect([approved.body.reviewStage, approved.body.trustTier]).toEqual(["APPROVED", "VERIFIED"]);

    // 8. Now anyone finds it by typing, and its card leads to the profile.
    await visitor.page.goto("/");
    await visitor.page
      .getByLabel("Search", { exact: true })
      .pressSequentially(word.toLowerCase().slice(0, 12), { delay: 30 });
    await visitor.page.waitForURL(`/?search=${word.toLowerCase().slice(0, 12)}`, WAIT);
    await visitor.page.getByText("1 agent on page 1.").waitFor(WAIT);
    const card = visitor.page.getByRole("link", { name: `Form Planner ${word}` });
    await card.click();
    await visitor.page.getByRole("heading", { level: 1, name: `Form Planner ${word}` }).waitFor(WAIT);
    expect(new URL(visitor.page.url()).pathname).toBe(`/providers/${code}`);
    const timeline = visitor.page.getByRole("region", { name: "Review timeline", exact: true });
    expect(await text(timeline)).toContain("Approved by a reviewer");
    expect(await text(visitor.page.getByRole("region", { name: "Capabilities", exact: true }))).toContain(
      "Estimate arrival",
    );
    const homepage = visitor.page.getByRole("region", { name: "About", exact: true }).getByRole("link", {
      name: "https://form.example.com/",
    });
    expect(await homepage.getAttribute("href")).toBe("https://form.example.com/");
    expect(await visitor.page.content()).not.toContain(token);

    await Promise.all([done(owner), done(visitor), done(reviewer)]);
  });
});

describe("an MCP server imported from its server.json", () => {
  test("its profile shows the headers and URL values a client must supply, never a value", async () => {
    const code = uniqueCode("remote");
    const imported = await call("POST", "/api/v1/providers/import", {
      body: {
        format: "mcp",
        providerCode: code,
        contactEmail: "mcp@example.com",
        document: {
          name: `io.github.example/${code}`,
          title: `Tenant MCP ${code.slice(-6)}`,
          description: "Analytics per tenant",
          version: "2.0.0",
          remotes: [
            {
              type: "sse",
              url: "https://{tenant_id}.analytics.example.com/sse",
              headers: [
                { name: "X-API-Key", description: "Your key", isRequired: true, isSecret: true, value: "{key}" },
              ],
              variables: { tenant_id: { description: "Your tenant", isRequired: true } },
            },
          ],
        },
      },
    });
    expect(imported.status).toBe(201);
    expect(imported.body.unmapped).toEqual(["/remotes/0/headers/0/value"]);
    const visitor = await open(DESKTOP, await reviewerToken("imported-ui"));
    const page = visitor.page;
    await page.goto(`/providers/${code}`);
    await page.getByRole("heading", { level: 1, name: `Tenant MCP ${code.slice(-6)}` }).waitFor(WAIT);
    const endpoint = page.getByRole("region", { name: "Endpoint", exact: true });
    // A definition list reads term and value with nothing between them.
    expect(await text(endpoint)).toContain("TransportSSE");
    const values = endpoint.getByRole("table", { name: "Values in the URL" });
    expect(await text(values.getByRole("row", { name: /tenant_id/ }))).toContain("Required");
    const headers = endpoint.getByRole("table", { name: "Headers a client sends" });
    expect(await text(headers.getByRole("row", { name: /X-API-Key/ }))).toContain("Required, secret");
    expect(await page.content()).not.toContain("{key}");
    await done(visitor);
  });
});

describe("an MCP server that ships as a package", () => {
  test("submitted from the form with a package and no endpoint; its profile says how to run it and what it needs", async () => {
    const code = uniqueCode("pkg");
    const owner = await open();
    const page = owner.page;
    const posts: string[] = [];
    page.on("request", (r) => {
      if (r.method() === "POST" && new URL(r.url()).pathname === "/api/v1/providers") posts.push(r.postData() ?? "");
    });
    await page.goto("/intake");
    const about = page.getByRole("region", { name: "About the agent" });
    await about.getByLabel("Name", { exact: true }).waitFor(WAIT);
    await about.getByLabel("Name", { exact: true }).fill(`Weather MCP ${code.slice(-6)}`);
    await about.getByLabel("Summary").fill("Forecasts over MCP, started by the client");
    await about.getByLabel("Agent type").selectOption({ label: "Tool server" });
    await about.getByLabel("Provider code").fill(code);
    await page.getByLabel("Contact email").fill("mcp@example.com");

    // 1. An npm name npm would refuse is named before anything is sent: the registries' rules run in the page.
    await page.getByRole("button", { name: "Add package" }).click();
    const pkg = page.getByRole("group", { name: "Package 1" });
    await pkg.getByLabel("Registry").selectOption({ label: "npm" });
    await pkg.getByLabel("Identifier").fill("@Example/Weather-MCP");
    await pkg.getByLabel("Version").fill("1.2.3");
    await page.getByRole("button", { name: "Submit for review" }).click();
    await page.getByRole("alert").filter({ hasText: "Please correct" }).waitFor(WAIT);
    expect(await errorOf(pkg.getByLabel("Identifier"))).toContain("is not an npm package name");
    // With a package, no endpoint is needed.
    expect(await errorOf(page.getByRole("region", { name: "Endpoint", exact: true }))).toBe("");
    expect(posts).toHaveLength(0);

    // 2. Sent: the package, its variables by name and purpose, and no endpoint at all.
    await pkg.getByLabel("Identifier").fill("@example/weather-mcp");
    await pkg
      .getByLabel("Environment variables")
      .fill("WEATHER_API_KEY: Key for the forecast service\nWEATHER_UNITS: metric or imperial");
    await pkg.getByLabel("Required variables").fill("WEATHER_API_KEY");
    await pkg.getByLabel("Secret variables").fill("WEATHER_API_KEY");
    const release = page.getByRole("region", { name: "Source and release" });
    await release.getByLabel("Repository").fill("https://github.com/example/weather-mcp");
    await release.getByLabel("Hosted at").fill("github");
    await release.getByLabel("Release").fill("1.2.3");
    await release.getByLabel("MCP server name").fill(`io.github.example/${code}`);
    expect(await unlabelledControls(page)).toEqual([]);
    await page.getByRole("button", { name: "Submit for review" }).click();
    await page.getByRole("heading", { name: "Submitted for review" }).waitFor(WAIT);
    expect(posts).toHaveLength(1);
    const sent = JSON.parse(posts[0] as string);
    expect(sent).not.toHaveProperty("endpoint");
    expect(sent).toMatchObject({
      serverName: `io.github.example/${code}`,
      releaseVersion: "1.2.3",
      repository: { url: "https://github.com/example/weather-mcp", source: "github" },
    });
    expect(sent.packages).toEqual([
      {
        registryType: "NPM",
        identifier: "@example/weather-mcp",
        version: "1.2.3",
        transport: { type: "STDIO" },
        environmentVariables: [
          { name: "WEATHER_API_KEY", description: "Key for the forecast service", isRequired: true, isSecret: true },
          { name: "WEATHER_UNITS", description: "metric or imperial" },
        ],
      },
    ]);

    // 3. The profile: no endpoint, the command line, and the variables it needs (names, never values).
    await page.getByRole("link", { name: "View the profile" }).click();
    await page.getByRole("heading", { level: 1, name: `Weather MCP ${code.slice(-6)}` }).waitFor(WAIT);
    expect(await text(page.getByRole("region", { name: "Endpoint", exact: true }))).toContain("No endpoint");
    const shown = await text(page.getByRole("region", { name: "About", exact: true }));
    expect(shown).toContain(`MCP server nameio.github.example/${code}Release1.2.3`);
    expect(shown).toContain("Sourcehttps://github.com/example/weather-mcp");
    const packages = page.getByRole("region", { name: "Packages", exact: true });
    expect(await text(packages.getByLabel("Command line"))).toBe("npx -y @example/weather-mcp@1.2.3");
    const variables = packages.getByRole("table", { name: "Environment variables" });
    expect(await text(variables.getByRole("row", { name: /WEATHER_API_KEY/ }))).toContain("Required, secret");
    expect(await text(variables.getByRole("row", { name: /WEATHER_UNITS/ }))).toContain("Optional");
    // No endpoint, so no A2A card to link to.
    expect(await page.getByRole("link", { name: "Agent card" }).count()).toBe(0);
    await screenshot(page, "profile-packages-desktop");

    // 4. The reviewer sees the package and the variables it reads in the queue.
    const reviewer = await open();
    await signIn(reviewer.page, await reviewerToken("packages-ui"));
    await reviewer.page.getByLabel("Search", { exact: true }).fill(code);
    const queued = await activeReviewCode(code);
    const item = reviewItem(reviewer.page, queued);
    await item.waitFor(WAIT);
    // Listed in the opened review, beside its actions.
    await actOn(item, queued);
    const listed = await text(item.getByRole("list", { name: "Packages" }));
    expect(listed).toContain("npm @example/weather-mcp@1.2.3");
    expect(listed).toContain("reads WEATHER_API_KEY (secret), WEATHER_UNITS");

    await Promise.all([done(owner), done(reviewer)]);
  });
});

describe("the reviewers' dashboard", () => {
  test("assign, priority, comment, request changes, reject and sort; the queue follows each action", async () => {
    const word = `Quokka${uniqueCode("").slice(-8)}`;
    const a = await intake({ name: `${word} Alpha` });
    const b = await intake({ name: `${word} Beta` });
    const [ra, rb] = [await activeReviewCode(a.providerCode), await activeReviewCode(b.providerCode)];
    const reviewer = await open();
    const page = reviewer.page;
    await signIn(page, await reviewerToken("ui-reviewer"));
    // Kept for this tab only.
    expect(
      await page.evaluate((key) => [sessionStorage.getItem(key) !== null, localStorage.length], TOKEN_KEY),
    ).toEqual([true, 0]);
    await page.getByLabel("Search", { exact: true }).fill(word);
    await page.waitForFunction(() => document.querySelectorAll("tbody.review").length === 2);
    await reviewItem(page, rb).waitFor(WAIT);
    expect(await unlabelledControls(page)).toEqual([]);

    const itemA = reviewItem(page, ra);
    await actOn(itemA, ra);

    // Assign to oneself.
    await itemA.getByRole("button", { name: "Assign" }).click();
    await page.getByText(`${ra} assigned to ui-reviewer.`).waitFor(WAIT);
    expect(await text(reviewItem(page, ra).locator(".meta"))).toContain("Assigned to ui-reviewer");

    // Priority: URGENT comes first in the API's order.
    await actOn(reviewItem(page, rb), rb);
    await reviewItem(page, rb).getByLabel("Priority").selectOption({ label: "Urgent" });
    await reviewItem(page, rb).getByRole("button", { name: "Set priority" }).click();
    await page.getByText(`${rb} priority set to Urgent.`).waitFor(WAIT);
    expect(await page.locator("tbody.review").first().getAttribute("data-review")).toBe(rb);
    await page.getByLabel("Sort").selectOption({ label: "Oldest first" });
    await page.waitForFunction(
      (code) => document.querySelector("tbody.review")?.getAttribute("data-review") === code,
      ra,
    );
    await page.getByLabel("Sort").selectOption({ label: "Urgency, then age" });
    await page.waitForFunction(
      (code) => document.querySelector("tbody.review")?.getAttribute("data-review") === code,
      rb,
    );

    // Only mine.
    await page.getByLabel("Only reviews assigned to me (ui-reviewer)").check();
    await page.waitForFunction(() => document.querySelectorAll("tbody.review").length === 1);
    expect(await page.locator("tbody.review").getAttribute("data-review")).toBe(ra);
    await page.getByLabel("Only reviews assigned to me (ui-reviewer)").uncheck();
    await page.waitForFunction(() => document.querySelectorAll("tbody.review").length === 2);

    // A comment needs a note; then it is on the timeline.
    const itemA2 = reviewItem(page, ra);
    await actOn(itemA2, ra);
    await itemA2.getByRole("button", { name: "Comment" }).click();
    await itemA2.getByText("Write a note to comment.").waitFor(WAIT);
    expect(await itemA2.getByLabel("Note").evaluate((el) => el === document.activeElement)).toBe(true);
    await itemA2.getByLabel("Note").fill("Please add a privacy URL");
    await itemA2.getByRole("button", { name: "Comment" }).click();
    await page.getByText(`Comment added to ${ra}.`).waitFor(WAIT);
    const profile = await call("GET", `/api/v1/providers/${a.providerCode}`, { token: await reviewerToken() });
    expect(profile.body.reviewTimeline.map((e: { kind: string; note: string }) => [e.kind, e.note])).toContainEqual([
      "COMMENTED",
      "Please add a privacy URL",
    ]);

    // Request changes: the item's status changes, and the status filter finds it.
    const itemA3 = reviewItem(page, ra);
    await actOn(itemA3, ra);
    await itemA3.getByLabel("Note").fill("Endpoint must be reachable");
    await itemA3.getByRole("button", { name: "Request changes" }).click();
    await page.getByText(`Changes requested on ${ra}.`).waitFor(WAIT);
    expect(await text(reviewItem(page, ra).locator('td[data-col="status"]'))).toBe("Changes requested");
    await page.getByLabel("Status").selectOption({ label: "Changes requested" });
    await page.waitForFunction(() => document.querySelectorAll("tbody.review").length === 1);
    expect(await page.locator("tbody.review").getAttribute("data-review")).toBe(ra);
    await page.getByLabel("Status").selectOption({ label: "Any active status" });
    await reviewItem(page, rb).waitFor(WAIT);

    // Reject (a note is required): it leaves the queue.
    const itemB = reviewItem(page, rb);
    await actOn(itemB, rb);
    await itemB.getByRole("button", { name: "Reject" }).click();
    await itemB.getByText("Write a note to say why it is rejected.").waitFor(WAIT);
    await itemB.getByLabel("Note").fill("Not an agent");
    await itemB.getByRole("button", { name: "Reject" }).click();
    await page.getByText(`${rb} rejected.`).waitFor(WAIT);
    await reviewItem(page, rb).waitFor({ state: "detached", ...WAIT });
    const rejected = await call("GET", `/api/v1/reviews/${rb}`, { token: await reviewerToken() });
    expect(rejected.body.status).toBe("REJECTED");

    // A decision the workflow refuses (approving while changes are requested) shows the server's 409.
    const stale = reviewItem(page, ra);
    await actOn(stale, ra);
    await stale.getByRole("button", { name: "Approve" }).click();
    await stale.getByRole("alert").filter({ hasText: "Could not approve" }).waitFor(WAIT);
    expect(await text(stale.getByRole("alert"))).toContain("CHANGES_REQUESTED");

    // Another tab has its own session; signing out forgets the token.
    const other = await reviewer.context.newPage();
    await other.goto("/reviews");
    await other.getByLabel("Reviewer token").waitFor(WAIT);
    await other.close();
    await page.getByRole("button", { name: "Sign out" }).click();
    await page.getByLabel("Reviewer token").waitFor(WAIT);
    expect(await page.evaluate((key) => sessionStorage.getItem(key), TOKEN_KEY)).toBeNull();
    await done(reviewer);
  });
});

describe("the directory", () => {
  test("filters, debounced search, cursor paging and the empty state", async () => {
    const label = `dir-${uniqueCode("").slice(-8)}`;
    const word = `Pangolin${label.slice(-6)}`;
    const codes: string[] = [];
    for (let i = 0; i < 21; i++) {
      const p = await intake({
        name: `${word} item${i}`,
        labels: [label],
        agentType: i === 0 ? "TOOL_SERVER" : "ASSISTANT",
        packages:
          i === 0
            ? [{ registryType: "NPM", identifier: "@acme/pangolin", version: "1.0.0", transport: { type: "STDIO" } }]
            : undefined,
      });
      await approve(p.providerCode, i === 0 ? "OFFICIAL" : undefined);
      codes.push(p.providerCode);
    }
    const visitor = await open();
    const page = visitor.page;
    await page.goto(`/?labels=${label}`);
    await page.getByText("20 agents on page 1; more on the next page.").waitFor(WAIT);
    const seen = new Set(await page.locator(".card .code").allTextContents());
    await page.getByRole("button", { name: "Next →" }).click();
    await page.getByText("1 agent on page 2.").waitFor(WAIT);
    for (const c of await page.locator(".card .code").allTextContents()) seen.add(c);
    expect([...seen].sort()).toEqual([...codes].sort());
    expect(await page.getByRole("button", { name: "Next →" }).isDisabled()).toBe(true);
    await page.getByRole("button", { name: "← Previous" }).click();
    await page.getByText("20 agents on page 1; more on the next page.").waitFor(WAIT);

    // The facets are radio groups whose options say their counts; a choice applies at once.
    const facet = (group: string, option: RegExp) =>
      page.getByRole("group", { name: group, exact: true }).getByRole("radio", { name: option });
    await facet("Agent type", /^Tool server\s?, 1 agent$/).check();
    await page.getByText("1 agent on page 1.").waitFor(WAIT);
    expect(await page.locator(".card .code").allTextContents()).toEqual([codes[0]]);
    await facet("Agent type", /^Any type$/).check();
    await facet("Trust tier", /^Official\b/).check();
    await page.getByText("1 agent on page 1.").waitFor(WAIT);
    expect(new URL(page.url()).searchParams.get("trustTier")).toBe("OFFICIAL");
    await facet("Trust tier", /^Any tier$/).check();
    await page.getByText("20 agents on page 1; more on the next page.").waitFor(WAIT);
    // How it ships: one agent has an npm package over stdio.
    await facet("Package registry", /^npm\b/).check();
    await page.getByText("1 agent on page 1.").waitFor(WAIT);
    expect(await page.locator(".card .code").allTextContents()).toEqual([codes[0]]);
    await facet("Transport", /^stdio\b/).check();
    await page.getByText("1 agent on page 1.").waitFor(WAIT);
    expect(new URL(page.url()).searchParams.get("transport")).toBe("STDIO");
    await facet("Package registry", /^Any registry$/).check();
    await facet("Transport", /^Any transport$/).check();
    await page.getByText("20 agents on page 1; more on the next page.").waitFor(WAIT);

    // Typing a word asks once, after the pause, not once a key.
    const lists: string[] = [];
    page.on("request", (r) => {
      if (new URL(r.url()).pathname === "/api/v1/providers") lists.push(r.url());
    });
    await page.getByLabel("Search", { exact: true }).pressSequentially(`${word} item7`, { delay: 25 });
    await page.getByText("1 agent on page 1.").waitFor(WAIT);
    expect(lists).toHaveLength(1);
    expect(await page.locator(".card h2").allTextContents()).toEqual([`${word} item7`]);

    // Nothing matches: the empty state, and a way out.
    await page.getByLabel("Search", { exact: true }).fill("nothing-matches-this-xyzzy");
    await page.getByRole("heading", { name: "No agents match" }).waitFor(WAIT);
    await page.getByRole("main").getByRole("button", { name: "Clear filters" }).last().click();
    await page.locator(".card").first().waitFor(WAIT);
    expect(await page.getByRole("group", { name: "Labels" }).getByRole("checkbox", { checked: true }).count()).toBe(0);
    await done(visitor);
  });
});

describe("verified publishers", () => {
  /** The well-known files, by path, served where the verifying app sends https://example.test. */
  const files = new Map<string, string>();
  let web: Listening;
  beforeAll(async () => {
    web = await listen((req, res) => {
      const body = files.get(req.url ?? "");
      if (body === undefined) res.writeHead(404).end();
      else res.writeHead(200, { "content-type": "text/plain" }).end(body);
    });
  });
  afterAll(() => web?.close());

  /** Verifies example.test for an agent through the API, its proof served by the file server above. */
  async function verifyDomain(created: { providerCode: string; accessToken: string }): Promise<void> {
    const port = new URL(web.url).port;
    const verifier = appWith({ OUTBOUND_TEST_HOSTS: `example.test=127.0.0.1:${port}` });
    const path = `/api/v1/providers/${created.providerCode}/domains`;
    const asked = await call("POST", path, {
      app: verifier,
      token: created.accessToken,
      body: { domain: "example.test" },
    });
    files.set(`/.well-known/agent-registry/${created.providerCode}.txt`, `${asked.body.token}\n`);
    const checked = await call("POST", `${path}/example.test/check`, { app: verifier, token: created.accessToken });
    expect(checked.body.verified).toBe(true);
  }

  test("the queue filters by the endpoint's domain; the directory card says verified publisher in words", async () => {
    const label = `pv-${uniqueCode("").slice(-8)}`;
    const word = `Numbat${label.slice(-6)}`;
    const endpoint = { url: "https://api.example.test/a2a", protocol: "A2A", authScheme: "BEARER" };
    const verified = await intake({ name: `${word} Verified`, labels: [label], endpoint });
    const plain = await intake({ name: `${word} Plain`, labels: [label], endpoint });
    await verifyDomain(verified);
    const [rv, rp] = [await activeReviewCode(verified.providerCode), await activeReviewCode(plain.providerCode)];

    const reviewer = await open(DESKTOP, await reviewerToken("pv-reviewer"));
    const queue = reviewer.page;
    const asked: string[] = [];
    queue.on("request", (r) => {
      const url = new URL(r.url());
      if (url.pathname === "/api/v1/reviews/queue") asked.push(url.searchParams.get("endpointVerified") ?? "");
    });
    await queue.goto("/reviews");
    await queue.getByLabel("Search", { exact: true }).fill(word);
    await queue.waitForFunction(() => document.querySelectorAll("tbody.review").length === 2);
    expect(await text(reviewItem(queue, rv).locator('td[data-col="domain"]'))).toBe("Verified domain");
    expect(await text(reviewItem(queue, rp).locator('td[data-col="domain"]'))).toBe("Domain not verified");
    const shown = () => queue.locator("tbody.review").evaluateAll((items) => items.map((i) => i.dataset.review));
    const filter = queue.getByLabel("Endpoint domain");
    await filter.selectOption({ label: "Verified domain" });
    await queue.waitForFunction(() => document.querySelectorAll("tbody.review").length === 1);
    expect([await shown(), asked.at(-1)]).toEqual([[rv], "true"]);
    await filter.selectOption({ label: "Domain not verified" });
    await queue.waitForFunction(
      (code) => document.querySelector("tbody.review")?.getAttribute("data-review") === code,
      rp,
    );
    expect([await shown(), asked.at(-1)]).toEqual([[rp], "false"]);
    await filter.selectOption({ label: "Any domain" });
    await queue.waitForFunction(() => document.querySelectorAll("tbody.review").length === 2);
    expect(asked.at(-1)).toBe("");
    expect(await unlabelledControls(queue)).toEqual([]);
    await done(reviewer);

    for (const created of [verified, plain]) await approve(created.providerCode);
    const visitor = await open();
    const page = visitor.page;
    await page.goto(`/?labels=${label}`);
    await page.getByText("2 agents on page 1.").waitFor(WAIT);
    const card = (code: string) => page.locator(".card", { has: page.getByText(code, { exact: true }) });
    const badge = card(verified.providerCode).locator(".badge", { hasText: "Verified publisher" });
    expect(await badge.count()).toBe(1);
    // Words and a title, in the class of the profile's verified-domain badge.
    expect(await badge.getAttribute("class")).toBe("badge badge-good");
    expect(await badge.getAttribute("title")).toBe("The endpoint's domain is verified as the publisher's");
    expect(await text(card(plain.providerCode).locator(".badges"))).not.toContain("Verified");
    await screenshot(page, "directory-verified-publisher");
    await done(visitor);
  });

  test("the profile names its verified domain, and the signature check of the card it was imported from", async () => {
    const endpoint = { url: "https://api.example.test/a2a", protocol: "A2A", authScheme: "BEARER" };
    const verified = await intake({ endpoint });
    await verifyDomain(verified);
    const imported = await call("POST", "/api/v1/providers/import", {
      body: {
        format: "a2a",
        contactEmail: "owner@example.test",
        document: {
          name: `Imported ${uniqueCode("n")}`,
          description: "Imported from its card",
          supportedInterfaces: [{ url: endpoint.url, protocolBinding: "JSONRPC", protocolVersion: "1.0" }],
          version: "1.0.0",
          capabilities: {},
          defaultInputModes: ["text/plain"],
          defaultOutputModes: ["text/plain"],
          skills: [],
        },
      },
    });
    expect(imported.status).toBe(201);
    const visitor = await open();
    const page = visitor.page;
    await page.goto(`/providers/${verified.providerCode}`);
    const domain = page.locator(".badge", { hasText: "Verified domain: example.test" });
    await domain.waitFor(WAIT);
    expect(await domain.getAttribute("class")).toBe("badge badge-good");
    await screenshot(page, "profile-verified-domain");
    await page.goto(`/providers/${imported.body.providerCode}`);
    await page.locator(".badge", { hasText: "Unsigned card" }).waitFor(WAIT);
    expect(await page.locator(".badge", { hasText: "Verified domain" }).count()).toBe(0);
    await done(visitor);
  });
});

describe("lifecycle", () => {
  test("the directory card and the profile show DEPRECATED and RETIRED, the message and the successor; retired agents only when asked", async () => {
    const label = `lc-${uniqueCode("").slice(-8)}`;
    const [next, old, gone] = [
      await intake({ name: "Planner Two", labels: [label] }),
      await intake({ name: "Planner One", labels: [label] }),
      await intake({ name: "Planner Zero", labels: [label] }),
    ];
    for (const p of [next, old, gone]) await approve(p.providerCode);
    const set = (code: string, token: string, body: unknown) =>
      call("POST", `/api/v1/providers/${code}/lifecycle`, { token, body });
    expect(
      (
        await set(old.providerCode, old.accessToken, {
          state: "DEPRECATED",
          message: "Moved to v2",
          successorCode: next.providerCode,
        })
      ).status,
    ).toBe(200);
    expect((await set(gone.providerCode, gone.accessToken, { state: "RETIRED", message: "Shut down" })).status).toBe(
      200,
    );

    const visitor = await open();
    const page = visitor.page;
    await page.goto(`/?labels=${label}`);
    await page.getByText("2 agents on page 1.").waitFor(WAIT);
    const card = page.locator(".card", { has: page.getByText(old.providerCode, { exact: true }) });
    expect(await text(card.locator("[data-lifecycle]"))).toBe("Deprecated");
    expect(await text(card.locator(".lifecycle"))).toBe(
      `This agent is deprecated. Moved to v2 Use ${next.providerCode} instead.`,
    );
    expect(await page.locator(".card .code").allTextContents()).not.toContain(gone.providerCode);

    // The checkbox brings retired agents back (and is kept in the address).
    await page.getByLabel("Include retired agents").check();
    await page.getByText("3 agents on page 1.").waitFor(WAIT);
    expect(new URL(page.url()).searchParams.get("includeRetired")).toBe("true");
    const retired = page.locator(".card", { has: page.getByText(gone.providerCode, { exact: true }) });
    expect(await text(retired.locator("[data-lifecycle]"))).toBe("Retired");
    expect(await text(retired.locator(".lifecycle"))).toBe("This agent is retired. Shut down");

    // The successor link leads to its profile, which names its predecessor.
    await card.getByRole("link", { name: next.providerCode }).click();
    await page.getByRole("heading", { level: 1, name: "Planner Two" }).waitFor(WAIT);
    expect(await text(page.locator(".predecessors"))).toBe(`Succeeds ${old.providerCode}.`);
    await page.goto(`/providers/${old.providerCode}`);
    await page.getByRole("heading", { level: 1, name: "Planner One" }).waitFor(WAIT);
    expect(await text(page.locator(".profile-head [data-lifecycle]"))).toBe("Deprecated");
    expect(await text(page.locator(".profile-head .lifecycle"))).toContain("Moved to v2");
    await screenshot(page, "profile-deprecated");
    await done(visitor);
  });
});

describe("the profile", () => {
  test("every section, the timeline, and versions with the diff to the one before", async () => {
    const p = await intake({
      description: "Routes vans.\nAlso bikes.",
      capabilities: [{ key: "plan", name: "Plan a route", tags: ["maps"], inputModes: ["text/plain"] }],
      models: [{ vendor: "Example AI", model: "m-1", role: "PRIMARY", contextWindow: 32000 }],
      tools: [{ name: "geocode", kind: "HTTP", scopes: ["READ_ONLY"] }],
      policy: { humanOversight: "ALWAYS", allowedUseCases: ["Routing"] },
      roles: [{ subject: "ops@example.com", role: "OWNER" }],
    });
    const patched = await call("PATCH", `/api/v1/providers/${p.providerCode}`, {
      token: p.accessToken,
      body: { summary: "Plans routes for vans and bikes", labels: ["maps", "bikes"] },
    });
    expect(patched.status).toBe(200);
    await approve(p.providerCode, "TRUSTED");

    const visitor = await open();
    const page = visitor.page;
    await page.goto(`/providers/${p.providerCode}`);
    await page.getByRole("heading", { level: 1, name: "Route Planner" }).waitFor(WAIT);
    for (const section of [
      "About",
      "Endpoint",
      "Capabilities",
      "Models",
      "Tools",
      "Usage policy",
      "People and roles",
      "Review timeline",
      "Version history",
    ]) {
      await page.getByRole("region", { name: section, exact: true }).waitFor(WAIT);
    }
    // What only the owner and reviewers see is not there for a visitor.
    expect(await page.getByRole("region", { name: "Contact", exact: true }).count()).toBe(0);
    expect(await page.getByRole("region", { name: "Access tokens", exact: true }).count()).toBe(0);
    expect(await text(page.getByRole("region", { name: "Models", exact: true }))).toContain("32,000");
    expect(await text(page.getByRole("region", { name: "Usage policy", exact: true }))).toContain("Always");
    const timeline = await page
      .locator(".timeline li")
      .evaluateAll((items) => items.map((i) => i.getAttribute("data-kind")));
    expect(timeline).toEqual(["SUBMITTED", "TOKEN_ISSUED", "PROFILE_UPDATED", "APPROVED"]);

    const versions = page.getByRole("region", { name: "Version history", exact: true });
    await versions.locator("li.version").nth(1).waitFor(WAIT);
    expect(
      await versions.locator("li.version").evaluateAll((l) => l.map((i) => i.getAttribute("data-version"))),
    ).toEqual(["2", "1"]);
    await versions.getByRole("button", { name: "Show changes from version 1" }).click();
    const diff = versions.getByRole("table", { name: "Changes from version 1 to version 2" });
    await diff.waitFor(WAIT);
    const rows = await diff
      .locator("tbody tr")
      .evaluateAll((trs) => trs.map((tr) => [...tr.children].map((c) => (c.textContent ?? "").trim())));
    expect(rows).toEqual([
      ["summary", "Plans delivery routes across a city", "Plans routes for vans and bikes"],
      ["labels", "maps, routing", "maps, bikes"],
    ]);
    // The rows come from the server's JSON Patch, which is shown too; the agent card is in the Connect panel.
    await versions.getByText("As a JSON Patch (RFC 6902)").click();
    expect(JSON.parse(await text(versions.locator("details.patch pre")))).toEqual([
      { op: "replace", path: "/summary", value: "Plans routes for vans and bikes" },
      { op: "replace", path: "/labels/1", value: "bikes" },
    ]);
    expect(await text(page.getByRole("region", { name: "Connect", exact: true }).locator("#connect-card"))).toBe(
      `${server.url}/api/v1/providers/${p.providerCode}/agent-card.json`,
    );
    expect(
      await versions.getByRole("button", { name: "Hide changes from version 1" }).getAttribute("aria-expanded"),
    ).toBe("true");
    await done(visitor);

    // A reviewer signed in on the tab sees contact and tokens too.
    const reviewer = await open(DESKTOP, await reviewerToken());
    await reviewer.page.goto(`/providers/${p.providerCode}`);
    await reviewer.page.getByRole("region", { name: "Access tokens", exact: true }).waitFor(WAIT);
    expect(await text(reviewer.page.getByRole("region", { name: "Contact", exact: true }))).toContain(
      "ops@example.com",
    );
    await done(reviewer);
  });

  test("recent changes: the agent's events, newest first, with the fields each changed; review events for reviewers", async () => {
    const p = await intake({ labels: ["maps"] });
    // Not yet in the public directory: a visitor may see none of its events.
    const early = await open();
    await early.page.goto(`/providers/${p.providerCode}`);
    const earlyChanges = early.page.getByRole("region", { name: "Recent changes", exact: true });
    await earlyChanges.getByText("No changes recorded yet that you may see.").waitFor(WAIT);
    await done(early);

    await approve(p.providerCode);
    const patched = await call("PATCH", `/api/v1/providers/${p.providerCode}`, {
      token: p.accessToken,
      body: { summary: "Plans routes for vans", labels: ["maps", "vans"] },
    });
    expect(patched.status).toBe(200);

    const visitor = await open();
    const page = visitor.page;
    const reads: string[] = [];
    page.on("request", (r) => {
      if (new URL(r.url()).pathname === "/api/v1/events") reads.push(new URL(r.url()).search);
    });
    await page.goto(`/providers/${p.providerCode}`);
    const changes = page.getByRole("region", { name: "Recent changes", exact: true });
    const items = changes.locator("li.change");
    await items.first().waitFor(WAIT);
    expect(reads).toEqual([`?providerCode=${p.providerCode}&last=10`]);
    const seen = await items.evaluateAll((lis) =>
      lis.map((li) => ({ kind: li.getAttribute("data-kind"), seq: Number(li.getAttribute("data-seq")) })),
    );
    // Newest first; the review's own events are not a visitor's.
    expect(seen.map((e) => e.seq)).toEqual([...seen.map((e) => e.seq)].sort((a, b) => b - a));
    expect(seen.map((e) => e.kind)).toEqual(["PROVIDER_UPDATED", "STAGE_CHANGED"]);
    const newest = items.first();
    expect(await text(newest)).toContain("Profile updated · version 2");
    expect(await text(newest.locator(".fields"))).toBe("Changed: summary, labels");
    expect(await newest.locator("time").getAttribute("datetime")).toMatch(/^\d{4}-\d{2}-\d{2}T/);
    expect(await text(newest.locator("time"))).toMatch(/now|seconds? ago|minutes? ago/);
    expect(await text(items.nth(1))).toContain("Review stage changed");
    expect(await text(items.nth(1).locator(".fields"))).toBe("Changed: reviewStage");
    await done(visitor);

    // A reviewer signed in on the tab sees the review's events too.
    const reviewer = await open(DESKTOP, await reviewerToken());
    await reviewer.page.goto(`/providers/${p.providerCode}`);
    const reviewerItems = reviewer.page
      .getByRole("region", { name: "Recent changes", exact: true })
      .locator("li.change");
    await reviewerItems.first().waitFor(WAIT);
    const kinds = await reviewerItems.evaluateAll((lis) => lis.map((li) => li.getAttribute("data-kind")));
    expect(kinds).toContain("REVIEW_DECIDED");
    expect(kinds).toContain("PROVIDER_CREATED");
    expect(kinds.length).toBeLessThanOrEqual(10);
    await done(reviewer);
  });

  test("an agent that does not exist (or may not be seen) says so", async () => {
    const visitor = await open();
    await visitor.page.goto("/providers/no-such-agent-here");
    await visitor.page.getByRole("heading", { name: "Agent not found" }).waitFor(WAIT);
    await done(visitor);
  });
});

describe("slow and failed requests", () => {
  test("a failed API request shows the error and a retry, on every page", async () => {
    const p = await intake();
    await approve(p.providerCode);
    const visitor = await open();
    const page = visitor.page;
    // The directory's first page comes with the page (rendered by the server); a search the page
    // sends itself is what can fail.
    await page.goto("/");
    await page.route("**/api/v1/**", (route) => route.abort("failed"));
    await page.getByLabel("Search", { exact: true }).fill("route");
    const alert = page.getByRole("alert").filter({ hasText: "Could not load the agents." });
    await alert.waitFor(WAIT);
    expect(await text(alert)).toContain("could not be reached");
    await page.unroute("**/api/v1/**");
    await alert.getByRole("button", { name: "Try again" }).click();
    await page.locator(".card").first().waitFor(WAIT);
    expect(await alert.count()).toBe(0);

    // A profile comes with its page too; the sections its script reads show their failure.
    await page.route("**/api/v1/**", (route) => route.abort("failed"));
    await page.goto(`/providers/${p.providerCode}`);
    await page.getByRole("alert").filter({ hasText: "Could not load the versions." }).waitFor(WAIT);

    await page.goto("/intake");
    const about = page.getByRole("region", { name: "About the agent" });
    await about.getByLabel("Name", { exact: true }).fill("Offline Agent");
    await about.getByLabel("Summary").fill("Submitted while the network is down");
    await about.getByLabel("Agent type").selectOption({ label: "Assistant" });
    await page.getByLabel("Contact email").fill("ops@example.com");
    await page.getByLabel("Endpoint URL").fill("https://offline.example.com");
    await page.getByLabel("Protocol").selectOption({ label: "MCP" });
    await page.getByLabel("Authentication").selectOption({ label: "None" });
    await page.getByRole("button", { name: "Submit for review" }).click();
    await page.getByRole("alert").filter({ hasText: "The intake was not sent" }).waitFor(WAIT);
    // The form and what was typed are still there, to send again.
    expect(await about.getByLabel("Name", { exact: true }).inputValue()).toBe("Offline Agent");

    await page.goto("/reviews");
    await page.getByLabel("Reviewer token").fill(await reviewerToken());
    await page.getByRole("button", { name: "Sign in" }).click();
    await page.getByText("Network error").waitFor(WAIT);
    await done(visitor);
  });

  test("a slow request shows progress, then the answer", async () => {
    const p = await intake();
    await approve(p.providerCode);
    const visitor = await open();
    const page = visitor.page;
    let release: () => void = () => {};
    const held = new Promise<void>((resolve) => {
      release = resolve;
    });
    await page.route("**/api/v1/providers**", async (route) => {
      await held;
      await route.fallback();
    });
    await page.goto("/");
    await page.getByLabel("Search", { exact: true }).fill("route");
    await page.getByRole("status").filter({ hasText: "Loading agents…" }).waitFor(WAIT);
    expect(await page.locator(".results").getAttribute("aria-busy")).toBe("true");
    release();
    // The server's first page stays until the search's answer replaces it.
    await page.waitForFunction(() => !document.querySelector(".results")?.hasAttribute("aria-busy"), null, WAIT);
    await page.locator(".card").first().waitFor(WAIT);

    // Even before a page's script has arrived, the profile is there: the server rendered it.
    let releaseScripts: () => void = () => {};
    const scripts = new Promise<void>((resolve) => {
      releaseScripts = resolve;
    });
    await page.route("**/assets/*.js", async (route) => {
      await scripts;
      await route.fallback();
    });
    await page.goto(`/providers/${p.providerCode}`, { waitUntil: "commit" });
    await page.getByRole("heading", { level: 1, name: "Route Planner" }).waitFor(WAIT);
    expect(await page.getByText("Loading…", { exact: true }).count()).toBe(0);
    releaseScripts();
    await page.locator("#versions li.version").first().waitFor(WAIT);
    await done(visitor);
  });
});

describe("GraphiQL", () => {
  test("works with no network: loads from the server alone and answers a query", async () => {
    const visitor = await open();
    const page = visitor.page;
    await page.goto(`/graphql?query=${encodeURIComponent("{ api { name graphqlUrl } }")}`);
    const run = page.locator(".graphiql-execute-button");
    await run.waitFor(WAIT);
    await run.click();
    await page.locator(".graphiql-response").getByText("Agent Registry").first().waitFor(WAIT);
    expect(await text(page.locator(".graphiql-response"))).toContain("graphqlUrl");
    await done(visitor);
  });
});

describe("every page at phone and desktop width", () => {
  test("fits the screen, labels its controls, and is saved as a screenshot", async () => {
    const p = await intake({
      name: "Screenshot Agent",
      description: "An agent with every section filled in, for the screenshots.",
      capabilities: [
        { key: "plan", name: "Plan a route", description: "Shortest route for a van", tags: ["maps", "routing"] },
        { key: "eta", name: "Estimate arrival", inputModes: ["application/json"], outputModes: ["text/plain"] },
      ],
      models: [{ vendor: "Example AI", model: "router-large-2026-01", role: "PRIMARY", contextWindow: 200000 }],
      tools: [
        { name: "geocode", kind: "HTTP", description: "Address to coordinates", scopes: ["READ_ONLY", "EXTERNAL"] },
        { name: "dispatch", kind: "FUNCTION", scopes: ["WRITE", "DESTRUCTIVE"] },
      ],
      policy: {
        humanOversight: "ON_REQUEST",
        dataRetentionDays: 30,
        allowedUseCases: ["Routing"],
        prohibitedUseCases: ["Surveillance"],
        termsUrl: "https://agent.example.com/terms",
      },
      roles: [{ subject: "ops@example.com", role: "OWNER" }],
    });
    await call("PATCH", `/api/v1/providers/${p.providerCode}`, { token: p.accessToken, body: { labels: ["maps"] } });
    await approve(p.providerCode, "VERIFIED");
    await intake({ name: "Screenshot Waiting" });
    // An admin (a reviewer too), so the admin pages show what they manage.
    const token = await reviewerToken("screenshots", ["reviewer", "admin"]);
    const source = await call("POST", "/api/v1/mirror/sources", {
      token,
      body: { url: "https://registry.example.test", filter: { include: ["io.github.*"] }, intervalSeconds: 600 },
    });
    expect(source.status).toBe(201);
    const pages: [string, string, (page: Page) => Promise<unknown>][] = [
      ["directory", "/", (page) => page.locator(".card").first().waitFor(WAIT)],
      ["intake", "/intake", (page) => page.getByRole("button", { name: "Submit for review" }).waitFor(WAIT)],
      ["profile", `/providers/${p.providerCode}`, (page) => page.locator("li.version").nth(1).waitFor(WAIT)],
      ["reviews", "/reviews", (page) => page.locator("tbody.review").first().waitFor(WAIT)],
      ["webhooks", "/webhooks", (page) => page.getByText(/\d+ subscriptions?[.;]/).waitFor(WAIT)],
      ["mirror", "/admin/mirror-sources", (page) => page.locator("article.mirror-source").first().waitFor(WAIT)],
      ["graphiql", "/graphql", (page) => page.locator(".graphiql-execute-button").waitFor(WAIT)],
    ];
    for (const [width, viewport] of [
      ["phone", PHONE],
      ["desktop", DESKTOP],
    ] as const) {
      const opened = await open(viewport, token);
      for (const [name, path, ready] of pages) {
        await opened.page.goto(path);
        await ready(opened.page);
        if (name !== "graphiql") {
          expect([name, width, await overflowsHorizontally(opened.page)]).toEqual([name, width, false]);
          expect([name, await unlabelledControls(opened.page)]).toEqual([name, []]);
        }
        await screenshot(opened.page, `${name}-${width}`);
      }
      // Keyboard: the first Tab reaches the skip link, which moves focus to the content.
      await opened.page.goto("/intake");
      await opened.page.getByRole("button", { name: "Submit for review" }).waitFor(WAIT);
      await opened.page.keyboard.press("Tab");
      expect(await opened.page.evaluate(() => document.activeElement?.textContent)).toBe("Skip to content");
      await opened.page.keyboard.press("Enter");
      expect(await opened.page.evaluate(() => document.activeElement?.id)).toBe("main");
      await done(opened);
    }
  });
});
