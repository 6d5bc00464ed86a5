/**
 * Browser test helpers: the real app on a real port, Chromium (browser.path.ts) driven by playwright-core,
 * contexts that refuse (and record) every request leaving localhost, and screenshots kept as test
 * artifacts in tests/browser/artifacts/.
 */
import { mkdirSync } from "node:fs";
import { type Browser, type BrowserContext, chromium, type Locator, type Page } from "playwright-core";
import { type App, closeAfterAll, type Listening, listen } from "../helpers.ts";
import { ARTIFACTS, browserPath, CHROMIUM_ARGS, DESKTOP, PHONE } from "./browser.path.ts";

export { ARTIFACTS, DESKTOP, PHONE };

export type Running = Listening;

/** The app of the test configuration (or `app`, one of `appWith`'s), listening on 127.0.0.1 on a free port. */
export const startServer = (app?: App): Promise<Running> => listen(app);

/** A headless Chromium, closed after the file's tests if the file has not closed it. */
export async function launchBrowser(): Promise<Browser> {
  const browser = await chromium.launch({
    executablePath: await browserPath(),
    args: CHROMIUM_ARGS,
  });
  closeAfterAll(() => browser.close());
  return browser;
}

/** What a context saw that a test must fail on. */
export interface Watch {
  /** Requests to anywhere but the server under test, refused. */
  external: string[];
  /** Uncaught exceptions in pages. */
  pageErrors: string[];
  /** Content-Security-Policy violations reported on the console. */
  cspViolations: string[];
}

/**
 * A browser context at a viewport size whose pages may reach the server under test only (and the
 * origins `alsoAllowed`): any other request is aborted and recorded (the test then fails on
 * `watch.external`).
 */
export async function openContext(
  browser: Browser,
  base: string,
  viewport: { width: number; height: number } = DESKTOP,
  /** Other origins the pages may reach (the identity provider a person signs in at). */
  alsoAllowed: string[] = [],
): Promise<{ context: BrowserContext; watch: Watch }> {
  const context = await browser.newContext({ viewport, baseURL: base, locale: "en-GB", timezoneId: "UTC" });
  const watch: Watch = { external: [], pageErrors: [], cspViolations: [] };
  const allowed = new Set([new URL(base).origin, ...alsoAllowed.map((url) => new URL(url).origin)]);
  await context.route("**/*", async (route) => {
    const url = route.request().url();
    if (allowed.has(new URL(url).origin)) return route.fallback();
    watch.external.push(url);
    return route.abort("blockedbyclient");
  });
  context.on("page", (page) => observe(page, watch));
  return { context, watch };
}

function observe(page: Page, watch: Watch): void {
  page.on("pageerror", (error) => watch.pageErrors.push(`${page.url()}: ${error.message}`));
  page.on("console", (message) => {
    if (/Content Security Policy/i.test(message.text())) watch.cspViolations.push(message.text());
  });
}

/** Fails when a context saw an external request, an uncaught error or a CSP violation. */
export function expectClean(watch: Watch): void {
  const trouble = [
    ...watch.external.map((u) => `external request: ${u}`),
    ...watch.pageErrors.map((e) => `page error: ${e}`),
    ...watch.cspViolations.map((c) => `CSP violation: ${c}`),
  ];
  if (trouble.length) throw new Error(trouble.join("\n"));
}

/** Saves a full-page screenshot as tests/browser/artifacts/{name}.png. */
export async function screenshot(page: Page, name: string): Promise<void> {
  mkdirSync(ARTIFACTS, { recursive: true });
  await page.screenshot({ path: `${ARTIFACTS}${name}.png`, fullPage: true });
}

/** Controls (inputs, selects, textareas, buttons) without an accessible name: should be none. */
export function unlabelledControls(page: Page): Promise<string[]> {
  return page.evaluate(() => {
    const missing: string[] = [];
    for (const el of document.querySelectorAll<HTMLElement>("input, select, textarea, button")) {
      if ((el as HTMLInputElement).type === "hidden") continue;
      const labelled =
        ((el as HTMLInputElement).labels?.length ?? 0) > 0 ||
        el.getAttribute("aria-label") ||
        el.getAttribute("aria-labelledby") ||
        (el.tagName === "BUTTON" && el.textContent?.trim());
      if (!labelled) missing.push(el.outerHTML.slice(0, 120));
    }
    return missing;
  });
}

/** Whether the page is wider than its viewport (a horizontal scroll bar at phone width). */
export function overflowsHorizontally(page: Page): Promise<boolean> {
  return page.evaluate(() => document.documentElement.scrollWidth > document.documentElement.clientWidth + 1);
}

/** The text of the errors a form shows for a control (the field-error notes its aria-describedby names), or "". */
export function errorOf(control: Locator): Promise<string> {
  return control.evaluate((el) =>
    (el.getAttribute("aria-describedby") ?? "")
      .split(" ")
      .map((id) => document.getElementById(id))
      .filter((e) => e?.classList.contains("field-error"))
      .map((e) => e?.textContent ?? "")
      .join(" "),
  );
}
