-- The change log (src/events): every committed change to a provider or a review, in commit order.
-- CreateTable
CREATE TABLE "events" (
    -- The rowid, without AUTOINCREMENT's table to write on every append; retention keeps the newest row.
    "seq" INTEGER NOT NULL PRIMARY KEY,
    "at" DATETIME NOT NULL,
    "kind" TEXT NOT NULL,
    "providerId" INTEGER,
    "providerCode" TEXT,
    "version" INTEGER,
    "reviewCode" TEXT,
    "patch" JSONB NOT NULL,
    "stateHash" TEXT,
    "note" TEXT,
    "listed" BOOLEAN NOT NULL
);

-- CreateTable
CREATE TABLE "event_retention" (
    "id" INTEGER NOT NULL PRIMARY KEY,
    "prunedThrough" INTEGER NOT NULL DEFAULT 0
);
INSERT INTO "event_retention" ("id", "prunedThrough") VALUES (1, 0);

-- CreateIndex
CREATE INDEX "events_providerCode_seq_idx" ON "events"("providerCode", "seq");
