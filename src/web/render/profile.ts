/**
 * A profile (`/providers/{code}`) as the server sends it, from the profile operation's answer for
 * the request's viewer: the head with the health state and uptime by the title, the Connect panel
 * first, the description rendered from Markdown, every section of the profile, the contact and
 * tokens when the read shows them (to the owner or a reviewer), and the shells of the sections its
 * script loads (recent changes, the version history and its diffs), with plain links to each
 * version for a reader without a script. The page's script (pages/profile.ts) adopts it, and draws
 * a profile with it too when it reads one with a token of its tab.
 * And the page of an agent that is not there.
 */
import type { Provider } from "../client/types.ts";
import { type ConnectBlock, connectBlocks } from "./connect.ts";
import { type Html, html, type Part, trustedHtml } from "./html.ts";
import { renderMarkdown } from "./markdown.ts";
import { badge, healthBadge, lifecycleBadge, lifecycleNotice, stageBadge, tierBadge, time } from "./parts.ts";
import { HEALTH, humanize, notProbed, uptimeWords } from "./words.ts";

type Variable = NonNullable<Provider["endpoint"]>["headers"][number];

function section(id: string, title: string, ...children: Part[]): Html {
  return html`<section id="${id}" class="profile-section" aria-labelledby="${id}-title"><h2 id="${id}-title">${title}</h2>${children}</section>`;
}

function facts(rows: [string, Part][]): Html {
  return html`<dl class="facts">${rows.map(
    ([term, value]) =>
      html`<dt>${term}</dt><dd>${value === null || value === undefined || value === "" ? "—" : value}</dd>`,
  )}</dl>`;
}

const present = (rows: [string, Part][]): [string, Part][] =>
  rows.filter(([, v]) => v !== null && v !== undefined && v !== "" && v !== false);

const none = (text: string): Html => html`<p class="muted">${text}</p>`;

function list(items: readonly string[], empty = "None"): Html {
  return items.length
    ? html`<ul class="inline-list">${items.map((i) => html`<li>${i}</li>`)}</ul>`
    : html`<span class="muted">${empty}</span>`;
}

/** A URL that a narrow screen may wrap after a slash rather than inside a word. */
const breakable = (url: string): Html[] => url.split("/").map((part, i) => (i ? html`/<wbr>${part}` : html`${part}`));

/** An external address, as a link that leaves the registry. */
function external(url: string | null | undefined): Html | null {
  return url ? html`<a href="${url}" rel="noopener noreferrer nofollow" class="url">${breakable(url)}</a>` : null;
}

/**
 * A table that reflows into labelled rows on a phone (each cell says its column), so no column is
 * squeezed until its words break.
 */
export function table(caption: string, head: string[], rows: Part[][]): Html {
  return html`<div class="table-wrap" tabindex="0" role="region" aria-label="${caption} (table)"><table class="reflow"><caption class="visually-hidden">${caption}</caption><thead><tr>${head.map(
    (c) => html`<th scope="col">${c}</th>`,
  )}</tr></thead><tbody>${rows.map(
    (r) => html`<tr>${r.map((c, i) => html`<td data-label="${head[i] ?? ""}">${c}</td>`)}</tr>`,
  )}</tbody></table></div>`;
}

function variables(caption: string, what: string, items: readonly Variable[]): Html {
  return table(
    caption,
    [what, "Needed", "What it is"],
    items.map((v) => [
      html`<code>${v.name}</code>`,
      `${v.isRequired ? "Required" : "Optional"}${v.isSecret ? ", secret" : ""}`,
      `${v.description ?? ""}${v.default !== null && v.default !== undefined ? ` (default ${v.default})` : ""}`,
    ]),
  );
}

function actor(value: string): string {
  if (value.startsWith("agent:")) return `the agent (${value.slice(6)})`;
  if (value.startsWith("reviewer:")) return `reviewer ${value.slice(9)}`;
  if (value === "reviewer") return "a reviewer";
  return value;
}

