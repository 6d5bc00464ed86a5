#!/usr/bin/env node
/**
 * `agent-registry`, the publisher CLI: the `bin` of this package (dist/cli/main.js, built by
 * scripts/build.mjs with the rest). Commander parses the command line and writes every `--help`;
 * this file wires the commands to it and turns how they end into the exit code: 0 done, 1 refused or
 * failed, 2 wrong usage.
 */
import { readFileSync } from "node:fs";
import { Command, CommanderError, Option } from "commander";
import type { Context } from "./cli.context.ts";
import { CredentialStore } from "./cli.credentials.ts";
import { CliError } from "./cli.errors.ts";
import { Registry, registryUrl } from "./cli.http.ts";
import { Output } from "./cli.output.ts";

// Each command's module is loaded when it runs: `--help` and a typo answer without loading the rules,
// zod, GraphQL's error types or the OpenID client.
const account = () => import("./cli.account.ts");
const agent = () => import("./cli.agent.ts");
const files = () => import("./cli.publish.ts");

/** Where the CLI looks when neither --registry nor AGENT_REGISTRY_URL says: `npm start`'s address. */
export const DEFAULT_REGISTRY = "http://localhost:4000";

const VERSION = (
  JSON.parse(readFileSync(new URL("../../package.json", import.meta.url), "utf8")) as { version: string }
).version;

interface Globals {
  registry?: string;
  json?: boolean;
}

function program(run: (work: (ctx: Context) => unknown, command: Command) => Promise<void>) {
  const cli = new Command("agent-registry")
    .description("Publish an AI agent to an Agent Registry, from a file, in a terminal or in CI.")
    .version(VERSION, "-v, --version")
    .addOption(new Option("--registry <url>", "the registry's URL").env("AGENT_REGISTRY_URL").default(DEFAULT_REGISTRY))
    .option("--json", "print one JSON document (the result, or { error }) instead of words")
    .showHelpAfterError("(add --help for usage)")
    .addHelpText(
      "after",
      `
Exit codes: 0 done, 1 refused or failed, 2 wrong usage.
Credentials: $XDG_CONFIG_HOME/agent-registry/credentials.json (owner-only), or AGENT_REGISTRY_TOKEN.`,
    );

  cli
    .command("init")
    .description("write agent-registry.json from an A2A agent card or server.json here, or from questions")
    .option("--from <file>", "the card or server.json to start from (default: the first found here)")
    .option("--format <format>", "what --from is: a2a or mcp (default: told from the document)")
    .option("--contact-email <email>", "the contact email reviewers see (cards do not carry one)")
    .option("--code <providerCode>", "the agent's code (default: derived from its name)")
    .option("--file <path>", "where to write", "agent-registry.json")
    .option("--force", "write over an existing file")
    .action((options, command) => run(async (ctx) => (await files()).init(ctx, options), command));

  cli
    .command("validate [file]")
    .description("check the file offline with the registry's own rules, listing every problem")
    .action((file, _options, command) => run(async (ctx) => (await files()).validate(ctx, file), command));

  cli
    .command("publish [file]")
    .description("submit a new agent, or show and send what changed in a known one")
    .option("-y, --yes", "publish without asking")
    .option("--dry-run", "show what would change, send nothing")
    .action((file, options, command) => run(async (ctx) => (await files()).publish(ctx, file, options), command));

  cli
    .command("login")
    .description("sign in: at the registry's identity provider, or with an agent token")
    .option("--with-token", "read an agent token from stdin")
    .option("--provider <code>", "the agent the token is for (default: the one agent-registry.json names)")
    .option("--web", "sign in in a browser here, not with a device code")
    .option("--client-id <id>", "the CLI's client id at the identity provider (or AGENT_REGISTRY_CLIENT_ID)")
    .option("--scope <scopes>", "the scopes to ask for (default: the registry's, less registry:admin)")
    .action((options, command) => run(async (ctx) => (await account()).login(ctx, options), command));

  cli
    .command("logout")
    .description("forget the credentials kept for this registry")
    .option("--provider <code>", "forget only this agent's token")
    .action((options, command) => run(async (ctx) => (await account()).logout(ctx, options), command));

  cli
    .command("whoami")
    .description("who the CLI acts as at this registry, as the registry sees it")
    .option("--provider <code>", "the agent to look up")
    .action((options, command) => run(async (ctx) => (await account()).whoami(ctx, options), command));

  cli
    .command("status <providerCode>")
    .description("show an agent's state, or deprecate, retire or reactivate it")
    .addOption(new Option("--deprecated", "deprecate it (with --message)").conflicts(["retired", "active"]))
    .addOption(new Option("--retired", "retire it: final for its owner").conflicts(["deprecated", "active"]))
    .addOption(new Option("--active", "make it active again").conflicts(["deprecated", "retired"]))
    .option("--message <text>", "why, shown to everyone")
    .option("--successor <providerCode>", "the agent to use instead")
    .action((code, options, command) => run(async (ctx) => (await agent()).status(ctx, code, options), command));

  const domains = cli.command("domains").description("prove that the agent speaks for a domain");
  domains
    .command("request <domain>")
    .description("ask for a challenge: prints the file or TXT record to publish")
    .option("--provider <code>", "the agent (default: the one agent-registry.json names)")
    .action((domain, options, command) =>
      run(async (ctx) => (await agent()).requestDomain(ctx, domain, options), command),
    );
  domains
    .command("check <domain>")
    .description("have the registry look for the proof (exit 1 while it finds none)")
    .option("--provider <code>", "the agent (default: the one agent-registry.json names)")
    .action((domain, options, command) =>
      run(async (ctx) => (await agent()).checkDomain(ctx, domain, options), command),
    );

  const tokens = cli.command("tokens").description("the agent's access tokens");
  tokens
    .command("rotate")
    .description("issue a new token and keep it, then revoke the old one")
    .option("--provider <code>", "the agent (default: the one agent-registry.json names)")
    .option("--label <label>", "a name for the new token")
    .action((options, command) => run(async (ctx) => (await account()).rotate(ctx, options), command));

  cli
    .command("export <providerCode>")
    .description("print the agent as another ecosystem reads it")
    .addOption(
      new Option("--format <format>", "a2a (agent card) or server.json (MCP)")
        .choices(["a2a", "server.json"])
        .default("a2a"),
    )
    .option("-o, --output <file>", "write it to a file instead of stdout")
    .action((code, options, command) => run(async (ctx) => (await agent()).exportAgent(ctx, code, options), command));

  // Every command, subcommands too, answers --help; a usage error ends with exit 2 (below), not process.exit here.
  const all = (command: Command): Command[] => [command, ...command.commands.flatMap(all)];
  for (const command of all(cli)) command.exitOverride();
  return cli;
}

