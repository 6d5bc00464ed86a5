/**
 * Where the CLI keeps what lets it act for someone: `$XDG_CONFIG_HOME/agent-registry/credentials.json`
 * (`~/.config/…` without it), owner-only (0600, its folder 0700), one entry per registry URL holding the
 * agent tokens by provider code and at most one OpenID Connect sign-in. `AGENT_REGISTRY_TOKEN` wins over
 * the file, for CI, where nothing is written. The file is replaced whole through a temporary file, so
 * a crash never leaves half of it.
 */
import { chmodSync, mkdirSync, readFileSync, renameSync, writeFileSync } from "node:fs";
import { homedir } from "node:os";
import { dirname, join } from "node:path";
import { CliError } from "./cli.errors.ts";

export interface AgentCredential {
  token: string;
  savedAt: string;
}

export interface OidcCredential {
  issuer: string;
  clientId: string;
  accessToken: string;
  refreshToken: string | null;
  /** When the access token stops working (ISO-8601), if the issuer said. */
  expiresAt: string | null;
  subject: string | null;
  savedAt: string;
}

export interface RegistryCredentials {
  agents: Record<string, AgentCredential>;
  oidc: OidcCredential | null;
}

interface CredentialsFile {
  registries: Record<string, RegistryCredentials>;
}

/** A credential the CLI will send, and where it came from (never the secret itself in anything shown). */
export type Credential =
  | { kind: "agent"; token: string; providerCode: string | null; source: "AGENT_REGISTRY_TOKEN" | "file" }
  | { kind: "oidc"; token: string; oidc: OidcCredential; source: "file" };

export function credentialsPath(env: NodeJS.ProcessEnv): string {
  const base = env.XDG_CONFIG_HOME?.trim() || join(env.HOME?.trim() || homedir(), ".config");
  return join(base, "agent-registry", "credentials.json");
}

export class CredentialStore {
  readonly path: string;

  constructor(
    private readonly env: NodeJS.ProcessEnv,
    readonly registry: string,
  ) {
    this.path = credentialsPath(env);
  }

  private load(): CredentialsFile {
    let text: string;
    try {
      text = readFileSync(this.path, "utf8");
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === "ENOENT") return { registries: {} };
      throw new CliError(`Cannot read ${this.path}: ${(error as NodeJS.ErrnoException).code ?? "unreadable"}`);
    }
    try {
      const parsed = JSON.parse(text) as CredentialsFile;
      if (typeof parsed?.registries !== "object" || parsed.registries === null) throw new Error("no registries");
      return parsed;
    } catch {
      throw new CliError(`${this.path} is not a credentials file the CLI wrote: fix it or delete it and sign in again`);
    }
  }

  private save(file: CredentialsFile): void {
    mkdirSync(dirname(this.path), { recursive: true, mode: 0o700 });
    const temporary = `${this.path}.${process.pid}.tmp`;
    writeFileSync(temporary, `${JSON.stringify(file, null, 2)}\n`, { mode: 0o600 });
    // The mode given to writeFileSync is narrowed by the umask only; a file already there keeps its own.
    chmodSync(temporary, 0o600);
    renameSync(temporary, this.path);
  }

  /** What is stored for this registry. */
  stored(): RegistryCredentials {
    return this.load().registries[this.registry] ?? { agents: {}, oidc: null };
  }

  private update(change: (entry: RegistryCredentials) => void): void {
    const file = this.load();
    const entry = file.registries[this.registry] ?? { agents: {}, oidc: null };
    change(entry);
    if (Object.keys(entry.agents).length === 0 && !entry.oidc) delete file.registries[this.registry];
    else file.registries[this.registry] = entry;
    this.save(file);
  }

  saveAgent(providerCode: string, token: string): void {
    this.update((entry) => {
      entry.agents[providerCode] = { token, savedAt: new Date().toISOString() };
    });
  }

  saveOidc(oidc: OidcCredential): void {
    this.update((entry) => {
      entry.oidc = oidc;
    });
  }

  /** Forgets this registry's credentials (or one agent's); answers what was forgotten. */
  forget(providerCode?: string): string[] {
    const gone: string[] = [];
    this.update((entry) => {
      for (const code of Object.keys(entry.agents)) {
        if (providerCode !== undefined && code !== providerCode) continue;
        delete entry.agents[code];
        gone.push(`agent ${code}`);
      }
      if (providerCode === undefined && entry.oidc) {
        gone.push(`sign-in of ${entry.oidc.subject ?? "a person"} at ${entry.oidc.issuer}`);
        entry.oidc = null;
      }
    });
    return gone;
  }

  /** The token set in the environment for CI, if any. */
  envToken(): string | undefined {
    return this.env.AGENT_REGISTRY_TOKEN?.trim() || undefined;
  }

  /**
   * What to send when acting on `providerCode` (or on no agent in particular): AGENT_REGISTRY_TOKEN,
   * else that agent's stored token, else the person's sign-in, else — when one agent alone is stored
   * and none was named — that agent's token.
   */
  credentialFor(providerCode: string | null): Credential | null {
    const fromEnv = this.envToken();
    if (fromEnv) return { kind: "agent", token: fromEnv, providerCode: null, source: "AGENT_REGISTRY_TOKEN" };
    const entry = this.stored();
    const own = providerCode ? entry.agents[providerCode] : undefined;
    if (own && providerCode) return { kind: "agent", token: own.token, providerCode, source: "file" };
    if (entry.oidc) return { kind: "oidc", token: entry.oidc.accessToken, oidc: entry.oidc, source: "file" };
    const codes = Object.keys(entry.agents);
    if (!providerCode && codes.length === 1) {
      const code = codes[0] as string;
      return {
        kind: "agent",
        token: (entry.agents[code] as AgentCredential).token,
        providerCode: code,
        source: "file",
      };
    }
    return null;
  }
}
