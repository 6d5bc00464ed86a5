/**
 * The prober's rules, pure: what is probed, how results become a state, when the next check is,
 * what uptime is, and what drift is (the live tools or card against what was seen and declared).
 */
import { createHash } from "node:crypto";
import canonicalize from "canonicalize";
import { createPatch } from "rfc6902";
import { type AgentCard, agentCardOf, type CardSource } from "../interop/agent.card.ts";
import type { Profile, Validated } from "../providers/provider.rules.ts";

/**
 * UP: answers its declared protocol. AUTH_REQUIRED: alive, but wants credentials the prober never
 * sends. WRONG_PROTOCOL: answers, not the protocol or transport it declares. DOWN: not there (DNS,
 * connection, TLS, 404/410). UNKNOWN: could not tell (a timeout, a 5xx, not checked yet).
 */
export const HEALTH_STATES = ["UP", "AUTH_REQUIRED", "WRONG_PROTOCOL", "DOWN", "UNKNOWN"] as const;
export type HealthState = (typeof HEALTH_STATES)[number];

/** The states in which an agent answers: what uptime counts. */
const ANSWERING: ReadonlySet<HealthState> = new Set(["UP", "AUTH_REQUIRED"]);

/** The `health` filter of lists: states, comma-separated or listed, each one of HEALTH_STATES. */
export function healthFilter(values: readonly string[] | null | undefined): Validated<HealthState[]> {
  const list = [...new Set((values ?? []).flatMap((v) => v.split(",")).map((v) => v.trim().toUpperCase()))].filter(
    Boolean,
  );
  const bad = list.find((v) => !(HEALTH_STATES as readonly string[]).includes(v));
  if (bad !== undefined) {
    return {
      ok: false,
      errors: [
        { path: "health", message: `"${bad.slice(0, 40)}" is not a health state (${HEALTH_STATES.join(", ")})` },
      ],
    };
  }
  return { ok: true, value: list as HealthState[] };
}

/** What one check found. */
export interface CheckResult {
  outcome: HealthState;
  latencyMs: number | null;
  /** In plain words, for the owner and anyone reading the profile. */
  reason: string;
  /** What the live agent showed, in the form drift compares; absent when it showed nothing. */
  live?: Live;
}

/** An MCP server's tools (name and input schema) or an A2A agent's card (the parts drift compares). */
export type Live = { kind: "MCP_TOOLS"; tools: LiveTool[] } | { kind: "A2A_CARD"; card: CardParts };
export interface LiveTool {
  name: string;
  inputSchema: unknown;
}
export type CardParts = Pick<AgentCard, "skills" | "supportedInterfaces" | "securitySchemes" | "securityRequirements">;

/** What is probed for a profile: its endpoint's protocol, URL and transport, or its health URL. */
export interface Target {
  protocol: "MCP" | "A2A" | "HTTP";
  url: string;
  /** MCP only: the transport the endpoint declares. */
  transport: "STREAMABLE_HTTP" | "SSE";
}

/**
 * The target of a profile, or null when there is nothing the prober can check: no endpoint (an agent
 * shipped as packages), another protocol without a health URL, or a URL with variables the client
 * fills in.
 */
export function targetOf(endpoint: Profile["endpoint"]): Target | null {
  if (!endpoint) return null;
  if (endpoint.protocol === "MCP" || endpoint.protocol === "A2A") {
    if (/[{}]/.test(endpoint.url)) return null;
    return { protocol: endpoint.protocol, url: endpoint.url, transport: endpoint.transport ?? "STREAMABLE_HTTP" };
  }
  return endpoint.healthUrl ? { protocol: "HTTP", url: endpoint.healthUrl, transport: "STREAMABLE_HTTP" } : null;
}

/** The host a target's checks go to (what the per-host cap counts). */
export function hostOf(target: Target): string {
  return new URL(target.url).hostname.toLowerCase();
}

/** The confirmed state and the results that may change it. */
export interface StateMachine {
  state: HealthState;
  pendingState: string | null;
  pendingCount: number;
}

/**
 * The state after a result: it changes once `confirmations` results in a row agree on another
 * state; a result that agrees with the current state clears what was pending.
 */
export function afterResult(current: StateMachine, outcome: HealthState, confirmations: number): StateMachine {
  if (outcome === current.state) return { state: current.state, pendingState: null, pendingCount: 0 };
  const count = current.pendingState === outcome ? current.pendingCount + 1 : 1;
  if (count >= confirmations) return { state: outcome, pendingState: null, pendingCount: 0 };
  return { state: current.state, pendingState: outcome, pendingCount: count };
}

/** How long a result that disagrees waits at most for the check that may confirm it. */
export const CONFIRM_SECONDS = 30;

/**
 * When to check next: sooner when a change awaits confirmation; backed off, doubling up to
 * `maxBackoffSeconds`, while DOWN; otherwise the interval, less up to 10% of jitter so that agents
 * added together spread out and every one is still checked within its interval.
 */
export function nextCheckAt(
  machine: StateMachine,
  downStreak: number,
  at: Date,
  config: { intervalSeconds: number; maxBackoffSeconds: number },
  random: () => number = Math.random,
): Date {
  let seconds = config.intervalSeconds;
  if (machine.pendingState) seconds = Math.min(seconds, CONFIRM_SECONDS);
  else if (machine.state === "DOWN" && downStreak > 1) {
    seconds = Math.min(config.maxBackoffSeconds, seconds * 2 ** Math.min(downStreak - 1, 20));
    seconds = Math.max(seconds, config.intervalSeconds);
  }
  return new Date(at.getTime() + seconds * 1000 * (0.9 + 0.1 * random()));
}

