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
-- count what is there now", whatever changed and in whatever order; facet_dirty names the providers
-- to count again.
--
-- Why the recount waits for the commit and takes the event log's advisory lock: counts are rows
-- every writer shares. Changed in each writing statement, two transactions moving providers between
-- the same groups in opposite orders would lock those rows in opposite orders and deadlock, and every
-- count row would stay locked for the rest of the writer's transaction. So the writing statements
-- only name the provider (facet_dirty, a row of its own), and a deferred constraint trigger recounts
-- at commit under pg_advisory_xact_lock(4172001296), the lock the writes already take to append to
-- the event log (src/events/event.store.ts) and hold through their commit: recounts run one at a
-- time, each reading the counts its predecessor committed (READ COMMITTED takes a snapshot per
-- statement, after the lock), so none is lost, and a count row is only ever locked under that lock,
-- so they cannot deadlock. The first recount of a transaction counts every provider it named at once.

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
    CONSTRAINT "facet_groups_pkey" PRIMARY KEY ("visibility", "reviewStage", "lifecycle", "agentType", "trustTier", "publisherVerified", "healthState", "protocol")
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
    CONSTRAINT "facet_label_groups_pkey" PRIMARY KEY ("visibility", "reviewStage", "lifecycle", "agentType", "trustTier", "publisherVerified", "healthState", "protocol", "label")
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
    CONSTRAINT "facet_package_groups_pkey" PRIMARY KEY ("visibility", "reviewStage", "lifecycle", "agentType", "trustTier", "publisherVerified", "healthState", "protocol", "facet", "value")
);

CREATE TABLE "facet_counted" (
    "providerId" INTEGER NOT NULL,
    "visibility" TEXT NOT NULL,
    "reviewStage" TEXT NOT NULL,
    "lifecycle" TEXT NOT NULL,
    "agentType" TEXT NOT NULL,
    "trustTier" TEXT NOT NULL,
    "publisherVerified" BOOLEAN NOT NULL,
    "healthState" TEXT NOT NULL,
    "protocol" TEXT NOT NULL,
    "labels" JSONB NOT NULL,
    "packages" JSONB NOT NULL,
    CONSTRAINT "facet_counted_pkey" PRIMARY KEY ("providerId")
);

CREATE TABLE "facet_dirty" (
    "providerId" INTEGER NOT NULL,
    CONSTRAINT "facet_dirty_pkey" PRIMARY KEY ("providerId")
);

-- What the given providers count for now (none, once deleted).
CREATE FUNCTION "facet_count_providers"(ids integer[]) RETURNS void LANGUAGE sql AS $$
    INSERT INTO "facet_counted"
    SELECT p."id", p."visibility", p."reviewStage", p."lifecycle", p."agentType", p."trustTier", p."publisherVerified",
           coalesce(p."healthState", ''), coalesce(p."endpoint" ->> 'protocol', ''),
           coalesce((SELECT jsonb_agg(l."label") FROM "provider_labels" AS l WHERE l."providerId" = p."id"), '[]'),
           coalesce((SELECT jsonb_agg(jsonb_build_array(k."facet", k."value")) FROM (
              SELECT 'packageRegistry' AS "facet", i."registryType" AS "value" FROM "provider_packages" AS i WHERE i."providerId" = p."id"
              UNION SELECT 'transport', i."transport" FROM "provider_packages" AS i WHERE i."providerId" = p."id") AS k), '[]')
    FROM "providers" AS p WHERE p."id" = ANY(ids);
    INSERT INTO "facet_groups"
    SELECT "visibility", "reviewStage", "lifecycle", "agentType", "trustTier", "publisherVerified", "healthState", "protocol", COUNT(*)
    FROM "facet_counted" WHERE "providerId" = ANY(ids) GROUP BY 1, 2, 3, 4, 5, 6, 7, 8
    ON CONFLICT ON CONSTRAINT "facet_groups_pkey" DO UPDATE SET "n" = "facet_groups"."n" + EXCLUDED."n";
    INSERT INTO "facet_label_groups"
    SELECT j."value", c."visibility", c."reviewStage", c."lifecycle", c."agentType", c."trustTier", c."publisherVerified", c."healthState", c."protocol", COUNT(*)
    FROM "facet_counted" AS c, jsonb_array_elements_text(c."labels") AS j("value") WHERE c."providerId" = ANY(ids) GROUP BY 1, 2, 3, 4, 5, 6, 7, 8, 9
    ON CONFLICT ON CONSTRAINT "facet_label_groups_pkey" DO UPDATE SET "n" = "facet_label_groups"."n" + EXCLUDED."n";
    INSERT INTO "facet_package_groups"
    SELECT j."value" ->> 0, j."value" ->> 1, c."visibility", c."reviewStage", c."lifecycle", c."agentType", c."trustTier", c."publisherVerified", c."healthState", c."protocol", COUNT(*)
    FROM "facet_counted" AS c, jsonb_array_elements(c."packages") AS j("value") WHERE c."providerId" = ANY(ids) GROUP BY 1, 2, 3, 4, 5, 6, 7, 8, 9, 10
    ON CONFLICT ON CONSTRAINT "facet_package_groups_pkey" DO UPDATE SET "n" = "facet_package_groups"."n" + EXCLUDED."n";
$$;

-- Backfill: every provider, counted.
SELECT "facet_count_providers"(ARRAY(SELECT "id" FROM "providers"));

-- The recount at commit (see above): out with what was counted for the named providers, in with what is there.
CREATE FUNCTION "facet_recount"() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
    ids integer[];
