/**
 * The publisher CLI's way from a file to the registry, as processes against a live registry (the
 * server process of `npm start`, on this file's database: SQLite, or PostgreSQL in CI's second pass):
 * `init` from an A2A card, from a server.json and from questions on a terminal; `validate`; `publish`
 * of a new agent (the review code, the token kept owner-only and never printed), of the same file
 * again (nothing to do), of a changed file (the diff first; --dry-run sends nothing); a stale
 * If-Match while the person reads the diff (the 412 says what changed in between); a bad file (every
 * problem by pointer, not one connection made); a registry that is down; --help and exit codes.
 * Commands that do not depend on each other run side by side, all on one server.
 *
 * Over ten seconds (19 s alone on the two-core machine under load, 23 s of CPU with jest and the
 * server) because the file runs some sixty CLI processes, each a Node start-up and 0.1–0.3 s of CPU,
 * the package's bin run by itself and the example workflow's steps: the CLI is tested as
 * the process its users run, not as a module.
 */
import { spawn } from "node:child_process";
import { chmodSync, mkdirSync, statSync, writeFileSync } from "node:fs";
import { readFile } from "node:fs/promises";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, test } from "@jest/globals";
import { parse } from "yaml";
import { intakeBody, uniqueCode } from "../builders.ts";
import { copyOfTemplate } from "../database.ts";
import { cleanUp, request, type Server, startServer, tempDir } from "../process/server.process.ts";
import {
  BIN,
  cli,
  countingListener,
  credentialsFile,
  freePort,
  inTerminal,
  put,
  secret,
  type User,
  user,
} from "./cli.process.ts";

let server: Server;
beforeAll(async () => {
  server = await startServer(await copyOfTemplate());
});
afterAll(cleanUp, 30_000);

/** The token the CLI kept for `code` in `u`'s credentials file (registered as a secret). */
async function storedToken(u: User, code: string): Promise<string> {
  const file = JSON.parse(await readFile(credentialsFile(u), "utf8"));
  return secret(file.registries[server.url].agents[code].token as string);
}

const card = (name: string, url: string) => ({
  name,
  description: "Plans delivery routes across a city",
  version: "1",
  supportedInterfaces: [{ url, protocolBinding: "JSONRPC", protocolVersion: "1.0" }],
  capabilities: { streaming: false },
  securitySchemes: { bearer: { httpAuthSecurityScheme: { scheme: "Bearer" } } },
  securityRequirements: [{ schemes: { bearer: { list: [] } } }],
  defaultInputModes: ["text/plain"],
  defaultOutputModes: ["text/plain"],
  skills: [{ id: "plan", name: "Plan a route", description: "Plans one route", tags: ["routing"] }],
});

