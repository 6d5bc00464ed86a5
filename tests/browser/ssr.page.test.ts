/**
 * The server-rendered directory and profile in a real browser: with JavaScript off (content, title,
 * description and Open Graph tags, a 404 page for an unknown agent), XSS payloads inert, the
 * Connect panel's copy button, no layout shift while the script takes over (measured in the page
 * with a PerformanceObserver), and a profile's tables reflowing at phone width without breaking a
 * word. It takes 10-20 s on a busy machine: most of it is the page bundle's first build and Chromium's
 * start, which every browser file pays once.
 */
import { afterAll, beforeAll, describe, expect, jest, test } from "@jest/globals";
import type { Browser, Page } from "playwright-core";
import { uniqueCode } from "../builders.ts";
import { approve, intake, reviewerToken } from "../helpers.ts";
import {
  DESKTOP,
  expectClean,
  launchBrowser,
  openContext,
  overflowsHorizontally,
  PHONE,
  type Running,
  startServer,
} from "./browser.helpers.ts";

jest.setTimeout(60_000);
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

const XSS = '<script>window.__xss=1</script><img src=x onerror="window.__xss=1">';

/** An approved MCP server with a package, a model and a tool: every table the profile has. */
async function richAgent(overrides: Record<string, unknown> = {}) {
  const p = await intake({
    name: "Anthropic Files MCP",
    summary: "Reads and writes files for an MCP client",
    description: "## What it does\n\n- Works with *customer* records\n- [Docs](https://example.com/docs)",
    agentType: "TOOL_SERVER",
    endpoint: { url: "https://example.com/mcp", protocol: "MCP", authScheme: "BEARER", transport: "STREAMABLE_HTTP" },
    packages: [
      {
        registryType: "NPM",
        identifier: "@example/files-mcp",
        version: "1.2.3",
        transport: { type: "STDIO" },
        environmentVariables: [{ name: "FILES_TOKEN", description: "API token", isRequired: true, isSecret: true }],
      },
    ],
    models: [
      { vendor: "anthropic", model: "claude-sonnet-4-extended-context", role: "PRIMARY", contextWindow: 200000 },
    ],
    tools: [{ name: "read_file_contents", kind: "MCP", description: "Reads one file", scopes: ["READ_ONLY"] }],
    ...overrides,
  });
  await approve(p.providerCode);
  return p;
}

/** A page that runs no script: what a crawler or a reader with JavaScript off gets. */
async function noScriptPage() {
  const context = await browser.newContext({ viewport: DESKTOP, baseURL: server.url, javaScriptEnabled: false });
  return { context, page: await context.newPage() };
}

const meta = (page: Page, selector: string) => page.locator(selector).getAttribute("content");

/** Starts measuring layout shifts before any of the page's own code runs; read with `shiftOf`. */
async function measureShifts(page: Page): Promise<void> {
  await page.addInitScript(() => {
    const w = window as unknown as { __shift: number };
    w.__shift = 0;
    new PerformanceObserver((list) => {
      for (const entry of list.getEntries() as (PerformanceEntry & { value: number; hadRecentInput: boolean })[]) {
        if (!entry.hadRecentInput) w.__shift += entry.value;
      }
    }).observe({ type: "layout-shift", buffered: true });
  });
}
async function shiftOf(page: Page): Promise<number> {
  // A browser without the entry type would measure nothing and pass: it must have it.
  expect(await page.evaluate(() => PerformanceObserver.supportedEntryTypes.includes("layout-shift"))).toBe(true);
  return page.evaluate(() => (window as unknown as { __shift: number }).__shift);
}

describe("with JavaScript off", () => {
  test("the directory lists its agents, and a profile shows itself with its title, description and Open Graph tags", async () => {
    const label = `nojs-${uniqueCode().slice(-6)}`;
    const p = await richAgent({ labels: [label] });
    const { context, page } = await noScriptPage();

    const listed = await page.goto(`/?labels=${label}`);
    expect(listed?.status()).toBe(200);
    const card = page.locator(".card");
    expect(await card.count()).toBe(1);
    expect(await card.getByRole("heading").getByRole("link").textContent()).toBe("Anthropic Files MCP");
    expect(await page.locator("text=Loading…").count()).toBe(0);
    expect(await page.getByRole("group", { name: "Labels" }).getByRole("checkbox", { checked: true }).count()).toBe(1);
    expect(await page.locator('input[name="labels"]:checked').getAttribute("value")).toBe(label);

    const shown = await page.goto(`/providers/${p.providerCode}`);
    expect(shown?.status()).toBe(200);
    expect(await page.title()).toBe("Anthropic Files MCP · Agent Registry");
    expect(await meta(page, 'meta[name="description"]')).toBe("Reads and writes files for an MCP client");
    expect(await meta(page, 'meta[property="og:title"]')).toBe("Anthropic Files MCP");
    expect(await meta(page, 'meta[property="og:url"]')).toBe(`${server.url}/providers/${p.providerCode}`);
    expect(await page.getByRole("heading", { level: 1 }).textContent()).toBe("Anthropic Files MCP");
    // The Markdown rendered, and the Connect panel first.
    expect(await page.locator(".description li").first().textContent()).toBe("Works with customer records");
    expect(await page.locator(".description a").getAttribute("rel")).toBe("nofollow ugc noopener");
    const sections = await page.locator("section.profile-section").evaluateAll((s) => s.map((e) => e.id));
    expect(sections[0]).toBe("connect");
    expect(await page.locator("#connect-vscode").textContent()).toContain('"url": "https://example.com/mcp"');
    expect(await page.locator("#connect-package-0").textContent()).toBe(
      "FILES_TOKEN=<FILES_TOKEN> npx -y @example/files-mcp@1.2.3",
    );

    const missing = await page.goto("/providers/no-such-agent-nojs");
    expect(missing?.status()).toBe(404);
    expect(await page.getByRole("heading", { level: 1 }).textContent()).toBe("Agent not found");
    expect(await page.title()).toBe("Agent not found · Agent Registry");
    await context.close();
  });
});

