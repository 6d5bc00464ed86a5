-- The list's facets counted by the database (src/providers/provider.facets.store.ts reads them when
-- the filters are columns only), kept by triggers as the search index is, so rows written with plain
-- SQL (seeders, bulk loads) are counted too. Written by hand: triggers are not in the Prisma schema.
--
-- facet_groups counts providers by the eight columns of the facets' pass (no health state and no
-- endpoint protocol are '' here, as a key cannot hold NULL); facet_label_groups counts the rows of
-- provider_labels, facet_package_groups the providers with a package of each registry and of each
-- transport (provider_packages), each by label or value and the same eight columns. provider_labels
-- and provider_packages, not the JSON columns, are counted: they are what the list's filters and the
-- scan read. A count that falls to 0 stays as a row of 0, which the reads ignore.
--
-- facet_counted holds what is counted for each provider, so a change is "take out what was counted,
-- count what is there now", whatever changed and in whatever order; facet_dirty names the provider
-- to count again. On SQLite every trigger runs in the writing statement, under the one writer, so
-- the recount runs at once, from the trigger on facet_dirty.

CREATE TABLE "facet_groups" (
    "visibility" TEXT NOT NULL,
    "reviewStage" TEXT NOT NULL,
    "lifecycle" TEXT NOT NULL,
    "agentType" TEXT NOT NULL,
    "trustTier" TEXT NOT NULL,
    "publisherVerified" BOOLEAN NOT NULL,
    "healthState" TEXT NOT NULL,
    "protocol" TEXT NOT NULL,
    "n" INTEGER NOT NULL,
    PRIMARY KEY ("visibility", "reviewStage", "lifecycle", "agentType", "trustTier", "publisherVerified", "healthState", "protocol")
);

CREATE TABLE "facet_label_groups" (
    "label" TEXT NOT NULL,
    "visibility" TEXT NOT NULL,
    "reviewStage" TEXT NOT NULL,
    "lifecycle" TEXT NOT NULL,
    "agentType" TEXT NOT NULL,
    "trustTier" TEXT NOT NULL,
    "publisherVerified" BOOLEAN NOT NULL,
    "healthState" TEXT NOT NULL,
    "protocol" TEXT NOT NULL,
    "n" INTEGER NOT NULL,
    PRIMARY KEY ("visibility", "reviewStage", "lifecycle", "agentType", "trustTier", "publisherVerified", "healthState", "protocol", "label")
);

CREATE TABLE "facet_package_groups" (
    "facet" TEXT NOT NULL,
    "value" TEXT NOT NULL,
    "visibility" TEXT NOT NULL,
    "reviewStage" TEXT NOT NULL,
    "lifecycle" TEXT NOT NULL,
    "agentType" TEXT NOT NULL,
    "trustTier" TEXT NOT NULL,
    "publisherVerified" BOOLEAN NOT NULL,
    "healthState" TEXT NOT NULL,
    "protocol" TEXT NOT NULL,
    "n" INTEGER NOT NULL,
    PRIMARY KEY ("visibility", "reviewStage", "lifecycle", "agentType", "trustTier", "publisherVerified", "healthState", "protocol", "facet", "value")
);

CREATE TABLE "facet_counted" (
    "providerId" INTEGER NOT NULL PRIMARY KEY,
    "visibility" TEXT NOT NULL,
    "reviewStage" TEXT NOT NULL,
    "lifecycle" TEXT NOT NULL,
    "agentType" TEXT NOT NULL,
    "trustTier" TEXT NOT NULL,
    "publisherVerified" BOOLEAN NOT NULL,
    "healthState" TEXT NOT NULL,
    "protocol" TEXT NOT NULL,
    "labels" JSONB NOT NULL,
    "packages" JSONB NOT NULL
);

CREATE TABLE "facet_dirty" (
    "providerId" INTEGER NOT NULL PRIMARY KEY
);

