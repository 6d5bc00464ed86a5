/**
 * Who the CLI acts as: `login` (an agent token from stdin or typed unseen, checked against the
 * registry before it is kept; or a person's sign-in at the registry's identity provider), `logout`,
 * `whoami`, and `tokens rotate`, which keeps the new token before it revokes the old one, so a
 * failure in between leaves two working tokens rather than none.
 */
import { text } from "node:stream/consumers";
import { decodeJwt } from "jose";
import { hasValidChecksum } from "../auth/agent.token.ts";
import { agentOf, type Context, requireAgent, requireCredential, tokenPrefix } from "./cli.context.ts";
import { CliError, usage } from "./cli.errors.ts";
import { refusal, type Schemas, seg } from "./cli.http.ts";

type Provider = Schemas["Provider"];

/** Reads `code`'s profile with `token` and makes sure the token is one of its own, active. */
async function ownProfile(ctx: Context, code: string, token: string): Promise<Provider> {
  const answer = await ctx.registry.request<Provider>("GET", `/api/v1/providers/${seg(code)}`, { token });
  if (answer.status === 404)
    throw new CliError(`There is no agent ${code} at ${ctx.registry.url} that this token may see`);
  if (answer.status !== 200) throw refusal(answer);
  const mine = answer.body.tokens?.some((t) => t.prefix === token.slice(0, t.prefix.length) && !t.revokedAt);
  if (!mine) throw new CliError(`This token is not one of ${code}'s: it may read the agent but not act for it`);
  return answer.body;
}

export interface LoginOptions {
  withToken?: boolean;
  provider?: string;
  web?: boolean;
  clientId?: string;
  scope?: string;
}

export async function login(ctx: Context, options: LoginOptions): Promise<void> {
  const { out, registry, store } = ctx;
  const p = out.out;
  if (!options.withToken) {
    // The OpenID client is loaded only to sign a person in.
    const { DEFAULT_CLIENT_ID, resourceMetadata, signIn } = await import("./cli.oidc.ts");
    const metadata = await resourceMetadata(registry);
    if (metadata) {
      const oidc = await signIn(out, metadata, {
        clientId: options.clientId ?? ctx.env.AGENT_REGISTRY_CLIENT_ID ?? DEFAULT_CLIENT_ID,
        web: options.web === true,
        scope: options.scope,
      });
      const check = await registry.request("GET", "/api/v1/providers?limit=1", { token: oidc.accessToken });
      if (check.status === 401) throw refusal(check);
      store.saveOidc(oidc);
      out.result(
        { registry: registry.url, kind: "oidc", subject: oidc.subject, issuer: oidc.issuer, expiresAt: oidc.expiresAt },
        `${p.green("✓")} Logged in to ${registry.url} as ${p.bold(oidc.subject ?? "(no subject)")} (signed in at ${oidc.issuer}; kept in ${store.path}).`,
      );
      return;
    }
    if (!out.interactive) {
      throw usage(
        `${registry.url} has no identity provider to sign in at: pass --with-token and the agent's token on stdin`,
      );
    }
  }
  const code = requireAgent(ctx, options.provider);
  const token =
    options.withToken && !process.stdin.isTTY
      ? (await text(process.stdin)).trim()
      : await out.secret(`Token of ${code} (agr_…, not shown): `);
  if (!token) throw usage("No token was given: pass it on stdin with --with-token");
  if (!hasValidChecksum(token)) {
    throw new CliError("That is not an agent token: one is agr_ and 38 letters and digits, as the intake answered it");
  }
  const profile = await ownProfile(ctx, code, token);
  store.saveAgent(code, token);
  out.result(
    { registry: registry.url, kind: "agent", providerCode: code, tokenPrefix: token.slice(0, 10) },
    `${p.green("✓")} Logged in to ${registry.url} as agent ${p.bold(code)} (${profile.name}; token ${tokenPrefix(token)} kept in ${store.path}).`,
  );
}

export function logout(ctx: Context, options: { provider?: string }): void {
  const gone = ctx.store.forget(options.provider);
  if (gone.length === 0) {
    throw new CliError(
      `Not logged in to ${ctx.registry.url}${options.provider ? ` as ${options.provider}` : ""}: nothing to forget`,
    );
  }
  ctx.out.result(
    { registry: ctx.registry.url, forgotten: gone },
    `Logged out of ${ctx.registry.url}: forgot ${gone.join(", ")}.${
      ctx.store.envToken() ? " AGENT_REGISTRY_TOKEN is still set and still used." : ""
    }`,
  );
}

