/**
 * Health in a real browser against the real app on a real port: the directory's badge in words and
 * its health filter (kept in the address), the profile's Health section with uptime and recent
 * checks, the owner's "Check now" and its rate limit, drift, and the reviewers' list of agents down
 * for more than a day. The endpoints are peers on loopback (tests/health/peers.ts) reached through
 * the outbound door by OUTBOUND_TEST_HOSTS; no prober runs in this server, so an agent is checked
 * only when a test asks (over REST, or with the page's button).
 */
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, jest, test } from "@jest/globals";
import type { Browser, Locator } from "playwright-core";
import { intakeBody, uniqueCode } from "../builders.ts";
import { OPEN_TOOLS, type Peers, startPeers } from "../health/peers.ts";
import { type App, approve, appWith, call, closeAfterAll, db, reviewerToken } from "../helpers.ts";
import {
  DESKTOP,
  expectClean,
  launchBrowser,
  openContext,
  type Running,
  screenshot,
  startServer,
} from "./browser.helpers.ts";

jest.setTimeout(60_000);

const WAIT = { timeout: 10_000 };
const REVIEWER_TOKEN_KEY = "agent-registry.reviewer-token";

let peers: Peers;
let app: App;
let server: Running;
let browser: Browser;

/** A loopback port nothing listens on: an endpoint there is refused at once, so it is DOWN. */
async function closedPort(): Promise<number> {
  const probe = createServer();
  await new Promise<void>((resolve) => probe.listen(0, "127.0.0.1", resolve));
  const { port } = probe.address() as AddressInfo;
  await new Promise((resolve) => probe.close(resolve));
  return port;
}

beforeAll(async () => {
  const [started, refused, launched] = await Promise.all([startPeers(), closedPort(), launchBrowser()]);
  peers = started;
  closeAfterAll(() => peers.close());
  browser = launched;
  app = appWith({
    OUTBOUND_TEST_HOSTS: `${peers.testHosts},down.test=127.0.0.1:${refused}`,
    HEALTH_TIMEOUT_MS: "2000",
    HEALTH_LEASE_MS: "10000",
  });
  server = await startServer(app);
});

afterAll(async () => {
  await browser?.close();
  await server?.close();
});

interface Registered {
  providerCode: string;
  accessToken: string;
}

/** An MCP agent at `url`, submitted and not yet reviewed. */
async function submitted(name: string, url: string, extra: Record<string, unknown> = {}): Promise<Registered> {
  const answer = await call("POST", "/api/v1/providers", {
    app,
    body: intakeBody({
      providerCode: uniqueCode("hp"),
      name,
      endpoint: { url, protocol: "MCP", authScheme: "NONE" },
      ...extra,
    }),
  });
  expect(answer.status).toBe(201);
  return answer.body as Registered;
}

/** An approved MCP agent at `url`. */
async function agent(name: string, url: string): Promise<Registered> {
  const made = await submitted(name, url);
  await approve(made.providerCode);
  return made;
}

/** An approved agent that ships as a package, without an endpoint: nothing to probe. */
async function packaged(name: string): Promise<Registered> {
  const body = intakeBody({
    providerCode: uniqueCode("hp"),
    name,
    agentType: "TOOL_SERVER",
    packages: [
      { registryType: "NPM", identifier: "@example/packaged", version: "1.0.0", transport: { type: "STDIO" } },
    ],
  });
  delete body.endpoint;
  const answer = await call("POST", "/api/v1/providers", { app, body });
  expect(answer.status).toBe(201);
  const made = answer.body as Registered;
  await approve(made.providerCode);
  return made;
}

/** A check now, over REST, as the owner. */
async function checkNow(a: Registered): Promise<string> {
  const answer = await call("POST", `/api/v1/providers/${a.providerCode}/health/check`, {
    app,
    token: a.accessToken,
  });
  expect(answer.status).toBe(200);
  return answer.body.state;
}

/** A fresh, watched context (its own sessionStorage), with a reviewer signed in if given. */
async function open(reviewer?: string) {
  const opened = await openContext(browser, server.url, DESKTOP);
  if (reviewer) {
    await opened.context.addInitScript(
      ({ key, token }) => {
        if (location.protocol === "http:") sessionStorage.setItem(key, token);
      },
      { key: REVIEWER_TOKEN_KEY, token: reviewer },
    );
  }
  return { ...opened, page: await opened.context.newPage() };
}

const text = async (locator: Locator) => ((await locator.textContent()) ?? "").replace(/\s+/g, " ").trim();
/** A list of facts as a person reads it: each term, then its value (`Latency 12 ms`). */
const read = (facts: Locator) =>
  facts.evaluate((dl) =>
    [...dl.children].map((part) => (part.textContent ?? "").replace(/\s+/g, " ").trim()).join(" "),
  );

