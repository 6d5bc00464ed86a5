-- Mirror sources (src/mirror): registries this one mirrors, their sync state, and the providers they made.
-- AlterTable
ALTER TABLE "providers" ADD COLUMN "mirrored" BOOLEAN NOT NULL DEFAULT false;

-- CreateTable
CREATE TABLE "mirror_sources" (
    "id" SERIAL NOT NULL,
    "sourceId" TEXT NOT NULL,
    "url" TEXT NOT NULL,
    "kind" TEXT NOT NULL,
    "filter" JSONB NOT NULL,
    "policy" TEXT NOT NULL,
    "trustTier" TEXT,
    "intervalSeconds" INTEGER NOT NULL DEFAULT 3600,
    "contactEmail" TEXT NOT NULL,
    "fromEnv" BOOLEAN NOT NULL DEFAULT false,
    "createdAt" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updatedAt" TIMESTAMP(3) NOT NULL,
    "state" TEXT NOT NULL DEFAULT 'IDLE',
    "nextSyncAt" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "leaseUntil" TIMESTAMP(3),
    "leaseToken" TEXT,
    "failures" INTEGER NOT NULL DEFAULT 0,
    "lastSyncAt" TIMESTAMP(3),
    "lastSuccessAt" TIMESTAMP(3),
    "lastErrors" JSONB NOT NULL DEFAULT '[]',
    "mark" TEXT,
    "runSince" TEXT,
    "runCursor" TEXT,
    "runOffset" INTEGER NOT NULL DEFAULT 0,
    "runHigh" TEXT,
    "seen" INTEGER NOT NULL DEFAULT 0,
    "created" INTEGER NOT NULL DEFAULT 0,
    "updated" INTEGER NOT NULL DEFAULT 0,
    "retired" INTEGER NOT NULL DEFAULT 0,
    "skipped" INTEGER NOT NULL DEFAULT 0,
    "skippedEntries" JSONB NOT NULL DEFAULT '[]',

    CONSTRAINT "mirror_sources_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "mirror_entries" (
    "providerId" INTEGER NOT NULL,
    "sourceRowId" INTEGER,
    "sourceId" TEXT NOT NULL,
    "sourceUrl" TEXT NOT NULL,
    "kind" TEXT NOT NULL,
    "upstreamName" TEXT NOT NULL,
    "upstreamVersion" TEXT,
    "upstreamStatus" TEXT NOT NULL,
    "upstreamMark" TEXT,
    "fetchedAt" TIMESTAMP(3) NOT NULL,
    "upstreamMeta" JSONB,
    "snapshot" JSONB NOT NULL,
    "stateHash" TEXT,

    CONSTRAINT "mirror_entries_pkey" PRIMARY KEY ("providerId")
);

-- CreateIndex
CREATE UNIQUE INDEX "mirror_sources_sourceId_key" ON "mirror_sources"("sourceId");

-- CreateIndex
CREATE UNIQUE INDEX "mirror_sources_url_key" ON "mirror_sources"("url");

-- CreateIndex
CREATE INDEX "mirror_sources_nextSyncAt_idx" ON "mirror_sources"("nextSyncAt");

-- CreateIndex
CREATE UNIQUE INDEX "mirror_entries_sourceRowId_upstreamName_key" ON "mirror_entries"("sourceRowId", "upstreamName");

-- AddForeignKey
ALTER TABLE "mirror_entries" ADD CONSTRAINT "mirror_entries_providerId_fkey" FOREIGN KEY ("providerId") REFERENCES "providers"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "mirror_entries" ADD CONSTRAINT "mirror_entries_sourceRowId_fkey" FOREIGN KEY ("sourceRowId") REFERENCES "mirror_sources"("id") ON DELETE SET NULL ON UPDATE CASCADE;
