/**
 * The agent's file from start to registry: `init` writes it (from an A2A card or a server.json,
 * through the registry's own import mappers, or from questions), `validate` checks it offline, and
 * `publish` sends it — an intake for a new agent, or for a known one a merge patch of what differs,
 * shown first and sent with `If-Match`, so a change made in between is refused (412) and shown.
 */
import { existsSync, writeFileSync } from "node:fs";
import { basename, resolve } from "node:path";
import type { Operation } from "rfc6902";
import { type ImportFormat, mapDocument } from "../interop/import.ts";
import { AGENT_TYPES, AUTH_SCHEMES, PROTOCOLS } from "../providers/provider.rules.ts";
import type { Context } from "./cli.context.ts";
import { CliError, usage } from "./cli.errors.ts";
import { type Change, changeOf, checkIntake, DEFAULT_FILE, readAgentFile } from "./cli.file.ts";
import { refusal, type Schemas, seg } from "./cli.http.ts";
import { type Paint, problemLines } from "./cli.output.ts";

/** Where an agent's existing description may already be, in the order they are looked for. */
const SOURCES: [string, ImportFormat][] = [
  ["agent-card.json", "a2a"],
  [".well-known/agent-card.json", "a2a"],
  [".well-known/agent.json", "a2a"],
  ["server.json", "mcp"],
];

function formatOf(document: unknown, file: string): ImportFormat {
  const d = (document ?? {}) as Record<string, unknown>;
  if (basename(file) === "server.json" || "remotes" in d || "packages" in d || typeof d.$schema === "string")
    return "mcp";
  return "a2a";
}

export interface InitOptions {
  from?: string;
  format?: string;
  contactEmail?: string;
  code?: string;
  force?: boolean;
  file?: string;
}

export async function init(ctx: Context, options: InitOptions): Promise<void> {
  const target = resolve(ctx.cwd, options.file ?? DEFAULT_FILE);
  if (existsSync(target) && !options.force) {
    throw new CliError(`${target} already exists: edit it, or pass --force to write it again`);
  }
  if (options.format && options.format !== "a2a" && options.format !== "mcp") {
    throw usage(`--format must be a2a or mcp, got "${options.format}"`);
  }
  const found = options.from
    ? ([options.from, options.format] as const)
    : SOURCES.find(([file]) => existsSync(resolve(ctx.cwd, file)));
  let body: Record<string, unknown>;
  let report: { from: string | null; format: ImportFormat | null; mapped: unknown[]; unmapped: string[] };
  if (found) {
    const [file, given] = found;
    const document = readAgentFile(resolve(ctx.cwd, file));
    const format = (given as ImportFormat | undefined) ?? formatOf(document, file);
    const mapping = mapDocument(format, document);
    if (mapping.errors.length > 0) {
      throw new CliError(`${file} cannot be read as ${format === "a2a" ? "an A2A agent card" : "a server.json"}`, 1, {
        problems: mapping.errors.map((e) => ({ path: e.source ?? "", message: e.message })),
      });
    }
    body = { ...mapping.input };
    report = { from: file, format, mapped: mapping.mapped, unmapped: mapping.unmapped };
    ctx.out.note(`Read ${file} as ${format === "a2a" ? "an A2A agent card" : "a server.json"}.`);
  } else if (ctx.out.interactive) {
    body = await questions(ctx);
    report = { from: null, format: null, mapped: [], unmapped: [] };
  } else {
    throw usage(
      `There is no agent card or server.json here (${SOURCES.map(([f]) => f).join(", ")}) and no terminal to ask on: pass --from <file>`,
    );
  }
  if (options.code) body = { providerCode: options.code, ...body };
  if (options.contactEmail) body.contactEmail = options.contactEmail;
  if (body.contactEmail === undefined) {
    if (!ctx.out.interactive)
      throw usage("The registry needs a contact email, which cards do not carry: pass --contact-email");
    body.contactEmail = await ctx.out.ask("Contact email (shown to reviewers only):");
  }
  writeFileSync(target, `${JSON.stringify(body, null, 2)}\n`);
  const checked = checkIntake(body);
  const data = {
    file: target,
    ...report,
    providerCode: checked.ok ? checked.providerCode : null,
    valid: checked.ok,
    problems: checked.ok ? [] : checked.problems,
  };
  const p = ctx.out.out;
  ctx.out.result(data, [
    `Wrote ${target}${report.from ? ` from ${report.from}` : ""}.`,
    ...(report.unmapped.length > 0 ? [`Not carried over (no home in a profile): ${report.unmapped.join(", ")}`] : []),
    ...(checked.ok
      ? [
          `${p.green("✓")} It is a valid intake for ${p.bold(checked.providerCode)}: publish it with agent-registry publish.`,
        ]
      : [`${p.yellow("!")} Fix these before publishing:`, ...problemLines(checked.problems, p)]),
  ]);
  if (!checked.ok) throw new CliError(`${target} is written but not valid yet`, 1, { problems: checked.problems });
}

