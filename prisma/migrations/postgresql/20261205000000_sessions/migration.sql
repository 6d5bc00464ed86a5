-- People signing in (src/signin): sign-ins under way and sessions, their secrets kept as hashes.
-- CreateTable
CREATE TABLE "signin_attempts" (
    "id" SERIAL NOT NULL,
    "stateHash" TEXT NOT NULL,
    "bindingHash" TEXT NOT NULL,
    "nonce" TEXT NOT NULL,
    "codeVerifier" TEXT NOT NULL,
    "returnTo" TEXT NOT NULL,
    "createdAt" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "expiresAt" TIMESTAMP(3) NOT NULL,

    CONSTRAINT "signin_attempts_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "sessions" (
    "id" SERIAL NOT NULL,
    "hash" TEXT NOT NULL,
    "subject" TEXT NOT NULL,
    "name" TEXT,
    "roles" TEXT NOT NULL,
    "idToken" TEXT,
    "createdAt" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "lastSeenAt" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "idleExpiresAt" TIMESTAMP(3) NOT NULL,
    "expiresAt" TIMESTAMP(3) NOT NULL,
    "endedAt" TIMESTAMP(3),

    CONSTRAINT "sessions_pkey" PRIMARY KEY ("id")
);

-- CreateIndex
CREATE UNIQUE INDEX "signin_attempts_stateHash_key" ON "signin_attempts"("stateHash");

-- CreateIndex
CREATE INDEX "signin_attempts_expiresAt_idx" ON "signin_attempts"("expiresAt");

-- CreateIndex
CREATE UNIQUE INDEX "sessions_hash_key" ON "sessions"("hash");

-- CreateIndex
CREATE INDEX "sessions_expiresAt_idx" ON "sessions"("expiresAt");
