-- Verified publisher domains (src/trust/domain.*): challenges and verified domains, re-checked on a schedule.
-- CreateTable
CREATE TABLE "domain_verifications" (
    "id" SERIAL NOT NULL,
    "providerId" INTEGER NOT NULL,
    "domain" TEXT NOT NULL,
    "token" TEXT NOT NULL,
    "state" TEXT NOT NULL DEFAULT 'PENDING',
    "method" TEXT,
    "createdAt" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "expiresAt" TIMESTAMP(3) NOT NULL,
    "verifiedAt" TIMESTAMP(3),
    "lastCheckedAt" TIMESTAMP(3),
    "failures" INTEGER NOT NULL DEFAULT 0,
    "nextCheckAt" TIMESTAMP(3),
    "claimedUntil" TIMESTAMP(3),

    CONSTRAINT "domain_verifications_pkey" PRIMARY KEY ("id")
);

-- CreateIndex
CREATE INDEX "domain_verifications_state_nextCheckAt_idx" ON "domain_verifications"("state", "nextCheckAt");

-- CreateIndex
CREATE INDEX "domain_verifications_state_expiresAt_idx" ON "domain_verifications"("state", "expiresAt");

-- CreateIndex
CREATE UNIQUE INDEX "domain_verifications_providerId_domain_key" ON "domain_verifications"("providerId", "domain");

-- AddForeignKey
ALTER TABLE "domain_verifications" ADD CONSTRAINT "domain_verifications_providerId_fkey" FOREIGN KEY ("providerId") REFERENCES "providers"("id") ON DELETE CASCADE ON UPDATE CASCADE;
