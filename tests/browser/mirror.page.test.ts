/**
 * The mirror sources page (`/admin/mirror-sources`) in a real browser against the real app on a
 * real port, with the mirror worker running as main.ts runs it (kicked by the API, never by its
 * timer) and a fake of the official MCP registry upstream (tests/mirror/fake.registry.ts), reached
 * through the outbound door by OUTBOUND_TEST_HOSTS. Between the two sits a gate that can hold the
 * second page of a run, so the test sees the counts of a sync under way on the page, without a
 * reload and without waiting on a clock, and sees that a hidden tab reads nothing.
 */
import { randomBytes } from "node:crypto";
import { createServer, request } from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, jest, test } from "@jest/globals";
import type { Browser, Locator, Page, Request } from "playwright-core";
import { loadConfig } from "../../src/config.ts";
import { declareSources } from "../../src/mirror/mirror.worker.ts";
import { type App, appWith, call, closeAfterAll, db, reviewerToken } from "../helpers.ts";
import { type FakeRegistry, startFakeRegistry } from "../mirror/fake.registry.ts";
import { startTestMirror } from "../mirror/mirror.helpers.ts";
import { until } from "../wait.ts";
import {
  DESKTOP,
  errorOf,
  expectClean,
  launchBrowser,
  openContext,
  type Running,
  screenshot,
  startServer,
  unlabelledControls,
} from "./browser.helpers.ts";

jest.setTimeout(90_000);

const TOKEN_KEY = "agent-registry.reviewer-token";
const WAIT = { timeout: 20_000 };
const PAGE = "/admin/mirror-sources";
/** This file's upstream host name; OUTBOUND_TEST_HOSTS sends it to the gate on loopback. */
const host = `upstream-${randomBytes(3).toString("hex")}.test`;
const SOURCE_URL = `https://${host}`;

let upstream: FakeRegistry;
let app: App;
let server: Running;
let browser: Browser;
let adminToken: string;

/** Held list requests for a page after the first (they carry a cursor), until `release`. */
let held: Promise<void> | null = null;
let release = () => {};
let heldRequests = 0;
function holdNextPages(): void {
  held = new Promise((resolve) => {
    release = () => {
      held = null;
      resolve();
    };
  });
}

async function startGate(): Promise<number> {
  const gate = createServer(async (req, res) => {
    if (held && /[?&]cursor=/.test(req.url ?? "")) {
      heldRequests += 1;
      await held;
    }
    const forward = request(`${upstream.url}${req.url}`, { method: req.method, headers: req.headers }, (answer) => {
      res.writeHead(answer.statusCode ?? 502, answer.headers);
      answer.pipe(res);
    });
    forward.on("error", () => res.destroy());
    req.pipe(forward);
  });
  await new Promise<void>((resolve) => gate.listen(0, "127.0.0.1", resolve));
  closeAfterAll(
    () =>
      new Promise<void>((resolve) => {
        release();
        gate.closeAllConnections();
        gate.close(() => resolve());
      }),
  );
  return (gate.address() as AddressInfo).port;
}

beforeAll(async () => {
  // 30 servers and one whose description is a number: one page, and one entry the sync skips.
  [upstream, browser, adminToken] = await Promise.all([
    startFakeRegistry({ generated: 30 }),
    launchBrowser(),
    reviewerToken("mirror-admin", ["admin"]),
  ]);
  upstream.addMalformed("description-type");
  closeAfterAll(() => upstream.close());
  const gatePort = await startGate();
  app = appWith({ OUTBOUND_TEST_HOSTS: `${host}=127.0.0.1:${gatePort}`, MIRROR_POLL_MS: "3600000" });
  startTestMirror(app);
  server = await startServer(app);
});

afterAll(async () => {
  release();
  await browser?.close();
  await server?.close();
});

/** A fresh, watched context with `token` in this tab's reviewer slot (as /reviews leaves it), if given. */
async function open(token?: string) {
  const opened = await openContext(browser, server.url, DESKTOP);
  if (token) {
    await opened.context.addInitScript(
      ({ key, value }) => {
        if (location.protocol === "http:" && !sessionStorage.getItem(`${key}.set`)) {
          sessionStorage.setItem(key, value);
          sessionStorage.setItem(`${key}.set`, "1");
        }
      },
      { key: TOKEN_KEY, value: token },
    );
  }
  return { ...opened, page: await opened.context.newPage() };
}

