/**
 * The HTML shell of each page: the same header, navigation and footer everywhere, the page's
 * stylesheet and module script, and a visible "Loading…" until the script takes over (so a slow
 * script is never a blank page). No user data is ever written into a shell: the directory and the
 * profile are rendered with their data by render/, the other pages fetch it.
 */
import { type NavKey, renderDocument } from "./render/document.ts";
import { html } from "./render/html.ts";
import type { Bundle, PageName } from "./web.bundle.ts";

interface PageInfo {
  title: string;
  description: string;
  /** The navigation entry marked as current. */
  nav: NavKey;
}

export const PAGE_INFO: Record<PageName, PageInfo> = {
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

/** The shell of a page: its script draws everything from the API (the pages the server does not render). */
export function renderShell(page: PageName, bundle: Bundle, options: { graphiql: boolean; signIn?: boolean }): string {
  const info = PAGE_INFO[page];
  return renderDocument({
    page,
    title: info.title,
    description: info.description,
    nav: info.nav,
    bundle,
    graphiql: options.graphiql,
    signIn: options.signIn ?? false,
    body: html`<p class="page-loading" role="status"><span class="spinner" aria-hidden="true"></span> Loading…</p>
<noscript><p class="notice error">This page needs JavaScript. Everything it shows is also available as JSON under <a href="/api/v1">/api/v1</a>.</p></noscript>`,
  });
}
