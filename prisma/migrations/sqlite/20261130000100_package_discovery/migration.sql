-- Finding MCP servers by how they ship: the list's packageRegistry and transport filters read an
-- index of each provider's (registry, transport) pairs, kept by the writes as provider_labels is;
-- the search matches package identifiers (`@scope/name`, `io.github.owner/name`, an image name).

CREATE TABLE "provider_packages" (
    "providerId" INTEGER NOT NULL,
    "registryType" TEXT NOT NULL,
    "transport" TEXT NOT NULL,

    PRIMARY KEY ("providerId", "registryType", "transport"),
    CONSTRAINT "provider_packages_providerId_fkey" FOREIGN KEY ("providerId") REFERENCES "providers" ("id") ON DELETE CASCADE ON UPDATE CASCADE
);
CREATE INDEX "provider_packages_registryType_providerId_idx" ON "provider_packages"("registryType", "providerId");
CREATE INDEX "provider_packages_transport_providerId_idx" ON "provider_packages"("transport", "providerId");

INSERT OR IGNORE INTO "provider_packages" ("providerId", "registryType", "transport")
SELECT "providers"."id", json_extract("value", '$.registryType'), json_extract("value", '$.transport.type')
FROM "providers", json_each("providers"."packages");

-- The search index gains the identifiers: an FTS5 table's columns cannot be altered, so it is made
-- again (options as 20261121030000_search_prefix) with its triggers, and refilled.
DROP TRIGGER "providers_search_insert";
DROP TRIGGER "providers_search_update";
DROP TABLE "provider_search";

CREATE VIRTUAL TABLE "provider_search" USING fts5(
    "providerCode",
    "name",
    "labels",
    "packages",
    "summary",
    "description",
    tokenize = 'unicode61 remove_diacritics 2',
    content = '',
    contentless_delete = 1,
    prefix = '1 2 3 4 5 6 7 8'
);

INSERT INTO "provider_search" ("rowid", "providerCode", "name", "labels", "packages", "summary", "description")
SELECT "id", "providerCode", "name",
       iif(json_valid("labels"), (SELECT group_concat("value", ' ') FROM json_each("providers"."labels")), "labels"),
       coalesce((SELECT group_concat(json_extract("value", '$.identifier'), ' ') FROM json_each("providers"."packages")), ''),
       "summary", coalesce("description", '')
FROM "providers";

INSERT INTO "provider_search" ("provider_search") VALUES ('optimize');

CREATE TRIGGER "providers_search_insert" AFTER INSERT ON "providers" BEGIN
    INSERT INTO "provider_search" ("rowid", "providerCode", "name", "labels", "packages", "summary", "description")
    VALUES (NEW."id", NEW."providerCode", NEW."name",
            iif(json_valid(NEW."labels"), (SELECT group_concat("value", ' ') FROM json_each(NEW."labels")), NEW."labels"),
            coalesce((SELECT group_concat(json_extract("value", '$.identifier'), ' ') FROM json_each(NEW."packages")), ''),
            NEW."summary", coalesce(NEW."description", ''));
END;

CREATE TRIGGER "providers_search_update" AFTER UPDATE OF "id", "providerCode", "name", "labels", "packages", "summary", "description" ON "providers" BEGIN
    DELETE FROM "provider_search" WHERE "rowid" = OLD."id";
    INSERT INTO "provider_search" ("rowid", "providerCode", "name", "labels", "packages", "summary", "description")
    VALUES (NEW."id", NEW."providerCode", NEW."name",
            iif(json_valid(NEW."labels"), (SELECT group_concat("value", ' ') FROM json_each(NEW."labels")), NEW."labels"),
            coalesce((SELECT group_concat(json_extract("value", '$.identifier'), ' ') FROM json_each(NEW."packages")), ''),
            NEW."summary", coalesce(NEW."description", ''));
END;
