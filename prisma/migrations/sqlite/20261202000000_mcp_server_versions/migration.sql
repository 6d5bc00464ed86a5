-- The MCP registry's read API (src/interop/mcp.registry.*): one row per release of an MCP server,
-- kept by the provider writes in their transaction, so its list walks these rows in (name, version)
-- order instead of reading profile versions. Names are the declared serverName, else derived from
-- the code: one index for each walk (the derived one partial, over the rows without a name).

CREATE TABLE "mcp_server_versions" (
    "providerId" INTEGER NOT NULL,
    "version" TEXT NOT NULL,
    "serverName" TEXT,
    "providerCode" TEXT NOT NULL,
    "profileVersion" INTEGER NOT NULL,
    "isLatest" BOOLEAN NOT NULL,
    "publishedAt" DATETIME NOT NULL,
    "updatedAt" DATETIME NOT NULL,
    "statusChangedAt" DATETIME NOT NULL,

    PRIMARY KEY ("providerId", "version"),
    CONSTRAINT "mcp_server_versions_providerId_fkey" FOREIGN KEY ("providerId") REFERENCES "providers" ("id") ON DELETE CASCADE ON UPDATE CASCADE
);
CREATE UNIQUE INDEX "mcp_server_versions_serverName_version_key" ON "mcp_server_versions"("serverName", "version");
CREATE INDEX "mcp_server_versions_derived_idx" ON "mcp_server_versions"("providerCode", "version") WHERE "serverName" IS NULL;

-- The releases of the profile versions recorded so far: a snapshot with an MCP endpoint or a
-- package is a release (its releaseVersion, else `N.0.0`), first published by the oldest version
-- carrying it, updated by the newest, which is also the one its document is read from.
INSERT INTO "mcp_server_versions"
    ("providerId", "version", "serverName", "providerCode", "profileVersion", "isLatest", "publishedAt", "updatedAt", "statusChangedAt")
SELECT v."providerId",
       coalesce(json_extract(v."snapshot", '$.releaseVersion'), v."version" || '.0.0') AS "release",
       p."serverName", p."providerCode", max(v."version"), 0, min(v."createdAt"), max(v."createdAt"), min(v."createdAt")
FROM "provider_versions" AS v JOIN "providers" AS p ON p."id" = v."providerId"
WHERE coalesce(json_extract(v."snapshot", '$.packages'), '[]') <> '[]'
   OR json_extract(v."snapshot", '$.endpoint.protocol') = 'MCP'
GROUP BY v."providerId", "release";

-- The latest is the release of the provider's current version, when that version is an MCP server.
UPDATE "mcp_server_versions" SET "isLatest" = 1
WHERE "profileVersion" = (SELECT p."version" FROM "providers" AS p WHERE p."id" = "mcp_server_versions"."providerId");

-- A deprecated or retired server's status changed with its last lifecycle change.
UPDATE "mcp_server_versions" SET "statusChangedAt" = max("publishedAt", coalesce((
    SELECT max(w."createdAt") FROM "provider_versions" AS w
    WHERE w."providerId" = "mcp_server_versions"."providerId"
      AND EXISTS (SELECT 1 FROM json_each(w."changedFields") WHERE "value" = 'lifecycle')), "publishedAt"))
WHERE "providerId" IN (SELECT "id" FROM "providers" WHERE "lifecycle" <> 'ACTIVE');
