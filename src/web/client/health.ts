/**
 * How the pages say an agent's health, as the registry's prober last found its endpoint: each state
 * in words with a tone and an explanation, the directory's health filter, uptime as a percentage.
 * Never a colour alone: every badge says its state.
 */

import {
  HEALTH,
  HEALTH_CHOICES,
  HEALTH_STATES,
  healthChoiceWords,
  healthStatesOf,
  healthTitle,
  uptimeWords,
} from "../render/words.ts";
import type { HealthState } from "./types.ts";
import { badge } from "./ui.ts";

export { HEALTH, HEALTH_CHOICES, HEALTH_STATES, healthChoiceWords, healthStatesOf, uptimeWords };

/** A state in words, as a badge whose title says what it means; `data-health` names the state. */
export function healthBadge(state: HealthState): HTMLElement {
  const { words, tone } = HEALTH[state];
  const element = badge(words, tone, healthTitle(state));
  element.dataset.health = state;
  return element;
}