describe("the directory", () => {
  test("says each probed agent's health in words, and its health filter narrows the list and stays in the address", async () => {
    const word = `Heron${uniqueCode("w").slice(-6)}`;
    const up = await agent(`${word} Open`, peers.mcpOpen.url);
    const wrong = await agent(`${word} Html`, peers.html.url);
    const unprobed = await packaged(`${word} Packaged`);
    expect([await checkNow(up), await checkNow(wrong)]).toEqual(["UP", "WRONG_PROTOCOL"]);

    const visitor = await open();
    const page = visitor.page;
    await page.goto(`/?search=${word}`);
    const card = (code: string) => page.locator(".card").filter({ has: page.locator(`#card-${code}`) });
    await card(unprobed.providerCode).waitFor(WAIT);
    expect(await page.locator(".card").count()).toBe(3);
    const upBadge = card(up.providerCode).locator("[data-health]");
    expect(await text(upBadge)).toBe("Up");
    expect(await upBadge.getAttribute("title")).toContain("answers the protocol it declares");
    expect(await upBadge.getAttribute("class")).toContain("badge-good");
    expect(await text(card(wrong.providerCode).locator("[data-health]"))).toBe("Wrong protocol");
    // Nothing is said of an agent that is not probed.
    expect(await card(unprobed.providerCode).locator("[data-health]").count()).toBe(0);

    // The health facet counts each state of the query's agents; Up leaves the wrong protocol and the unprobed one out.
    const health = page.getByRole("group", { name: "Health" });
    const option = (words: string) => health.getByRole("checkbox", { name: new RegExp(`^${words}\\s?, 1 agent$`) });
    await option("Up").check();
    await page.waitForURL((url) => url.searchParams.get("health") === "UP", WAIT);
    await card(wrong.providerCode).waitFor({ state: "detached", ...WAIT });
    expect(await page.locator(".card h2").allTextContents()).toEqual([`${word} Open`]);

    // The address keeps the filter: a reload (or a shared link) shows the same list.
    await page.reload();
    await card(up.providerCode).waitFor(WAIT);
    expect(await option("Up").isChecked()).toBe(true);
    expect(await page.locator(".card").count()).toBe(1);

    await option("Up").uncheck();
    await card(unprobed.providerCode).waitFor(WAIT);
    await option("Wrong protocol").check();
    await page.waitForURL((url) => url.searchParams.get("health") === "WRONG_PROTOCOL", WAIT);
    await card(up.providerCode).waitFor({ state: "detached", ...WAIT });
    expect(await page.locator(".card h2").allTextContents()).toEqual([`${word} Html`]);
    await visitor.context.close();
    expectClean(visitor.watch);
  });
});

