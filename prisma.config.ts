import { defineConfig } from "prisma/config";

// Migrations are applied by the service itself (src/db/migrate.ts), because the Prisma CLI's
// schema engine cannot be downloaded on these machines; the files are in Prisma's format so
// `prisma migrate deploy` accepts the same database where the engine exists.
export default defineConfig({
  schema: "prisma/schema.prisma",
  migrations: { path: "prisma/migrations/sqlite" },
  datasource: { url: process.env.DATABASE_URL ?? "file:./data/registry.db" },
});
