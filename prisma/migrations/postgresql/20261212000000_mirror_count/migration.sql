-- Each source's `mirrored` count (the providers it made: its rows of mirror_entries), kept by the
-- database as the entries change, so that reading a source — which the admin page does every few
-- seconds during a sync, and /metrics at each scrape — costs one row, not a count of its entries.
-- A trigger, so every way an entry comes or goes counts (an entry's sourceRowId changes only to
-- NULL, when its source is removed, and the count goes with the source's row). Deferred to the
-- commit: a sync writes several entries at once, each in its own transaction, and each takes its
-- source's row in order (the run's step, mirror.store.ts `advance`, waits for the entry before it to
-- commit); an immediate trigger would take that row at the entry's insert, out of that order, and an
-- entry waiting for the one before it while holding the row that one needs would never end. At the
-- commit the transaction holds the row already. Written by hand: triggers are not in the Prisma schema.

ALTER TABLE "mirror_sources" ADD COLUMN "mirrored" INTEGER NOT NULL DEFAULT 0;

UPDATE "mirror_sources" SET "mirrored" = (
    SELECT COUNT(*) FROM "mirror_entries" AS e WHERE e."sourceRowId" = "mirror_sources"."id"
);

CREATE FUNCTION "mirror_entries_count"() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF TG_OP = 'DELETE' AND OLD."sourceRowId" IS NOT NULL THEN
        UPDATE "mirror_sources" SET "mirrored" = "mirrored" - 1 WHERE "id" = OLD."sourceRowId";
    END IF;
    IF TG_OP = 'INSERT' AND NEW."sourceRowId" IS NOT NULL THEN
        UPDATE "mirror_sources" SET "mirrored" = "mirrored" + 1 WHERE "id" = NEW."sourceRowId";
    END IF;
    RETURN NULL;
END;
$$;

CREATE CONSTRAINT TRIGGER "mirror_entries_count_insert_delete" AFTER INSERT OR DELETE ON "mirror_entries"
    DEFERRABLE INITIALLY DEFERRED
    FOR EACH ROW EXECUTE FUNCTION "mirror_entries_count"();
