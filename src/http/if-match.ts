/**
 * `If-Match` as RFC 9110 §13.1.1 reads it: `*`, or a comma-separated list of entity tags compared
 * strongly. A profile's ETag is its version as a strong tag (`"3"`), so a weak tag (`W/"3"`) never
 * matches, and neither does anything that is not a quoted tag.
 */
export type IfMatch = "*" | readonly number[] | undefined;

/** One member of the list: optional white space, an entity tag, then a comma or the end. */
const MEMBER = /[ \t]*(W\/)?"([\x21\x23-\x7e\x80-\xff]*)"[ \t]*(?:,|$)/y;

/**
 * The versions an `If-Match` header names (`undefined` when it was not sent). A header that is not
 * a well-formed list names none, so it matches nothing.
 */
export function parseIfMatch(header: string | null): IfMatch {
  if (header === null) return undefined;
  if (header.trim() === "*") return "*";
  const versions: number[] = [];
  MEMBER.lastIndex = 0;
  while (MEMBER.lastIndex < header.length) {
    const tag = MEMBER.exec(header);
    if (!tag) return [];
    if (!tag[1] && /^(?:0|[1-9][0-9]{0,14})$/.test(tag[2] as string)) versions.push(Number(tag[2]));
  }
  return versions;
}

/** The `If-Match` of the request an operation answers (a resolver reads the request through this). */
export function ifMatchOf(ctx: { request: Request }): IfMatch {
  return parseIfMatch(ctx.request.headers.get("if-match"));
}

/** Whether a write of the resource at `current` may go ahead under the precondition. */
export function ifMatchHolds(ifMatch: IfMatch, current: number): boolean {
  return ifMatch === undefined || ifMatch === "*" || ifMatch.includes(current);
}
