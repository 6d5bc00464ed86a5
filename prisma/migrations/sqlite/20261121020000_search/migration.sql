-- Full-text search over providers (API.md §4 "Lists"), written by hand: FTS5 virtual tables and
-- triggers cannot be expressed in prisma/schema.prisma, so `prisma migrate diff` never produces
-- this step. The index is kept by the database itself (the triggers below run inside the writing
-- statement's transaction), so rows inserted with plain SQL (bulk loads, seeders) are indexed too.
--
-- `provider_search` is contentless (it stores only the index, not a second copy of the text) with
-- `contentless_delete=1` so rows can be deleted and replaced by rowid (= providers.id). The
-- `unicode61` tokenizer folds case and, with `remove_diacritics 2`, accents (café = cafe); every
-- character that is not a letter or digit separates tokens, so codes and labels such as
-- `route-planner` or `acme.route_planner` are indexed word by word (`route`, `planner`) and the
-- prefix query `rout*` finds them. Labels are indexed as their words, from the JSON list.
-- Column order matters: src/providers/provider.search.ts weighs them in this order with bm25().

CREATE VIRTUAL TABLE "provider_search" USING fts5(
    "providerCode",
    "name",
    "labels",
    "summary",
    "description",
    tokenize = 'unicode61 remove_diacritics 2',
    content = '',
    contentless_delete = 1
);

INSERT INTO "provider_search" ("rowid", "providerCode", "name", "labels", "summary", "description")
SELECT "id", "providerCode", "name",
       iif(json_valid("labels"), (SELECT group_concat("value", ' ') FROM json_each("providers"."labels")), "labels"),
       "summary", coalesce("description", '')
FROM "providers";

CREATE TRIGGER "providers_search_insert" AFTER INSERT ON "providers" BEGIN
    INSERT INTO "provider_search" ("rowid", "providerCode", "name", "labels", "summary", "description")
    VALUES (NEW."id", NEW."providerCode", NEW."name",
            iif(json_valid(NEW."labels"), (SELECT group_concat("value", ' ') FROM json_each(NEW."labels")), NEW."labels"),
            NEW."summary", coalesce(NEW."description", ''));
END;

CREATE TRIGGER "providers_search_update" AFTER UPDATE OF "id", "providerCode", "name", "labels", "summary", "description" ON "providers" BEGIN
    DELETE FROM "provider_search" WHERE "rowid" = OLD."id";
    INSERT INTO "provider_search" ("rowid", "providerCode", "name", "labels", "summary", "description")
    VALUES (NEW."id", NEW."providerCode", NEW."name",
            iif(json_valid(NEW."labels"), (SELECT group_concat("value", ' ') FROM json_each(NEW."labels")), NEW."labels"),
            NEW."summary", coalesce(NEW."description", ''));
END;

CREATE TRIGGER "providers_search_delete" AFTER DELETE ON "providers" BEGIN
    DELETE FROM "provider_search" WHERE "rowid" = OLD."id";
END;
