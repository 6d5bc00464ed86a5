/**
 * The profile's Connect panel as data: ready-to-paste client configuration for an MCP server (VS
 * Code's `mcp.json`, the `mcpServers` JSON of Claude Desktop and Cursor, each package's command
 * line), an A2A agent's card URL and an `@a2a-js/sdk` snippet. Pure, so the server and the browser
 * draw the same blocks and tests read them directly. Variables a client sets are named, never
 * valued: VS Code prompts for them, the other configurations hold a `<NAME>` placeholder.
 */
import type { Provider } from "../client/types.ts";

type Endpoint = NonNullable<Provider["endpoint"]>;
type Package = Provider["packages"][number];
type Variable = Endpoint["headers"][number];

export type ConnectInput = Pick<Provider, "providerCode" | "name" | "endpoint" | "packages">;

export interface ConnectBlock {
  /** A stable id within the panel (used for the copy button's target). */
  id: string;
  title: string;
  /** Where the text goes, in a sentence. */
  hint: string;
  language: "json" | "shell" | "typescript" | "url";
  text: string;
}

/** The words of a POSIX command line as `runCommand` writes it (plain words and '…' quoting). */
export function shellWords(line: string): string[] {
  const words: string[] = [];
  let word = "";
  let inWord = false;
  for (let i = 0; i < line.length; i += 1) {
    const c = line[i] as string;
    if (c === "'") {
      const end = line.indexOf("'", i + 1);
      word += line.slice(i + 1, end === -1 ? line.length : end);
      i = end === -1 ? line.length : end;
      inWord = true;
    } else if (c === "\\" && i + 1 < line.length) {
      word += line[i + 1];
      i += 1;
      inWord = true;
    } else if (c === " " || c === "\t") {
      if (inWord) words.push(word);
      word = "";
      inWord = false;
    } else {
      word += c;
      inWord = true;
    }
  }
  if (inWord) words.push(word);
  return words;
}

/** A placeholder for a value the user supplies. */
const placeholder = (name: string): string => `<${name}>`;

/** A VS Code input id for a variable: lower case, of the characters input ids take. */
const inputId = (code: string, name: string): string => `${code}-${name.toLowerCase().replace(/[^a-z0-9_-]+/g, "-")}`;

function vscodeInput(code: string, v: Variable): Record<string, unknown> {
  return {
    type: "promptString",
    id: inputId(code, v.name),
    description: v.description ?? v.name,
    ...(v.isSecret ? { password: true } : {}),
  };
}

/** Packages a client starts itself, over stdio, with the command the registry computed. */
function stdioPackages(packages: readonly Package[]): { pkg: Package; words: string[] }[] {
  return packages
    .filter((pkg) => pkg.transport.type === "STDIO" && pkg.runCommand)
    .map((pkg) => ({ pkg, words: shellWords(pkg.runCommand as string) }));
}

function isMcp(p: ConnectInput): boolean {
  return p.endpoint?.protocol === "MCP" || p.packages.length > 0;
}

/** The server's entries: its remote endpoint, or else its first stdio package (one entry per key). */
function mcpEntries(p: ConnectInput): {
  vscode: Record<string, unknown>;
  desktop: Record<string, unknown>;
  inputs: Variable[];
} | null {
  const remote = p.endpoint?.protocol === "MCP" ? p.endpoint : null;
  if (remote) {
    const type = remote.transport === "SSE" ? "sse" : "http";
    const headers = remote.headers;
    return {
      vscode: {
        type,
        url: remote.url,
        ...(headers.length
          ? {
              headers: Object.fromEntries(headers.map((h) => [h.name, `\${input:${inputId(p.providerCode, h.name)}}`])),
            }
          : {}),
      },
      desktop: {
        type,
        url: remote.url,
        ...(headers.length ? { headers: Object.fromEntries(headers.map((h) => [h.name, placeholder(h.name)])) } : {}),
      },
      inputs: headers,
    };
  }
  const first = stdioPackages(p.packages)[0];
  if (!first) return null;
  const [command, ...args] = first.words;
  const env = first.pkg.environmentVariables;
  return {
    vscode: {
      type: "stdio",
      command,
      args,
      ...(env.length
        ? { env: Object.fromEntries(env.map((v) => [v.name, `\${input:${inputId(p.providerCode, v.name)}}`])) }
        : {}),
    },
    desktop: {
      command,
      args,
      ...(env.length ? { env: Object.fromEntries(env.map((v) => [v.name, placeholder(v.name)])) } : {}),
    },
    inputs: env,
  };
}

