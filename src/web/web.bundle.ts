/**
 * The pages' assets, bundled in memory by esbuild: one ES module per page (shared code split into
 * chunks), one stylesheet, all named by their content hash and precompressed (gzip and brotli).
 * Nothing is written to disk and nothing is fetched from the internet; the result is built once per
 * process and cached.
 */
import { createHash } from "node:crypto";
import { readFile } from "node:fs/promises";
import { basename, dirname, join, relative } from "node:path";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { brotliCompress, constants, gzip } from "node:zlib";
import { build, type Plugin, stop } from "esbuild";

/** The pages, by name: their entry module under src/web/pages/. */
export const PAGES = ["directory", "intake", "profile", "reviews", "webhooks", "apikeys", "mirror"] as const;
export type PageName = (typeof PAGES)[number];

export interface Asset {
  body: Uint8Array;
  /** The body gzipped, when that is worth it. */
  gzip?: Uint8Array;
  /** The body compressed with brotli, when that is worth it. */
  br?: Uint8Array;
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

const gzipAsync = promisify(gzip);
const brotliAsync = promisify(brotliCompress);

/**
 * An asset of a body, with its compressed forms when they are worth it. Compression runs on libuv's
 * threads, not the event loop. Brotli's quality 9 rather than 11: within 10% of the size at a tenth
 * of the time (GraphiQL's 5 MB script: 0.7 s instead of 9.5 s, once per process).
 */
export async function assetOf(body: Uint8Array, contentType: string): Promise<Asset> {
  // Every text is compressed, however small, when that makes it smaller (brotli's own dictionary
  // makes even a few hundred bytes shorter); images other than SVG are compressed already.
  if (contentType.startsWith("image/") && !contentType.startsWith("image/svg")) return { body, contentType };
  const [gzipped, br] = await Promise.all([
    gzipAsync(body, { level: 9 }),
    brotliAsync(body, {
      params: {
        [constants.BROTLI_PARAM_QUALITY]: 9,
        [constants.BROTLI_PARAM_MODE]: constants.BROTLI_MODE_TEXT,
        [constants.BROTLI_PARAM_SIZE_HINT]: body.byteLength,
      },
    }),
  ]);
  return {
    body,
    contentType,
    ...(gzipped.byteLength < body.byteLength ? { gzip: gzipped } : {}),
    ...(br.byteLength < body.byteLength ? { br } : {}),
  };
}

/** A file name that carries its content's hash (`stem-<16 hex digits of SHA-256>.ext`): cacheable for ever. */
export function hashedName(stem: string, ext: string, body: Uint8Array): string {
  return `${stem}-${createHash("sha256").update(body).digest("hex").slice(0, 16)}.${ext}`;
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
  }).finally(() =>
    // The bundle is made once per process: esbuild's service process is not kept idle beside it.
    stop(),
  );
  const assets = new Map<string, Asset>(
    await Promise.all(
      result.outputFiles.map(
        async (file) => [basename(file.path), await assetOf(file.contents, contentTypeOf(file.path))] as const,
      ),
    ),
  );
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
  const icon = hashedName("icon", "svg", svg);
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
