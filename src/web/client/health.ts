/**
 * How the pages say an agent's health, as the registry's prober last found its endpoint: each state
 * in words with a tone and an explanation, the directory's health filter, uptime as a percentage.
 * Never a colour alone: every badge says its state.
 */
import type { HealthState } from "./types.ts";
import { badge } from "./ui.ts";

interface StateWords {
  words: string;
  tone: "good" | "info" | "warn" | "bad" | "neutral";
  /** What the state means, for a badge's title and beside the state on the profile. */
  meaning: string;
}

/** Every state, in the API's order; a state the API adds and this lacks is a type error here. */
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

/** A state in words, as a badge whose title says what it means; `data-health` names the state. */
export function healthBadge(state: HealthState): HTMLElement {
  const { words, tone, meaning } = HEALTH[state];
  const element = badge(words, tone, `Health, as the registry last found the endpoint: ${meaning}`);
  element.dataset.health = state;
  return element;
}

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

const percent = new Intl.NumberFormat(undefined, { style: "percent", maximumFractionDigits: 1 });

/**
 * A share of 0–1 as a percentage, rounded down to a tenth of a percent: one failed check in a
 * thousand is 99.9%, never a rounded-up 100%.
 */
export function uptimeWords(share: number | null | undefined): string {
  if (share === null || share === undefined || Number.isNaN(share)) return "No checks";
  // The epsilon keeps binary fractions from flooring a tenth too far (0.29 * 1000 is 289.99…).
  return percent.format(Math.floor(Math.min(1, Math.max(0, share)) * 1000 + 1e-6) / 1000);
}
