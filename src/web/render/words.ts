/**
 * The words the pages use for the API's values, shared by the server's rendering and the browser's
 * (pure: no DOM), so a page says the same thing whichever drew it.
 */
import type { HealthState, Provider, ReviewStage, TrustTier } from "../client/types.ts";

/** Values whose words are names or acronyms, not plain words. */
const SPELLED: Record<string, string> = {
  A2A: "A2A",
  MCP: "MCP",
  HTTP: "HTTP",
  HTTP_JSON: "HTTP JSON",
  OPENAI_COMPATIBLE: "OpenAI-compatible",
  API_KEY: "API key",
  OAUTH2: "OAuth 2",
  MTLS: "mTLS",
  NPM: "npm",
  PYPI: "PyPI",
  OCI: "OCI",
  NUGET: "NuGet",
  MCPB: "MCPB",
  STDIO: "stdio",
  STREAMABLE_HTTP: "Streamable HTTP",
  SSE: "SSE",
};

/** `TOOL_SERVER` → `Tool server`. */
export function humanize(value: string): string {
  const spelled = SPELLED[value];
  if (spelled) return spelled;
  const words = value.toLowerCase().replace(/_/g, " ");
  return words.charAt(0).toUpperCase() + words.slice(1);
}

export const STAGE_TONE: Record<ReviewStage, string> = {
  APPROVED: "good",
  SUBMITTED: "info",
  IN_REVIEW: "info",
  CHANGES_REQUESTED: "warn",
  REJECTED: "bad",
  SUSPENDED: "bad",
};
export const TIER_TONE: Partial<Record<TrustTier, string>> = { OFFICIAL: "strong", TRUSTED: "good", VERIFIED: "good" };

interface StateWords {
  words: string;
  tone: "good" | "info" | "warn" | "bad" | "neutral";
  /** What the state means, for a badge's title and beside the state on the profile. */
  meaning: string;
}

/** Every health state, in the API's order; a state the API adds and this lacks is a type error here. */
export const HEALTH: Record<HealthState, StateWords> = {
  UP: { words: "Up", tone: "good", meaning: "It answers the protocol it declares." },
  AUTH_REQUIRED: {
    words: "Needs sign-in",
    tone: "info",
    meaning: "It answers, and asks for credentials (the registry never sends any).",
  },
  WRONG_PROTOCOL: {
    words: "Wrong protocol",
    tone: "warn",
    meaning: "Something answers, but not the protocol or transport the profile declares.",
  },
  DOWN: {
    words: "Down",
    tone: "bad",
    meaning: "It cannot be reached: the name does not resolve, the connection or TLS fails, or the address is gone.",
  },
  UNKNOWN: {
    words: "Unknown",
    tone: "neutral",
    meaning: "The registry could not tell (no answer in time, a server error) or has not checked it yet.",
  },
};

export const HEALTH_STATES = Object.keys(HEALTH) as HealthState[];

/** The states of a `health` filter value (`up, down` → UP, DOWN), known ones only, in the API's order. */
export function healthStatesOf(value: string): HealthState[] {
  const asked = new Set(value.split(",").map((v) => v.trim().toUpperCase()));
  return HEALTH_STATES.filter((s) => asked.has(s));
}

/** The directory's choices: the two groups people ask for most, then each state alone. */
export const HEALTH_CHOICES: { value: string; words: string }[] = [
  { value: "UP,AUTH_REQUIRED", words: "Answering (Up or Needs sign-in)" },
  { value: "WRONG_PROTOCOL,DOWN", words: "Failing (Wrong protocol or Down)" },
  ...HEALTH_STATES.map((s) => ({ value: s, words: HEALTH[s].words })),
];

/** Words for any combination of states (one the address bar holds that no choice offers). */
export function healthChoiceWords(states: readonly HealthState[]): string {
  const known = HEALTH_CHOICES.find((c) => c.value === states.join(","));
  if (known) return known.words;
  return states.map((s) => HEALTH[s].words).join(" or ");
}

/** A health badge's title: what the state means, and that it is the registry's finding. */
export const healthTitle = (state: HealthState): string =>
  `Health, as the registry last found the endpoint: ${HEALTH[state].meaning}`;

const percent = new Intl.NumberFormat("en", { style: "percent", maximumFractionDigits: 1 });

/**
 * A share of 0–1 as a percentage, rounded down to a tenth of a percent: one failed check in a
 * thousand is 99.9%, never a rounded-up 100%.
 */
export function uptimeWords(share: number | null | undefined): string {
  if (share === null || share === undefined || Number.isNaN(share)) return "No checks";
  // The epsilon keeps binary fractions from flooring a tenth too far (0.29 * 1000 is 289.99…).
  return percent.format(Math.floor(Math.min(1, Math.max(0, share)) * 1000 + 1e-6) / 1000);
}

/** Why an agent without health is not probed, from its profile: the prober's own rules, in words. */
export function notProbed(p: Pick<Provider, "lifecycle" | "endpoint">): string {
  if (p.lifecycle === "RETIRED") return "Not probed: the agent is retired.";
  if (!p.endpoint) return "Not probed: the agent has no endpoint; it ships as packages that a client starts itself.";
  const { protocol, url, healthUrl } = p.endpoint;
  const probed = protocol === "MCP" || protocol === "A2A";
  if (probed && /[{}]/.test(url)) {
    return "Not probed: the endpoint's URL holds values each client fills in, so there is no one address to check.";
  }
  if (!probed && !healthUrl) {
    const which = protocol === "OTHER" ? "another protocol" : `an ${humanize(protocol)} endpoint`;
    return `Not probed: the registry speaks MCP and A2A itself; for ${which} it checks the health-check URL, and this profile states none.`;
  }
  return "Not checked yet: the registry checks every endpoint it can every few minutes.";
}