describe("the profile", () => {
  test("the owner signs in, checks now and sees health with uptime, recent checks and drift; asked again, is told when to try again", async () => {
    // Declares one of the server's two tools and one it does not list: drift for the owner to see.
    const mine = await submitted(`Kestrel ${uniqueCode("w").slice(-6)}`, peers.mcpOpen.url, {
      tools: [
        { name: OPEN_TOOLS[0], kind: "FUNCTION" },
        { name: "retired_tool", kind: "FUNCTION" },
      ],
    });
    const owner = await open();
    const page = owner.page;
    const checks: number[] = [];
    page.on("response", (r) => {
      if (r.request().method() === "POST" && r.url().endsWith(`/providers/${mine.providerCode}/health/check`)) {
        checks.push(r.status());
      }
    });

    // Not checked yet; a visitor may not ask for a check, nor see drift.
    await page.goto(`/providers/${mine.providerCode}`);
    const health = page.getByRole("region", { name: "Health", exact: true });
    await health.waitFor(WAIT);
    expect(await text(health.locator(".not-probed"))).toMatch(/^Not checked yet/);
    expect(await health.getByRole("button", { name: "Check now" }).count()).toBe(0);
    expect(await page.locator(".profile-head [data-health]").count()).toBe(0);

    // The owner signs in with the agent's token, on the section itself.
    await health.getByText("Your agent? Sign in with its access token to check it now").click();
    await health.getByLabel("Access token").fill(mine.accessToken);
    await health.getByRole("button", { name: "Sign in" }).click();
    await page.getByText("You are signed in with this agent's access token").waitFor(WAIT);
    expect(await health.locator(".drift-panel").count()).toBe(0);

    // Check now: the section shows what the check found, and so does the heading.
    const button = health.getByRole("button", { name: "Check now" });
    await button.click();
    await health.getByText("Checked just now: Up.").waitFor(WAIT);
    expect(await text(health.locator(".health-state"))).toMatch(/^Up since (a moment ago|\d+ seconds? ago) \(/);
    expect(await text(page.locator(".profile-head [data-health]"))).toBe("Up");
    expect(await text(health.locator("[data-window='24 hours']"))).toBe("100% last 24 hours");
    expect(await text(health.locator("[data-window='30 days']"))).toBe("100% last 30 days");
    const facts = await read(health.locator(".facts").first());
    expect(facts).toMatch(/Latency \d+ ms/);
    expect(facts).toContain("answers MCP and lists 2 tools");
    // A first result sets the state at once: one check.
    const recent = health.getByRole("list", { name: "Recent checks, newest first" }).locator("li");
    expect(await recent.count()).toBe(1);
    expect(await text(recent.first())).toMatch(/Up \d+ ms .*answers MCP and lists 2 tools/);

    // Drift, read again after the check: what the server lists against what the profile declares.
    const drift = health.getByRole("region", { name: "Drift" });
    await drift.waitFor(WAIT);
    const driftFacts = await read(drift.locator(".facts"));
    expect(driftFacts).toContain(`Not declared ${OPEN_TOOLS[1]}`);
    expect(driftFacts).toContain("Missing retired_tool");

    // Asked again at once: refused for a minute, said in words; the button waits.
    await button.click();
    await health.getByText(/You can check again in (\d+ seconds|1 minute)\./).waitFor(WAIT);
    expect(await button.isDisabled()).toBe(true);
    expect(checks).toEqual([200, 429]);
    await screenshot(page, "profile-health");
    await owner.context.close();
    expectClean(owner.watch);

    // Anyone sees the health the owner's check found; checking and drift stay the owner's.
    const visitor = await open();
    await visitor.page.goto(`/providers/${mine.providerCode}`);
    const seen = visitor.page.getByRole("region", { name: "Health", exact: true });
    await seen.locator(".health-state").waitFor(WAIT);
    expect(await text(visitor.page.locator(".profile-head [data-health]"))).toBe("Up");
    expect(await seen.getByRole("button", { name: "Check now" }).count()).toBe(0);
    expect(await seen.locator(".drift-panel").count()).toBe(0);
    await visitor.context.close();
    expectClean(visitor.watch);
  });

  test("the owner of a private agent signs in from the page that says it is not found", async () => {
    const hidden = await submitted("Hidden heron", peers.mcpOpen.url, { visibility: "PRIVATE" });
    const owner = await open();
    const page = owner.page;
    await page.goto(`/providers/${hidden.providerCode}`);
    await page.getByRole("heading", { name: "Agent not found" }).waitFor(WAIT);
    await page.getByText("Your agent? Sign in with its access token").click();
    await page.getByLabel("Access token").fill(hidden.accessToken);
    await page.getByRole("button", { name: "Sign in" }).click();
    await page.getByRole("heading", { name: "Hidden heron" }).waitFor(WAIT);
    const health = page.getByRole("region", { name: "Health", exact: true });
    await health.getByRole("button", { name: "Check now" }).waitFor(WAIT);
    // Signing out forgets the token: the agent is not found again.
    await page.getByRole("button", { name: "Sign out" }).click();
    await page.getByRole("heading", { name: "Agent not found" }).waitFor(WAIT);
    expect(await page.evaluate(() => sessionStorage.length)).toBe(0);
    await owner.context.close();
    expectClean(owner.watch);
  });

  test("an agent without an endpoint says why it is not probed", async () => {
    const cli = await packaged("Packaged CLI");
    const visitor = await open();
    await visitor.page.goto(`/providers/${cli.providerCode}`);
    const health = visitor.page.getByRole("region", { name: "Health", exact: true });
    await health.locator(".not-probed").waitFor(WAIT);
    expect(await text(health.locator(".not-probed"))).toBe(
      "Not probed: the agent has no endpoint; it ships as packages that a client starts itself.",
    );
    await visitor.context.close();
    expectClean(visitor.watch);
  });
});

describe("the reviewers' dashboard", () => {
  test("lists the approved agents down for more than a day, each linking to its profile", async () => {
    const reviewer = await reviewerToken("health-reviewer");
    const opened = await open(reviewer);
    const page = opened.page;
    await page.goto("/reviews");
    const panel = page.getByRole("region", { name: "Down for more than a day" });
    await panel.getByText("None: no approved agent has been down for more than a day.").waitFor(WAIT);

    const gone = await agent(`Gone ${uniqueCode("w").slice(-6)}`, "https://down.test/mcp");
    expect(await checkNow(gone)).toBe("DOWN");
    // Down for two days: the one thing a test cannot wait for.
    const { id } = await db.provider.findUniqueOrThrow({ where: { providerCode: gone.providerCode } });
    await db.providerHealth.update({
      where: { providerId: id },
      data: { since: new Date(Date.now() - 2 * 86_400_000) },
    });

    await panel.getByRole("button", { name: "Refresh" }).click();
    const item = panel.locator(`li[data-provider="${gone.providerCode}"]`);
    await item.waitFor(WAIT);
    expect(await text(item)).toMatch(/down since 2 days ago/);
    await item.getByRole("link").click();
    await page.waitForURL(`**/providers/${gone.providerCode}#health`, WAIT);
    const health = page.getByRole("region", { name: "Health", exact: true });
    await health.locator(".health-state").waitFor(WAIT);
    expect(await text(health.locator(".health-state"))).toMatch(/^Down since 2 days ago/);
    await opened.context.close();
    expectClean(opened.watch);
  });
});
