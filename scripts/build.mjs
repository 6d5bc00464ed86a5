/**
 * Builds the service for production: every module under src/ (the pages' browser code excepted,
 * which the service bundles itself at run time) transpiled by esbuild into dist/, one file each,
 * the tree mirrored and `.ts` imports rewritten to `.js`. `npm start` runs it before it starts, so
 * dist/ always matches src/; it takes well under a second.
 */
import { readdirSync, rmSync } from "node:fs";
import { join, relative } from "node:path";
import { fileURLToPath } from "node:url";
import { build } from "esbuild";

const root = fileURLToPath(new URL("..", import.meta.url));
const src = join(root, "src");
const BROWSER_CODE = [join(src, "web", "pages"), join(src, "web", "client")];

const entryPoints = readdirSync(src, { recursive: true, withFileTypes: true })
  .filter((entry) => entry.isFile() && entry.name.endsWith(".ts") && !entry.name.endsWith(".d.ts"))
  .map((entry) => join(entry.parentPath, entry.name))
  .filter((file) => !BROWSER_CODE.some((dir) => file.startsWith(`${dir}/`)));

/** Each module stays a module of its own: its relative imports point at the sibling .js files. */
const ownModules = {
  name: "own-modules",
  setup(b) {
    b.onResolve({ filter: /^\.\.?\// }, (args) =>
      args.kind === "entry-point" ? undefined : { path: args.path.replace(/\.ts$/, ".js"), external: true },
    );
  },
};

rmSync(join(root, "dist"), { recursive: true, force: true });
await build({
  entryPoints,
  outdir: join(root, "dist"),
  outbase: src,
  bundle: true,
  packages: "external",
  platform: "node",
  format: "esm",
  target: "node20",
  sourcemap: true,
  logLevel: "warning",
  plugins: [ownModules],
});
console.log(`built ${entryPoints.length} modules into ${relative(process.cwd(), join(root, "dist")) || "dist"}/`);
