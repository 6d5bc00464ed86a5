/**
 * What every stored text must be, whoever writes it: valid Unicode without NUL (PostgreSQL refuses
 * NUL, UTF-8 has no encoding for a lone surrogate), and lengths counted as stored.
 */

/** Whether a string can be stored as it was sent. */
export function isStorableText(text: string): boolean {
  return !text.includes("\u0000") && text.isWellFormed();
}

/**
 * Whether a text has at most `max` characters, counted as they are stored: Unicode code points, so
 * an emoji is one character, not the two UTF-16 units of its JavaScript length (zod's `max` of a
 * string counts the same way).
 */
export function fits(text: string, max: number): boolean {
  if (text.length <= max) return true;
  let count = 0;
  for (const _ of text) if (++count > max) return false;
  return true;
}