/** Runs the CLI with these arguments; answers the exit code. */
export async function main(argv: string[], env: NodeJS.ProcessEnv = process.env): Promise<number> {
  const json = argv.includes("--json");
  const out = new Output(json, { stdin: process.stdin, stdout: process.stdout, stderr: process.stderr }, env);
  let code = 0;
  const run = async (work: (ctx: Context) => unknown, command: Command) => {
    const globals = command.optsWithGlobals<Globals>();
    const registry = new Registry(registryUrl(globals.registry ?? DEFAULT_REGISTRY));
    const ctx: Context = { out, registry, store: new CredentialStore(env, registry.url), env, cwd: process.cwd() };
    await work(ctx);
  };
  const cli = program(run);
  if (json) cli.configureOutput({ writeErr: () => {} });
  try {
    if (argv.length === 0) {
      cli.outputHelp();
      return 0;
    }
    await cli.parseAsync(argv, { from: "user" });
  } catch (error) {
    if (error instanceof CommanderError) {
      // --help and --version end with 0; a group without its subcommand (`agent-registry domains`) shows its
      // help too, but as the usage error it is.
      if (error.exitCode === 0) return 0;
      if (json) out.failure(new CliError(error.message.replace(/^error: /, ""), 2));
      return 2;
    }
    const failure =
      error instanceof CliError
        ? error
        : new CliError(`Unexpected error: ${(error as Error).message ?? String(error)}`);
    out.failure(failure);
    code = failure.exitCode;
  }
  return code;
}

process.exitCode = await main(process.argv.slice(2));