/** The intake's required fields, asked one by one; the rest is for the person to add to the file. */
async function questions(ctx: Context): Promise<Record<string, unknown>> {
  const out = ctx.out;
  out.note("A few questions make a first agent-registry.json; edit it afterwards for the rest.");
  const name = await out.ask("Name of the agent:");
  const summary = await out.ask("One line saying what it does:");
  const agentType = await out.ask(`Kind (${AGENT_TYPES.join(", ")}):`, "ASSISTANT");
  const url = await out.ask("Its endpoint URL (https://…):");
  const protocol = await out.ask(`Protocol (${PROTOCOLS.join(", ")}):`, "A2A");
  const authScheme = await out.ask(`How callers authenticate (${AUTH_SCHEMES.join(", ")}):`, "NONE");
  const labels = (await out.ask("Labels, comma-separated (optional):"))
    .split(",")
    .map((l) => l.trim())
    .filter(Boolean);
  return {
    name,
    summary,
    agentType: agentType.toUpperCase(),
    endpoint: { url, protocol: protocol.toUpperCase(), authScheme: authScheme.toUpperCase() },
    ...(labels.length > 0 ? { labels } : {}),
  };
}

/** Reads and checks the file; a file with problems stops here, before anything is sent. */
function checkedFile(ctx: Context, file: string | undefined) {
  const path = resolve(ctx.cwd, file ?? DEFAULT_FILE);
  const body = readAgentFile(path);
  const checked = checkIntake(body);
  if (!checked.ok) {
    const n = checked.problems.length;
    throw new CliError(`${path} is not a valid intake: ${n} problem${n === 1 ? "" : "s"}, nothing was sent`, 1, {
      file: path,
      problems: checked.problems,
    });
  }
  return { path, body, ...checked };
}

export function validate(ctx: Context, file: string | undefined): void {
  const { path, providerCode } = checkedFile(ctx, file);
  const p = ctx.out.out;
  ctx.out.result({ file: path, valid: true, providerCode, problems: [] }, [
    `${p.green("✓")} ${path} is a valid intake for ${p.bold(providerCode)}.`,
  ]);
}

export interface PublishOptions {
  yes?: boolean;
  dryRun?: boolean;
}

