-- Mirror sources (src/mirror): registries this one mirrors, their sync state, and the providers they made.
-- AlterTable
ALTER TABLE "providers" ADD COLUMN "mirrored" BOOLEAN NOT NULL DEFAULT false;

-- CreateTable
CREATE TABLE "mirror_sources" (
    "id" INTEGER NOT NULL PRIMARY KEY AUTOINCREMENT,
    "sourceId" TEXT NOT NULL,
    "url" TEXT NOT NULL,
    "kind" TEXT NOT NULL,
    "filter" JSONB NOT NULL,
    "policy" TEXT NOT NULL,
    "trustTier" TEXT,
    "intervalSeconds" INTEGER NOT NULL DEFAULT 3600,
    "contactEmail" TEXT NOT NULL,
    "fromEnv" BOOLEAN NOT NULL DEFAULT false,
    "createdAt" DATETIME NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updatedAt" DATETIME NOT NULL,
    "state" TEXT NOT NULL DEFAULT 'IDLE',
    "nextSyncAt" DATETIME NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "leaseUntil" DATETIME,
    "leaseToken" TEXT,
    "failures" INTEGER NOT NULL DEFAULT 0,
    "lastSyncAt" DATETIME,
    "lastSuccessAt" DATETIME,
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
    "skippedEntries" JSONB NOT NULL DEFAULT '[]'
);

-- CreateTable
CREATE TABLE "mirror_entries" (
    "providerId" INTEGER NOT NULL PRIMARY KEY,
    "sourceRowId" INTEGER,
    "sourceId" TEXT NOT NULL,
    "sourceUrl" TEXT NOT NULL,
    "kind" TEXT NOT NULL,
    "upstreamName" TEXT NOT NULL,
    "upstreamVersion" TEXT,
    "upstreamStatus" TEXT NOT NULL,
    "upstreamMark" TEXT,
    "fetchedAt" DATETIME NOT NULL,
    "upstreamMeta" JSONB,
    "snapshot" JSONB NOT NULL,
    "stateHash" TEXT,
    CONSTRAINT "mirror_entries_providerId_fkey" FOREIGN KEY ("providerId") REFERENCES "providers" ("id") ON DELETE CASCADE ON UPDATE CASCADE,
    CONSTRAINT "mirror_entries_sourceRowId_fkey" FOREIGN KEY ("sourceRowId") REFERENCES "mirror_sources" ("id") ON DELETE SET NULL ON UPDATE CASCADE
);

-- CreateIndex
CREATE UNIQUE INDEX "mirror_sources_sourceId_key" ON "mirror_sources"("sourceId");

-- CreateIndex
CREATE UNIQUE INDEX "mirror_sources_url_key" ON "mirror_sources"("url");

-- CreateIndex
CREATE INDEX "mirror_sources_nextSyncAt_idx" ON "mirror_sources"("nextSyncAt");

-- CreateIndex
CREATE UNIQUE INDEX "mirror_entries_sourceRowId_upstreamName_key" ON "mirror_entries"("sourceRowId", "upstreamName");
