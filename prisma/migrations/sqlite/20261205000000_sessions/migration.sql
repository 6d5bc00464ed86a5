-- People signing in (src/signin): sign-ins under way and sessions, their secrets kept as hashes.
-- CreateTable
CREATE TABLE "signin_attempts" (
    "id" INTEGER NOT NULL PRIMARY KEY AUTOINCREMENT,
    "stateHash" TEXT NOT NULL,
    "bindingHash" TEXT NOT NULL,
    "nonce" TEXT NOT NULL,
    "codeVerifier" TEXT NOT NULL,
    "returnTo" TEXT NOT NULL,
    "createdAt" DATETIME NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "expiresAt" DATETIME NOT NULL
);

-- CreateTable
CREATE TABLE "sessions" (
    "id" INTEGER NOT NULL PRIMARY KEY AUTOINCREMENT,
    "hash" TEXT NOT NULL,
    "subject" TEXT NOT NULL,
    "name" TEXT,
    "roles" TEXT NOT NULL,
    "idToken" TEXT,
    "createdAt" DATETIME NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "lastSeenAt" DATETIME NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "idleExpiresAt" DATETIME NOT NULL,
    "expiresAt" DATETIME NOT NULL,
    "endedAt" DATETIME
);

-- CreateIndex
CREATE UNIQUE INDEX "signin_attempts_stateHash_key" ON "signin_attempts"("stateHash");

-- CreateIndex
CREATE INDEX "signin_attempts_expiresAt_idx" ON "signin_attempts"("expiresAt");

-- CreateIndex
CREATE UNIQUE INDEX "sessions_hash_key" ON "sessions"("hash");

-- CreateIndex
CREATE INDEX "sessions_expiresAt_idx" ON "sessions"("expiresAt");
