-- AlterTable
ALTER TABLE "providers" ADD COLUMN "lifecycle" TEXT NOT NULL DEFAULT 'ACTIVE';
ALTER TABLE "providers" ADD COLUMN "lifecycleMessage" TEXT;
ALTER TABLE "providers" ADD COLUMN "successorCode" TEXT;

-- CreateIndex
CREATE INDEX "providers_successorCode_idx" ON "providers"("successorCode");
