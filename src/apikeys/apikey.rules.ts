/**
 * API keys, pure: the secret's form (an agent token's, under `ark_`), and what a new key may be
 * given. A key carries the reader role only (src/auth/roles.ts).
 */
import { type MintedToken, mintSecret } from "../auth/agent.token.ts";
import type { FieldError } from "../errors.ts";
import { fits, isStorableText } from "../text.ts";

export const API_KEY_PREFIX = "ark_";
export const MAX_KEY_NAME = 80;

export function mintApiKey(): MintedToken {
  return mintSecret(API_KEY_PREFIX, "key_");
}

/** Whether a bearer credential is meant as an API key (so it is not tried as a JWT). */
export function looksLikeApiKey(value: string): boolean {
  return value.startsWith(API_KEY_PREFIX);
}

/** What is wrong with a new key's name and expiry, each with its field; [] when nothing is. */
export function keyInputErrors(input: { name: string; expiresAt: Date | null }, now: Date): FieldError[] {
  const errors: FieldError[] = [];
  const name = input.name.trim();
  if (!name) errors.push({ path: "name", message: "must not be empty" });
  else if (!isStorableText(name) || !fits(name, MAX_KEY_NAME)) {
    errors.push({ path: "name", message: `at most ${MAX_KEY_NAME} characters of text` });
  }
  if (input.expiresAt && input.expiresAt.getTime() <= now.getTime()) {
    errors.push({ path: "expiresAt", message: "must be in the future" });
  }
  return errors;
}
