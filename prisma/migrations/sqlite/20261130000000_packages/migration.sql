-- An MCP server may ship as packages a client starts rather than at an endpoint: the profile's
-- `packages` (at most ten), and an endpoint that may be JSON null when there is at least one package.
-- SQLite checks a column constraint against every row, so both rules hold for the rows already here.
ALTER TABLE "providers" ADD COLUMN "packages" JSONB NOT NULL DEFAULT '[]'
    CONSTRAINT "providers_packages_at_most_ten" CHECK (json_array_length("packages") <= 10)
    CONSTRAINT "providers_reachable" CHECK (json_type("endpoint") <> 'null' OR json_array_length("packages") > 0);
