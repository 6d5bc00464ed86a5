// Generates the Prisma clients offline, one per dialect, from the one model (prisma/schema.prisma).
// The PostgreSQL schema is derived from it here — never edited by hand — so the dialects cannot
// drift apart. Prisma 7's CLI insists on a schema-engine binary it would download from a host these
// machines cannot reach; `generate` never runs it, so any existing file satisfies the check
// (ARCHITECTURE.md, "Known traps").
import { spawnSync } from "node:child_process";
import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { fileURLToPath } from "node:url";

const env = { ...process.env };
env.PRISMA_SCHEMA_ENGINE_BINARY ??= fileURLToPath(import.meta.url);
env.PRISMA_HIDE_UPDATE_MESSAGE = "1";

function generate(...args) {
  const result = spawnSync("npx", ["--no-install", "prisma", "generate", ...args], { stdio: "inherit", env });
  if (result.status !== 0) process.exit(result.status ?? 1);
}

/** The PostgreSQL twin of the model: same models, other provider, own client, no Pothos types. */
export function postgresSchema(source) {
  const twin = source
    .replace(/provider\s*=\s*"sqlite"/, 'provider = "postgresql"')
    .replace(/output\s*=\s*"\.\.\/src\/generated\/prisma"/, 'output          = "./prisma-pg"')
    .replace(/generator pothos \{[^}]*\}\n*/, "");
  if (twin === source || twin.includes('"sqlite"') || !twin.includes("./prisma-pg")) {
    throw new Error("prisma/schema.prisma no longer has the shape the PostgreSQL twin is derived from");
  }
  return `// Generated from prisma/schema.prisma by scripts/prisma-generate.mjs. Do not edit.\n${twin}`;
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  generate();
  const twin = new URL("../src/generated/postgresql.prisma", import.meta.url);
  mkdirSync(new URL(".", twin), { recursive: true });
  writeFileSync(twin, postgresSchema(readFileSync(new URL("../prisma/schema.prisma", import.meta.url), "utf8")));
  generate("--schema", fileURLToPath(twin));
}
