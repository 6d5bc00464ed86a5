-- Endpoint health (src/health): each probed endpoint's state and schedule, check results, hourly counts.
-- AlterTable
ALTER TABLE "providers" ADD COLUMN "healthState" TEXT;

-- CreateTable
CREATE TABLE "provider_health" (
    "providerId" INTEGER NOT NULL,
    "target" TEXT NOT NULL,
    "host" TEXT NOT NULL,
    "state" TEXT NOT NULL DEFAULT 'UNKNOWN',
    "since" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "checkedAt" TIMESTAMP(3),
    "latencyMs" INTEGER,
    "reason" TEXT,
    "pendingState" TEXT,
    "pendingCount" INTEGER NOT NULL DEFAULT 0,
    "downStreak" INTEGER NOT NULL DEFAULT 0,
    "nextCheckAt" TIMESTAMP(3) NOT NULL,
    "leaseUntil" TIMESTAMP(3),
    "leaseToken" TEXT,
    "askedAt" TIMESTAMP(3),
    "live" JSONB,
    "liveHash" TEXT,
    "drift" JSONB,
    "driftAt" TIMESTAMP(3),

    CONSTRAINT "provider_health_pkey" PRIMARY KEY ("providerId")
);

-- CreateTable
CREATE TABLE "health_checks" (
    "id" SERIAL NOT NULL,
    "providerId" INTEGER NOT NULL,
    "at" TIMESTAMP(3) NOT NULL,
    "outcome" TEXT NOT NULL,
    "latencyMs" INTEGER,
    "reason" TEXT NOT NULL,

    CONSTRAINT "health_checks_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "health_hourly" (
    "providerId" INTEGER NOT NULL,
    "hour" TIMESTAMP(3) NOT NULL,
    "checks" INTEGER NOT NULL,
    "up" INTEGER NOT NULL,

    CONSTRAINT "health_hourly_pkey" PRIMARY KEY ("providerId","hour")
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

-- AddForeignKey
ALTER TABLE "provider_health" ADD CONSTRAINT "provider_health_providerId_fkey" FOREIGN KEY ("providerId") REFERENCES "providers"("id") ON DELETE CASCADE ON UPDATE CASCADE;
