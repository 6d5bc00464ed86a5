-- Each source's `mirrored` count (the providers it made: its rows of mirror_entries), kept by the
-- database as the entries change, so that reading a source — which the admin page does every few
-- seconds during a sync, and /metrics at each scrape — costs one row, not a count of its entries.
-- Triggers, so every way an entry comes or goes counts (an entry's sourceRowId changes only to
-- NULL, when its source is removed, and the count goes with the source's row). Written by
-- hand: triggers are not in the Prisma schema.

ALTER TABLE "mirror_sources" ADD COLUMN "mirrored" INTEGER NOT NULL DEFAULT 0;

UPDATE "mirror_sources" SET "mirrored" = (
    SELECT COUNT(*) FROM "mirror_entries" AS e WHERE e."sourceRowId" = "mirror_sources"."id"
);

CREATE TRIGGER "mirror_entries_count_insert" AFTER INSERT ON "mirror_entries"
WHEN NEW."sourceRowId" IS NOT NULL
BEGIN
    UPDATE "mirror_sources" SET "mirrored" = "mirrored" + 1 WHERE "id" = NEW."sourceRowId";
END;

CREATE TRIGGER "mirror_entries_count_delete" AFTER DELETE ON "mirror_entries"
WHEN OLD."sourceRowId" IS NOT NULL
BEGIN
    UPDATE "mirror_sources" SET "mirrored" = "mirrored" - 1 WHERE "id" = OLD."sourceRowId";
END;