const text = async (locator: Locator) => ((await locator.textContent()) ?? "").replace(/\s+/g, " ").trim();

/** Waits until the card's count `name` reads exactly `value`. */
const countIs = (card: Locator, name: string, value: number) =>
  card
    .locator(`[data-count="${name}"]`)
    .filter({ hasText: new RegExp(`^${value}$`) })
    .waitFor(WAIT);

async function counts(card: Locator): Promise<Record<string, number>> {
  const out: Record<string, number> = {};
  for (const name of ["seen", "created", "updated", "retired", "skipped"]) {
    out[name] = Number(await text(card.locator(`[data-count="${name}"]`)));
  }
  return out;
}

async function sources(): Promise<Record<string, any>[]> {
  const answer = await call("GET", "/api/v1/mirror/sources?limit=100", { app, token: adminToken });
  expect(answer.status).toBe(200);
  return answer.body.items;
}

describe("the mirror sources page", () => {
  test("an admin adds a source, watches its syncs move, sees a failure, edits and deletes it", async () => {
    const admin = await open(adminToken);
    const page: Page = admin.page;
    const posts: unknown[] = [];
    const reads: string[] = [];
    let readsInFlight = 0;
    const isRead = (r: Request) =>
      r.method() === "GET" && new URL(r.url()).pathname.startsWith("/api/v1/mirror/sources/");
    page.on("request", (r) => {
      const path = new URL(r.url()).pathname;
      if (r.method() === "POST" && path === "/api/v1/mirror/sources") posts.push(r.postDataJSON());
      if (isRead(r)) {
        reads.push(path);
        readsInFlight += 1;
      }
    });
    const settled = (r: Request) => {
      if (isRead(r)) readsInFlight -= 1;
    };
    page.on("requestfinished", settled);
    page.on("requestfailed", settled);
    await page.goto(PAGE);
    expect(await page.getByRole("link", { name: "Mirrors" }).getAttribute("aria-current")).toBe("page");
    await page.getByText("No sources yet").waitFor(WAIT);
    expect(await text(page.locator("#mirror-who"))).toBe("mirror-admin");
    expect(await unlabelledControls(page)).toEqual([]);

    // Refusals are shown beside the field they name, and make nothing.
    const form = page.getByRole("form", { name: "Add a source" });
    const url = form.getByLabel("URL");
    await url.fill(`http://${host}`);
    await form.getByRole("button", { name: "Add source" }).click();
    await form.getByRole("alert").filter({ hasText: "The registry refused this source" }).waitFor(WAIT);
    expect(await errorOf(url)).toContain("an https: URL");
    expect(await url.getAttribute("aria-invalid")).toBe("true");

    await url.fill(SOURCE_URL);
    expect(await url.getAttribute("aria-invalid")).toBeNull();
    await form.getByLabel("Trusted: entries are approved at once").check();
    const tier = form.getByLabel("Trust tier");
    await tier.waitFor(WAIT);
    await form.getByRole("button", { name: "Add source" }).click();
    await form.locator(".field-error").filter({ hasText: "names the tier" }).waitFor(WAIT);
    expect(await errorOf(tier)).toContain("a TRUSTED source names the tier its agents get");
    expect(await tier.getAttribute("aria-invalid")).toBe("true");
    expect(posts).toHaveLength(2);
    expect(await sources()).toEqual([]);
    expect(await page.locator("article.mirror-source").count()).toBe(0);

    // Added, as a REVIEW source taking io.github.* every 10 minutes; its first sync starts at once.
    await form.getByLabel("Review: each new entry").check();
    expect(await tier.isHidden()).toBe(true);
    await form.getByLabel("Include").fill("io.github.*");
    await form.getByLabel("Interval (minutes)").fill("10");
    await form.getByRole("button", { name: "Add source" }).click();
    const card = page.locator("article.mirror-source");
    await card.waitFor(WAIT);
    expect(posts[2]).toEqual({
      url: SOURCE_URL,
      kind: "MCP_REGISTRY",
      filter: { include: ["io.github.*"], exclude: [], registryTypes: [], only: "ANY" },
      policy: "REVIEW",
      intervalSeconds: 600,
    });
    expect(await form.getByLabel("URL").inputValue()).toBe("");
    await countIs(card, "seen", 31);
    await page.locator('article.mirror-source[data-state="IDLE"]').waitFor(WAIT);
    const [first] = await sources();
    expect(first).toMatchObject({ url: SOURCE_URL, state: "IDLE", counts: { seen: 31, created: 30, skipped: 1 } });
    expect(await counts(card)).toEqual(first?.counts);
    expect(await card.getAttribute("data-source")).toBe(first?.sourceId);
    expect(await text(card.locator(".badges"))).toContain("Idle");
    const skip = card.locator('tr[data-skipped="io.github.malformed/server-1"]');
    await card.getByText("Skipped entries (1").click();
    await skip.waitFor(WAIT);
    expect(await text(skip)).toContain(first?.skippedEntries[0].reason);
    expect(await text(card.locator(".facts").first())).not.toContain("Last successnever");
    const sourcePath = `/api/v1/mirror/sources/${first?.sourceId}`;
    expect(reads).toContain(sourcePath);

    // "Sync now" with 105 new servers upstream: the page shows the first page's 100 while the
    // second is held, then the whole run, all in the same document.
    upstream.generate(105);
    holdNextPages();
    await page.evaluate(() => {
      (window as unknown as { sameDocument: boolean }).sameDocument = true;
    });
    const readsAtClick = reads.length;
    await card.getByRole("button", { name: "Sync now" }).click();
    await countIs(card, "seen", 100);
    // The source's own reads brought it (the list is read only at load, refresh and when shown).
    expect(reads.slice(readsAtClick)).toContain(sourcePath);
    expect(await card.getAttribute("data-state")).toBe("SYNCING");
    expect(await text(card.locator(".badges"))).toContain("Syncing");
    expect(await text(card.locator(".sync-line"))).toContain("Syncing: started");
    expect(heldRequests).toBe(1);
    await screenshot(page, "mirror-syncing");

    // Hidden, the tab reads nothing: the sync ends meanwhile and the page still shows where it was;
    // shown again, it reads the list and has the run's end.
    await page.evaluate(() => {
      Object.defineProperty(document, "hidden", { configurable: true, get: () => true });
      document.dispatchEvent(new Event("visibilitychange"));
    });
    await until(() => readsInFlight === 0, "the page's last read of the source");
    const readsBefore = reads.length;
    release();
    await until(async () => (await sources())[0]?.state === "IDLE", "the end of the sync", 20_000);
    expect(reads.length).toBe(readsBefore);
    expect(await text(card.locator('[data-count="seen"]'))).toBe("100");
    await page.evaluate(() => {
      delete (document as { hidden?: boolean }).hidden;
      document.dispatchEvent(new Event("visibilitychange"));
    });
    await countIs(card, "seen", 105);
    await page.locator('article.mirror-source[data-state="IDLE"]').waitFor(WAIT);
    expect(await counts(card)).toEqual({ seen: 105, created: 105, updated: 0, retired: 0, skipped: 0 });
    await page
      .locator(".sr-status")
      .getByText(`Sync of ${SOURCE_URL} finished: 105 seen, 105 created, 0 updated, 0 retired, 0 skipped.`)
      .waitFor(WAIT);
    expect(await page.evaluate(() => (window as unknown as { sameDocument?: boolean }).sameDocument)).toBe(true);

    // An upstream failure: the state and the error, as the API has them.
    upstream.failNext(1, 500);
    await card.getByRole("button", { name: "Sync now" }).click();
    await page.locator('article.mirror-source[data-state="FAILED"]').waitFor(WAIT);
    const [failed] = await sources();
    const errors = card.locator(".mirror-errors .notice.error");
    await errors.waitFor(WAIT);
    expect(await text(errors)).toContain(failed?.lastErrors[0].message);
    expect(failed?.lastErrors[0].message).toMatch(/answered 500/);
    expect(await text(card.locator(".badges"))).toContain("Failed");
    expect(await unlabelledControls(page)).toEqual([]);

    // Edit: a refusal beside its field, then a TRUSTED source at Verified every 2 hours.
    await card.getByRole("button", { name: "Edit" }).click();
    const editForm = card.getByRole("form", { name: "Change this source" });
    await editForm.waitFor(WAIT);
    expect(await editForm.getByLabel("URL").inputValue()).toBe(SOURCE_URL);
    expect(await editForm.getByLabel("Include").inputValue()).toBe("io.github.*");
    const interval = editForm.getByLabel("Interval (minutes)");
    expect(await interval.inputValue()).toBe("10");
    await interval.fill("0");
    await editForm.getByRole("button", { name: "Save changes" }).click();
    await editForm.locator(".field-error").waitFor(WAIT);
    expect(await errorOf(interval)).toContain("must be between 1 minute and 7 days");
    expect((await sources())[0]?.intervalSeconds).toBe(600);
    await interval.fill("120");
    await editForm.getByLabel("Trusted: entries are approved at once").check();
    await editForm.getByLabel("Trust tier").selectOption("VERIFIED");
    await editForm.getByRole("button", { name: "Save changes" }).click();
    await editForm.waitFor({ state: "detached", ...WAIT });
    const settings = card.locator(".facts").nth(1);
    expect(await text(settings)).toContain("Trusted, approved as Verified");
    expect(await text(settings)).toContain("every 2 hours");
    expect((await sources())[0]).toMatchObject({ policy: "TRUSTED", trustTier: "VERIFIED", intervalSeconds: 7200 });
    // A change is synced at once: nothing new upstream, and the failure is now an earlier error.
    await card.getByText("The last sync saw 0 entries.").waitFor(WAIT);
    await card.getByText("Earlier errors (1").waitFor(WAIT);
    expect(await card.getAttribute("data-state")).toBe("IDLE");
    await screenshot(page, "mirror-desktop");

    // Deleting asks first; Cancel keeps it.
    await card.getByRole("button", { name: "Delete", exact: true }).click();
    const confirm = card.getByRole("group", { name: "Confirm deletion" });
    await confirm.waitFor(WAIT);
    expect(await text(confirm)).toContain("The 135 agents it made stay");
    await confirm.getByRole("button", { name: "Cancel" }).click();
    expect(await confirm.isHidden()).toBe(true);
    expect(await sources()).toHaveLength(1);
    await card.getByRole("button", { name: "Delete", exact: true }).click();
    await confirm.getByRole("button", { name: "Delete source" }).click();
    await page.getByText("No sources yet").waitFor(WAIT);
    await page.locator(".sr-status").getByText(`Source ${SOURCE_URL} deleted`).waitFor(WAIT);
    expect(await sources()).toEqual([]);

    await admin.context.close();
    expectClean(admin.watch);
  });

  test("a reviewer without the admin role is told so, and an admin token opens the page", async () => {
    const reviewer = await open(await reviewerToken("mirror-reviewer"));
    const page = reviewer.page;
    await page.goto(PAGE);
    await page.getByRole("alert").filter({ hasText: "(mirror-reviewer) does not carry the admin role" }).waitFor(WAIT);
    // The reviewer stays signed in for the pages it may use.
    expect(await page.evaluate((key) => sessionStorage.getItem(key), TOKEN_KEY)).not.toBeNull();
    expect(await page.getByRole("form", { name: "Add a source" }).count()).toBe(0);
    const input = page.getByLabel("Admin token");
    await input.fill(await reviewerToken("another-reviewer"));
    await page.getByRole("button", { name: "Sign in" }).click();
    await page.getByText("This token is valid but does not carry the admin role.").waitFor(WAIT);
    expect(await input.getAttribute("aria-invalid")).toBe("true");
    await input.fill(adminToken);
    await page.getByRole("button", { name: "Sign in" }).click();
    await page.getByRole("form", { name: "Add a source" }).waitFor(WAIT);
    expect(await unlabelledControls(page)).toEqual([]);
    await reviewer.context.close();
    expectClean(reviewer.watch);
  });

  test("a source MIRROR_SOURCES declares says so, and offers no edit or delete", async () => {
    const declared = "https://declared.example.test";
    await declareSources(db, loadConfig({ ...process.env, NODE_ENV: "test", MIRROR_SOURCES: declared }).mirror);
    const admin = await open(adminToken);
    const page = admin.page;
    await page.goto(PAGE);
    const card = page.locator("article.mirror-source").filter({ hasText: declared });
    await card.waitFor(WAIT);
    expect(await text(card.locator(".badges"))).toContain("From MIRROR_SOURCES");
    expect(await text(card.getByRole("note").first())).toContain("change or remove it there");
    // The API refuses to change it, so the page offers no edit and no delete; a sync it may start.
    expect(await card.getByRole("button", { name: "Edit" }).count()).toBe(0);
    expect(await card.getByRole("button", { name: "Delete" }).count()).toBe(0);
    expect(await card.getByRole("button", { name: "Sync now" }).isVisible()).toBe(true);
    await admin.context.close();
    expectClean(admin.watch);
    await db.mirrorSource.deleteMany({ where: { url: declared } });
  });
  test("a credential is set, replaced and removed from the page, which never holds it", async () => {
    const url = `https://${host}/private`;
    const first = `first-${randomBytes(8).toString("hex")}`;
    const second = `second-${randomBytes(8).toString("hex")}`;
    const stored = async () => (await db.mirrorSource.findUniqueOrThrow({ where: { url } })).credential;
    const admin = await open(adminToken);
    const page = admin.page;
    const answers: string[] = [];
    page.on("response", async (r) => {
      if (new URL(r.url()).pathname.startsWith("/api/v1/mirror/")) answers.push(await r.text().catch(() => ""));
    });
    await page.goto(PAGE);
    const form = page.getByRole("form", { name: "Add a source" });
    await form.waitFor(WAIT);
    await form.getByLabel("URL").fill(url);
    const field = form.getByLabel("Credential", { exact: true });
    expect(await field.getAttribute("type")).toBe("password");
    // A refusal is shown beside it, and makes nothing.
    await field.fill("two words");
    await form.getByRole("button", { name: "Add source" }).click();
    await form.locator(".field-error").waitFor(WAIT);
    expect(await errorOf(field)).toContain("visible ASCII characters only");
    expect(await db.mirrorSource.count({ where: { url } })).toBe(0);
    await field.fill(first);
    await form.getByRole("button", { name: "Add source" }).click();
    const card = page.locator("article.mirror-source").filter({ hasText: url });
    await card.waitFor(WAIT);
    expect(await stored()).toBe(first);
    const settings = card.locator(".facts").nth(1);
    expect(await text(settings)).toContain("CredentialSet (never shown)");
    expect(await field.inputValue()).toBe("");

    // Edit: the field is empty (the page has no credential to show); a new one replaces it.
    await card.getByRole("button", { name: "Edit" }).click();
    const editForm = card.getByRole("form", { name: "Change this source" });
    await editForm.waitFor(WAIT);
    const replace = editForm.getByLabel("Replace the credential");
    expect(await replace.inputValue()).toBe("");
    await editForm.getByRole("button", { name: "Save changes" }).click();
    await editForm.waitFor({ state: "detached", ...WAIT });
    expect(await stored()).toBe(first);
    await card.getByRole("button", { name: "Edit" }).click();
    await editForm.waitFor(WAIT);
    await editForm.getByLabel("Replace the credential").fill(second);
    await editForm.getByRole("button", { name: "Save changes" }).click();
    await editForm.waitFor({ state: "detached", ...WAIT });
    expect(await stored()).toBe(second);

    // Removed: the source has none, and the card says so.
    await card.getByRole("button", { name: "Edit" }).click();
    await editForm.waitFor(WAIT);
    await editForm.getByLabel("Remove the credential").check();
    expect(await editForm.getByLabel("Replace the credential").isDisabled()).toBe(true);
    await editForm.getByRole("button", { name: "Save changes" }).click();
    await editForm.waitFor({ state: "detached", ...WAIT });
    expect(await stored()).toBeNull();
    expect(await text(settings)).toContain("CredentialNone");
    expect(await unlabelledControls(page)).toEqual([]);

    expect(answers.length).toBeGreaterThan(0);
    for (const answer of [...answers, await page.content()]) {
      expect(answer).not.toContain(first);
      expect(answer).not.toContain(second);
    }
    await admin.context.close();
    expectClean(admin.watch);
    await db.mirrorSource.deleteMany({ where: { url } });
  });
});