-- Backfill: what every provider counts for, then the counts of it.
INSERT INTO "facet_counted"
SELECT p."id", p."visibility", p."reviewStage", p."lifecycle", p."agentType", p."trustTier", p."publisherVerified",
       coalesce(p."healthState", ''), coalesce(p."endpoint" ->> 'protocol', ''),
       (SELECT json_group_array(l."label") FROM "provider_labels" AS l WHERE l."providerId" = p."id"),
       (SELECT json_group_array(json_array(k."facet", k."value")) FROM (
          SELECT 'packageRegistry' AS "facet", i."registryType" AS "value" FROM "provider_packages" AS i WHERE i."providerId" = p."id"
          UNION SELECT 'transport', i."transport" FROM "provider_packages" AS i WHERE i."providerId" = p."id") AS k)
FROM "providers" AS p;

INSERT INTO "facet_groups"
SELECT "visibility", "reviewStage", "lifecycle", "agentType", "trustTier", "publisherVerified", "healthState", "protocol", COUNT(*)
FROM "facet_counted" GROUP BY 1, 2, 3, 4, 5, 6, 7, 8;

INSERT INTO "facet_label_groups"
SELECT j."value", c."visibility", c."reviewStage", c."lifecycle", c."agentType", c."trustTier", c."publisherVerified", c."healthState", c."protocol", COUNT(*)
FROM "facet_counted" AS c, json_each(c."labels") AS j GROUP BY 1, 2, 3, 4, 5, 6, 7, 8, 9;

INSERT INTO "facet_package_groups"
SELECT j."value" ->> 0, j."value" ->> 1, c."visibility", c."reviewStage", c."lifecycle", c."agentType", c."trustTier", c."publisherVerified", c."healthState", c."protocol", COUNT(*)
FROM "facet_counted" AS c, json_each(c."packages") AS j GROUP BY 1, 2, 3, 4, 5, 6, 7, 8, 9, 10;

-- The recount of one provider: out with what was counted, in with what is there (none, once deleted).
CREATE TRIGGER "facet_recount" AFTER INSERT ON "facet_dirty" BEGIN
    UPDATE "facet_groups" SET "n" = "n" - 1
    WHERE ("visibility", "reviewStage", "lifecycle", "agentType", "trustTier", "publisherVerified", "healthState", "protocol") IN (
        SELECT "visibility", "reviewStage", "lifecycle", "agentType", "trustTier", "publisherVerified", "healthState", "protocol"
        FROM "facet_counted" WHERE "providerId" = NEW."providerId");
    UPDATE "facet_label_groups" SET "n" = "n" - 1
    WHERE ("label", "visibility", "reviewStage", "lifecycle", "agentType", "trustTier", "publisherVerified", "healthState", "protocol") IN (
        SELECT j."value", c."visibility", c."reviewStage", c."lifecycle", c."agentType", c."trustTier", c."publisherVerified", c."healthState", c."protocol"
        FROM "facet_counted" AS c, json_each(c."labels") AS j WHERE c."providerId" = NEW."providerId");
    UPDATE "facet_package_groups" SET "n" = "n" - 1
    WHERE ("facet", "value", "visibility", "reviewStage", "lifecycle", "agentType", "trustTier", "publisherVerified", "healthState", "protocol") IN (
        SELECT j."value" ->> 0, j."value" ->> 1, c."visibility", c."reviewStage", c."lifecycle", c."agentType", c."trustTier", c."publisherVerified", c."healthState", c."protocol"
        FROM "facet_counted" AS c, json_each(c."packages") AS j WHERE c."providerId" = NEW."providerId");
    DELETE FROM "facet_counted" WHERE "providerId" = NEW."providerId";
    INSERT INTO "facet_counted"
    SELECT p."id", p."visibility", p."reviewStage", p."lifecycle", p."agentType", p."trustTier", p."publisherVerified",
           coalesce(p."healthState", ''), coalesce(p."endpoint" ->> 'protocol', ''),
           (SELECT json_group_array(l."label") FROM "provider_labels" AS l WHERE l."providerId" = p."id"),
           (SELECT json_group_array(json_array(k."facet", k."value")) FROM (
              SELECT 'packageRegistry' AS "facet", i."registryType" AS "value" FROM "provider_packages" AS i WHERE i."providerId" = p."id"
              UNION SELECT 'transport', i."transport" FROM "provider_packages" AS i WHERE i."providerId" = p."id") AS k)
    FROM "providers" AS p WHERE p."id" = NEW."providerId";
    INSERT INTO "facet_groups"
    SELECT "visibility", "reviewStage", "lifecycle", "agentType", "trustTier", "publisherVerified", "healthState", "protocol", 1
    FROM "facet_counted" WHERE "providerId" = NEW."providerId"
    ON CONFLICT DO UPDATE SET "n" = "n" + 1;
    INSERT INTO "facet_label_groups"
    SELECT j."value", c."visibility", c."reviewStage", c."lifecycle", c."agentType", c."trustTier", c."publisherVerified", c."healthState", c."protocol", 1
    FROM "facet_counted" AS c, json_each(c."labels") AS j WHERE c."providerId" = NEW."providerId"
    ON CONFLICT DO UPDATE SET "n" = "n" + 1;
    INSERT INTO "facet_package_groups"
    SELECT j."value" ->> 0, j."value" ->> 1, c."visibility", c."reviewStage", c."lifecycle", c."agentType", c."trustTier", c."publisherVerified", c."healthState", c."protocol", 1
    FROM "facet_counted" AS c, json_each(c."packages") AS j WHERE c."providerId" = NEW."providerId"
    ON CONFLICT DO UPDATE SET "n" = "n" + 1;
    DELETE FROM "facet_dirty" WHERE "providerId" = NEW."providerId";