/** A package's command line with the environment variables it reads set in front, by name only. */
export function packageLine(pkg: Package): string | null {
  if (!pkg.runCommand) return null;
  const env = pkg.environmentVariables.map((v) => `${v.name}=${placeholder(v.name)}`);
  return [...env, pkg.runCommand].join(" ");
}

/** The A2A agent card this registry serves for an agent. */
export const agentCardUrl = (origin: string, code: string): string =>
  `${origin}/api/v1/providers/${encodeURIComponent(code)}/agent-card.json`;

/** A short `@a2a-js/sdk` program that reads the card and sends the agent one message. */
export function a2aSnippet(cardUrl: string): string {
  return [
    'import { Role } from "@a2a-js/sdk";',
    'import { ClientFactory } from "@a2a-js/sdk/client";',
    "",
    "// The full card URL, and an empty path: the registry serves the card.",
    `const client = await new ClientFactory().createFromUrl(${JSON.stringify(cardUrl)}, "");`,
    "const answer = await client.sendMessage({",
    "  message: {",
    "    messageId: crypto.randomUUID(),",
    "    role: Role.ROLE_USER,",
    '    parts: [{ content: { $case: "text", value: "Hello" } }],',
    "  },",
    "});",
    "console.log(answer);",
  ].join("\n");
}

/** The blocks of the Connect panel, in the order a reader needs them; empty when there is nothing to paste. */
export function connectBlocks(p: ConnectInput, origin: string): ConnectBlock[] {
  const blocks: ConnectBlock[] = [];
  if (isMcp(p)) {
    const entries = mcpEntries(p);
    if (entries) {
      const inputs = entries.inputs.map((v) => vscodeInput(p.providerCode, v));
      blocks.push({
        id: "connect-vscode",
        title: "VS Code",
        hint: "Add to .vscode/mcp.json (or your user mcp.json); VS Code asks for each value when it starts the server.",
        language: "json",
        text: JSON.stringify(
          { ...(inputs.length ? { inputs } : {}), servers: { [p.providerCode]: entries.vscode } },
          null,
          2,
        ),
      });
      blocks.push({
        id: "connect-mcp-servers",
        title: "Claude Desktop, Cursor",
        hint: "Add to the mcpServers of claude_desktop_config.json or .cursor/mcp.json, and replace each <NAME> with your value.",
        language: "json",
        text: JSON.stringify({ mcpServers: { [p.providerCode]: entries.desktop } }, null, 2),
      });
    }
    p.packages.forEach((pkg, index) => {
      const line = packageLine(pkg);
      if (!line) return;
      blocks.push({
        id: `connect-package-${index}`,
        title: `Run the ${pkg.registryType === "OCI" ? "container" : "package"} ${pkg.identifier}`,
        hint: pkg.environmentVariables.length
          ? `Replace each <NAME> with your value: ${pkg.environmentVariables.map((v) => v.name).join(", ")}.`
          : "It reads no environment variables.",
        language: "shell",
        text: line,
      });
    });
  }
  if (p.endpoint?.protocol === "A2A") {
    const card = agentCardUrl(origin, p.providerCode);
    blocks.push({
      id: "connect-card",
      title: "Agent card",
      hint: "The agent's A2A card, as this registry serves it; any A2A client starts from it.",
      language: "url",
      text: card,
    });
    blocks.push({
      id: "connect-a2a-js",
      title: "@a2a-js/sdk",
      hint: "npm install @a2a-js/sdk, then:",
      language: "typescript",
      text: a2aSnippet(card),
    });
  } else if (p.endpoint && p.endpoint.protocol !== "MCP") {
    blocks.push({
      id: "connect-endpoint",
      title: "Endpoint",
      hint: "The agent answers here; its authentication is in the Endpoint section.",
      language: "url",
      text: p.endpoint.url,
    });
  }
  return blocks;
}
