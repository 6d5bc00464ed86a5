-- What an MCP server.json says of a server beyond its packages: its reverse-DNS name (one provider
-- per name), the version of the software, and where its source is kept.
ALTER TABLE "providers" ADD COLUMN "serverName" TEXT;
ALTER TABLE "providers" ADD COLUMN "releaseVersion" TEXT;
ALTER TABLE "providers" ADD COLUMN "repository" JSONB;
CREATE UNIQUE INDEX "providers_serverName_key" ON "providers"("serverName");
-- An endpoint now says its transport, headers and URL variables; one stored before says none, in
-- the same words, so that a PATCH of another member does not see a change.
UPDATE "providers"
   SET "endpoint" = '{"transport": null, "headers": [], "variables": []}'::jsonb || "endpoint"
 WHERE jsonb_typeof("endpoint") = 'object';
