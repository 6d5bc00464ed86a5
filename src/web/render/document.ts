/**
 * The HTML document every page shares: the head (title, description, Open Graph, the page's
 * stylesheet and module script), the header with its navigation, `<main>` and the footer. Built
 * with the escaping `html` template, so a title or description taken from an agent is text.
 */
import type { Bundle, PageName } from "../web.bundle.ts";
import { type Html, html } from "./html.ts";

export const SITE_NAME = "Agent Registry";

/** The navigation entry marked as current. */
export type NavKey = "directory" | "intake" | "reviews" | "webhooks" | "apikeys" | "mirror" | null;

export interface DocumentOptions {
  page: PageName;
  title: string;
  description: string;
  nav: NavKey;
  bundle: Bundle;
  graphiql: boolean;
  signIn?: boolean;
  /** `<main>`'s content. */
  body: Html;
  /** Open Graph: the page's absolute URL and its type; none on a page that has no address of its own. */
  og?: { url: string; type: "website" | "profile" };
  /** Extra `data-` marker on `<main>`: which server rendering the page's script may adopt. */
  ssr?: string;
}

const NAV: [string, string, NavKey][] = [
  ["/", "Directory", "directory"],
  ["/intake", "Submit an agent", "intake"],
  ["/reviews", "Reviews", "reviews"],
  ["/webhooks", "Webhooks", "webhooks"],
  ["/admin/api-keys", "API keys", "apikeys"],
  ["/admin/mirror-sources", "Mirrors", "mirror"],
];

/** A whole page. */
export function renderDocument(o: DocumentOptions): string {
  const script = o.bundle.scripts[o.page];
  const fullTitle = `${o.title} · ${SITE_NAME}`;
  return html`<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="description" content="${o.description}">
<meta name="color-scheme" content="light dark">
<title>${fullTitle}</title>
${
  o.og
    ? html`<meta property="og:title" content="${o.title}">
<meta property="og:description" content="${o.description}">
<meta property="og:type" content="${o.og.type}">
<meta property="og:url" content="${o.og.url}">
<meta property="og:site_name" content="${SITE_NAME}">
<link rel="canonical" href="${o.og.url}">
`
    : ""
}<link rel="icon" href="${o.bundle.icon}" type="image/svg+xml">
<link rel="stylesheet" href="${o.bundle.stylesheet}">
${script.imports.map((src) => html`<link rel="modulepreload" href="${src}">\n`)}<script type="module" src="${script.entry}"></script>
</head>
<body>
<a class="skip-link" href="#main">Skip to content</a>
<header class="site-header">
<div class="wrap header-row">
<a class="brand" href="/"><img src="${o.bundle.icon}" alt="" width="28" height="28"> ${SITE_NAME}</a>
<nav aria-label="Main"><ul class="nav">
${NAV.map(
  ([href, label, key]) => html`<li><a href="${href}"${o.nav === key ? html` aria-current="page"` : ""}>${label}</a></li>
`,
)}</ul></nav>
${o.signIn ? html`<div class="account" id="account"></div>` : ""}
</div>
</header>
<main id="main" class="wrap" tabindex="-1" data-page="${o.page}"${o.ssr ? html` data-ssr="${o.ssr}"` : ""}>
${o.body}
</main>
<footer class="site-footer">
<div class="wrap">
<p>REST API: <a href="/api/v1">/api/v1</a> · OpenAPI: <a href="/openapi.yaml">/openapi.yaml</a>${
    o.graphiql ? html` · GraphQL: <a href="/graphql">GraphiQL</a>` : ""
  }</p>
</div>
</footer>
</body>
</html>
`.value;
}