describe("init, validate and publish a new agent", () => {
  test("from an A2A card: the intake, its review code, the token kept owner-only and never printed", async () => {
    const u = user(server.url);
    const code = uniqueCode("card");
    put(u, "agent-card.json", card("Route Planner", `https://${code}.example.com/a2a`));

    const made = await cli(u, ["init", "--contact-email", "ops@example.com", "--code", code, "--json"]);
    expect([made.code, made.json?.valid, made.json?.from, made.json?.format]).toEqual([
      0,
      true,
      "agent-card.json",
      "a2a",
    ]);
    expect(made.json.unmapped).toEqual(expect.arrayContaining(["/version", "/capabilities"]));
    const file = JSON.parse(await readFile(`${u.cwd}/agent-registry.json`, "utf8"));
    expect(file).toMatchObject({
      providerCode: code,
      name: "Route Planner",
      contactEmail: "ops@example.com",
      endpoint: { url: `https://${code}.example.com/a2a`, protocol: "A2A", authScheme: "BEARER" },
      capabilities: [{ key: "plan", name: "Plan a route" }],
    });
    // Written once: a second init refuses to overwrite.
    const [again, valid] = await Promise.all([
      cli(u, ["init", "--contact-email", "ops@example.com"]),
      cli(u, ["validate", "--json"]),
    ]);
    expect([again.code, again.stderr]).toEqual([1, expect.stringContaining("already exists")]);
    expect([valid.code, valid.json]).toEqual([0, expect.objectContaining({ valid: true, providerCode: code })]);

    const published = await cli(u, ["publish", "--yes", "--json"]);
    expect(published.code).toBe(0);
    expect(published.json).toMatchObject({
      action: "created",
      providerCode: code,
      version: 1,
      reviewStage: "SUBMITTED",
    });
    expect(published.json.reviewCode).toMatch(/^RV-[0-9A-Z]{8}$/);
    expect(JSON.stringify(published.json)).not.toMatch(/agr_/);
    // The token is in the credentials file (owner-only, in an owner-only folder), and it is the agent's.
    expect(statSync(credentialsFile(u)).mode & 0o777).toBe(0o600);
    expect(statSync(`${u.config}/agent-registry`).mode & 0o777).toBe(0o700);
    const token = await storedToken(u, code);
    const review = await request(server, "GET", `/api/v1/reviews/${published.json.reviewCode}`, { token });
    expect([review.status, review.body.providerCode]).toEqual([200, code]);

    // The same file again: nothing to publish, nothing written.
    const same = await cli(u, ["publish", "--yes", "--json"]);
    expect([same.code, same.json?.action, same.json?.changedFields]).toEqual([0, "unchanged", []]);
    const profile = await request(server, "GET", `/api/v1/providers/${code}`);
    expect(profile.body.version).toBe(1);
  });

  test("from a server.json, then exported back as one", async () => {
    const u = user(server.url);
    const code = uniqueCode("mcp");
    put(u, "server.json", {
      $schema: "https://static.modelcontextprotocol.io/schemas/2025-12-11/server.schema.json",
      name: `io.github.acme/${code}`,
      title: "Weather",
      description: "Forecasts for any city",
      version: "1.0.2",
      remotes: [{ type: "streamable-http", url: `https://${code}.example.com/mcp` }],
    });
    const made = await cli(u, ["init", "--contact-email", "ops@example.com", "--code", code]);
    expect([made.code, made.stdout]).toEqual([0, expect.stringContaining("Wrote")]);
    expect(made.stderr).toContain("as a server.json");
    const published = await cli(u, ["publish", "--yes", "--json"]);
    expect([published.code, published.json?.action]).toEqual([0, "created"]);
    await storedToken(u, code);

    const [asServer, asCard, toFile] = await Promise.all([
      cli(u, ["export", code, "--format", "server.json"]),
      cli(u, ["export", code, "--format", "a2a"]),
      cli(u, ["export", code, "--format", "server.json", "-o", "out.json", "--json"]),
    ]);
    expect(asServer.code).toBe(0);
    expect(asServer.json).toMatchObject({
      name: `io.github.acme/${code}`,
      version: "1.0.2",
      remotes: [{ type: "streamable-http", url: `https://${code}.example.com/mcp` }],
    });
    expect([asCard.code, asCard.json?.name, asCard.json?.supportedInterfaces?.[0]?.protocolBinding]).toEqual([
      0,
      "Weather",
      "MCP",
    ]);
    expect([toFile.code, toFile.json?.file]).toEqual([0, `${u.cwd}/out.json`]);
    expect(JSON.parse(await readFile(`${u.cwd}/out.json`, "utf8"))).toEqual(asServer.json);
  });

  test("from questions on a terminal, and colours only there", async () => {
    const u = user(server.url);
    const code = uniqueCode("asked");
    const asking = inTerminal(u, ["init", "--code", code]);
    const answers: [RegExp, string][] = [
      [/Name of the agent:/, "Asked Agent"],
      [/One line saying what it does:/, "Answers questions about routes"],
      [/Kind \(/, ""],
      [/endpoint URL/, `https://${code}.example.com/a2a`],
      [/Protocol \(/, ""],
      [/authenticate \(/, "bearer"],
      [/Labels, comma-separated/, "maps, routing"],
      [/Contact email/, "asked@example.com"],
    ];
    for (const [question, answer] of answers) {
      await asking.waitFor(question);
      asking.type(`${answer}\r`);
    }
    const done = await asking.done;
    expect(done.code).toBe(0);
    expect(done.stdout).toContain("\x1b[32m✓\x1b[39m It is a valid intake");
    expect(JSON.parse(await readFile(`${u.cwd}/agent-registry.json`, "utf8"))).toEqual({
      providerCode: code,
      name: "Asked Agent",
      summary: "Answers questions about routes",
      agentType: "ASSISTANT",
      endpoint: { url: `https://${code}.example.com/a2a`, protocol: "A2A", authScheme: "BEARER" },
      labels: ["maps", "routing"],
      contactEmail: "asked@example.com",
    });
    // Not a terminal: the same words, no escape codes, and no questions (a usage error instead).
    const plain = await cli(u, ["validate"]);
    expect([plain.code, plain.stdout.includes("\x1b")]).toEqual([0, false]);
    const nothingHere = await cli(user(server.url), ["init"]);
    expect([nothingHere.code, nothingHere.stderr]).toEqual([2, expect.stringContaining("pass --from")]);
  });
});

describe("a new agent's token", () => {
  test("a person at a terminal sees it whole once; a pipe or a log never does", async () => {
    const u = user(server.url);
    const code = uniqueCode("shown");
    put(u, "agent-registry.json", intakeBody({ providerCode: code }));
    const done = await inTerminal(u, ["publish", "--yes"]).done;
    expect(done.code).toBe(0);
    const token = await storedToken(u, code);
    expect(`${done.stdout}${done.stderr}`).toContain(`shown this once: ${token}`);
  });
});

describe("publish a known agent", () => {
  /** An agent made by the CLI, its file and its kept token. */
  async function published(u: User) {
    const code = uniqueCode("known");
    put(u, "agent-registry.json", intakeBody({ providerCode: code, labels: ["maps"] }));
    const made = await cli(u, ["publish", "--yes", "--json"]);
    expect(made.json?.action).toBe("created");
    return { code, token: await storedToken(u, code) };
  }
  const edit = async (u: User, change: Record<string, unknown>) => {
    const body = JSON.parse(await readFile(`${u.cwd}/agent-registry.json`, "utf8"));
    put(u, "agent-registry.json", { ...body, ...change });
  };

  test("the diff first; --dry-run sends nothing; --yes sends a merge patch of what differs", async () => {
    const u = user(server.url);
    const { code } = await published(u);
    await edit(u, {
      summary: "Plans delivery and pick-up routes",
      labels: ["maps", "Logistics"],
      endpoint: { url: `https://${code}.example.com/v2`, protocol: "A2A", authScheme: "BEARER" },
    });

    const [dry, dryJson] = await Promise.all([
      cli(u, ["publish", "--dry-run"]),
      cli(u, ["publish", "--dry-run", "--json"]),
    ]);
    expect(dry.code).toBe(0);
    expect(dry.stdout).toContain(`${code} at ${server.url}, version 1 → 2:`);
    expect(dry.stdout).toContain(
      '~ /summary: "Plans delivery routes across a city" → "Plans delivery and pick-up routes"',
    );
    expect(dry.stdout).toContain('+ /labels/-: "logistics"');
    expect(dry.stdout).toContain(`~ /endpoint/url: "https://agent.example.com/a2a" → "https://${code}.example.com/v2"`);
    expect(dry.stdout).toContain("Dry run: nothing was sent.");
    expect(dryJson.json).toMatchObject({
      action: "dry-run",
      version: 1,
      changedFields: ["summary", "labels", "endpoint"],
      patch: { summary: "Plans delivery and pick-up routes", labels: ["maps", "logistics"] },
    });
    expect((await request(server, "GET", `/api/v1/providers/${code}`)).body.version).toBe(1);

    // Without --yes and without a terminal to ask on: wrong usage, nothing sent.
    const unasked = await cli(u, ["publish"]);
    expect([unasked.code, unasked.stderr]).toEqual([2, expect.stringContaining("pass --yes")]);

    const sent = await cli(u, ["publish", "--yes", "--json"]);
    expect(sent.code).toBe(0);
    expect(sent.json).toMatchObject({
      action: "updated",
      fromVersion: 1,
      version: 2,
      changedFields: ["summary", "labels", "endpoint"],
    });
    const versions = await request(server, "GET", `/api/v1/providers/${code}/versions`);
    expect(
      versions.body.items.map((v: { version: number; changedFields: string[] }) => [v.version, v.changedFields]),
    ).toEqual([
      [2, ["summary", "labels", "endpoint"]],
      [1, expect.any(Array)],
    ]);
    const profile = await request(server, "GET", `/api/v1/providers/${code}`);
    expect(profile.body).toMatchObject({ summary: "Plans delivery and pick-up routes", labels: ["maps", "logistics"] });
  });

  test("a change made while the person reads the diff: 412, and what changed in between", async () => {
    const u = user(server.url);
    const { code, token } = await published(u);
    await edit(u, { summary: "Plans routes, as the file says" });
    const asking = inTerminal(u, ["publish"]);
    await asking.waitFor(/Publish these changes to .*\[y\/N\]/);
    expect(asking.output()).toContain("\x1b[33m~ /summary:\x1b[39m");
    // Someone else (another CI job, the owner by hand) changes the agent meanwhile.
    const meanwhile = await request(server, "PATCH", `/api/v1/providers/${code}`, {
      token,
      body: { labels: ["maps", "changed-meanwhile"] },
    });
    expect(meanwhile.status).toBe(200);
    asking.type("y\r");
    const done = await asking.done;
    expect(done.code).toBe(1);
    expect(done.stdout).toContain(`${code} changed after it was read (version 1 → 2), so nothing was published`);
    expect(done.stdout).toContain('/labels/-: "changed-meanwhile"');
    const profile = await request(server, "GET", `/api/v1/providers/${code}`);
    expect([profile.body.version, profile.body.summary]).toEqual([2, "Plans delivery routes across a city"]);

    // Asked again, it diffs against version 2, and the answer "no" sends nothing.
    const declined = inTerminal(u, ["publish"]);
    await declined.waitFor(/version 2 → 3:[\s\S]*\[y\/N\]/);
    declined.type("n\r");
    expect((await declined.done).code).toBe(1);
    expect((await request(server, "GET", `/api/v1/providers/${code}`)).body.version).toBe(2);
  });

  test("the registry's own refusal, in its words and pointers: a known code without its token", async () => {
    const owner = user(server.url);
    const { code } = await published(owner);
    const stranger = user(server.url);
    put(stranger, "agent-registry.json", intakeBody({ providerCode: code, summary: "Taken over", labels: ["maps"] }));
    const [refused, dry] = await Promise.all([
      cli(stranger, ["publish", "--yes", "--json"]),
      cli(stranger, ["publish", "--dry-run", "--json"]),
    ]);
    expect([refused.code, refused.json?.error?.message]).toEqual([1, expect.stringContaining("needs its agent token")]);
    // A dry run shows what the public may see; contactEmail is not compared.
    expect([dry.code, dry.json?.changedFields]).toEqual([0, ["summary"]]);
  });
});

describe("what is never sent, and what fails plainly", () => {
  test("a bad file: every problem by JSON Pointer, not one connection made", async () => {
    const listener = await countingListener();
    const u = user(listener.url);
    put(u, "agent-registry.json", {
      name: "Bad Agent",
      summary: "",
      agentType: "ROBOT",
      contactEmail: "not-an-email",
      labels: ["ok", "NOT OK!"],
      endpoint: { url: "http://example.com/a2a", protocol: "A2A", authScheme: "NONE" },
      trustTier: "OFFICIAL",
    });
    put(u, "broken.json", '{ "name": "half');
    const [validated, published, asJson, broken] = await Promise.all([
      cli(u, ["validate"]),
      cli(u, ["publish", "--yes"]),
      cli(u, ["validate", "--json"]),
      cli(u, ["validate", "broken.json", "--json"]),
    ]);
    const expected = [
      ["", "unknown field(s): trustTier"],
      ["/summary", "must not be empty"],
      ["/labels/1", "must be 1–40 characters of a-z 0-9 . _ -"],
      ["/agentType", "must be one of: ASSISTANT, AUTONOMOUS, WORKFLOW, TOOL_SERVER, MULTI_AGENT"],
      ["/contactEmail", "must be an email address"],
      ["/endpoint/url", "must be an absolute https: URL (http: only for localhost or loopback)"],
    ];
    for (const run of [validated, published]) {
      expect(run.code).toBe(1);
      expect(run.stderr).toContain("is not a valid intake: 6 problems, nothing was sent");
      for (const [path, message] of expected)
        expect(run.stderr).toContain(`${path === "" ? "(file)" : path}: ${message}`);
    }
    expect(asJson.code).toBe(1);
    expect(
      asJson.json.error.problems.map((p: { path: string; message: string }) => [p.path, p.message]).sort(),
    ).toEqual([...expected].sort());
    expect([broken.code, broken.json?.error?.message]).toEqual([1, expect.stringContaining("is not valid JSON")]);
    expect(broken.json.error.problems).toHaveLength(1);
    expect(listener.connections()).toBe(0);
    await listener.close();
  });

  test("a registry that is down: a clear message and exit 1, in words and in JSON", async () => {
    const down = `http://127.0.0.1:${await freePort()}`;
    const u = user(down);
    put(u, "agent-registry.json", intakeBody());
    const [words, json, flag] = await Promise.all([
      cli(u, ["publish", "--yes"]),
      cli(u, ["status", "some-agent", "--json"]),
      cli(user(server.url), ["status", "some-agent", "--registry", down]),
    ]);
    for (const run of [words, flag]) {
      expect(run.code).toBe(1);
      expect(run.stderr).toContain(`Cannot reach the registry at ${down} (connection refused)`);
      expect(run.stderr).toContain("--registry or AGENT_REGISTRY_URL");
    }
    expect([json.code, json.json?.error?.code]).toEqual([1, "UNREACHABLE"]);
  });

  test("--help on every command, and exit 2 for wrong usage", async () => {
    const u = user(server.url);
    const commands = [
      [],
      ["init"],
      ["validate"],
      ["publish"],
      ["login"],
      ["logout"],
      ["whoami"],
      ["status"],
      ["domains"],
      ["domains", "request"],
      ["domains", "check"],
      ["tokens"],
      ["tokens", "rotate"],
      ["export"],
    ];
    const helps = await Promise.all(commands.map((command) => cli(u, [...command, "--help"])));
    helps.forEach((run, i) => {
      expect([commands[i], run.code, run.stdout]).toEqual([
        commands[i],
        0,
        expect.stringContaining(`Usage: agent-registry ${(commands[i] as string[]).join(" ")}`.trimEnd()),
      ]);
    });
    const wrong = await Promise.all([
      cli(u, ["frobnicate"]),
      cli(u, ["publish", "--no-such-flag"]),
      cli(u, ["status", "x", "--deprecated", "--retired"]),
      cli(u, ["export"]),
      cli(u, ["export", "x", "--format", "yaml"]),
      cli(u, ["domains"]),
      cli(u, ["status", "x", "--json", "--retired", "--active"]),
      cli(u, ["validate", "--registry", "not a url"]),
      // This registry names no identity provider, and there is no terminal to type a token on.
      cli(u, ["login"]),
    ]);
    for (const run of wrong)
      expect([run.code, run.stdout.startsWith("Usage") ? "usage on stdout" : "ok"]).toEqual([2, "ok"]);
    expect(wrong[6]?.json?.error?.exitCode).toBe(2);
    expect(wrong[8]?.stderr).toContain("has no identity provider to sign in at: pass --with-token");
  });

  // Not `npx agent-registry` itself: in this project npm would install the project first (its
  // prepare and postinstall scripts rebuild dist/ and src/generated/ under the suite's other files).
  // What npx and a global install run is the package's bin: that file, executable, by its shebang.
  test("the package's bin is the CLI, runnable by itself", async () => {
    const root = new URL("../../", import.meta.url).pathname;
    const pkg = JSON.parse(await readFile(`${root}package.json`, "utf8"));
    expect(join(root, pkg.bin["agent-registry"])).toBe(BIN);
    const { execFile } = await import("node:child_process");
    const stdout = await new Promise<string>((resolve, reject) =>
      execFile(BIN, ["--version"], { env: { ...process.env, NODE_OPTIONS: "" } }, (error, out) =>
        error ? reject(error) : resolve(out),
      ),
    );
    expect(stdout.trim()).toBe(pkg.version);
  });

  test("the example GitHub Actions workflow: its steps, run as a push to main runs them", async () => {
    const workflow = parse(await readFile(new URL("../../examples/publish-agent.yml", import.meta.url), "utf8"));
    expect(workflow.on.push.branches).toEqual(["main"]);
    const job = workflow.jobs.publish;
    // The agent exists: its owner published it once and set its token as the repository's secret.
    const owner = user(server.url);
    const code = uniqueCode("ci");
    put(owner, "agent-registry.json", intakeBody({ providerCode: code }));
    expect((await cli(owner, ["publish", "--yes"])).code).toBe(0);
    const token = await storedToken(owner, code);

    // The runner: a fresh machine with the repository checked out and the CLI installed (here, the build).
    const runner = user(server.url);
    put(runner, "agent-registry.json", intakeBody({ providerCode: code, summary: "Published from CI" }));
    const bin = join(tempDir(), "bin");
    mkdirSync(bin);
    writeFileSync(join(bin, "agent-registry"), `#!/bin/sh\nexec "${process.execPath}" "${BIN}" "$@"\n`);
    chmodSync(join(bin, "agent-registry"), 0o755);
    const expressions: Record<string, string> = {
      "vars.AGENT_REGISTRY_URL": server.url,
      "vars.AGENT_REGISTRY_CLI": "the registry's package",
      "secrets.AGENT_REGISTRY_TOKEN": token,
    };
    const evaluate = (env: Record<string, string> = {}) =>
      Object.fromEntries(
        Object.entries(env).map(([key, value]) => [
          key,
          value.replace(/\$\{\{\s*([\w.]+)\s*\}\}/g, (_, name: string) => expressions[name] ?? ""),
        ]),
      );
    const steps = job.steps.filter(
      (step: { run?: string; name?: string }) => step.run && step.name !== "Install the CLI",
    );
    expect(steps.map((step: { run: string }) => step.run)).toEqual([
      "agent-registry validate",
      "agent-registry publish --dry-run",
      "agent-registry publish --yes",
    ]);
    const outputs: string[] = [];
    for (const step of steps) {
      const { NODE_OPTIONS: _jest, ...inherited } = process.env;
      const child = spawn("bash", ["-e", "-c", step.run], {
        cwd: runner.cwd,
        env: {
          ...inherited,
          ...runner.env,
          CI: "true",
          PATH: `${bin}:${process.env.PATH}`,
          ...evaluate(job.env),
          ...evaluate(step.env),
        },
      });
      let output = "";
      child.stdout.setEncoding("utf8").on("data", (chunk: string) => {
        output += chunk;
      });
      child.stderr.setEncoding("utf8").on("data", (chunk: string) => {
        output += chunk;
      });
      const exit = await new Promise((resolve) => child.once("close", resolve));
      expect([step.name, exit, output.includes(token)]).toEqual([step.name, 0, false]);
      outputs.push(output);
    }
    expect(outputs[1]).toContain('~ /summary: "Plans delivery routes across a city" → "Published from CI"');
    const profile = await request(server, "GET", `/api/v1/providers/${code}`);
    expect([profile.body.version, profile.body.summary]).toEqual([2, "Published from CI"]);
  });
});
