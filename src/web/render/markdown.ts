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

// The profile's own headings are h1 and h2: a description's headings start below them, at h3.
md.core.ruler.push("shift_headings", (state) => {
  for (const token of state.tokens) {
    if (token.type === "heading_open" || token.type === "heading_close") {
      token.tag = `h${Math.min(6, Number(token.tag.slice(1)) + 2)}`;
    }
  }
});

/** The HTML of a Markdown text: safe to insert as is (no raw HTML, checked links). */
export function renderMarkdown(text: string): string {
  return md.render(text);
}
