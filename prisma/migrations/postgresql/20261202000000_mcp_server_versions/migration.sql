-- The MCP registry's read API (src/interop/mcp.registry.*): one row per release of an MCP server,
-- kept by the provider writes in their transaction, so its list walks these rows in (name, version)
-- order instead of reading profile versions. Names are the declared serverName, else derived from
-- the code: one index for each walk (the derived one partial, over the rows without a name), both
-- byte-ordered (COLLATE "C") as the list compares names, whatever the database's collation.

CREATE TABLE "mcp_server_versions" (
    "providerId" INTEGER NOT NULL,
    "version" TEXT NOT NULL,
    "serverName" TEXT,
    "providerCode" TEXT NOT NULL,
    "profileVersion" INTEGER NOT NULL,
    "isLatest" BOOLEAN NOT NULL,
    "publishedAt" TIMESTAMP(3) NOT NULL,
    "updatedAt" TIMESTAMP(3) NOT NULL,
    "statusChangedAt" TIMESTAMP(3) NOT NULL,

    CONSTRAINT "mcp_server_versions_pkey" PRIMARY KEY ("providerId", "version")
);
CREATE UNIQUE INDEX "mcp_server_versions_serverName_version_key" ON "mcp_server_versions"("serverName" COLLATE "C", "version" COLLATE "C");
CREATE INDEX "mcp_server_versions_derived_idx" ON "mcp_server_versions"("providerCode" COLLATE "C", "version" COLLATE "C") WHERE "serverName" IS NULL;
ALTER TABLE "mcp_server_versions" ADD CONSTRAINT "mcp_server_versions_providerId_fkey" FOREIGN KEY ("providerId") REFERENCES "providers"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- The releases of the profile versions recorded so far: a snapshot with an MCP endpoint or a
-- package is a release (its releaseVersion, else `N.0.0`), first published by the oldest version
-- carrying it, updated by the newest, which is also the one its document is read from.
INSERT INTO "mcp_server_versions"
    ("providerId", "version", "serverName", "providerCode", "profileVersion", "isLatest", "publishedAt", "updatedAt", "statusChangedAt")
SELECT v."providerId",
       coalesce(v."snapshot"->>'releaseVersion', v."version"::text || '.0.0') AS "release",
       p."serverName", p."providerCode", max(v."version"), false, min(v."createdAt"), max(v."createdAt"), min(v."createdAt")
FROM "provider_versions" AS v JOIN "providers" AS p ON p."id" = v."providerId"
WHERE coalesce(v."snapshot"->'packages', '[]'::jsonb) NOT IN ('[]'::jsonb, 'null'::jsonb)
   OR v."snapshot"->'endpoint'->>'protocol' = 'MCP'
GROUP BY v."providerId", "release", p."serverName", p."providerCode";

-- The latest is the release of the provider's current version, when that version is an MCP server.
UPDATE "mcp_server_versions" AS r SET "isLatest" = true
FROM "providers" AS p WHERE p."id" = r."providerId" AND r."profileVersion" = p."version";

-- A deprecated or retired server's status changed with its last lifecycle change.
UPDATE "mcp_server_versions" AS r SET "statusChangedAt" = greatest(r."publishedAt", (
    SELECT max(w."createdAt") FROM "provider_versions" AS w
    WHERE w."providerId" = r."providerId" AND w."changedFields" @> '["lifecycle"]'::jsonb))
FROM "providers" AS p WHERE p."id" = r."providerId" AND p."lifecycle" <> 'ACTIVE';
