-- What the import of a mirrored entry could not map (JSON Pointers into the upstream entry), kept to report.
-- AlterTable
ALTER TABLE "mirror_entries" ADD COLUMN "unmapped" JSONB;