export async function publish(ctx: Context, file: string | undefined, options: PublishOptions): Promise<void> {
  const { path, body, intake, providerCode: code } = checkedFile(ctx, file);
  const { out, registry } = ctx;
  const credential = ctx.store.credentialFor(code);
  const token = credential?.token;
  const current = await out.spin(
    `Reading ${code} at ${registry.url}…`,
    registry.request<Schemas["Provider"]>("GET", `/api/v1/providers/${seg(code)}`, { token }),
  );
  if (current.status === 404) return intakeOf(ctx, path, body, code, options);
  if (current.status !== 200) throw refusal(current);
  const profile = current.body;
  const owner = credential?.kind === "agent" && profile.tokens !== null;
  if (!owner && !options.dryRun) {
    throw new CliError(
      `${code} is already in the registry, and changing it needs its agent token: run agent-registry login --with-token --provider ${code}, or set AGENT_REGISTRY_TOKEN`,
    );
  }
  const version = await registry.ok<Schemas["ProviderVersion"]>(
    "GET",
    `/api/v1/providers/${seg(code)}/versions/${profile.version}`,
    { token },
  );
  const change = changeOf(version.body.snapshot as unknown as Record<string, unknown>, intake);
  const base = { providerCode: code, registry: registry.url, file: path, fromVersion: profile.version };
  const p = out.out;
  if (change.fields.length === 0) {
    out.result({ ...base, action: "unchanged", version: profile.version, changedFields: [], operations: [] }, [
      `${p.green("✓")} ${code} at version ${profile.version} already is what ${basename(path)} says: nothing to publish.`,
    ]);
    return;
  }
  const shown = [
    `${p.bold(code)} at ${registry.url}, version ${profile.version} → ${profile.version + 1}:`,
    ...operationLines(change.operations, p),
    ...notes(change, profile.reviewStage),
  ];
  if (options.dryRun) {
    out.result({ ...base, action: "dry-run", version: profile.version, ...changeData(change), patch: change.patch }, [
      ...shown,
      p.dim("Dry run: nothing was sent."),
    ]);
    return;
  }
  if (!options.yes) {
    // Said even with --json: whoever answers the question must see what they agree to.
    out.tell(shown.join("\n"));
    if (!(await out.confirm(`Publish these changes to ${registry.url}?`, "--yes"))) {
      throw new CliError("Nothing was published: not confirmed");
    }
  }
  const patched = await out.spin(
    `Publishing ${code}…`,
    registry.request<Schemas["Provider"]>("PATCH", `/api/v1/providers/${seg(code)}`, {
      token,
      body: change.patch,
      headers: { "content-type": "application/merge-patch+json", "if-match": `"${profile.version}"` },
    }),
  );
  if (patched.status === 412) return changedInBetween(ctx, code, profile.version, token);
  if (patched.status !== 200) throw refusal(patched);
  out.result(
    {
      ...base,
      action: "updated",
      version: patched.body.version,
      reviewStage: patched.body.reviewStage,
      ...changeData(change),
    },
    [
      ...(options.yes ? shown : []),
      `${p.green("✓")} Published ${p.bold(code)} version ${patched.body.version} (review stage ${patched.body.reviewStage}).`,
    ],
  );
}

const changeData = (change: Change) => ({
  changedFields: change.fields,
  operations: change.operations,
  reviewRequired: change.reviewed,
});

function notes(change: Change, stage: string): string[] {
  const lines: string[] = [];
  if (change.reviewed.length > 0 && stage === "APPROVED") {
    lines.push(`Changing ${change.reviewed.join(", ")} of an approved agent opens an update review.`);
  }
  if (stage === "CHANGES_REQUESTED") lines.push("This resubmits the review that asked for changes.");
  if (change.contactUnseen) lines.push("contactEmail is not compared: only the agent's owner may see it.");
  return lines;
}

/** A value as a diff line shows it: compact JSON, cut short past a line's worth. */
function shown(value: unknown): string {
  const text = JSON.stringify(value) ?? "null";
  return text.length > 160 ? `${text.slice(0, 157)}…` : text;
}

/** Each operation on a line: `+` added, `-` removed, `~` replaced (old → new). */
export function operationLines(operations: readonly (Operation & { old?: unknown })[], p: Paint): string[] {
  return operations.map((op) => {
    switch (op.op) {
      case "add":
        return `  ${p.green(`+ ${op.path}: ${shown(op.value)}`)}`;
      case "remove":
        return `  ${p.red(`- ${op.path}${"old" in op ? `: ${shown(op.old)}` : ""}`)}`;
      case "replace":
        return `  ${p.yellow(`~ ${op.path}:`)} ${p.red(shown(op.old))} → ${p.green(shown(op.value))}`;
      default:
        return `  ${op.op} ${op.path}`;
    }
  });
}

