/**
 * The directory and the profile as the server renders them, through the app's front door: the
 * content in the first HTML for the viewer's visibility, the title, description and Open Graph
 * tags, a 404 page for an agent that is not there (or not for this viewer), XSS payloads in every
 * text field inert, and the answer compressed. About 6 s alone, most of it the page bundle's first
 * build (esbuild, paid by the first page request of a process); up to 15-20 s beside other files.
 */
import { brotliDecompressSync } from "node:zlib";
import { describe, expect, test } from "@jest/globals";
import { uniqueCode } from "../builders.ts";
import { app, approve, call, intake } from "../helpers.ts";

async function page(path: string, headers: Record<string, string> = {}) {
  const response = await app.fetch(`http://registry.test${path}`, { headers: { accept: "text/html", ...headers } });
  return { response, text: await response.text() };
}

const XSS = {
  script: "<script>alert(1)</script>",
  img: '<img src=x onerror="alert(1)">',
  attr: '"><svg onload=alert(1)>',
};

/** Whether an HTML text holds markup a payload could have made (its tags or event attributes). */
function injected(text: string): string[] {
  return [
    ...(text.match(/<script>alert|<img src=x|<svg onload/gi) ?? []),
    ...(text.match(/href="javascript:/gi) ?? []),
  ];
}

describe("server-rendered pages", () => {
  test("the directory lists the approved agents of its query in the first HTML, compressed", async () => {
    const label = `ssr-${uniqueCode().slice(-6)}`;
    const shown = await intake({ name: "Shown Agent", labels: [label] });
    await approve(shown.providerCode);
    const waiting = await intake({ name: "Waiting Agent", labels: [label] });

    const { response, text } = await page(`/?labels=${label}`);
    expect(response.status).toBe(200);
    expect(response.headers.get("content-type")).toBe("text/html; charset=utf-8");
    expect(text).toContain(`href="/providers/${shown.providerCode}">Shown Agent</a>`);
    expect(text).not.toContain(waiting.providerCode);
    expect(text).toContain(`value="${label}"`);
    expect(text).toContain('<meta property="og:title" content="Agent directory">');
    expect(text).not.toContain("Loading…");

    const br = await app.fetch(`http://registry.test/?labels=${label}`, { headers: { "accept-encoding": "br" } });
    expect(br.headers.get("content-encoding")).toBe("br");
    expect(br.headers.get("vary")).toContain("Accept-Encoding");
    expect(brotliDecompressSync(Buffer.from(await br.arrayBuffer())).toString()).toContain("Shown Agent");
  });

  test("a profile: its title, description and Open Graph tags, its content, and its Connect panel", async () => {
    const p = await intake({
      name: "Profiled Agent",
      summary: "Plans routes, server-side",
      description: "- Works with *customer* records",
    });
    await approve(p.providerCode);
    const { response, text } = await page(`/providers/${p.providerCode}`);
    expect(response.status).toBe(200);
    expect(text).toContain("<title>Profiled Agent · Agent Registry</title>");
    expect(text).toContain('<meta name="description" content="Plans routes, server-side">');
    expect(text).toContain('<meta property="og:title" content="Profiled Agent">');
    expect(text).toContain(`<meta property="og:url" content="http://registry.test/providers/${p.providerCode}">`);
    expect(text).toContain("<li>Works with <em>customer</em> records</li>");
    expect(text).toContain(`http://registry.test/api/v1/providers/${p.providerCode}/agent-card.json`);
    expect(text.indexOf('id="connect"')).toBeLessThan(text.indexOf('id="about"'));
  });

  test("an unknown agent, and one waiting for review, are a 404 page; the agent's own token sees the latter", async () => {
    const missing = await page("/providers/no-such-agent-ssr");
    expect(missing.response.status).toBe(404);
    expect(missing.text).toContain("<h1>Agent not found</h1>");
    expect(missing.text).toContain("<title>Agent not found · Agent Registry</title>");

    const hidden = await intake({ name: "Unreviewed Agent", visibility: "PRIVATE" });
    const anonymous = await page(`/providers/${hidden.providerCode}`);
    expect(anonymous.response.status).toBe(404);
    expect(anonymous.text).not.toContain("Unreviewed Agent");
    const owner = await page(`/providers/${hidden.providerCode}`, { authorization: `Bearer ${hidden.accessToken}` });
    expect(owner.response.status).toBe(200);
    expect(owner.text).toContain("<h1>Unreviewed Agent</h1>");
    expect(owner.response.headers.get("cache-control")).toBe("private, no-cache");
    // The owner's view holds contact and tokens; without a script, each version is a plain link.
    expect(owner.text).toContain('id="contact"');
    expect(owner.text).toContain('id="tokens"');
    expect(owner.text).toContain(`href="/api/v1/providers/${hidden.providerCode}/versions/1"`);
    expect(anonymous.text).not.toContain('id="tokens"');
  });

  test("with JavaScript off, the version history links to each version and its changes from the one before", async () => {
    const p = await intake({ name: "Versioned Agent" });
    await approve(p.providerCode);
    const patched = await call("PATCH", `/api/v1/providers/${p.providerCode}`, {
      token: p.accessToken,
      body: { summary: "A second version" },
    });
    expect(patched.status).toBe(200);
    const { text } = await page(`/providers/${p.providerCode}`);
    const base = `/api/v1/providers/${p.providerCode}/versions`;
    const noscript = text.slice(text.indexOf('id="versions"')).match(/<noscript>([\s\S]*?)<\/noscript>/)?.[1] ?? "";
    expect(noscript).toContain(`href="${base}/${patched.body.version}"`);
    expect(noscript).toContain(`href="${base}/${patched.body.version - 1}/diff/${patched.body.version}"`);
    expect(noscript).toContain(`href="${base}/1"`);
    expect(noscript).not.toContain(`${base}/0`);
  });

  test("XSS payloads in every text field are text in the directory and the profile", async () => {
    const label = `xss-${uniqueCode().slice(-6)}`;
    const p = await intake({
      name: `Agent ${XSS.script}`,
      summary: `Summary ${XSS.img}`,
      description: `${XSS.attr}\n\n[click](javascript:alert(1)) ${XSS.script}`,
      labels: [label],
      tools: [{ name: XSS.script, kind: "MCP", description: XSS.img, scopes: [] }],
      policy: { humanOversight: "ALWAYS", allowedUseCases: [XSS.attr], prohibitedUseCases: [XSS.script] },
      capabilities: [
        { key: "cap", name: XSS.script, description: XSS.attr, tags: [], inputModes: [], outputModes: [] },
      ],
      models: [{ vendor: XSS.script, model: XSS.img, role: "PRIMARY" }],
      roles: [{ subject: "ops@example.com", role: "OWNER" }],
    });
    await approve(p.providerCode);
    const profile = await page(`/providers/${p.providerCode}`);
    expect(profile.response.status).toBe(200);
    expect(injected(profile.text)).toEqual([]);
    expect(profile.text).toContain("Agent &lt;script&gt;alert(1)&lt;/script&gt;");
    const directory = await page(`/?labels=${label}`);
    expect(directory.text).toContain("Agent &lt;script&gt;alert(1)&lt;/script&gt;");
    expect(injected(directory.text)).toEqual([]);

    // What the address carries is written back into the form: as text too.
    const asked = await page(`/?search=${encodeURIComponent(XSS.attr)}&labels=${encodeURIComponent(XSS.script)}`);
    expect(asked.response.status).toBe(200);
    expect(injected(asked.text)).toEqual([]);
    expect(asked.text).toContain('value="&quot;&gt;&lt;svg onload=alert(1)&gt;"');
    // Labels cannot carry markup at all: the API refuses them.
    await expect(intake({ labels: [XSS.script] })).rejects.toThrow(/intake failed: 400/);
  });
});
