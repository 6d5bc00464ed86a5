// biome-ignore-all lint/suspicious/noTemplateCurlyInString: VS Code's ${input:…} references are the text under test.
/**
 * The pure pieces of the server's rendering: the escaping builder, Markdown with XSS payloads, and
 * the Connect panel's snippets.
 */
import { describe, expect, test } from "@jest/globals";
import { connectBlocks, packageLine, shellWords } from "../../src/web/render/connect.ts";
import { attrs, html, jsonScript } from "../../src/web/render/html.ts";
import { renderMarkdown } from "../../src/web/render/markdown.ts";

const PAYLOADS = [
  "<script>alert(1)</script>",
  '<img src=x onerror="alert(1)">',
  '"><svg onload=alert(1)>',
  "'><iframe src=javascript:alert(1)>",
];

describe("html", () => {
  test("escapes every interpolation, in text and in attributes, and inserts its own pieces as they are", () => {
    for (const payload of PAYLOADS) {
      const out = html`<p title="${payload}">${payload}</p>`.value;
      expect(out).not.toMatch(/<(script|img|svg|iframe)/i);
      expect(out).not.toMatch(/"\s*on\w+=/i);
      expect(out).toContain("&lt;");
    }
    expect(html`<ul>${["a<", "b"].map((x) => html`<li>${x}</li>`)}</ul>`.value).toBe(
      "<ul><li>a&lt;</li><li>b</li></ul>",
    );
    expect(html`${null}${undefined}${false}${0}`.value).toBe("0");
    expect(attrs({ title: '"x"', hidden: true, disabled: false }).value).toBe(' title="&quot;x&quot;" hidden');
  });

  test("JSON in a script element cannot close it", () => {
    expect(jsonScript("d", { a: "</script><script>alert(1)</script>" }).value).not.toContain("</script><script>");
  });
});

describe("Markdown", () => {
  test("renders lists, emphasis, code and links, links marked nofollow ugc noopener; headings start at h3", () => {
    const out = renderMarkdown(
      "# Title\n\n- Works with *customer* records\n- `code`\n\n[docs](https://example.com/docs)",
    );
    expect(out).toContain("<h3>Title</h3>");
    expect(out).toContain("<li>Works with <em>customer</em> records</li>");
    expect(out).toContain("<code>code</code>");
    expect(out).toContain('<a href="https://example.com/docs" rel="nofollow ugc noopener">docs</a>');
  });

  test("raw HTML is text, javascript: and data: links are not links, images are not fetched", () => {
    for (const payload of PAYLOADS) {
      const out = renderMarkdown(payload);
      expect(out).not.toMatch(/<(script|img|svg|iframe)/i);
    }
    const links = renderMarkdown(
      "[a](javascript:alert(1)) [b](JAVASCRIPT:alert(1)) [c](data:text/html;base64,PHNjcmlwdD4=) [d](vbscript:x) <javascript:alert(1)>",
    );
    expect(links).not.toMatch(/href="(javascript|data|vbscript)/i);
    expect(renderMarkdown("![x](https://tracker.example/pixel.png)")).not.toContain("<img");
    expect(renderMarkdown('[x](https://e.example/" onmouseover="alert(1))')).not.toMatch(/"\s*onmouseover=/);
  });
});

const base = { providerCode: "files-mcp", name: "Files", endpoint: null, packages: [] };
const variable = (name: string, isSecret = false) => ({
  name,
  description: `The ${name}`,
  isRequired: true,
  isSecret,
  format: "STRING" as const,
  default: null,
  placeholder: null,
  choices: [],
});
const npmPackage = {
  registryType: "NPM" as const,
  registryBaseUrl: null,
  identifier: "@acme/files-mcp",
  version: "1.2.3",
  fileSha256: null,
  runtimeHint: null,
  transport: { type: "STDIO" as const, url: null, headers: [] },
  environmentVariables: [variable("FILES_TOKEN", true), variable("FILES_ROOT")],
  runtimeArguments: [],
  packageArguments: [],
  runCommand: "npx -y @acme/files-mcp@1.2.3 --root '<dir with space>'",
};

describe("Connect", () => {
  test("splits a command line as a shell reads it", () => {
    expect(shellWords("npx -y '@a/b c' x'y'")).toEqual(["npx", "-y", "@a/b c", "xy"]);
  });

  test("an MCP package: VS Code prompts for each variable, mcpServers names it, the command line sets it by name", () => {
    const blocks = connectBlocks({ ...base, packages: [npmPackage] } as never, "https://registry.example");
    const byId = Object.fromEntries(blocks.map((b) => [b.id, b]));
    const vscode = JSON.parse(byId["connect-vscode"]?.text ?? "null");
    expect(vscode.servers["files-mcp"]).toEqual({
      type: "stdio",
      command: "npx",
      args: ["-y", "@acme/files-mcp@1.2.3", "--root", "<dir with space>"],
      env: { FILES_TOKEN: "${input:files-mcp-files_token}", FILES_ROOT: "${input:files-mcp-files_root}" },
    });
    expect(vscode.inputs[0]).toEqual({
      type: "promptString",
      id: "files-mcp-files_token",
      description: "The FILES_TOKEN",
      password: true,
    });
    const desktop = JSON.parse(byId["connect-mcp-servers"]?.text ?? "null");
    expect(desktop.mcpServers["files-mcp"].env).toEqual({ FILES_TOKEN: "<FILES_TOKEN>", FILES_ROOT: "<FILES_ROOT>" });
    expect(packageLine(npmPackage as never)).toBe(
      "FILES_TOKEN=<FILES_TOKEN> FILES_ROOT=<FILES_ROOT> npx -y @acme/files-mcp@1.2.3 --root '<dir with space>'",
    );
    expect(byId["connect-package-0"]?.language).toBe("shell");
  });

  test("a remote MCP server: its URL and headers; an A2A agent: its card URL and an @a2a-js/sdk snippet", () => {
    const remote = connectBlocks(
      {
        ...base,
        endpoint: {
          url: "https://files.example.com/mcp",
          protocol: "MCP",
          authScheme: "BEARER",
          healthUrl: null,
          transport: "STREAMABLE_HTTP",
          headers: [variable("Authorization", true)],
          variables: [],
        },
      } as never,
      "https://registry.example",
    );
    const vscode = JSON.parse(remote[0]?.text ?? "null");
    expect(vscode.servers["files-mcp"]).toEqual({
      type: "http",
      url: "https://files.example.com/mcp",
      headers: { Authorization: "${input:files-mcp-authorization}" },
    });
    const a2a = connectBlocks(
      {
        ...base,
        providerCode: "route-planner",
        endpoint: {
          url: "https://a.example/a2a",
          protocol: "A2A",
          authScheme: "NONE",
          healthUrl: null,
          transport: null,
          headers: [],
          variables: [],
        },
      } as never,
      "https://registry.example",
    );
    expect(a2a.map((b) => b.id)).toEqual(["connect-card", "connect-a2a-js"]);
    expect(a2a[0]?.text).toBe("https://registry.example/api/v1/providers/route-planner/agent-card.json");
    expect(a2a[1]?.text).toContain(
      'createFromUrl("https://registry.example/api/v1/providers/route-planner/agent-card.json", "")',
    );
  });
});