BEGIN
    PERFORM pg_advisory_xact_lock(CAST(4172001296 AS bigint));
    WITH named AS (DELETE FROM "facet_dirty" RETURNING "providerId") SELECT array_agg("providerId") INTO ids FROM named;
    IF ids IS NULL THEN
        RETURN NULL;
    END IF;
    UPDATE "facet_groups" AS g SET "n" = g."n" - x."n" FROM (
        SELECT "visibility", "reviewStage", "lifecycle", "agentType", "trustTier", "publisherVerified", "healthState", "protocol", COUNT(*) AS "n"
        FROM "facet_counted" WHERE "providerId" = ANY(ids) GROUP BY 1, 2, 3, 4, 5, 6, 7, 8) AS x
    WHERE (g."visibility", g."reviewStage", g."lifecycle", g."agentType", g."trustTier", g."publisherVerified", g."healthState", g."protocol")
        = (x."visibility", x."reviewStage", x."lifecycle", x."agentType", x."trustTier", x."publisherVerified", x."healthState", x."protocol");
    UPDATE "facet_label_groups" AS g SET "n" = g."n" - x."n" FROM (
        SELECT j."value" AS "label", c."visibility", c."reviewStage", c."lifecycle", c."agentType", c."trustTier", c."publisherVerified", c."healthState", c."protocol", COUNT(*) AS "n"
        FROM "facet_counted" AS c, jsonb_array_elements_text(c."labels") AS j("value") WHERE c."providerId" = ANY(ids) GROUP BY 1, 2, 3, 4, 5, 6, 7, 8, 9) AS x
    WHERE (g."label", g."visibility", g."reviewStage", g."lifecycle", g."agentType", g."trustTier", g."publisherVerified", g."healthState", g."protocol")
        = (x."label", x."visibility", x."reviewStage", x."lifecycle", x."agentType", x."trustTier", x."publisherVerified", x."healthState", x."protocol");
    UPDATE "facet_package_groups" AS g SET "n" = g."n" - x."n" FROM (
        SELECT j."value" ->> 0 AS "facet", j."value" ->> 1 AS "value", c."visibility", c."reviewStage", c."lifecycle", c."agentType", c."trustTier", c."publisherVerified", c."healthState", c."protocol", COUNT(*) AS "n"
        FROM "facet_counted" AS c, jsonb_array_elements(c."packages") AS j("value") WHERE c."providerId" = ANY(ids) GROUP BY 1, 2, 3, 4, 5, 6, 7, 8, 9, 10) AS x
    WHERE (g."facet", g."value", g."visibility", g."reviewStage", g."lifecycle", g."agentType", g."trustTier", g."publisherVerified", g."healthState", g."protocol")
        = (x."facet", x."value", x."visibility", x."reviewStage", x."lifecycle", x."agentType", x."trustTier", x."publisherVerified", x."healthState", x."protocol");
    DELETE FROM "facet_counted" WHERE "providerId" = ANY(ids);
    PERFORM "facet_count_providers"(ids);
    RETURN NULL;
END;
$$;

CREATE CONSTRAINT TRIGGER "facet_recount" AFTER INSERT ON "facet_dirty"
    DEFERRABLE INITIALLY DEFERRED FOR EACH ROW EXECUTE FUNCTION "facet_recount"();

-- What changes a provider's counts: its row (the eight columns; the protocol is the endpoint's), its labels, its packages.
CREATE FUNCTION "facet_name_provider"() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF TG_OP = 'DELETE' THEN
        INSERT INTO "facet_dirty" ("providerId") VALUES (OLD."id") ON CONFLICT DO NOTHING;
    ELSE
        INSERT INTO "facet_dirty" ("providerId") VALUES (NEW."id") ON CONFLICT DO NOTHING;
    END IF;
    RETURN NULL;
END;
$$;

-- A label's or package's row names its provider (both, should a row move to another).
CREATE FUNCTION "facet_name_owner"() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF TG_OP <> 'INSERT' THEN
        INSERT INTO "facet_dirty" ("providerId") VALUES (OLD."providerId") ON CONFLICT DO NOTHING;
    END IF;
    IF TG_OP <> 'DELETE' THEN
        INSERT INTO "facet_dirty" ("providerId") VALUES (NEW."providerId") ON CONFLICT DO NOTHING;
    END IF;
    RETURN NULL;
END;
$$;

CREATE TRIGGER "facet_providers_insert_delete" AFTER INSERT OR DELETE ON "providers"
    FOR EACH ROW EXECUTE FUNCTION "facet_name_provider"();
CREATE TRIGGER "facet_providers_update" AFTER UPDATE OF "visibility", "reviewStage", "lifecycle", "agentType", "trustTier", "publisherVerified", "healthState", "endpoint" ON "providers"
    FOR EACH ROW WHEN (OLD."visibility" IS DISTINCT FROM NEW."visibility" OR OLD."reviewStage" IS DISTINCT FROM NEW."reviewStage"
        OR OLD."lifecycle" IS DISTINCT FROM NEW."lifecycle" OR OLD."agentType" IS DISTINCT FROM NEW."agentType"
        OR OLD."trustTier" IS DISTINCT FROM NEW."trustTier" OR OLD."publisherVerified" IS DISTINCT FROM NEW."publisherVerified"
        OR OLD."healthState" IS DISTINCT FROM NEW."healthState" OR (OLD."endpoint" ->> 'protocol') IS DISTINCT FROM (NEW."endpoint" ->> 'protocol'))
    EXECUTE FUNCTION "facet_name_provider"();
CREATE TRIGGER "facet_labels_change" AFTER INSERT OR UPDATE OR DELETE ON "provider_labels"
    FOR EACH ROW EXECUTE FUNCTION "facet_name_owner"();
CREATE TRIGGER "facet_packages_change" AFTER INSERT OR UPDATE OR DELETE ON "provider_packages"
    FOR EACH ROW EXECUTE FUNCTION "facet_name_owner"();
