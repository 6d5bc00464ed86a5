/**
 * The publisher CLI as its users run it: `node dist/cli/main.js` (the package's `bin`, built by the
 * suite's global setup), a process per command, each with its own working folder and its own
 * XDG_CONFIG_HOME, so credentials are never shared between tests. The environment is the parent's
 * less jest's NODE_OPTIONS and any AGENT_REGISTRY_* of the machine. Every run is checked for the
 * secrets the test registered: none may ever appear in what the CLI prints. `inTerminal` runs a
 * command on a pseudo-terminal (util-linux `script`, essential on Debian) for what only a person at
 * a terminal sees: questions, prompts, colours.
 */
import { type ChildProcess, spawn } from "node:child_process";
import { mkdirSync, writeFileSync } from "node:fs";
import { createServer } from "node:net";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { expect } from "@jest/globals";
import { tempDir } from "../process/server.process.ts";
import { within } from "../wait.ts";

const ROOT = fileURLToPath(new URL("../../", import.meta.url));
export const BIN = join(ROOT, "dist", "cli", "main.js");

/** Tokens and other secrets a test has seen: no run may print any of them. */
const secrets = new Set<string>();
export function secret(value: string): string {
  secrets.add(value);
  return value;
}

/** A user of the CLI: a working folder and a config folder of their own, and the registry they use. */
export interface User {
  cwd: string;
  config: string;
  registry: string;
  env: Record<string, string>;
}

export function user(registry: string, env: Record<string, string> = {}): User {
  const home = tempDir("agent-registry-cli-");
  const cwd = join(home, "work");
  const config = join(home, "config");
  mkdirSync(cwd);
  return { cwd, config, registry, env: { HOME: home, XDG_CONFIG_HOME: config, ...env } };
}

/** Writes a file in the user's folder (JSON unless a string). */
export function put(u: User, name: string, content: unknown): string {
  const path = join(u.cwd, name);
  mkdirSync(join(path, ".."), { recursive: true });
  writeFileSync(path, typeof content === "string" ? content : `${JSON.stringify(content, null, 2)}\n`);
  return path;
}

export const credentialsFile = (u: User) => join(u.config, "agent-registry", "credentials.json");

function environment(u: User, extra: Record<string, string> = {}): NodeJS.ProcessEnv {
  const inherited = Object.fromEntries(
    Object.entries(process.env).filter(
      ([key]) => key !== "NODE_OPTIONS" && !key.startsWith("AGENT_REGISTRY_") && key !== "CI" && key !== "NO_COLOR",
    ),
  );
  return { ...inherited, AGENT_REGISTRY_URL: u.registry, ...u.env, ...extra };
}

export interface Run {
  code: number | null;
  stdout: string;
  stderr: string;
  /** stdout as the one JSON document --json promises. */
  json: any;
}

function checked(run: Omit<Run, "json">): Run {
  for (const value of secrets) {
    expect(
      run.stdout.includes(value) || run.stderr.includes(value) ? `printed a secret: ${run.stdout}${run.stderr}` : "",
    ).toBe("");
  }
  let json: unknown;
  try {
    json = JSON.parse(run.stdout);
  } catch {
    json = undefined;
  }
  return { ...run, json };
}

/** A command running: its output so far, a way to wait for a line, to type, and its end. */
export interface Running {
  child: ChildProcess;
  output(): string;
  /** Resolves once the output (stdout and stderr) matches, with the match. */
  waitFor(pattern: RegExp): Promise<RegExpMatchArray>;
  type(text: string): void;
  done: Promise<Run>;
}

function watch(child: ChildProcess): Running {
  let stdout = "";
  let stderr = "";
  const waiters: { pattern: RegExp; resolve: (m: RegExpMatchArray) => void }[] = [];
  const wake = () => {
    for (const waiter of [...waiters]) {
      const match = (stdout + stderr).match(waiter.pattern);
      if (match) {
        waiters.splice(waiters.indexOf(waiter), 1);
        waiter.resolve(match);
      }
    }
  };
  child.stdout?.setEncoding("utf8").on("data", (chunk: string) => {
    stdout += chunk;
    wake();
  });
  child.stderr?.setEncoding("utf8").on("data", (chunk: string) => {
    stderr += chunk;
    wake();
  });
  const done = new Promise<Run>((resolve) => child.once("close", (code) => resolve(checked({ code, stdout, stderr }))));
  return {
    child,
    output: () => stdout + stderr,
    waitFor: (pattern) =>
      within(
        new Promise<RegExpMatchArray>((resolve) => {
          waiters.push({ pattern, resolve });
          wake();
        }),
        `the CLI to print ${pattern} (so far: ${stdout}${stderr})`,
      ),
    type: (text) => child.stdin?.write(text),
    done,
  };
}

/** Starts `agent-registry <args>` as `u`; stdin is a pipe the test may write to. */
export function start(u: User, args: string[], options: { env?: Record<string, string>; cwd?: string } = {}): Running {
  const child = spawn(process.execPath, [BIN, ...args], {
    cwd: options.cwd ?? u.cwd,
    env: environment(u, options.env),
    stdio: ["pipe", "pipe", "pipe"],
  });
  return watch(child);
}

/** Runs `agent-registry <args>` as `u` to its end; `stdin` is what it reads (nothing, by default). */
export async function cli(
  u: User,
  args: string[],
  options: { stdin?: string; env?: Record<string, string>; cwd?: string } = {},
): Promise<Run> {
  const running = start(u, args, options);
  running.child.stdin?.end(options.stdin ?? "");
  return running.done;
}

const quote = (arg: string) => `'${arg.replace(/'/g, `'\\''`)}'`;

/** Starts `agent-registry <args>` on a pseudo-terminal: stdin, stdout and stderr are a TTY, as for a person. */
export function inTerminal(u: User, args: string[]): Running {
  const command = [process.execPath, BIN, ...args].map(quote).join(" ");
  const child = spawn("script", ["-qefc", command, "/dev/null"], {
    cwd: u.cwd,
    env: { ...environment(u), TERM: "xterm-256color" },
    stdio: ["pipe", "pipe", "pipe"],
  });
  return watch(child);
}

/** A loopback port nothing listens on (taken, then given back). */
export async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as { port: number };
  await new Promise((resolve) => server.close(resolve));
  return port;
}

/** A TCP listener that counts the connections made to it and answers none: where nothing must be sent. */
export async function countingListener(): Promise<{ url: string; connections: () => number; close(): Promise<void> }> {
  let count = 0;
  const server = createServer((socket) => {
    count++;
    socket.destroy();
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as { port: number };
  return {
    url: `http://127.0.0.1:${port}`,
    connections: () => count,
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
}
