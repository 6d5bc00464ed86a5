-- Verified publisher domains (src/trust/domain.*): challenges and verified domains, re-checked on a schedule.
-- CreateTable
CREATE TABLE "domain_verifications" (
    "id" INTEGER NOT NULL PRIMARY KEY AUTOINCREMENT,
    "providerId" INTEGER NOT NULL,
    "domain" TEXT NOT NULL,
    "token" TEXT NOT NULL,
    "state" TEXT NOT NULL DEFAULT 'PENDING',
    "method" TEXT,
    "createdAt" DATETIME NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "expiresAt" DATETIME NOT NULL,
    "verifiedAt" DATETIME,
    "lastCheckedAt" DATETIME,
    "failures" INTEGER NOT NULL DEFAULT 0,
    "nextCheckAt" DATETIME,
    "claimedUntil" DATETIME,
    CONSTRAINT "domain_verifications_providerId_fkey" FOREIGN KEY ("providerId") REFERENCES "providers" ("id") ON DELETE CASCADE ON UPDATE CASCADE
);

-- CreateIndex
CREATE INDEX "domain_verifications_state_nextCheckAt_idx" ON "domain_verifications"("state", "nextCheckAt");

-- CreateIndex
CREATE INDEX "domain_verifications_state_expiresAt_idx" ON "domain_verifications"("state", "expiresAt");

-- CreateIndex
CREATE UNIQUE INDEX "domain_verifications_providerId_domain_key" ON "domain_verifications"("providerId", "domain");
