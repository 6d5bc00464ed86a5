// Runs `prisma generate` offline. Prisma 7's CLI insists on a schema-engine binary it would
// download from a host these machines cannot reach; `generate` itself never runs it, so any
// existing file satisfies the check (see ARCHITECTURE.md, "Known traps").
import { spawnSync } from "node:child_process";
import { fileURLToPath } from "node:url";

const env = { ...process.env };
env.PRISMA_SCHEMA_ENGINE_BINARY ??= fileURLToPath(import.meta.url);
env.PRISMA_HIDE_UPDATE_MESSAGE = "1";
const result = spawnSync("npx", ["--no-install", "prisma", "generate"], { stdio: "inherit", env });
process.exit(result.status ?? 1);
