/**
 * GraphiQL in a real browser (Debian's Chromium through playwright-core) against the real app on a
 * real port: it loads from the server alone under its policy (the test fails on any violation,
 * uncaught error or request elsewhere), opens on the example query, runs it, and streams a
 * subscription over SSE.
 */
import { afterAll, beforeAll, describe, expect, jest, test } from "@jest/globals";
import type { Browser, Locator, Request } from "playwright-core";
import { approve, call, intake } from "../helpers.ts";
import {
  DESKTOP,
  expectClean,
  launchBrowser,
  openContext,
  PHONE,
  type Running,
  screenshot,
  startServer,
} from "./browser.helpers.ts";

// Generous: GraphiQL is 9 MB of code to parse, and CI machines are shared.
jest.setTimeout(240_000);

const WAIT = { timeout: 60_000 };

let server: Running;
let browser: Browser;

beforeAll(async () => {
  [server, browser] = await Promise.all([startServer(), launchBrowser()]);
});

afterAll(async () => {
  await browser?.close();
  await server?.close();
});

/** Text as a reader sees it (Monaco draws spaces as no-break spaces). */
const text = async (locator: Locator) =>
  // biome-ignore lint/performance/useDomNodeTextContent: Monaco's lines are elements: only the rendered text breaks them.
  (await locator.innerText())
    .replace(/\u00a0/g, " ")
    .replace(/\s+/g, " ")
    .trim();

async function open(viewport: { width: number; height: number } = DESKTOP) {
  const opened = await openContext(browser, server.url, viewport);
  const page = await opened.context.newPage();
  const requests: Request[] = [];
  opened.context.on("request", (request) => requests.push(request));
  return { ...opened, page, requests };
}

describe("GraphiQL in a browser", () => {
  test("opens on the example query, runs it and shows the data, all from cacheable assets", async () => {
    const p = await intake({ name: "GraphiQL Example Agent" });
    await approve(p.providerCode, "VERIFIED");
    const visitor = await open();
    const { page } = visitor;
    await page.goto("/graphql");
    const editor = page.locator(".graphiql-query-editor");
    await editor.getByText("providers(limit: 5)").waitFor(WAIT);
    const query = await text(editor);
    expect(query).toContain('Headers tab below: # {"Authorization": "Bearer <token>"}');
    expect(query).toContain("items { providerCode name summary trustTier } nextCursor");

    await page.locator(".graphiql-execute-button").click();
    const response = page.locator(".graphiql-response");
    await response.getByText('"nextCursor"').waitFor(WAIT);
    const shown = await text(response);
    expect(shown).toContain('"providerCode": "');
    expect(shown).toContain('"trustTier": "');
    expect(shown).not.toContain('"errors"');

    // Its scripts, stylesheet and Monaco's workers came from /assets/. Monaco starts its language
    // workers when it gets to them, sometimes after the answer is shown: wait for them, a while.
    const expected = new Set([
      "/assets/graphiql.js",
      "/assets/graphiql-boot.js",
      "/assets/graphiql.css",
      "/assets/graphiql-editor-worker.js",
      "/assets/graphiql-graphql-worker.js",
      "/assets/graphiql-json-worker.js",
    ]);
    const assetsSoFar = () => visitor.requests.filter((r) => new URL(r.url()).pathname.startsWith("/assets/graphiql-"));
    const namesOf = (requests: Request[]) =>
      new Set(requests.map((r) => new URL(r.url()).pathname.replace(/-[0-9a-f]{16}\./, ".")));
    for (let waited = 0; namesOf(assetsSoFar()).size < expected.size && waited < 10_000; waited += 100) {
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    const assets = assetsSoFar();
    expect(namesOf(assets)).toEqual(expected);
    // GraphiQL's own script, compressed (a worker's request gives no response to wait for here).
    const script = await assets.find((r) => /\/graphiql-[0-9a-f]{16}\.js$/.test(r.url()))?.response();
    expect(script?.headers()["cache-control"]).toBe("public, max-age=31536000, immutable");
    expect(["gzip", "br"]).toContain(script?.headers()["content-encoding"]);
    await screenshot(page, "graphiql-example-desktop");
    await visitor.context.close();
    expectClean(visitor.watch);
  });

  test("streams a subscription over SSE", async () => {
    const p = await intake({ name: "GraphiQL Feed Agent" });
    await approve(p.providerCode);
    const visitor = await open();
    const { page } = visitor;
    const subscription = `subscription { feed(providerCode: "${p.providerCode}") { seq kind providerCode version patch { op path value } stateHash } }`;
    await page.goto(`/graphql?query=${encodeURIComponent(subscription)}`);
    await page.locator(".graphiql-query-editor").getByText("subscription").waitFor(WAIT);
    const stream = page.waitForResponse(
      (r) =>
        new URL(r.url()).pathname === "/graphql" && (r.headers()["content-type"] ?? "").startsWith("text/event-stream"),
      WAIT,
    );
    await page.locator(".graphiql-execute-button").click();
    await stream;
    const patched = await call("PATCH", `/api/v1/providers/${p.providerCode}`, {
      token: p.accessToken,
      body: { summary: "Seen live in GraphiQL" },
    });
    expect(patched.status).toBe(200);
    const response = page.locator(".graphiql-response");
    await response.getByText('"PROVIDER_UPDATED"').waitFor(WAIT);
    const shown = await text(response);
    expect(shown).toContain(`"providerCode": "${p.providerCode}"`);
    // The state after the change, as its JSON Patch.
    expect(shown).toContain('"path": "/summary"');
    expect(shown).toContain('"value": "Seen live in GraphiQL"');
    await visitor.context.close();
    expectClean(visitor.watch);
  });

  test("fits a phone's width", async () => {
    const visitor = await open(PHONE);
    await visitor.page.goto("/graphql");
    await visitor.page.locator(".graphiql-execute-button").waitFor(WAIT);
    // The viewport meta: the page is laid out at the phone's width, not a desktop's scaled down.
    expect(await visitor.page.evaluate(() => document.documentElement.clientWidth)).toBe(PHONE.width);
    await screenshot(visitor.page, "graphiql-example-phone");
    await visitor.context.close();
    expectClean(visitor.watch);
  });
});
