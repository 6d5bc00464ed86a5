-- The change log (src/events): every committed change to a provider or a review, in commit order.
-- CreateTable
CREATE TABLE "events" (
    "seq" SERIAL NOT NULL,
    "at" TIMESTAMP(3) NOT NULL,
    "kind" TEXT NOT NULL,
    "providerId" INTEGER,
    "providerCode" TEXT,
    "version" INTEGER,
    "reviewCode" TEXT,
    "patch" JSONB NOT NULL,
    "stateHash" TEXT,
    "note" TEXT,
    "listed" BOOLEAN NOT NULL,

    CONSTRAINT "events_pkey" PRIMARY KEY ("seq")
);

-- CreateTable
CREATE TABLE "event_retention" (
    "id" INTEGER NOT NULL,
    "prunedThrough" INTEGER NOT NULL DEFAULT 0,

    CONSTRAINT "event_retention_pkey" PRIMARY KEY ("id")
);
INSERT INTO "event_retention" ("id", "prunedThrough") VALUES (1, 0);

-- CreateIndex
CREATE INDEX "events_providerCode_seq_idx" ON "events"("providerCode", "seq");