/** A 412: someone changed the profile after it was read; what they changed, from the registry's own diff. */
async function changedInBetween(ctx: Context, code: string, read: number, token: string | undefined): Promise<never> {
  const { registry } = ctx;
  const now = await registry.ok<Schemas["Provider"]>("GET", `/api/v1/providers/${seg(code)}`, { token });
  const diff = await registry.ok<Schemas["JsonPatchOperation"][]>(
    "GET",
    `/api/v1/providers/${seg(code)}/versions/${read}/diff/${now.body.version}`,
    { token },
  );
  const operations = diff.body.map(({ op, path, value, from }) => ({
    op,
    path,
    ...(value !== null && value !== undefined ? { value } : {}),
    ...(from ? { from } : {}),
  })) as unknown as Operation[];
  // With --json the operations are in the document; the words carry them for people only.
  const lines = ctx.out.json ? [] : ["What changed in between:", ...operationLines(operations, ctx.out.err)];
  throw new CliError(
    [
      `${code} changed after it was read (version ${read} → ${now.body.version}), so nothing was published.`,
      ...lines,
      `Run agent-registry publish again to see the changes against version ${now.body.version}.`,
    ].join("\n"),
    1,
    { status: 412, code: "PRECONDITION_FAILED", changedSince: { from: read, to: now.body.version, operations } },
  );
}

/** A new agent: the intake, its review code, and its token kept in the credentials file, never shown. */
async function intakeOf(
  ctx: Context,
  path: string,
  body: Record<string, unknown>,
  code: string,
  options: PublishOptions,
): Promise<void> {
  const { out, registry, store } = ctx;
  const p = out.out;
  const base = { providerCode: code, registry: registry.url, file: path };
  if (options.dryRun) {
    out.result({ ...base, action: "dry-run", intake: true }, [
      `${p.bold(code)} is not in ${registry.url}: publishing submits it as a new agent for review.`,
      p.dim("Dry run: nothing was sent."),
    ]);
    return;
  }
  if (!options.yes && !(await out.confirm(`Submit ${code} to ${registry.url} as a new agent?`, "--yes"))) {
    throw new CliError("Nothing was published: not confirmed");
  }
  // Read access on a private registry may need the person's or another agent's credential, even for an intake.
  const token = store.credentialFor(null)?.token;
  const answer = await out.spin(
    `Submitting ${code}…`,
    registry.request<Schemas["IntakeResult"]>("POST", "/api/v1/providers", {
      body: { providerCode: code, ...body },
      token,
    }),
  );
  if (answer.status !== 201) throw refusal(answer);
  const result = answer.body;
  if (result.accessToken) store.saveAgent(result.providerCode, result.accessToken);
  // Shown whole this once to a person at a terminal (to hand to a CI secret), never into a log or a pipe.
  if (result.accessToken && out.interactive && !out.json) {
    out.tell(`${out.err.yellow("!")} The agent's token, shown this once: ${result.accessToken}`);
  }
  const kept = result.accessToken
    ? `Its token (${result.accessToken.slice(0, 10)}…, which the registry shows only this once) is kept in ${store.path}.`
    : `No token came back (${result.notice ?? "a replayed intake"}).`;
  out.result(
    {
      ...base,
      action: "created",
      providerCode: result.providerCode,
      reviewCode: result.reviewCode,
      version: result.provider.version,
      reviewStage: result.provider.reviewStage,
      tokenStored: result.accessToken ? store.path : null,
    },
    [
      `${p.green("✓")} Submitted ${p.bold(result.providerCode)} for review: review code ${p.bold(result.reviewCode)}.`,
      kept,
      ...(ctx.env.CI
        ? ["On CI that file goes with the machine: publish a new agent from your own machine first."]
        : []),
    ],
  );
}
