-- Endpoint health (src/health): each probed endpoint's state and schedule, check results, hourly counts.
-- AlterTable
ALTER TABLE "providers" ADD COLUMN "healthState" TEXT;

-- CreateTable
CREATE TABLE "provider_health" (
    "providerId" INTEGER NOT NULL PRIMARY KEY,
    "target" TEXT NOT NULL,
    "host" TEXT NOT NULL,
    "state" TEXT NOT NULL DEFAULT 'UNKNOWN',
    "since" DATETIME NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "checkedAt" DATETIME,
    "latencyMs" INTEGER,
    "reason" TEXT,
    "pendingState" TEXT,
    "pendingCount" INTEGER NOT NULL DEFAULT 0,
    "downStreak" INTEGER NOT NULL DEFAULT 0,
    "nextCheckAt" DATETIME NOT NULL,
    "leaseUntil" DATETIME,
    "leaseToken" TEXT,
    "askedAt" DATETIME,
    "live" JSONB,
    "liveHash" TEXT,
    "drift" JSONB,
    "driftAt" DATETIME,
    CONSTRAINT "provider_health_providerId_fkey" FOREIGN KEY ("providerId") REFERENCES "providers" ("id") ON DELETE CASCADE ON UPDATE CASCADE
);

-- CreateTable
CREATE TABLE "health_checks" (
    "id" INTEGER NOT NULL PRIMARY KEY AUTOINCREMENT,
    "providerId" INTEGER NOT NULL,
    "at" DATETIME NOT NULL,
    "outcome" TEXT NOT NULL,
    "latencyMs" INTEGER,
    "reason" TEXT NOT NULL
);

-- CreateTable
CREATE TABLE "health_hourly" (
    "providerId" INTEGER NOT NULL,
    "hour" DATETIME NOT NULL,
    "checks" INTEGER NOT NULL,
    "up" INTEGER NOT NULL,

    PRIMARY KEY ("providerId", "hour")
);

-- CreateIndex
CREATE INDEX "provider_health_nextCheckAt_idx" ON "provider_health"("nextCheckAt");

-- CreateIndex
CREATE INDEX "provider_health_host_leaseUntil_idx" ON "provider_health"("host", "leaseUntil");

-- CreateIndex
CREATE INDEX "provider_health_state_since_idx" ON "provider_health"("state", "since");

-- CreateIndex
CREATE INDEX "health_checks_providerId_at_idx" ON "health_checks"("providerId", "at");

-- CreateIndex
CREATE INDEX "health_checks_at_idx" ON "health_checks"("at");

-- CreateIndex
CREATE INDEX "health_hourly_hour_idx" ON "health_hourly"("hour");
