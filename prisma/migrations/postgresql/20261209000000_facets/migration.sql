-- The list's facets (src/providers/provider.facets.store.ts) group the providers that pass the filters
-- by these columns and the endpoint's protocol: an index holding all of them (and the id the labels
-- join on) lets an index-only scan spare reading the rows.
CREATE INDEX "providers_facets_idx" ON "providers"("visibility", "reviewStage", "lifecycle", "agentType", "trustTier", "publisherVerified", "healthState", ("endpoint" ->> 'protocol'), "id");
