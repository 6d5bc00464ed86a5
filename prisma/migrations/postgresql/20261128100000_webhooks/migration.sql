-- Webhooks (src/webhooks): subscriptions to the event log and the deliveries of their messages.
-- CreateTable
CREATE TABLE "webhooks" (
    "id" SERIAL NOT NULL,
    "webhookId" TEXT NOT NULL,
    "ownerProviderId" INTEGER,
    "createdBy" TEXT NOT NULL,
    "url" TEXT NOT NULL,
    "providerId" INTEGER,
    "providerCode" TEXT,
    "kinds" JSONB,
    "secret" TEXT NOT NULL,
    "lastSeq" INTEGER NOT NULL,
    "createdAt" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "disabledAt" TIMESTAMP(3),
    "disabledReason" TEXT,

    CONSTRAINT "webhooks_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "webhook_deliveries" (
    "id" SERIAL NOT NULL,
    "deliveryId" TEXT NOT NULL,
    "webhookRowId" INTEGER NOT NULL,
    "seq" INTEGER,
    "kind" TEXT NOT NULL,
    "data" JSONB NOT NULL,
    "at" TIMESTAMP(3) NOT NULL,
    "status" TEXT NOT NULL DEFAULT 'PENDING',
    "attempts" INTEGER NOT NULL DEFAULT 0,
    "nextAttemptAt" TIMESTAMP(3),
    "expiresAt" TIMESTAMP(3) NOT NULL,
    "leaseUntil" TIMESTAMP(3),
    "leaseToken" TEXT,
    "lastAttemptAt" TIMESTAMP(3),
    "lastStatusCode" INTEGER,
    "lastLatencyMs" INTEGER,
    "lastError" TEXT,
    "deliveredAt" TIMESTAMP(3),
    "createdAt" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "webhook_deliveries_pkey" PRIMARY KEY ("id")
);

-- CreateIndex
CREATE UNIQUE INDEX "webhooks_webhookId_key" ON "webhooks"("webhookId");

-- CreateIndex
CREATE INDEX "webhooks_ownerProviderId_idx" ON "webhooks"("ownerProviderId");

-- CreateIndex
CREATE UNIQUE INDEX "webhook_deliveries_deliveryId_key" ON "webhook_deliveries"("deliveryId");

-- CreateIndex
CREATE INDEX "webhook_deliveries_status_nextAttemptAt_idx" ON "webhook_deliveries"("status", "nextAttemptAt");

-- CreateIndex
CREATE INDEX "webhook_deliveries_webhookRowId_id_idx" ON "webhook_deliveries"("webhookRowId", "id");

-- CreateIndex
CREATE UNIQUE INDEX "webhook_deliveries_webhookRowId_seq_key" ON "webhook_deliveries"("webhookRowId", "seq");

-- AddForeignKey
ALTER TABLE "webhook_deliveries" ADD CONSTRAINT "webhook_deliveries_webhookRowId_fkey" FOREIGN KEY ("webhookRowId") REFERENCES "webhooks"("id") ON DELETE CASCADE ON UPDATE CASCADE;
