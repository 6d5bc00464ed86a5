-- The facets' index, partial on a condition only the facets' statement states ("id" > 0, true of every
-- row), so that no plan of the list's pages takes it instead of the directory's own indexes.
DROP INDEX "providers_facets_idx";
CREATE INDEX "providers_facets_idx" ON "providers"("visibility", "reviewStage", "lifecycle", "agentType", "trustTier", "publisherVerified", "healthState", ("endpoint" ->> 'protocol'), "id") WHERE "id" > 0;
