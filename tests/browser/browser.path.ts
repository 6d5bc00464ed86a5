/**
 * Which Chromium the browser tests drive: CHROMIUM_PATH when set, else the system's Chromium, else
 * the one the `@sparticuz/chromium` package ships (unpacked on first use into the temp folder), so
 * `npm install` alone is enough to run them. The global setup asks once, before the workers start,
 * so two of them never unpack it at the same time.
 */
import { existsSync } from "node:fs";
import { dirname, join } from "node:path";

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