END;

-- What changes a provider's counts: its row (the eight columns; the protocol is the endpoint's), its labels, its packages.
CREATE TRIGGER "facet_providers_insert" AFTER INSERT ON "providers" BEGIN
    INSERT INTO "facet_dirty" ("providerId") VALUES (NEW."id");
END;

CREATE TRIGGER "facet_providers_update" AFTER UPDATE OF "visibility", "reviewStage", "lifecycle", "agentType", "trustTier", "publisherVerified", "healthState", "endpoint" ON "providers"
WHEN OLD."visibility" IS NOT NEW."visibility" OR OLD."reviewStage" IS NOT NEW."reviewStage" OR OLD."lifecycle" IS NOT NEW."lifecycle"
  OR OLD."agentType" IS NOT NEW."agentType" OR OLD."trustTier" IS NOT NEW."trustTier" OR OLD."publisherVerified" IS NOT NEW."publisherVerified"
  OR OLD."healthState" IS NOT NEW."healthState" OR (OLD."endpoint" ->> 'protocol') IS NOT (NEW."endpoint" ->> 'protocol')
BEGIN
    INSERT INTO "facet_dirty" ("providerId") VALUES (NEW."id");
END;

CREATE TRIGGER "facet_providers_delete" AFTER DELETE ON "providers" BEGIN
    INSERT INTO "facet_dirty" ("providerId") VALUES (OLD."id");
END;

CREATE TRIGGER "facet_labels_insert" AFTER INSERT ON "provider_labels" BEGIN
    INSERT INTO "facet_dirty" ("providerId") VALUES (NEW."providerId");
END;

CREATE TRIGGER "facet_labels_delete" AFTER DELETE ON "provider_labels" BEGIN
    INSERT INTO "facet_dirty" ("providerId") VALUES (OLD."providerId");
END;

CREATE TRIGGER "facet_packages_insert" AFTER INSERT ON "provider_packages" BEGIN
    INSERT INTO "facet_dirty" ("providerId") VALUES (NEW."providerId");
END;

CREATE TRIGGER "facet_packages_delete" AFTER DELETE ON "provider_packages" BEGIN
    INSERT INTO "facet_dirty" ("providerId") VALUES (OLD."providerId");
END;

CREATE TRIGGER "facet_labels_update" AFTER UPDATE ON "provider_labels" BEGIN
    INSERT INTO "facet_dirty" ("providerId") VALUES (OLD."providerId");
    INSERT INTO "facet_dirty" ("providerId") SELECT NEW."providerId" WHERE NEW."providerId" <> OLD."providerId";
END;

CREATE TRIGGER "facet_packages_update" AFTER UPDATE ON "provider_packages" BEGIN
    INSERT INTO "facet_dirty" ("providerId") VALUES (OLD."providerId");
    INSERT INTO "facet_dirty" ("providerId") SELECT NEW."providerId" WHERE NEW."providerId" <> OLD."providerId";
END;
