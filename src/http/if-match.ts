/**
 * `If-Match` as RFC 9110 §13.1.1 reads it: `*`, or a comma-separated list of entity tags compared
 * strongly. A write answers the profile's version as a strong tag (`"3"`) and a read a tag the version
 * leads (`"3-<hash of the body>"`, conditional.ts): either names version 3. A weak tag (`W/"3"`)
 * never matches, and neither does anything that is not a quoted tag.
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
    const version = tag[1] ? undefined : /^(0|[1-9][0-9]{0,14})(?:-.*)?$/.exec(tag[2] as string)?.[1];
    if (version !== undefined) versions.push(Number(version));
  }
  return versions;
}

/**
 * The precondition of a write: the `If-Match` of the request an operation answers, and the
 * mutation's `ifVersion` argument, the same precondition for clients that cannot set a header. Given
 * both, both must hold: a version the header does not name never matches, so the write is refused
 * with 412 rather than one of the two being ignored.
 */
export function ifMatchOf(ctx: { request: Request }, ifVersion?: number | null): IfMatch {
  const header = parseIfMatch(ctx.request.headers.get("if-match"));
  if (ifVersion === undefined || ifVersion === null) return header;
  return header === undefined || header === "*" || header.includes(ifVersion) ? [ifVersion] : [];
}

/** The `ifVersion` argument of a mutation that takes If-Match. */
export const IF_VERSION_DESCRIPTION =
  "The version the caller last saw: the change is refused (PRECONDITION_FAILED) unless it is still the current one. The If-Match header does the same; given both, both must hold.";

/** Whether a write of the resource at `current` may go ahead under the precondition. */
export function ifMatchHolds(ifMatch: IfMatch, current: number): boolean {
  return ifMatch === undefined || ifMatch === "*" || ifMatch.includes(current);
}