/** Uptime from hourly counts: the share of checks that found the agent answering; null without checks. */
export function uptime(rows: readonly { checks: number; up: number }[]): number | null {
  let checks = 0;
  let up = 0;
  for (const row of rows) {
    checks += row.checks;
    up += row.up;
  }
  return checks === 0 ? null : Math.round((up / checks) * 10_000) / 10_000;
}

/** Whether an outcome counts as answering for uptime. */
export function answering(outcome: HealthState): boolean {
  return ANSWERING.has(outcome);
}

/** The start of the hour an instant is in (the hourly counts' key). */
export function hourOf(at: Date): Date {
  return new Date(Math.floor(at.getTime() / 3_600_000) * 3_600_000);
}

/** SHA-256 (hex) of the RFC 8785 canonical form. */
export function canonicalHash(value: unknown): string {
  return createHash("sha256")
    .update(canonicalize(value) ?? "null")
    .digest("hex");
}

/** Live tools in a stable order (by name), as drift compares and hashes them. */
export function liveTools(tools: readonly { name: string; inputSchema?: unknown }[]): LiveTool[] {
  return tools
    .map((t) => ({ name: t.name, inputSchema: t.inputSchema ?? null }))
    .sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
}

/** The parts of a card drift compares. */
export function cardParts(card: Partial<AgentCard>): CardParts {
  return {
    skills: card.skills ?? [],
    supportedInterfaces: card.supportedInterfaces ?? [],
    securitySchemes: card.securitySchemes ?? {},
    securityRequirements: card.securityRequirements ?? [],
  };
}

/** The value of a live form keyed for RFC 6902 patches: tools by name, so a patch names the tool. */
function patchable(live: Live): unknown {
  if (live.kind === "A2A_CARD") return live.card;
  return Object.fromEntries(live.tools.map((t) => [t.name, { inputSchema: t.inputSchema }]));
}

/**
 * What drift is recorded: how the live agent differs from what it declared (the registry's own card
 * for an A2A agent; the profile's tool names for an MCP server) and from what was seen before.
 */
export interface Drift {
  kind: Live["kind"];
  /** RFC 6902 from what was seen before to what is live now; empty the first time. */
  sinceLastCheck: unknown[];
  /** RFC 6902 from the registry's card to the live one (A2A); null for MCP, whose profile holds no schemas. */
  fromDeclared: unknown[] | null;
  /** MCP: live tools the profile does not declare, and declared tools the server does not list. */
  undeclaredTools: string[];
  missingTools: string[];
  /** In plain words. */
  summary: string;
}

/** The drift of a live form, or null when it matches what was declared and seen. */
export function driftOf(
  live: Live,
  previous: Live | null,
  declared: { tools: readonly { name: string }[]; card: CardParts | null },
): Drift | null {
  const sinceLastCheck =
    previous && previous.kind === live.kind ? createPatch(patchable(previous), patchable(live)) : [];
  if (live.kind === "MCP_TOOLS") {
    const names = new Set(live.tools.map((t) => t.name));
    const declaredNames = new Set(declared.tools.map((t) => t.name));
    const undeclaredTools = [...names].filter((n) => !declaredNames.has(n));
    const missingTools = [...declaredNames].filter((n) => !names.has(n)).sort();
    if (sinceLastCheck.length === 0 && undeclaredTools.length === 0 && missingTools.length === 0) return null;
    const words = [
      sinceLastCheck.length > 0 ? "the live tools changed since the last check" : "",
      undeclaredTools.length > 0
        ? `the server lists tools the profile does not declare (${undeclaredTools.join(", ")})`
        : "",
      missingTools.length > 0 ? `declared tools are not listed (${missingTools.join(", ")})` : "",
    ].filter(Boolean);
    return {
      kind: live.kind,
      sinceLastCheck,
      fromDeclared: null,
      undeclaredTools,
      missingTools,
      summary: sentence(words),
    };
  }
  const fromDeclared = declared.card ? createPatch(declared.card, live.card) : [];
  if (sinceLastCheck.length === 0 && fromDeclared.length === 0) return null;
  const words = [
    sinceLastCheck.length > 0 ? "the live card changed since the last check" : "",
    fromDeclared.length > 0 ? "the live card's skills, interfaces or security differ from the registry's card" : "",
  ].filter(Boolean);
  return {
    kind: live.kind,
    sinceLastCheck,
    fromDeclared,
    undeclaredTools: [],
    missingTools: [],
    summary: sentence(words),
  };
}

function sentence(parts: string[]): string {
  const text = parts.join("; ");
  return `${text.charAt(0).toUpperCase()}${text.slice(1)}.`;
}

/** The card the registry exports for a profile, in the parts drift compares (null without an endpoint). */
export function declaredCard(
  source: Omit<CardSource, "endpoint"> & { endpoint: Profile["endpoint"] },
  base: string,
): CardParts | null {
  if (!source.endpoint) return null;
  return cardParts(agentCardOf({ ...source, endpoint: source.endpoint }, base));
}
