-- The credential a mirror source sends its upstream (`Authorization: Bearer …`), for a registry whose reads need one.
-- AlterTable
ALTER TABLE "mirror_sources" ADD COLUMN "credential" TEXT;
