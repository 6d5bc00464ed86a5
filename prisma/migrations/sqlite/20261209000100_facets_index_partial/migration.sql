-- The facets' index, partial on a condition only the facets' statement states ("id" > 0, true of every
-- row): whole, the planner took it for the list's pages too (five equalities beat four and the order)
-- and sorted every match, 17–180 ms a page instead of a walk of the directory's own index.
DROP INDEX "providers_facets_idx";
CREATE INDEX "providers_facets_idx" ON "providers"("visibility", "reviewStage", "lifecycle", "agentType", "trustTier", "publisherVerified", "healthState", ("endpoint" ->> 'protocol')) WHERE "id" > 0;
