-- CreateTable
CREATE TABLE "providers" (
    "id" SERIAL NOT NULL,
    "providerCode" TEXT NOT NULL,
    "name" TEXT NOT NULL,
    "summary" TEXT NOT NULL,
    "description" TEXT,
    "labels" JSONB NOT NULL,
    "agentType" TEXT NOT NULL,
    "visibility" TEXT NOT NULL DEFAULT 'PUBLIC',
    "trustTier" TEXT NOT NULL DEFAULT 'UNVERIFIED',
    "reviewStage" TEXT NOT NULL DEFAULT 'SUBMITTED',
    "contactEmail" TEXT NOT NULL,
    "capabilities" JSONB NOT NULL,
    "models" JSONB NOT NULL,
    "tools" JSONB NOT NULL,
    "endpoint" JSONB NOT NULL,
    "policy" JSONB,
    "roles" JSONB NOT NULL,
    "version" INTEGER NOT NULL DEFAULT 1,
    "createdAt" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updatedAt" TIMESTAMP(3) NOT NULL,

    CONSTRAINT "providers_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "provider_labels" (
    "providerId" INTEGER NOT NULL,
    "label" TEXT NOT NULL,

    CONSTRAINT "provider_labels_pkey" PRIMARY KEY ("providerId","label")
);

-- CreateTable
CREATE TABLE "provider_versions" (
    "id" SERIAL NOT NULL,
    "providerId" INTEGER NOT NULL,
    "version" INTEGER NOT NULL,
    "createdAt" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "actor" TEXT NOT NULL,
    "changedFields" JSONB NOT NULL,
    "snapshot" JSONB NOT NULL,

    CONSTRAINT "provider_versions_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "reviews" (
    "id" SERIAL NOT NULL,
    "reviewCode" TEXT NOT NULL,
    "providerId" INTEGER NOT NULL,
    "kind" TEXT NOT NULL,
    "status" TEXT NOT NULL DEFAULT 'OPEN',
    "priority" TEXT NOT NULL DEFAULT 'NORMAL',
    "priorityRank" INTEGER NOT NULL DEFAULT 2,
    "assignedTo" TEXT,
    "createdAt" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updatedAt" TIMESTAMP(3) NOT NULL,
    "decidedAt" TIMESTAMP(3),

    CONSTRAINT "reviews_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "review_events" (
    "id" SERIAL NOT NULL,
    "providerId" INTEGER NOT NULL,
    "reviewId" INTEGER,
    "at" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "kind" TEXT NOT NULL,
    "actor" TEXT NOT NULL,
    "note" TEXT,

    CONSTRAINT "review_events_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "access_tokens" (
    "id" SERIAL NOT NULL,
    "tokenId" TEXT NOT NULL,
    "providerId" INTEGER NOT NULL,
    "hash" TEXT NOT NULL,
    "prefix" TEXT NOT NULL,
    "label" TEXT,
    "createdAt" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "lastUsedAt" TIMESTAMP(3),
    "expiresAt" TIMESTAMP(3),
    "revokedAt" TIMESTAMP(3),

    CONSTRAINT "access_tokens_pkey" PRIMARY KEY ("id")
);

-- CreateIndex
CREATE UNIQUE INDEX "providers_providerCode_key" ON "providers"("providerCode");

-- CreateIndex
CREATE INDEX "providers_updatedAt_id_idx" ON "providers"("updatedAt", "id");

-- CreateIndex
CREATE INDEX "providers_visibility_reviewStage_updatedAt_id_idx" ON "providers"("visibility", "reviewStage", "updatedAt", "id");

-- CreateIndex
CREATE INDEX "providers_agentType_updatedAt_id_idx" ON "providers"("agentType", "updatedAt", "id");

-- CreateIndex
CREATE INDEX "providers_trustTier_updatedAt_id_idx" ON "providers"("trustTier", "updatedAt", "id");

-- CreateIndex
CREATE INDEX "providers_reviewStage_updatedAt_id_idx" ON "providers"("reviewStage", "updatedAt", "id");

-- CreateIndex
CREATE INDEX "provider_labels_label_providerId_idx" ON "provider_labels"("label", "providerId");

-- CreateIndex
CREATE UNIQUE INDEX "provider_versions_providerId_version_key" ON "provider_versions"("providerId", "version");

-- CreateIndex
CREATE UNIQUE INDEX "reviews_reviewCode_key" ON "reviews"("reviewCode");

-- CreateIndex
CREATE INDEX "reviews_status_priorityRank_createdAt_id_idx" ON "reviews"("status", "priorityRank", "createdAt", "id");

-- CreateIndex
CREATE INDEX "reviews_providerId_status_idx" ON "reviews"("providerId", "status");

-- CreateIndex
CREATE INDEX "review_events_providerId_id_idx" ON "review_events"("providerId", "id");

-- CreateIndex
CREATE UNIQUE INDEX "access_tokens_tokenId_key" ON "access_tokens"("tokenId");

-- CreateIndex
CREATE UNIQUE INDEX "access_tokens_hash_key" ON "access_tokens"("hash");

-- CreateIndex
CREATE INDEX "access_tokens_providerId_revokedAt_idx" ON "access_tokens"("providerId", "revokedAt");

-- AddForeignKey
ALTER TABLE "provider_labels" ADD CONSTRAINT "provider_labels_providerId_fkey" FOREIGN KEY ("providerId") REFERENCES "providers"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "provider_versions" ADD CONSTRAINT "provider_versions_providerId_fkey" FOREIGN KEY ("providerId") REFERENCES "providers"("id") ON DELETE RESTRICT ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "reviews" ADD CONSTRAINT "reviews_providerId_fkey" FOREIGN KEY ("providerId") REFERENCES "providers"("id") ON DELETE RESTRICT ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "review_events" ADD CONSTRAINT "review_events_providerId_fkey" FOREIGN KEY ("providerId") REFERENCES "providers"("id") ON DELETE RESTRICT ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "review_events" ADD CONSTRAINT "review_events_reviewId_fkey" FOREIGN KEY ("reviewId") REFERENCES "reviews"("id") ON DELETE RESTRICT ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "access_tokens" ADD CONSTRAINT "access_tokens_providerId_fkey" FOREIGN KEY ("providerId") REFERENCES "providers"("id") ON DELETE RESTRICT ON UPDATE CASCADE;