export async function whoami(ctx: Context, options: { provider?: string }): Promise<void> {
  const { out, registry } = ctx;
  const p = out.out;
  const code = options.provider ?? null;
  const credential = requireCredential(ctx, code);
  const base = { registry: registry.url, kind: credential.kind, source: credential.source };
  if (credential.kind === "agent") {
    const agent = credential.providerCode ?? agentOf(ctx, options.provider);
    if (!agent) {
      const check = await registry.request("GET", "/api/v1/providers?limit=1", { token: credential.token });
      if (check.status !== 200) throw refusal(check);
      out.result(
        { ...base, providerCode: null, tokenPrefix: credential.token.slice(0, 10) },
        `An agent token (${tokenPrefix(credential.token)}, from ${credential.source}) that ${registry.url} accepts; name its agent with --provider to see which.`,
      );
      return;
    }
    const profile = await ownProfile(ctx, agent, credential.token);
    out.result(
      {
        ...base,
        providerCode: agent,
        name: profile.name,
        reviewStage: profile.reviewStage,
        lifecycle: profile.lifecycle,
        version: profile.version,
        tokenPrefix: credential.token.slice(0, 10),
      },
      `Agent ${p.bold(agent)} (${profile.name}, ${profile.reviewStage}, version ${profile.version}) at ${registry.url}, with token ${tokenPrefix(credential.token)} from ${credential.source === "file" ? ctx.store.path : credential.source}.`,
    );
    return;
  }
  const oidc = credential.oidc;
  if (oidc.expiresAt && Date.parse(oidc.expiresAt) <= Date.now()) {
    throw new CliError(
      `The sign-in of ${oidc.subject ?? "this person"} at ${oidc.issuer} has expired: run agent-registry login`,
    );
  }
  const check = await registry.request("GET", "/api/v1/providers?limit=1", { token: credential.token });
  if (check.status !== 200) throw refusal(check);
  const queue = await registry.request("GET", "/api/v1/reviews/queue?limit=1", { token: credential.token });
  let scopes: string[] = [];
  try {
    scopes = String(decodeJwt(credential.token).scope ?? "")
      .split(" ")
      .filter(Boolean);
  } catch {}
  out.result(
    {
      ...base,
      subject: oidc.subject,
      issuer: oidc.issuer,
      expiresAt: oidc.expiresAt,
      scopes,
      reviewer: queue.status === 200,
    },
    `${p.bold(oidc.subject ?? "(no subject)")} at ${registry.url}, signed in at ${oidc.issuer}${
      oidc.expiresAt ? ` until ${oidc.expiresAt}` : ""
    }${queue.status === 200 ? "; a reviewer" : ""}.`,
  );
}

export async function rotate(ctx: Context, options: { provider?: string; label?: string }): Promise<void> {
  const { out, registry, store } = ctx;
  if (store.envToken()) {
    throw usage(
      "AGENT_REGISTRY_TOKEN is set: a rotated token would be kept in the credentials file, not where CI reads it. Rotate from a machine logged in as the agent, then update the secret",
    );
  }
  const code = requireAgent(ctx, options.provider);
  const old = store.stored().agents[code]?.token;
  if (!old)
    throw new CliError(
      `No token of ${code} is kept for ${registry.url}: run agent-registry login --with-token --provider ${code}`,
    );
  const issued = await registry.ok<Schemas["IssuedToken"]>("POST", `/api/v1/providers/${seg(code)}/tokens`, {
    token: old,
    body: { label: options.label ?? `agent-registry CLI ${new Date().toISOString().slice(0, 10)}` },
  });
  const fresh = issued.body.accessToken;
  store.saveAgent(code, fresh);
  const profile = await ownProfile(ctx, code, fresh);
  const previous = profile.tokens?.find((t) => t.prefix === old.slice(0, t.prefix.length) && !t.revokedAt);
  if (previous) {
    await registry.ok("DELETE", `/api/v1/providers/${seg(code)}/tokens/${seg(previous.tokenId)}`, { token: fresh });
  }
  const p = out.out;
  out.result(
    {
      registry: registry.url,
      providerCode: code,
      tokenId: issued.body.token.tokenId,
      tokenPrefix: issued.body.token.prefix,
      revokedTokenId: previous?.tokenId ?? null,
    },
    `${p.green("✓")} ${code} has a new token (${issued.body.token.prefix}…), kept in ${store.path}; the old one (${old.slice(0, 10)}…) is revoked.`,
  );
}
