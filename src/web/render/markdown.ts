/**
 * Agent descriptions are Markdown written by their owners: rendered with raw HTML off (any tag is
 * shown as text), markdown-it's own link check (no `javascript:`, `vbscript:`, `file:` or non-image
 * `data:` URLs), and every link marked `rel="nofollow ugc noopener"`, since the registry vouches for
 * none of them. The server and the browser run this same module, so a profile looks the same
 * whichever rendered it.
 */
import MarkdownIt from "markdown-it";

const LINK_REL = "nofollow ugc noopener";

const md = new MarkdownIt({ html: false, linkify: true, typographer: false, breaks: false });
// Images would make every reader's browser fetch addresses the owner chose (and the pages' CSP
// allows same-origin images only): an image is shown as a link to it.
md.disable("image");

const defaultLinkOpen =
  md.renderer.rules.link_open ?? ((tokens, idx, options, _env, self) => self.renderToken(tokens, idx, options));
md.renderer.rules.link_open = (tokens, idx, options, env, self) => {
  const token = tokens[idx];
  if (token) token.attrSet("rel", LINK_REL);
  return defaultLinkOpen(tokens, idx, options, env, self);
};

// The profile's own headings are h1 and h2: a description's headings start below them, its
// highest level at h3 whichever level its author began with (most begin at ##), so that no level
// is skipped (screen readers' users move by heading level) and the description's own order is kept.
md.core.ruler.push("shift_headings", (state) => {
  const headings = state.tokens.filter((t) => t.type === "heading_open" || t.type === "heading_close");
  const top = Math.min(...headings.map((t) => Number(t.tag.slice(1))));
  for (const token of headings) token.tag = `h${Math.min(6, Number(token.tag.slice(1)) - top + 3)}`;
});

// A code block wider than a phone scrolls sideways: it takes the keyboard's focus, so that it can be
// scrolled without a pointer.
for (const rule of ["fence", "code_block"] as const) {
  const base = md.renderer.rules[rule];
  if (!base) continue;
  md.renderer.rules[rule] = (tokens, idx, options, env, self) =>
    base(tokens, idx, options, env, self).replace(/^<pre>/, '<pre tabindex="0">');
}

/** The HTML of a Markdown text: safe to insert as is (no raw HTML, checked links). */
export function renderMarkdown(text: string): string {
  return md.render(text);
}
