-- The labels' counts by visibility, review stage and lifecycle only: what the directory's facets read
-- when no other column is filtered (the first page, includeRetired, a lifecycle). Summing the labels
-- of facet_label_groups there read ~10,000 rows at 100,000 agents; these are a few hundred. Kept
-- from facet_label_groups by its own triggers, which run inside the recount of
-- 20261211000000_facet_counts (at commit, under its advisory lock): every change of a count there
-- moves this one by as much.
CREATE TABLE "facet_labels" (
    "visibility" TEXT NOT NULL,
    "reviewStage" TEXT NOT NULL,
    "lifecycle" TEXT NOT NULL,
    "label" TEXT NOT NULL,
    "n" INTEGER NOT NULL,
    CONSTRAINT "facet_labels_pkey" PRIMARY KEY ("visibility", "reviewStage", "lifecycle", "label")
);

INSERT INTO "facet_labels"
SELECT "visibility", "reviewStage", "lifecycle", "label", SUM("n") FROM "facet_label_groups" GROUP BY 1, 2, 3, 4;

CREATE FUNCTION "facet_labels_follow"() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    INSERT INTO "facet_labels" ("visibility", "reviewStage", "lifecycle", "label", "n")
    VALUES (NEW."visibility", NEW."reviewStage", NEW."lifecycle", NEW."label",
            NEW."n" - (CASE WHEN TG_OP = 'UPDATE' THEN OLD."n" ELSE 0 END))
    ON CONFLICT ON CONSTRAINT "facet_labels_pkey" DO UPDATE SET "n" = "facet_labels"."n" + EXCLUDED."n";
    RETURN NULL;
END;
$$;

CREATE TRIGGER "facet_labels_follow" AFTER INSERT OR UPDATE OF "n" ON "facet_label_groups"
    FOR EACH ROW EXECUTE FUNCTION "facet_labels_follow"();
