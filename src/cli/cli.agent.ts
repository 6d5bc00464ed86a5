/**
 * What an owner does to an agent beside its profile: its lifecycle (`status`), proving a domain
 * (`domains request|check`, printing the file or TXT record to publish), and its profile as another
 * ecosystem reads it (`export`: the A2A agent card or the MCP server.json the registry serves).
 */
import { writeFileSync } from "node:fs";
import { resolve } from "node:path";
import { type Context, requireAgent, requireCredential } from "./cli.context.ts";
import { CliError, usage } from "./cli.errors.ts";
import { type Schemas, seg } from "./cli.http.ts";

export interface StatusOptions {
  deprecated?: boolean;
  retired?: boolean;
  active?: boolean;
  message?: string;
  successor?: string;
}

export async function status(ctx: Context, code: string, options: StatusOptions): Promise<void> {
  const { out, registry } = ctx;
  const p = out.out;
  const states = (["deprecated", "retired", "active"] as const).filter((s) => options[s]);
  if (states.length > 1) throw usage(`Give one of --deprecated, --retired and --active, not ${states.length}`);
  const state = states[0];
  if (!state) {
    if (options.message !== undefined || options.successor !== undefined) {
      throw usage("--message and --successor go with --deprecated, --retired or --active");
    }
    const token = ctx.store.credentialFor(code)?.token;
    const profile = await registry.ok<Schemas["Provider"]>("GET", `/api/v1/providers/${seg(code)}`, { token });
    const a = profile.body;
    out.result(
      {
        providerCode: code,
        registry: registry.url,
        version: a.version,
        reviewStage: a.reviewStage,
        trustTier: a.trustTier,
        lifecycle: a.lifecycle,
        lifecycleMessage: a.lifecycleMessage,
        successorCode: a.successorCode,
        health: a.health?.state ?? null,
      },
      [
        `${p.bold(code)} (${a.name}) at ${registry.url}, version ${a.version}`,
        `  review stage ${a.reviewStage}, trust tier ${a.trustTier}, ${a.lifecycle}${a.lifecycleMessage ? `: ${a.lifecycleMessage}` : ""}${
          a.successorCode ? ` (use ${a.successorCode} instead)` : ""
        }`,
        ...(a.health ? [`  health ${a.health.state}${a.health.reason ? `: ${a.health.reason}` : ""}`] : []),
      ],
    );
    return;
  }
  const credential = requireCredential(ctx, code);
  const body = {
    state: state.toUpperCase(),
    ...(options.message !== undefined ? { message: options.message } : {}),
    ...(options.successor !== undefined ? { successorCode: options.successor } : {}),
  };
  const answer = await registry.ok<Schemas["Provider"]>("POST", `/api/v1/providers/${seg(code)}/lifecycle`, {
    token: credential.token,
    body,
  });
  const a = answer.body;
  out.result(
    {
      providerCode: code,
      registry: registry.url,
      lifecycle: a.lifecycle,
      lifecycleMessage: a.lifecycleMessage,
      successorCode: a.successorCode,
      version: a.version,
    },
    `${p.green("✓")} ${p.bold(code)} is now ${a.lifecycle}${a.successorCode ? ` (successor ${a.successorCode})` : ""}, version ${a.version}.`,
  );
}

export async function requestDomain(ctx: Context, domain: string, options: { provider?: string }): Promise<void> {
  const code = requireAgent(ctx, options.provider);
  const credential = requireCredential(ctx, code);
  const answer = await ctx.registry.ok<Schemas["DomainChallenge"]>("POST", `/api/v1/providers/${seg(code)}/domains`, {
    token: credential.token,
    body: { domain },
  });
  const c = answer.body;
  const p = ctx.out.out;
  ctx.out.result({ providerCode: code, ...c }, [
    c.verified
      ? `${p.green("✓")} ${c.domain} is already verified for ${code}; publish a proof again to keep it verified.`
      : `To prove that ${code} speaks for ${p.bold(c.domain)}, publish either proof before ${c.expiresAt}:`,
    "",
    `  A file at ${p.bold(c.http.url)} (text/plain) holding:`,
    `    ${c.http.body}`,
    "",
    `  Or a DNS TXT record:`,
    `    name:  ${c.dns.name}`,
    `    value: ${c.dns.value}`,
    "",
    `Then run: agent-registry domains check ${c.domain}${options.provider ? ` --provider ${code}` : ""}`,
  ]);
}

export async function checkDomain(ctx: Context, domain: string, options: { provider?: string }): Promise<void> {
  const code = requireAgent(ctx, options.provider);
  const credential = requireCredential(ctx, code);
  const answer = await ctx.out.spin(
    `Checking ${domain}…`,
    ctx.registry.ok<Schemas["DomainCheck"]>("POST", `/api/v1/providers/${seg(code)}/domains/${seg(domain)}/check`, {
      token: credential.token,
    }),
  );
  const c = answer.body;
  const p = ctx.out.out;
  if (!c.verified) {
    throw new CliError(`${c.domain} is not verified: ${c.reason ?? "no proof was found"}`, 1, { check: c });
  }
  ctx.out.result(
    { providerCode: code, ...c },
    `${p.green("✓")} ${p.bold(c.domain)} is verified for ${code} (${c.method} proof, ${c.verifiedAt}).`,
  );
}

const EXPORTS: Record<string, string> = { a2a: "agent-card.json", "server.json": "server.json" };

export async function exportAgent(
  ctx: Context,
  code: string,
  options: { format?: string; output?: string },
): Promise<void> {
  const format = options.format ?? "a2a";
  const route = EXPORTS[format];
  if (!route) throw usage(`--format must be a2a or server.json, got "${format}"`);
  const token = ctx.store.credentialFor(code)?.token;
  const answer = await ctx.registry.ok("GET", `/api/v1/providers/${seg(code)}/${route}`, { token });
  const document = `${JSON.stringify(answer.body, null, 2)}\n`;
  if (!options.output) {
    // The document is the result, --json or not: it is JSON already.
    process.stdout.write(document);
    return;
  }
  const target = resolve(ctx.cwd, options.output);
  writeFileSync(target, document);
  ctx.out.result(
    { providerCode: code, format, file: target },
    `Wrote ${code} as ${format === "a2a" ? "an A2A agent card" : "a server.json"} to ${target}.`,
  );
}
