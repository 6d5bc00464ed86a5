-- The labels' counts by visibility, review stage and lifecycle only: what the directory's facets read
-- when no other column is filtered (the first page, includeRetired, a lifecycle). Summing the labels
-- of facet_label_groups there read ~10,000 rows at 100,000 agents (13 ms on SQLite); these are a few
-- hundred. Kept from facet_label_groups by its own triggers, so the recount of 20261211000000_facet_counts
-- is unchanged: every change of a count there moves this one by as much.
CREATE TABLE "facet_labels" (
    "visibility" TEXT NOT NULL,
    "reviewStage" TEXT NOT NULL,
    "lifecycle" TEXT NOT NULL,
    "label" TEXT NOT NULL,
    "n" INTEGER NOT NULL,
    PRIMARY KEY ("visibility", "reviewStage", "lifecycle", "label")
);

INSERT INTO "facet_labels"
SELECT "visibility", "reviewStage", "lifecycle", "label", SUM("n") FROM "facet_label_groups" GROUP BY 1, 2, 3, 4;

CREATE TRIGGER "facet_labels_follow_insert" AFTER INSERT ON "facet_label_groups" BEGIN
    INSERT INTO "facet_labels" ("visibility", "reviewStage", "lifecycle", "label", "n")
    VALUES (NEW."visibility", NEW."reviewStage", NEW."lifecycle", NEW."label", NEW."n")
    ON CONFLICT DO UPDATE SET "n" = "n" + excluded."n";
END;

CREATE TRIGGER "facet_labels_follow_update" AFTER UPDATE OF "n" ON "facet_label_groups" BEGIN
    UPDATE "facet_labels" SET "n" = "n" + NEW."n" - OLD."n"
    WHERE "visibility" = NEW."visibility" AND "reviewStage" = NEW."reviewStage" AND "lifecycle" = NEW."lifecycle" AND "label" = NEW."label";
END;
