/**
 * The command line of the synthetic seed, what `npm run seed:synthetic` runs:
 *
 *   npm run seed:synthetic -- --count 100000 [--database-url URL] [--seed 1] [--now 2026-01-01] [--batch N]
 */
import { pathToFileURL } from "node:url";
import { seedSynthetic } from "./seed.ts";

/** `--name value` and `--name=value` options, by name; throws on anything else or an unknown name. */
export function parseOptions(argv: string[], known: string[]): Map<string, string> {
  const args = new Map<string, string>();
  for (let i = 0; i < argv.length; i++) {
    const key = argv[i]!;
    if (!key.startsWith("--")) throw new Error(`unexpected argument "${key}"`);
    const [name, inline] = key.slice(2).split("=", 2) as [string, string | undefined];
    args.set(name, inline ?? argv[++i] ?? "");
  }
  for (const k of args.keys()) if (!known.includes(k)) throw new Error(`unknown option --${k}`);
  return args;
}

function parseArgs(argv: string[]): { count: number; databaseUrl: string; seed: number; now?: Date; batch?: number } {
  const args = parseOptions(argv, ["count", "database-url", "seed", "now", "batch"]);
  const count = Number(args.get("count"));
  if (!Number.isInteger(count) || count < 0) throw new Error("--count N (a whole number) is required");
  const now = args.get("now");
  return {
    count,
    databaseUrl: args.get("database-url") || process.env.DATABASE_URL || "file:./data/registry.db",
    seed: Number(args.get("seed") ?? 1),
    ...(now ? { now: new Date(now) } : {}),
    ...(args.has("batch") ? { batch: Number(args.get("batch")) } : {}),
  };
}

// Only when run as a script: the benchmarks import `parseOptions` from here.
if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  try {
    const a = parseArgs(process.argv.slice(2));
    await seedSynthetic({
      databaseUrl: a.databaseUrl,
      count: a.count,
      seed: a.seed,
      ...(a.now ? { now: a.now } : {}),
      ...(a.batch ? { batchSize: a.batch } : {}),
      log: (line) => process.stderr.write(`${line}\n`),
    });
  } catch (error) {
    process.stderr.write(`seed:synthetic failed: ${(error as Error).message}\n`);
    process.exitCode = 1;
  }
}