/** One block of the Connect panel: its text in a `<pre>` and a button that copies it. */
export function connectBlock(b: ConnectBlock): Html {
  return html`<div class="snippet" data-language="${b.language}"><div class="snippet-head"><h3 id="${b.id}-title">${b.title}</h3><button type="button" class="button secondary small copy" data-copy="${b.id}" aria-describedby="${b.id}-title">Copy</button></div><p class="hint">${b.hint}</p><pre id="${b.id}" tabindex="0" aria-labelledby="${b.id}-title"><code>${b.text}</code></pre></div>`;
}

/** The health state and uptime, by the title: what the prober last found. */
function headHealth(p: Provider): Html | null {
  if (!p.health) return null;
  return html`<p class="head-health"><span class="health-slot">${healthBadge(p.health.state)}</span> <span class="uptime-brief">${uptimeWords(p.health.uptime7d)} uptime over 7 days · ${uptimeWords(p.health.uptime30d)} over 30 days</span></p>`;
}

function cardSignatureBadge(c: NonNullable<Provider["cardSignature"]>): Html {
  if (c.status === "VERIFIED") {
    const by = c.domain ? `a key of ${c.domain}` : "a key the registry trusts";
    return badge("Signed card verified", "good", `The imported agent card's signature verified with ${by} (${c.kid})`);
  }
  if (c.status === "UNTRUSTED_KEY") {
    return badge(
      "Signed card, key not trusted",
      "warn",
      `Signed with key ${c.kid}, which no verified domain publishes`,
    );
  }
  return badge("Unsigned card", "neutral", "The imported agent card carried no signature");
}

function healthBody(p: Provider): Html {
  const health = p.health;
  if (!health) return html`<p class="muted not-probed">${notProbed(p)}</p>`;
  const windows: [string, number | null][] = [
    ["24 hours", health.uptime24h],
    ["7 days", health.uptime7d],
    ["30 days", health.uptime30d],
  ];
  return html`<p class="health-state">${healthBadge(health.state)} since ${time(health.since)}</p><p class="hint">${HEALTH[health.state].meaning}</p>${facts(
    [
      ["Last checked", health.checkedAt ? time(health.checkedAt) : "Not checked yet"],
      ["Latency", health.checkedAt && health.latencyMs !== null ? `${health.latencyMs} ms` : "—"],
      ["Last finding", health.reason ?? "—"],
    ],
  )}<h3>Uptime</h3><ul class="uptime" aria-label="Uptime: share of checks that found it answering">${windows.map(
    ([span, share]) =>
      html`<li data-window="${span}"><span class="uptime-value">${uptimeWords(share)}</span> <span class="uptime-span">last ${span}</span></li>`,
  )}</ul><h3>Recent checks</h3>${
    health.recentChecks.length
      ? html`<ol class="checks" aria-label="Recent checks, newest first">${health.recentChecks.map(
          (c) =>
            html`<li data-outcome="${c.outcome}"><span class="when">${time(c.at)}</span> ${healthBadge(c.outcome)} <span class="latency">${c.latencyMs === null ? "No answer" : `${c.latencyMs} ms`}</span> <span class="reason">${c.reason}</span></li>`,
        )}</ol>`
      : none("No checks kept.")
  }`;
}

/** The newest versions a page without a script links to; the API's list pages through the rest. */
const VERSION_LINKS = 20;

/**
 * The version history as plain links (each version's snapshot, and its changes from the one
 * before): versions run from 1 to the current one without a gap, so they need no read of their own.
 */
function versionLinks(p: Provider): Html {
  const code = encodeURIComponent(p.providerCode);
  const base = `/api/v1/providers/${code}/versions`;
  const newest = Array.from({ length: Math.min(p.version, VERSION_LINKS) }, (_, i) => p.version - i);
  return html`<ol class="versions">${newest.map(
    (n) =>
      html`<li class="version" data-version="${n}"><p><strong>Version ${n}</strong>: <a href="${base}/${n}">the profile as it stood</a>${
        n > 1 ? html` · <a href="${base}/${n - 1}/diff/${n}">its changes from version ${n - 1}</a>` : " (the intake)"
      }</p></li>`,
  )}</ol><p><a href="${base}">Every version, with who made it and when</a> (JSON).</p>`;
}

