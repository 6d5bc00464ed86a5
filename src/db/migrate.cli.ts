/** `npm run db:migrate` applies pending migrations to the configured database. */
import { loadConfig } from "../config.ts";
import { migrate } from "./migrate.ts";

const applied = await migrate(loadConfig().databaseUrl);
console.log(applied.length ? `applied: ${applied.join(", ")}` : "database is up to date");
