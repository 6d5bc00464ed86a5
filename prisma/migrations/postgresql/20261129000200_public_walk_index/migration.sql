-- An anonymous search walks the public, approved agents newest first (provider.search.store.ts). The
-- index on (visibility, reviewStage, id) was made for that walk, but PostgreSQL's statistics cannot
-- tell that the newest rows are submissions still in review: it walked the primary key past them all,
-- and 10,000 fresh submissions made a common word's search take 94 ms instead of 2. An index of the
-- public, approved rows alone is smaller than the primary key, so it is the cheaper walk whatever the
-- statistics say, and it holds none of those submissions.
DROP INDEX "providers_visibility_reviewStage_id_idx";
CREATE INDEX "providers_public_id_idx" ON "providers"("id") WHERE "visibility" = 'PUBLIC' AND "reviewStage" = 'APPROVED';