/** `<main>`'s content for a profile the viewer may see. */
export function renderProfile(p: Provider, origin: string): Html {
  const code = encodeURIComponent(p.providerCode);
  const blocks = connectBlocks(p, origin);
  // Null for everyone but the owner and reviewers, whom the read showed them.
  const contactEmail = p.contactEmail ?? null;
  const tokens = p.tokens ?? null;
  const sections: [string, string][] = [
    ...(blocks.length ? ([["connect", "Connect"]] as [string, string][]) : []),
    ["about", "About"],
    ["endpoint", "Endpoint"],
    ["health", "Health"],
    ["packages", "Packages"],
    ["capabilities", "Capabilities"],
    ["models", "Models"],
    ["tools", "Tools"],
    ["policy", "Usage policy"],
    ["roles", "People and roles"],
    ...(contactEmail !== null ? ([["contact", "Contact"]] as [string, string][]) : []),
    ...(tokens !== null ? ([["tokens", "Access tokens"]] as [string, string][]) : []),
    ["changes", "Recent changes"],
    ["timeline", "Review timeline"],
    ["versions", "Version history"],
  ];
  const head = html`<header class="profile-head"><nav class="crumbs" aria-label="Breadcrumb"><a href="/">Directory</a> › ${p.providerCode}</nav><h1>${p.name}</h1><p class="code">${p.providerCode}</p>${headHealth(p)}<p class="lede">${p.summary}</p>${lifecycleNotice(p)}${
    p.predecessors?.length
      ? html`<p class="hint predecessors">Succeeds ${p.predecessors.map(
          (c, i) => html`${i ? ", " : ""}<a href="/providers/${encodeURIComponent(c)}">${c}</a>`,
        )}.</p>`
      : ""
  }<p class="badges">${[
    badge(humanize(p.agentType), "neutral", "Agent type"),
    // Without health the slot waits in the badges, for a check the script may make.
    p.health ? null : html`<span class="health-slot"></span>`,
    tierBadge(p.trustTier),
    lifecycleBadge(p),
    stageBadge(p.reviewStage),
    p.visibility !== "PUBLIC" ? badge(humanize(p.visibility), "warn", "Visibility") : null,
    badge(`Version ${p.version}`, "neutral", "Profile version"),
    p.verifiedDomains.map((d) =>
      badge(`Verified domain: ${d.domain}`, "good", `Proved by ${d.method}, last checked ${d.lastCheckedAt}`),
    ),
    p.cardSignature ? cardSignatureBadge(p.cardSignature) : null,
  ]}</p></header>`;

  const connect = blocks.length
    ? section(
        "connect",
        "Connect",
        html`<p class="hint">Ready to paste: configuration for your client, with each value you supply named, never filled in.</p>`,
        html`<div class="snippets">${blocks.map(connectBlock)}</div>`,
      )
    : null;

  const toc = html`<nav class="toc" aria-label="On this page"><ul>${sections.map(
    ([id, title]) => html`<li><a href="#${id}">${title}</a></li>`,
  )}</ul></nav>`;

  const about = section(
    "about",
    "About",
    p.description
      ? html`<div class="description markdown">${trustedHtml(renderMarkdown(p.description))}</div>`
      : none("No description."),
    facts([
      ["Home page", external(p.homepageUrl) ?? "—"],
      ...present([
        ["MCP server name", p.serverName && html`<code>${p.serverName}</code>`],
        ["Release", p.releaseVersion],
        [
          "Source",
          p.repository &&
            html`${external(p.repository.url)}${p.repository.subfolder ? html` in <code>${p.repository.subfolder}</code>` : ""}`,
        ],
      ]),
      ["Agent type", humanize(p.agentType)],
      ["Visibility", humanize(p.visibility)],
      ["Trust tier", humanize(p.trustTier)],
      ["Review stage", humanize(p.reviewStage)],
      ["Labels", list(p.labels)],
      ["Registered", time(p.createdAt)],
      ["Last updated", time(p.updatedAt)],
    ]),
  );

  const e = p.endpoint;
  const endpoint = section(
    "endpoint",
    "Endpoint",
    e
      ? facts([
          ["URL", external(e.url)],
          ["Protocol", humanize(e.protocol)],
          ["Authentication", humanize(e.authScheme)],
          ...present([["Transport", e.transport && humanize(e.transport)]]),
          ["Health check", external(e.healthUrl) ?? "—"],
        ])
      : none("No endpoint: the agent ships as the packages below, which a client starts itself."),
    e?.variables.length
      ? [html`<h3>Values in the URL</h3>`, variables("Values in the URL", "Value", e.variables)]
      : null,
    e?.headers.length
      ? [html`<h3>Headers a client sends</h3>`, variables("Headers a client sends", "Header", e.headers)]
      : null,
  );

  const health = section(
    "health",
    "Health",
    html`<p class="hint">As the registry's prober finds the endpoint, checking it every few minutes; not stated by the publisher.</p>`,
    html`<div class="health-body">${healthBody(p)}</div>`,
    // Whoever is shown the tokens may check now (the script adds the button); anyone else may sign in.
    tokens !== null
      ? html`<div data-slot="health-actions"></div>`
      : html`<details class="owner-signin"><summary>Your agent? Sign in with its access token to check it now</summary><div data-slot="owner-signin"></div></details>`,
  );

  const packages = section(
    "packages",
    "Packages",
    p.packages.length
      ? html`<ul class="packages">${p.packages.map(
          (pkg) =>
            html`<li class="package"><h3>${humanize(pkg.registryType)} <code>${pkg.version ? `${pkg.identifier}@${pkg.version}` : pkg.identifier}</code></h3>${
              pkg.runCommand
                ? html`<pre class="run-command" aria-label="Command line" tabindex="0"><code>${pkg.runCommand}</code></pre>`
                : pkg.registryType === "CARGO"
                  ? html`<p>Install it with <code>cargo install ${pkg.identifier}@${pkg.version ?? ""}</code>, then run it.</p>`
                  : html`<p>Download the bundle, check its SHA-256 <code>${pkg.fileSha256 ?? ""}</code>, then open it in an MCP client.</p>`
            }${facts([
              [
                "Transport",
                pkg.transport.url
                  ? html`${humanize(pkg.transport.type)} at <code>${pkg.transport.url}</code>`
                  : humanize(pkg.transport.type),
              ],
              ["Registry", external(pkg.registryBaseUrl) ?? "The public one"],
            ])}${
              pkg.environmentVariables.length
                ? variables("Environment variables", "Variable", pkg.environmentVariables)
                : none("It reads no environment variables.")
            }</li>`,
        )}</ul>`
      : none(p.endpoint ? "None: the agent is reached at its endpoint." : "None."),
  );

  const capabilities = section(
    "capabilities",
    "Capabilities",
    p.capabilities.length
      ? html`<ul class="capabilities">${p.capabilities.map(
          (c) =>
            html`<li class="capability"><h3>${c.name} <code>${c.key}</code></h3>${
              c.description ? html`<p class="description">${c.description}</p>` : ""
            }${facts([
              ["Tags", list(c.tags)],
              ["Input", list(c.inputModes, "Any")],
              ["Output", list(c.outputModes, "Any")],
            ])}</li>`,
        )}</ul>`
      : none("No capabilities listed."),
  );

  const models = section(
    "models",
    "Models",
    p.models.length
      ? table(
          "Models",
          ["Vendor", "Model", "Role", "Context window"],
          p.models.map((m) => [m.vendor, m.model, humanize(m.role), m.contextWindow?.toLocaleString("en") ?? "—"]),
        )
      : none("No models listed."),
  );

  const tools = section(
    "tools",
    "Tools",
    p.tools.length
      ? table(
          "Tools",
          ["Name", "Kind", "Scopes", "Description"],
          p.tools.map((t) => [
            html`<code>${t.name}</code>`,
            humanize(t.kind),
            t.scopes.length ? t.scopes.map((s) => badge(humanize(s), s === "DESTRUCTIVE" ? "bad" : "neutral")) : "—",
            t.description ?? "—",
          ]),
        )
      : none("No tools listed."),
  );

  const policy = section(
    "policy",
    "Usage policy",
    p.policy
      ? facts([
          ["Human oversight", humanize(p.policy.humanOversight)],
          ["Data retention", p.policy.dataRetentionDays == null ? "Not stated" : `${p.policy.dataRetentionDays} days`],
          ["Allowed use cases", list(p.policy.allowedUseCases, "Not stated")],
          ["Prohibited use cases", list(p.policy.prohibitedUseCases, "Not stated")],
          ["Terms", external(p.policy.termsUrl) ?? "—"],
          ["Privacy policy", external(p.policy.privacyUrl) ?? "—"],
        ])
      : none("No usage policy stated."),
  );

  const roles = section(
    "roles",
    "People and roles",
    p.roles.length
      ? table(
          "People and roles",
          ["Who", "Role"],
          p.roles.map((r) => [r.subject, humanize(r.role)]),
        )
      : none("No people listed."),
  );

  const contact =
    contactEmail !== null
      ? section("contact", "Contact", facts([["Email", html`<a href="mailto:${contactEmail}">${contactEmail}</a>`]]))
      : null;

  const tokenSection =
    tokens !== null
      ? section(
          "tokens",
          "Access tokens",
          tokens.length
            ? table(
                "Access tokens",
                ["Prefix", "Label", "Created", "Last used", "Expires", "Revoked"],
                tokens.map((t) => [
                  html`<code>${t.prefix}…</code>`,
                  t.label ?? "—",
                  time(t.createdAt),
                  time(t.lastUsedAt),
                  time(t.expiresAt),
                  t.revokedAt ? time(t.revokedAt) : "Active",
                ]),
              )
            : none("No tokens."),
        )
      : null;

  // The page's script reads these two sections; without it, they are plain links to the same reads.
  const changes = section(
    "changes",
    "Recent changes",
    html`<p class="hint">The 10 newest, newest first.</p>`,
    html`<noscript><p><a href="/api/v1/events?providerCode=${code}&amp;last=10">The recent changes as JSON</a></p></noscript>`,
  );

  const timeline = section(
    "timeline",
    "Review timeline",
    p.reviewTimeline.length
      ? html`<ol class="timeline">${p.reviewTimeline.map(
          (ev) =>
            html`<li data-kind="${ev.kind}"><span class="when">${time(ev.at)}</span><span class="what"><strong>${humanize(ev.kind)}</strong> by ${actor(ev.actor)}</span>${
              ev.note ? html`<p class="note">${ev.note}</p>` : ""
            }</li>`,
        )}</ol>`
      : none("No events yet."),
  );

  const versions = section(
    "versions",
    "Version history",
    html`<p class="hint">Newest first.</p>`,
    html`<noscript>${versionLinks(p)}</noscript>`,
  );

  // A viewer shown tokens (the owner, a reviewer) is marked: the script then reads the profile as
  // JSON too, for what it adds that acts (Check now, drift, the owner's edit form).
  return html`<div class="profile" data-code="${p.providerCode}"${p.tokens ? html` data-private="true"` : ""}>${[
    head,
    connect,
    toc,
    about,
    endpoint,
    health,
    packages,
    capabilities,
    models,
    tools,
    policy,
    roles,
    contact,
    tokenSection,
    changes,
    timeline,
    versions,
  ]}</div>`;
}

/** `<main>`'s content for an agent that is not there, or not for this viewer (a 404 either way). */
export function renderProfileNotFound(code: string): Html {
  return html`<h1>Agent not found</h1><p>There is no agent "${code}" that you may see. It may be private, rejected or suspended (reviewers who are signed in see every agent).</p><p><a class="button secondary" href="/">Back to the directory</a></p><details class="owner-signin"><summary>Your agent? Sign in with its access token</summary><div data-slot="owner-signin"></div></details>`;
}

/** The profile's description for `<meta name="description">` and Open Graph: its summary. */
export const profileDescription = (p: Provider): string => p.summary;
