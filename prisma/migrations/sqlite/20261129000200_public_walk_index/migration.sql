-- The index on (visibility, reviewStage, id) was made for PostgreSQL's search walk, which now has an
-- index of its own (its step of the same name). SQLite's search walks the full-text index by rowid and
-- no query here reads this one.
DROP INDEX "providers_visibility_reviewStage_id_idx";
