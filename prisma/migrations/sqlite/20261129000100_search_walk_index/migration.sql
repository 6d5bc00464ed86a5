-- A search walks the matches of the directory newest first (by id, in blocks: provider.search.store.ts).
-- Through the primary key it read every newer row, listed or not: 8,000 fresh submissions on top
-- made a common word's search on PostgreSQL take 16 ms instead of 3.5.
CREATE INDEX "providers_visibility_reviewStage_id_idx" ON "providers"("visibility", "reviewStage", "id");
