/**
 * A person signs in for the CLI at the registry's identity provider, the way `gh auth login` does:
 * the registry's protected-resource metadata (RFC 9728) names the issuer and the scopes, the issuer's
 * discovery document the endpoints. With a device authorization endpoint the device flow (RFC 8628:
 * a code to enter on any browser, fit for a terminal over SSH); otherwise, or with `--web`, the
 * authorization code flow with PKCE and a loopback redirect (RFC 8252) in this machine's browser. The
 * access token asked for is for the registry itself (`resource`, RFC 8707). The CLI is a public client:
 * the operator registers its client id (`agent-registry-cli` unless told) at the issuer.
 */
import { spawn } from "node:child_process";
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { decodeJwt } from "jose";
import * as client from "openid-client";
import type { OidcCredential } from "./cli.credentials.ts";
import { CliError } from "./cli.errors.ts";
import type { Registry } from "./cli.http.ts";
import type { Output } from "./cli.output.ts";

export const DEFAULT_CLIENT_ID = "agent-registry-cli";
/** How long the CLI waits for the person to finish signing in. */
const SIGN_IN_TIMEOUT_MS = 10 * 60_000;

export interface ResourceMetadata {
  resource: string;
  authorization_servers: string[];
  scopes_supported?: string[];
}

/** The registry's issuers, or none: an older registry without the document has none either. */
export async function resourceMetadata(registry: Registry): Promise<ResourceMetadata | null> {
  const answer = await registry.request<ResourceMetadata>("GET", "/.well-known/oauth-protected-resource");
  if (answer.status !== 200 || !Array.isArray(answer.body?.authorization_servers)) return null;
  return answer.body.authorization_servers.length > 0 ? answer.body : null;
}

/** Plain http only to this machine, as for the registry's own endpoint URLs. */
function loopback(url: URL): boolean {
  return url.hostname === "localhost" || url.hostname === "[::1]" || /^127\.\d+\.\d+\.\d+$/.test(url.hostname);
}

export interface SignInOptions {
  clientId: string;
  web: boolean;
  scope: string | undefined;
}

export async function signIn(out: Output, metadata: ResourceMetadata, options: SignInOptions): Promise<OidcCredential> {
  const issuer = new URL(metadata.authorization_servers[0] as string);
  if (issuer.protocol !== "https:" && !(issuer.protocol === "http:" && loopback(issuer))) {
    throw new CliError(`The registry names ${issuer.href} as its identity provider, which is not https:`);
  }
  let config: client.Configuration;
  try {
    config = await client.discovery(issuer, options.clientId, undefined, client.None(), {
      execute: issuer.protocol === "http:" ? [client.allowInsecureRequests] : [],
    });
  } catch (error) {
    throw new CliError(
      `Cannot read the identity provider's configuration at ${issuer.href}: ${(error as Error).message}`,
    );
  }
  // What the registry says it knows, less what the CLI has no use for; the issuer grants what the person may have.
  const scope =
    options.scope ??
    ["openid", ...(metadata.scopes_supported ?? []).filter((s) => s !== "registry:admin")].join(" ").trim();
  const parameters = { scope, resource: metadata.resource };
  const device = config.serverMetadata().device_authorization_endpoint;
  let tokens: client.TokenEndpointResponse & client.TokenEndpointResponseHelpers;
  try {
    tokens =
      device && !options.web
        ? await deviceFlow(out, config, parameters)
        : await browserFlow(out, config, parameters, issuer.href);
  } catch (error) {
    if (error instanceof CliError) throw error;
    throw new CliError(`Signing in at ${issuer.href} failed: ${(error as Error).message}`);
  }
  let subject: string | null = tokens.claims()?.sub ?? null;
  let expiresAt = tokens.expires_in ? new Date(Date.now() + tokens.expires_in * 1000).toISOString() : null;
  try {
    const claims = decodeJwt(tokens.access_token);
    subject ??= claims.sub ?? null;
    if (claims.exp) expiresAt = new Date(claims.exp * 1000).toISOString();
  } catch {
    // An opaque access token: the registry takes JWTs only, and says so at the first request.
  }
  return {
    issuer: issuer.href.replace(/\/$/, ""),
    clientId: options.clientId,
    accessToken: tokens.access_token,
    refreshToken: tokens.refresh_token ?? null,
    expiresAt,
    subject,
    savedAt: new Date().toISOString(),
  };
}

async function deviceFlow(out: Output, config: client.Configuration, parameters: Record<string, string>) {
  const started = await client.initiateDeviceAuthorization(config, parameters);
  out.tell(`To sign in, open ${started.verification_uri} and enter the code ${out.err.bold(started.user_code)}`);
  if (started.verification_uri_complete) out.tell(`(or open ${started.verification_uri_complete})`);
  const signal = AbortSignal.timeout(Math.min(SIGN_IN_TIMEOUT_MS, started.expires_in * 1000));
  return out.spin(
    "Waiting for you to sign in…",
    client.pollDeviceAuthorizationGrant(config, started, undefined, { signal }),
  );
}

/** Opens the address in this machine's browser ($BROWSER, else the desktop's opener), on a terminal only. */
function openBrowser(out: Output, url: string): void {
  if (!out.interactive) return;
  const opener =
    process.env.BROWSER ||
    (process.platform === "darwin" ? "open" : process.platform === "win32" ? "explorer" : "xdg-open");
  try {
    const child = spawn(opener, [url], { stdio: "ignore", detached: true });
    child.on("error", () => {});
    child.unref();
  } catch {
    // No browser here: the address is printed, which is enough.
  }
}

async function browserFlow(
  out: Output,
  config: client.Configuration,
  parameters: Record<string, string>,
  issuer: string,
) {
  const verifier = client.randomPKCECodeVerifier();
  const state = client.randomState();
  let arrived!: (url: URL) => void;
  const callback = new Promise<URL>((resolve) => {
    arrived = resolve;
  });
  const server = createServer((req, res) => {
    const url = new URL(req.url ?? "/", "http://127.0.0.1");
    if (url.pathname !== "/callback") {
      res.writeHead(404).end();
      return;
    }
    const failed = url.searchParams.has("error");
    res.writeHead(200, { "content-type": "text/html; charset=utf-8", "cache-control": "no-store" });
    res.end(
      `<!DOCTYPE html><meta charset="utf-8"><title>agent-registry</title><p>${
        failed
          ? "Signing in did not work: see the terminal."
          : "Signed in. You can close this tab and go back to the terminal."
      }</p>`,
    );
    arrived(new URL(`http://127.0.0.1:${(server.address() as AddressInfo).port}${req.url}`));
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  try {
    const redirectUri = `http://127.0.0.1:${(server.address() as AddressInfo).port}/callback`;
    const url = client.buildAuthorizationUrl(config, {
      ...parameters,
      redirect_uri: redirectUri,
      code_challenge: await client.calculatePKCECodeChallenge(verifier),
      code_challenge_method: "S256",
      state,
    });
    out.tell(`To sign in at ${issuer}, open ${url.href}`);
    openBrowser(out, url.href);
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<never>((_, reject) => {
      timer = setTimeout(
        () => reject(new CliError("Nobody finished signing in within 10 minutes")),
        SIGN_IN_TIMEOUT_MS,
      );
    });
    try {
      const back = await out.spin("Waiting for you to sign in in the browser…", Promise.race([callback, timeout]));
      return await client.authorizationCodeGrant(config, back, { pkceCodeVerifier: verifier, expectedState: state });
    } finally {
      clearTimeout(timer);
    }
  } finally {
    server.closeAllConnections();
    server.close();
  }
}
