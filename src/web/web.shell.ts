/**
 * The HTML shell of each page: the same header, navigation and footer everywhere, the page's
 * stylesheet and module script, and a visible "Loading…" until the script takes over (so a slow
 * script is never a blank page). No user data is ever written into a shell: pages fetch it.
 */
import type { Bundle, PageName } from "./web.bundle.ts";

interface PageInfo {
  title: string;
  description: string;
  /** The navigation entry marked as current. */
  nav: "directory" | "intake" | "reviews" | "webhooks" | "apikeys" | "mirror" | null;
}

const PAGE_INFO: Record<PageName, PageInfo> = {
  directory: {
    title: "Agent directory",
    description: "Search the AI agents of the registry by name, label, type and trust tier.",
    nav: "directory",
  },
  intake: {
    title: "Submit an agent",
    description: "Register an AI agent for review: its profile, endpoint, capabilities, models, tools and policy.",
    nav: "intake",
  },
  profile: {
    title: "Agent profile",
    description: "An AI agent's profile, review timeline and version history.",
    nav: null,
  },
  reviews: {
    title: "Review queue",
    description: "Reviewers' dashboard: assign, comment, request changes, approve or reject.",
    nav: "reviews",
  },
  webhooks: {
    title: "Webhooks",
    description: "Owners and reviewers: subscribe a URL to an agent's changes, and see what was delivered.",
    nav: "webhooks",
  },
  apikeys: {
    title: "API keys",
    description: "Admins: read keys for clients that cannot sign in, made, listed and revoked.",
    nav: "apikeys",
  },
  mirror: {
    title: "Mirror sources",
    description: "Admins: the registries this one mirrors, their filters and review policy, and each sync as it runs.",
    nav: "mirror",
  },
};

export const SITE_NAME = "Agent Registry";

/** The shell of a page. */
export function renderShell(page: PageName, bundle: Bundle, options: { graphiql: boolean; signIn?: boolean }): string {
  const info = PAGE_INFO[page];
  const script = bundle.scripts[page];
  const link = (href: string, label: string, key: PageInfo["nav"]) =>
    `<li><a href="${href}"${info.nav === key ? ' aria-current="page"' : ""}>${label}</a></li>`;
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="description" content="${info.description}">
<meta name="color-scheme" content="light dark">
<title>${info.title} · ${SITE_NAME}</title>
<link rel="icon" href="${bundle.icon}" type="image/svg+xml">
<link rel="stylesheet" href="${bundle.stylesheet}">
${script.imports.map((src) => `<link rel="modulepreload" href="${src}">`).join("\n")}
<script type="module" src="${script.entry}"></script>
</head>
<body>
<a class="skip-link" href="#main">Skip to content</a>
<header class="site-header">
<div class="wrap header-row">
<a class="brand" href="/"><img src="${bundle.icon}" alt="" width="28" height="28"> ${SITE_NAME}</a>
<nav aria-label="Main"><ul class="nav">
${link("/", "Directory", "directory")}
${link("/intake", "Submit an agent", "intake")}
${link("/reviews", "Reviews", "reviews")}
${link("/webhooks", "Webhooks", "webhooks")}
${link("/admin/api-keys", "API keys", "apikeys")}
${link("/admin/mirror-sources", "Mirrors", "mirror")}
</ul></nav>
${options.signIn ? '<div class="account" id="account"></div>' : ""}
</div>
</header>
<main id="main" class="wrap" tabindex="-1" data-page="${page}">
<p class="page-loading" role="status"><span class="spinner" aria-hidden="true"></span> Loading…</p>
<noscript><p class="notice error">This page needs JavaScript. Everything it shows is also available as JSON under <a href="/api/v1">/api/v1</a>.</p></noscript>
</main>
<footer class="site-footer">
<div class="wrap">
<p>REST API: <a href="/api/v1">/api/v1</a> · OpenAPI: <a href="/openapi.yaml">/openapi.yaml</a>${
    options.graphiql ? ' · GraphQL: <a href="/graphql">GraphiQL</a>' : ""
  }</p>
</div>
</footer>
</body>
</html>
`;
}
