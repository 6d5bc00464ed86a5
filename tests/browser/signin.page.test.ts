/**
 * A person signs in through the identity provider in a real browser: a real OpenID provider
 * (oidc-provider, tests/auth/idp.ts) on one loopback port, the registry (READ_ACCESS=authenticated)
 * on another. An admin signs in at the IdP's login page from /reviews, works the queue, makes an API
 * key on /admin/api-keys, signs out (at the IdP too), and finds the queue closed to the browser.
 */
import type { IncomingMessage, ServerResponse } from "node:http";
import { afterAll, beforeAll, expect, jest, test } from "@jest/globals";
import type { Browser, Page } from "playwright-core";
import { type Idp, secretOf, startIdp, testHosts } from "../auth/idp.ts";
import {
  type App,
  activeReviewCode,
  appWith,
  call,
  intake,
  type Listening,
  listen,
  reviewerToken,
} from "../helpers.ts";
import { expectClean, launchBrowser, openContext, screenshot } from "./browser.helpers.ts";

jest.setTimeout(120_000);

const WAIT = { timeout: 15_000 };

let registry: Listening;
let idp: Idp;
let app: App;
let browser: Browser;

beforeAll(async () => {
  // The registry's address is in the IdP's client (its redirect URI) and the IdP's in the registry's
  // configuration: the registry listens first, and is handed its app once both are known.
  let handler: ((req: IncomingMessage, res: ServerResponse) => void) | undefined;
  [registry, browser] = await Promise.all([
    listen((req, res) => (handler ? handler(req, res) : res.writeHead(503).end())),
    launchBrowser(),
  ]);
  idp = await startIdp({
    audiences: [registry.url],
    clients: {},
    users: { ada: { groups: ["registry-admins"], name: "Ada Admin" } },
    webClients: {
      "registry-web": {
        redirectUris: [`${registry.url}/auth/callback`],
        postLogoutRedirectUris: [`${registry.url}/`],
      },
    },
  });
  app = appWith({
    PUBLIC_URL: registry.url,
    READ_ACCESS: "authenticated",
    OIDC_ISSUER: idp.issuer,
    OIDC_CLIENT_ID: "registry-web",
    OIDC_CLIENT_SECRET: secretOf("registry-web"),
    OIDC_ROLES_CLAIM: "groups",
    OIDC_ROLE_MAP: "registry-readers=reader,registry-reviewers=reviewer,registry-admins=admin",
    OUTBOUND_TEST_HOSTS: testHosts(idp),
  });
  handler = app;
});

afterAll(async () => {
  await idp?.stop();
});

/** A review of the page's queue: its row of the table and, opened, its actions. */
const reviewItem = (page: Page, reviewCode: string) => page.locator(`tbody[data-review="${reviewCode}"]`);

test("an admin signs in at the IdP, works the queue, makes an API key, signs out, and the queue is closed", async () => {
  const agent = await intake();
  const reviewCode = await activeReviewCode(agent.providerCode);
  const { context, watch } = await openContext(browser, registry.url, undefined, [idp.issuer]);
  const page = await context.newPage();

  // 1. Not signed in: /reviews (a table's link: newest first) leads with the organisation's
  // sign-in; pasting a token is the fallback, folded away.
  await page.goto("/reviews?sort=NEWEST");
  await page.getByRole("link", { name: "Sign in" }).first().waitFor(WAIT);
  expect(await page.getByLabel("Reviewer token").isVisible()).toBe(false);
  await page.getByText("Or paste a reviewer token").waitFor(WAIT);
  await page.getByRole("main").getByRole("link", { name: "Sign in" }).click();

  // 2. The IdP's own login page, then back on the same table, signed in.
  await page.waitForURL(`${idp.issuer}/interaction/**`, WAIT);
  await page.getByLabel("User name").fill("ada");
  await page.getByRole("button", { name: "Sign in" }).click();
  await page.waitForURL(`${registry.url}/reviews?sort=NEWEST`, WAIT);
  await page.getByRole("table", { name: "Active reviews, newest first" }).waitFor(WAIT);
  expect(await page.locator('th[data-column="opened"]').getAttribute("aria-sort")).toBe("descending");
  await page.getByText("Signed in as").waitFor(WAIT);
  expect(await page.locator("#reviewer-name").textContent()).toBe("ada");
  expect(await page.locator("#account").textContent()).toContain("Ada Admin");
  // The session is a cookie the page cannot read.
  expect(await page.evaluate(() => document.cookie)).toBe("");

  // 3. The queue: approve the agent.
  const item = reviewItem(page, reviewCode);
  await item.waitFor(WAIT);
  await item.getByRole("button", { name: reviewCode, exact: true }).click();
  await item.getByLabel("Trust tier on approval").selectOption({ label: "Verified" });
  await item.getByLabel("Note").fill("Checked by hand");
  await item.getByRole("button", { name: "Approve" }).click();
  await item.waitFor({ state: "detached", ...WAIT });
  const approved = await call("GET", `/api/v1/providers/${agent.providerCode}`, { token: await reviewerToken() });
  expect([approved.body.reviewStage, approved.body.trustTier]).toEqual(["APPROVED", "VERIFIED"]);
  const timeline = approved.body.reviewTimeline.map((e: { kind: string; actor: string }) => [e.kind, e.actor]);
  expect(timeline).toContainEqual(["APPROVED", "reviewer:ada"]);

  // 4. An API key, shown once; it reads.
  await page.getByRole("link", { name: "API keys" }).click();
  await page.getByRole("heading", { name: "A new key" }).waitFor(WAIT);
  await page.getByLabel("Name").fill("Browser-made key");
  await page.getByRole("button", { name: "Make a key" }).click();
  const secret = await page.locator("#new-key input").inputValue();
  expect(secret).toMatch(/^ark_[0-9A-Za-z]{38}$/);
  await page.locator("[data-key] strong", { hasText: "Browser-made key" }).waitFor(WAIT);
  const read = await call("GET", "/api/v1/providers", { app, token: secret });
  expect(read.status).toBe(200);
  await screenshot(page, "api-keys-desktop");

  // 5. Sign out, at the IdP too, and back on the registry.
  await page.locator("#account").getByRole("button", { name: "Sign out" }).click();
  await page.getByRole("button", { name: "Yes, sign me out" }).click();
  await page.waitForURL(`${registry.url}/`, WAIT);

  // 6. The queue is closed to this browser: the dashboard asks to sign in, the API says 401.
  await page.goto("/reviews");
  await page.getByRole("main").getByRole("link", { name: "Sign in" }).waitFor(WAIT);
  expect(await page.getByText("Signed in as").count()).toBe(0);
  const status = await page.evaluate(async () => (await fetch("/api/v1/reviews/queue")).status);
  expect(status).toBe(401);
  expectClean(watch);
});
