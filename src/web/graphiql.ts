/**
 * GraphiQL at /graphql: a small page that loads GraphiQL's own build — the one
 * @graphql-yoga/render-graphiql would inline into a 9 MB page sent on every visit — as
 * content-hashed, precompressed assets under /assets/ that a browser keeps for good. Its editor's
 * web workers are same-origin assets too (that renderer makes them blob: URLs), and the page has no
 * inline script, so its policy needs neither. Nothing is read until GraphiQL is first asked for,
 * and then only as bytes outside the JavaScript heap (~18 MB with their compressed forms): a server
 * that never shows it holds none of it.
 */
import { createRequire } from "node:module";
import { Worker } from "node:worker_threads";
import type { GraphiQLOptions } from "graphql-yoga";
import { SITE_NAME } from "./render/document.ts";
import { type Asset, assetOf, hashedName } from "./web.bundle.ts";

/** What the first tab shows on a first visit (GraphiQL remembers the tabs of later ones). */
export const EXAMPLE_QUERY = `# The latest public agents: press ▶ (or Ctrl-Enter).
# To query with an agent's or a reviewer's token,
# put this in the Headers tab below:
#   {"Authorization": "Bearer <token>"}
query LatestProviders {
  providers(limit: 5) {
    items {
      providerCode
      name
      summary
      trustTier
    }
    nextCursor
  }
}
`;

/**
 * Runs after the page is parsed, before GraphiQL's script (both deferred, in order): tells Monaco
 * where its workers are, then renders GraphiQL once that script has run. The page's JSON data
 * block carries the URLs and options (a data block is not a script: no policy to satisfy).
 */
const BOOT = `"use strict";
const config = JSON.parse(document.getElementById("graphiql-config").textContent);
self.MonacoEnvironment = { globalAPI: false, getWorkerUrl: (_, label) => config.workers[label] };
addEventListener("DOMContentLoaded", () => {
  YogaGraphiQL.renderYogaGraphiQL(document.getElementById("root"), config.options);
});
`;

export interface Graphiql {
  /** Served under /assets/, by file name. */
  assets: Map<string, Asset>;
  /** The page, given the site's icon URL. */
  page(icon: string): string;
}

/** Whether an /assets/ file name is one of GraphiQL's (so asking for it may load them). */
export function isGraphiqlAsset(name: string): boolean {
  return name.startsWith("graphiql-");
}

const JS = "text/javascript; charset=utf-8";

/** The files of GraphiQL's build that are served, by their export's name. */
const BUILD_FILES = ["js", "css", "editorWorkerService", "jsonWorker", "graphqlWorker"] as const;
type BuildFiles = Record<(typeof BUILD_FILES)[number], Uint8Array>;

/**
 * GraphiQL's build, read in a worker thread: the package exports it as JavaScript strings, which,
 * once imported, would stay in this heap for good (~30 MB with the module's own source). The worker
 * hands over their UTF-8 bytes (moved, not copied) and exits, taking the strings with it.
 */
function readBuild(): Promise<BuildFiles> {
  const path = createRequire(import.meta.url).resolve("@graphql-yoga/render-graphiql/graphiql");
  const worker = new Worker(
    `const { parentPort, workerData } = require("node:worker_threads");
    const build = require(workerData.path);
    const encoder = new TextEncoder();
    const files = Object.fromEntries(workerData.names.map((name) => [name, encoder.encode(build[name])]));
    parentPort.postMessage(files, Object.values(files).map((bytes) => bytes.buffer));`,
    { eval: true, workerData: { path, names: BUILD_FILES } },
  );
  return new Promise((resolve, reject) => {
    worker.once("message", resolve);
    worker.once("error", reject);
    worker.once("exit", (code) => reject(new Error(`GraphiQL's build could not be read (worker exit ${code})`)));
  });
}

async function load(): Promise<Graphiql> {
  const build = await readBuild();
  const files = {
    script: ["graphiql", "js", JS, build.js],
    boot: ["graphiql-boot", "js", JS, new TextEncoder().encode(BOOT)],
    stylesheet: ["graphiql", "css", "text/css; charset=utf-8", build.css],
    // Monaco asks for its workers by these labels.
    editorWorkerService: ["graphiql-editor-worker", "js", JS, build.editorWorkerService],
    json: ["graphiql-json-worker", "js", JS, build.jsonWorker],
    graphql: ["graphiql-graphql-worker", "js", JS, build.graphqlWorker],
  } as const;
  const assets = new Map<string, Asset>();
  const url: Record<string, string> = {};
  await Promise.all(
    Object.entries(files).map(async ([key, [stem, ext, contentType, body]]) => {
      const name = hashedName(stem, ext, body);
      assets.set(name, await assetOf(body, contentType));
      url[key] = `/assets/${name}`;
    }),
  );

  const page = (icon: string): string => {
    const options: GraphiQLOptions = {
      title: SITE_NAME,
      logo: `<img src="${icon}" alt="" width="28" height="28">`,
      defaultQuery: EXAMPLE_QUERY,
    };
    const config = {
      workers: { editorWorkerService: url.editorWorkerService, json: url.json, graphql: url.graphql },
      options,
    };
    // "<" escaped, so nothing in the data can close its element.
    const data = JSON.stringify(config).replace(/</g, "\\u003c");
    return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="description" content="Explore the ${SITE_NAME}'s GraphQL API: its schema, documentation and live queries.">
<title>GraphiQL · ${SITE_NAME}</title>
<link rel="icon" href="${icon}" type="image/svg+xml">
<link rel="stylesheet" href="${url.stylesheet}">
<script type="application/json" id="graphiql-config">${data}</script>
<script defer src="${url.boot}"></script>
<script defer src="${url.script}"></script>
</head>
<body id="body" class="no-focus-outline">
<noscript>GraphiQL needs JavaScript. GraphQL requests go to /graphql; the REST API is under <a href="/api/v1">/api/v1</a>.</noscript>
<div id="root"></div>
</body>
</html>
`;
  };
  return { assets, page };
}

let loaded: Promise<Graphiql> | undefined;

/** GraphiQL's assets and page, loaded and compressed on first call (a failure is retried next time). */
export function graphiql(): Promise<Graphiql> {
  if (!loaded) {
    loaded = load();
    loaded.catch(() => {
      loaded = undefined;
    });
  }
  return loaded;
}
