/**
 * What both examples share: where the registry is, the reviewer's token, a word no other agent's
 * summary contains (so a search finds exactly this run's agents), and one printed line per step.
 */
import { randomBytes } from "node:crypto";

export const registryUrl = (process.env.REGISTRY_URL ?? "http://localhost:4000").replace(/\/$/, "");

const token = process.env.REVIEWER_TOKEN;
if (!token) throw new Error("Set REVIEWER_TOKEN to a reviewer JWT (npm run reviewer-token -- --sub you).");
export const reviewerToken: string = token;

/** Letters only, so that every search engine takes it for one word. */
export const runWord = `zq${Array.from(randomBytes(10), (b) => String.fromCharCode(97 + (b % 26))).join("")}`;

/** How many agents the run submits: enough that a search with `limit: 1` has three pages. */
export const AGENTS = 3;

/** Prints one line for a step. */
export function step(name: string, detail: string): void {
  console.log(`${name.padEnd(10)} ${detail}`);
}

/** Throws unless `condition` holds: an example exits non-zero on any answer it did not expect. */
export function expect(condition: unknown, what: string): asserts condition {
  if (!condition) throw new Error(`unexpected answer: ${what}`);
}
