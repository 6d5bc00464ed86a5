-- The search reads each walked row's tsvector to match and rank it (provider.search.store.ts). A
-- provider's row is often over PostgreSQL's 2 kB toast threshold, and the tsvector, the largest
-- column it may move, was kept out of line: a common word's walk of 658 rows read 2,259 buffers
-- (the toast index and table for each row) where the rows themselves are 246. Stored MAIN, it stays
-- in the row and the profile's larger JSON columns, read only by a profile, move out instead.
-- A generated column's storage applies to the rows it writes: the column is made again, in the
-- same statement, so the table is rewritten once.
ALTER TABLE "providers" DROP COLUMN "searchVector", ADD COLUMN "searchVector" tsvector GENERATED ALWAYS AS (
    setweight(to_tsvector('simple'::regconfig, "provider_search_text"("providerCode")), 'A') ||
    setweight(to_tsvector('simple'::regconfig, "provider_search_text"("name")), 'A') ||
    setweight(to_tsvector('simple'::regconfig, "provider_search_text"("labels"::text)), 'B') ||
    setweight(to_tsvector('simple'::regconfig, "provider_search_text"(jsonb_path_query_array("packages", '$[*].identifier')::text)), 'B') ||
    setweight(to_tsvector('simple'::regconfig, "provider_search_text"("summary")), 'C') ||
    setweight(to_tsvector('simple'::regconfig, coalesce("provider_search_text"("description"), '')), 'D')
) STORED, ALTER COLUMN "searchVector" SET STORAGE MAIN;
CREATE INDEX "providers_searchVector_idx" ON "providers" USING GIN ("searchVector");