describe("with JavaScript on", () => {
  test("XSS payloads in the text fields stay text, on the directory and the profile, drawn by the server or the script", async () => {
    const label = `xss-${uniqueCode().slice(-6)}`;
    const p = await richAgent({
      name: `Files ${XSS}`.slice(0, 120),
      summary: `Summary ${XSS}`,
      description: `${XSS}\n\n[click me](javascript:window.__xss=1)`,
      labels: [label],
      capabilities: [
        { key: "cap", name: XSS.slice(0, 60), description: XSS, tags: [], inputModes: [], outputModes: [] },
      ],
      tools: [{ name: XSS.slice(0, 120), kind: "MCP", description: XSS, scopes: [] }],
    });
    const { context, watch } = await openContext(browser, server.url);
    const page = await context.newPage();
    for (const path of [`/?labels=${label}`, `/providers/${p.providerCode}`]) {
      await page.goto(path);
      await page.locator("h1").first().waitFor(WAIT);
      expect(await page.evaluate(() => (window as unknown as { __xss?: number }).__xss)).toBeUndefined();
      // The directory's facet counts ride in a JSON data block, which never runs: any other script is injected.
      expect(await page.locator('main img, main script:not([type="application/json"]), main svg[onload]').count()).toBe(
        0,
      );
    }
    expect(await page.locator('main a[href^="javascript:"]').count()).toBe(0);
    expect(await page.getByRole("heading", { level: 1 }).textContent()).toContain("<script>");
    await context.close();
    expectClean(watch);

    // A reviewer's tab draws the profile itself (the server never saw the tab's token): as inert.
    const reviewer = await openContext(browser, server.url);
    const token = await reviewerToken();
    await reviewer.context.addInitScript((t) => {
      if (location.protocol === "http:") sessionStorage.setItem("agent-registry.reviewer-token", t);
    }, token);
    const drawn = await reviewer.context.newPage();
    await drawn.goto(`/providers/${p.providerCode}`);
    await drawn.getByText("You are signed in as a reviewer").waitFor(WAIT);
    expect(await drawn.evaluate(() => (window as unknown as { __xss?: number }).__xss)).toBeUndefined();
    expect(await drawn.locator("main img, main script, main svg[onload]").count()).toBe(0);
    expect(await drawn.locator('main a[href^="javascript:"]').count()).toBe(0);
    expect(await drawn.locator(".description.markdown").textContent()).toContain("<script>");
    // Rendered from Markdown there too (paragraphs), by the same module, loaded for this view.
    expect(await drawn.locator(".description.markdown p").count()).toBeGreaterThan(0);
    await reviewer.context.close();
    expectClean(reviewer.watch);
  });

  test("the directory and a profile do not move while their scripts take over; Connect's copy button copies", async () => {
    const label = `cls-${uniqueCode().slice(-6)}`;
    const p = await richAgent({ labels: [label] });
    const { context, watch } = await openContext(browser, server.url);
    await context.grantPermissions(["clipboard-read", "clipboard-write"]);
    const page = await context.newPage();
    await measureShifts(page);

    await page.goto(`/?labels=${label}`, { waitUntil: "networkidle" });
    expect(await shiftOf(page)).toBeLessThan(0.05);
    // The script took the server's list over: its label buttons filter.
    await page.locator(".card .label").first().waitFor(WAIT);

    await page.goto(`/providers/${p.providerCode}`, { waitUntil: "networkidle" });
    await page.locator("#versions .version").first().waitFor(WAIT);
    expect(await shiftOf(page)).toBeLessThan(0.05);

    const copy = page.locator('button[data-copy="connect-mcp-servers"]');
    await copy.click();
    await page.locator('button[data-copy="connect-mcp-servers"]', { hasText: "Copied" }).waitFor(WAIT);
    const copied = JSON.parse(await page.evaluate(() => navigator.clipboard.readText()));
    expect(copied.mcpServers[p.providerCode]).toEqual({ type: "http", url: "https://example.com/mcp" });
    await context.close();
    expectClean(watch);
  });

  test("at phone width the profile's tables reflow: no word is broken across lines, nothing overflows", async () => {
    const p = await richAgent();
    const { context, watch } = await openContext(browser, server.url, PHONE);
    const page = await context.newPage();
    await page.goto(`/providers/${p.providerCode}`);
    await page.locator("#models table").waitFor(WAIT);
    expect(await overflowsHorizontally(page)).toBe(false);
    const broken = await page.evaluate(() => {
      const found: string[] = [];
      for (const cell of document.querySelectorAll("table.reflow td, table.reflow th")) {
        const walker = document.createTreeWalker(cell, NodeFilter.SHOW_TEXT);
        for (let node = walker.nextNode(); node; node = walker.nextNode()) {
          const text = node.textContent ?? "";
          for (const match of text.matchAll(/\S+/g)) {
            const range = document.createRange();
            range.setStart(node, match.index);
            range.setEnd(node, match.index + match[0].length);
            const lines = new Set([...range.getClientRects()].map((r) => Math.round(r.top)));
            if (lines.size > 1) found.push(match[0]);
          }
        }
      }
      return found;
    });
    expect(broken).toEqual([]);
    // Each cell says its column, since the header row is out of sight.
    const label = await page
      .locator("#models td")
      .first()
      .evaluate((td) => getComputedStyle(td, "::before").content);
    expect(label).toContain("Vendor");
    await context.close();
    expectClean(watch);
  });
});
