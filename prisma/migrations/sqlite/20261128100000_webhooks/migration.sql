-- Webhooks (src/webhooks): subscriptions to the event log and the deliveries of their messages.
-- CreateTable
CREATE TABLE "webhooks" (
    "id" INTEGER NOT NULL PRIMARY KEY AUTOINCREMENT,
    "webhookId" TEXT NOT NULL,
    "ownerProviderId" INTEGER,
    "createdBy" TEXT NOT NULL,
    "url" TEXT NOT NULL,
    "providerId" INTEGER,
    "providerCode" TEXT,
    "kinds" JSONB,
    "secret" TEXT NOT NULL,
    "lastSeq" INTEGER NOT NULL,
    "createdAt" DATETIME NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "disabledAt" DATETIME,
    "disabledReason" TEXT
);

-- CreateTable
CREATE TABLE "webhook_deliveries" (
    "id" INTEGER NOT NULL PRIMARY KEY AUTOINCREMENT,
    "deliveryId" TEXT NOT NULL,
    "webhookRowId" INTEGER NOT NULL,
    "seq" INTEGER,
    "kind" TEXT NOT NULL,
    "data" JSONB NOT NULL,
    "at" DATETIME NOT NULL,
    "status" TEXT NOT NULL DEFAULT 'PENDING',
    "attempts" INTEGER NOT NULL DEFAULT 0,
    "nextAttemptAt" DATETIME,
    "expiresAt" DATETIME NOT NULL,
    "leaseUntil" DATETIME,
    "leaseToken" TEXT,
    "lastAttemptAt" DATETIME,
    "lastStatusCode" INTEGER,
    "lastLatencyMs" INTEGER,
    "lastError" TEXT,
    "deliveredAt" DATETIME,
    "createdAt" DATETIME NOT NULL DEFAULT CURRENT_TIMESTAMP,
    CONSTRAINT "webhook_deliveries_webhookRowId_fkey" FOREIGN KEY ("webhookRowId") REFERENCES "webhooks" ("id") ON DELETE CASCADE ON UPDATE CASCADE
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
