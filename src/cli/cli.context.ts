/**
 * What every command is handed: where to print, which registry, the credentials kept for it, and
 * how to tell which agent a command is about when it is not named.
 */
import { existsSync } from "node:fs";
import { join } from "node:path";
import type { Credential, CredentialStore } from "./cli.credentials.ts";
import { CliError, usage } from "./cli.errors.ts";
import { codeOfFile, DEFAULT_FILE, readAgentFile } from "./cli.file.ts";
import type { Registry } from "./cli.http.ts";
import type { Output } from "./cli.output.ts";

export interface Context {
  out: Output;
  registry: Registry;
  store: CredentialStore;
  env: NodeJS.ProcessEnv;
  cwd: string;
}

/**
 * The agent a command is about: as named, else the one `agent-registry.json` here describes, else the
 * only agent whose token is stored for this registry; null when none of them says.
 */
export function agentOf(ctx: Context, named: string | undefined): string | null {
  if (named) return named;
  const file = join(ctx.cwd, DEFAULT_FILE);
  if (existsSync(file)) {
    try {
      const code = codeOfFile(readAgentFile(file));
      if (code) return code;
    } catch {
      // A file that does not read names no agent; `validate` says what is wrong with it.
    }
  }
  const stored = Object.keys(ctx.store.stored().agents);
  return stored.length === 1 ? (stored[0] as string) : null;
}

export function requireAgent(ctx: Context, named: string | undefined): string {
  const code = agentOf(ctx, named);
  if (!code) throw usage(`Which agent? Name it with --provider <code> (or run this where ${DEFAULT_FILE} is)`);
  return code;
}

/** The credential that may act for `code`, or a refusal that says how to get one. */
export function requireCredential(ctx: Context, code: string | null): Credential {
  const credential = ctx.store.credentialFor(code);
  if (!credential) {
    throw new CliError(
      `Not logged in to ${ctx.registry.url}${code ? ` for ${code}` : ""}: run agent-registry login${
        code ? ` --with-token --provider ${code}` : ""
      }, or set AGENT_REGISTRY_TOKEN`,
    );
  }
  return credential;
}

/** The first characters of a token, as the registry shows them (`prefix`): enough to tell tokens apart, never the secret. */
export const tokenPrefix = (token: string) => `${token.slice(0, 10)}…`;
