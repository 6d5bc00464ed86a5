-- Prefix indexes for the full-text search, and the same index rebuilt with them (issue #4).
--
-- A prefix term ("rout"*) without a prefix index makes FTS5 merge the doclists of every term that
-- starts with it into one list in memory before it returns the first row: the cost of a search
-- for a common word grew with the registry (18.6 ms per 1,000 rows at 1,000,000 agents). With
-- `prefix = '1 2 3 4 5 6 7 8'` FTS5 also indexes the first 1 to 8 characters of every token, so a
-- prefix term of up to 8 characters is one doclist, read lazily newest first and stopped after
-- the rows a page needs. A longer prefix is specific (few terms, few rows) and is still merged.
-- The price is space: at 1,000,000 agents the index grows from about 210 MB to about 1.1 GB, next
-- to about 5 GB of tables. Rebuilding it at that size takes about two minutes.
--
-- An FTS5 table's options cannot be altered, so the table is made again: same columns, tokenizer
-- and contentless-delete options as 20261121020000_search, refilled from providers. The triggers
-- of that migration name the table and keep working.

DROP TABLE "provider_search";

CREATE VIRTUAL TABLE "provider_search" USING fts5(
    "providerCode",
    "name",
    "labels",
    "summary",
    "description",
    tokenize = 'unicode61 remove_diacritics 2',
    content = '',
    contentless_delete = 1,
    prefix = '1 2 3 4 5 6 7 8'
);

INSERT INTO "provider_search" ("rowid", "providerCode", "name", "labels", "summary", "description")
SELECT "id", "providerCode", "name",
       iif(json_valid("labels"), (SELECT group_concat("value", ' ') FROM json_each("providers"."labels")), "labels"),
       "summary", coalesce("description", '')
FROM "providers";

INSERT INTO "provider_search" ("provider_search") VALUES ('optimize');
