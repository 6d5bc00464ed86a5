/**
 * Which Chromium the browser tests (and `npm run lighthouse`) drive, with which flags, at which sizes: CHROMIUM_PATH when set, else the system's Chromium, else
 * the one the `@sparticuz/chromium` package ships (unpacked on first use into the temp folder), so
 * `npm install` alone is enough to run them. The global setup asks once, before the workers start,
 * so two of them never unpack it at the same time.
 */
import { existsSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

/** Where screenshots and reports go (CI keeps the folder), and the two widths pages are seen at. */
export const ARTIFACTS = fileURLToPath(new URL("./artifacts/", import.meta.url));
export const PHONE = { width: 390, height: 844 } as const;
export const DESKTOP = { width: 1280, height: 900 } as const;

/** Chromium's flags here: no sandbox or GPU in a container, and nothing that reaches out on its own. */
export const CHROMIUM_ARGS = [
  "--no-sandbox",
  "--disable-gpu",
  "--disable-quic",
  "--no-first-run",
  "--disable-background-networking",
  "--disable-component-update",
  "--disable-sync",
];

const SYSTEM = ["/usr/bin/chromium", "/usr/bin/chromium-browser", "/usr/bin/google-chrome"];

export async function browserPath(): Promise<string> {
  const given = process.env.CHROMIUM_PATH;
  if (given) return given;
  const system = SYSTEM.find((path) => existsSync(path));
  if (system) return system;
  const { default: packaged } = await import("@sparticuz/chromium");
  const path = await packaged.executablePath();
  // Its fonts are unpacked beside it, with their own fonts.conf; fontconfig finds them only when told.
  const fonts = join(dirname(path), "fonts");
  if (existsSync(join(fonts, "fonts.conf"))) process.env.FONTCONFIG_PATH ||= fonts;
  return path;
}
