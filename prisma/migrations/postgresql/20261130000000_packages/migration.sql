-- An MCP server may ship as packages a client starts rather than at an endpoint: the profile's
-- `packages` (at most ten), and an endpoint that may be JSON null when there is at least one package.
ALTER TABLE "providers" ADD COLUMN "packages" JSONB NOT NULL DEFAULT '[]';
ALTER TABLE "providers" ADD CONSTRAINT "providers_packages_at_most_ten" CHECK (jsonb_array_length("packages") <= 10);
ALTER TABLE "providers" ADD CONSTRAINT "providers_reachable" CHECK ("endpoint" <> 'null'::jsonb OR jsonb_array_length("packages") > 0);
