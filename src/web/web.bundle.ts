/**
 * The pages' assets, bundled in memory by esbuild: one ES module per page (shared code split into
 * chunks), one stylesheet, all named by their content hash. Nothing is written to disk and nothing
 * is fetched from the internet; the result is built once per process and cached.
 */
import { createHash } from "node:crypto";
import { readFile } from "node:fs/promises";
import { basename, dirname, join, relative } from "node:path";
import { fileURLToPath } from "node:url";
import { gzipSync } from "node:zlib";
import { build, type Plugin } from "esbuild";

/** The pages, by name: their entry module under src/web/pages/. */
export const PAGES = ["directory", "intake", "profile", "reviews"] as const;
export type PageName = (typeof PAGES)[number];

export interface Asset {
  body: Uint8Array;
  /** The body gzipped, when that is worth it. */
  gzip?: Uint8Array;
  contentType: string;
}

export interface Bundle {
  /** Served under /assets/, by file name (content-hashed, so cacheable for ever). */
  assets: Map<string, Asset>;
  /** Each page's script and the chunks it imports (to preload), as /assets/ URLs. */
  scripts: Record<PageName, { entry: string; imports: string[] }>;
  /** The stylesheet's /assets/ URL. */
  stylesheet: string;
  /** The icon's /assets/ URL. */
  icon: string;
}

/** The pages' sources: src/web, whether the service runs from src/ (tsx) or from its build in dist/. */
const WEB_DIR = fileURLToPath(new URL("../../src/web/", import.meta.url)).replace(/\/$/, "");
/** A directory name for esbuild's output paths; with `write: false` nothing is written there. */
const OUT_DIR = join(WEB_DIR, "__bundle__");

const TYPES: Record<string, string> = {
  ".js": "text/javascript; charset=utf-8",
  ".css": "text/css; charset=utf-8",
  ".svg": "image/svg+xml",
};

function contentTypeOf(file: string): string {
  const ext = file.slice(file.lastIndexOf("."));
  return TYPES[ext] ?? "application/octet-stream";
}

/**
 * zod's `z` namespace re-exports every locale (about half of its weight in a bundle), and a
 * namespace import can't be tree-shaken: keep English only. Should zod move its files, the filter
 * no longer matches and the bundle is merely larger.
 */
const zodEnglishOnly: Plugin = {
  name: "zod-english-only",
  setup(b) {
    b.onResolve({ filter: /^\.\.\/locales\/index\.js$/ }, (args) =>
      /[\\/]node_modules[\\/]zod[\\/]/.test(args.importer)
        ? { path: join(args.resolveDir, "../locales/en.js"), namespace: "zod-locales" }
        : undefined,
    );
    b.onLoad({ filter: /.*/, namespace: "zod-locales" }, (args) => ({
      contents: `export { default as en } from ${JSON.stringify(args.path)};`,
      resolveDir: dirname(args.path),
    }));
  },
};

function compressed(body: Uint8Array, contentType: string): Uint8Array | undefined {
  if (body.byteLength < 1024 || contentType.startsWith("image/")) return undefined;
  const gzip = gzipSync(body, { level: 9 });
  return gzip.byteLength < body.byteLength ? gzip : undefined;
}

async function bundle(): Promise<Bundle> {
  const result = await build({
    absWorkingDir: WEB_DIR,
    entryPoints: [...PAGES.map((p) => join(WEB_DIR, "pages", `${p}.ts`)), join(WEB_DIR, "app.css")],
    outdir: OUT_DIR,
    entryNames: "[name]-[hash]",
    chunkNames: "chunk-[hash]",
    bundle: true,
    splitting: true,
    minify: true,
    format: "esm",
    platform: "browser",
    target: ["es2022", "chrome110", "firefox115", "safari16"],
    charset: "utf8",
    legalComments: "none",
    metafile: true,
    write: false,
    logLevel: "silent",
    plugins: [zodEnglishOnly],
  });
  const assets = new Map<string, Asset>();
  for (const file of result.outputFiles) {
    const contentType = contentTypeOf(file.path);
    assets.set(basename(file.path), { body: file.contents, gzip: compressed(file.contents, contentType), contentType });
  }
  const scripts = {} as Bundle["scripts"];
  let stylesheet = "";
  for (const [out, meta] of Object.entries(result.metafile.outputs)) {
    const url = `/assets/${basename(out)}`;
    if (!meta.entryPoint) continue;
    const entry = basename(meta.entryPoint);
    if (entry === "app.css") {
      stylesheet = url;
      continue;
    }
    const page = PAGES.find((p) => entry === `${p}.ts`);
    if (!page) continue;
    const imports = meta.imports.filter((i) => i.kind === "import-statement").map((i) => `/assets/${basename(i.path)}`);
    scripts[page] = { entry: url, imports };
  }
  for (const page of PAGES) {
    if (!scripts[page]) throw new Error(`web bundle: no output for page ${page} (${relative(WEB_DIR, OUT_DIR)})`);
  }
  if (!stylesheet) throw new Error("web bundle: no stylesheet");

  const svg = await readFile(join(WEB_DIR, "icon.svg"));
  const icon = `icon-${createHash("sha256").update(svg).digest("hex").slice(0, 8)}.svg`;
  assets.set(icon, { body: svg, contentType: contentTypeOf(icon) });
  return { assets, scripts, stylesheet, icon: `/assets/${icon}` };
}

let cached: Promise<Bundle> | undefined;

/** The bundle, built on first call and cached for the process (a failed build is retried next time). */
export function webBundle(): Promise<Bundle> {
  if (!cached) {
    cached = bundle();
    cached.catch(() => {
      cached = undefined;
    });
  }
  return cached;
}
