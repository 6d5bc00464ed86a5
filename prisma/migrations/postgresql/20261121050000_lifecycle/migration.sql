-- AlterTable
ALTER TABLE "providers" ADD COLUMN     "lifecycle" TEXT NOT NULL DEFAULT 'ACTIVE',
ADD COLUMN     "lifecycleMessage" TEXT,
ADD COLUMN     "successorCode" TEXT;

-- CreateIndex
CREATE INDEX "providers_successorCode_idx" ON "providers"("successorCode");
