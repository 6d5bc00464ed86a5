-- Finding MCP servers by how they ship: the list's packageRegistry and transport filters read an
-- index of each provider's (registry, transport) pairs, kept by the writes as provider_labels is;
-- the search matches package identifiers (`@scope/name`, `io.github.owner/name`, an image name),
-- weighted as labels are (B).

CREATE TABLE "provider_packages" (
    "providerId" INTEGER NOT NULL,
    "registryType" TEXT NOT NULL,
    "transport" TEXT NOT NULL,

    CONSTRAINT "provider_packages_pkey" PRIMARY KEY ("providerId", "registryType", "transport")
);
CREATE INDEX "provider_packages_registryType_providerId_idx" ON "provider_packages"("registryType", "providerId");
CREATE INDEX "provider_packages_transport_providerId_idx" ON "provider_packages"("transport", "providerId");
ALTER TABLE "provider_packages" ADD CONSTRAINT "provider_packages_providerId_fkey" FOREIGN KEY ("providerId") REFERENCES "providers"("id") ON DELETE CASCADE ON UPDATE CASCADE;

INSERT INTO "provider_packages" ("providerId", "registryType", "transport")
SELECT DISTINCT p."id", pkg->>'registryType', pkg->'transport'->>'type'
FROM "providers" AS p, jsonb_array_elements(p."packages") AS pkg;

-- A generated column's expression cannot be altered: the column (and its GIN index) is made again.
ALTER TABLE "providers" DROP COLUMN "searchVector";
ALTER TABLE "providers" ADD COLUMN "searchVector" tsvector GENERATED ALWAYS AS (
    setweight(to_tsvector('simple'::regconfig, "provider_search_text"("providerCode")), 'A') ||
    setweight(to_tsvector('simple'::regconfig, "provider_search_text"("name")), 'A') ||
    setweight(to_tsvector('simple'::regconfig, "provider_search_text"("labels"::text)), 'B') ||
    setweight(to_tsvector('simple'::regconfig, "provider_search_text"(jsonb_path_query_array("packages", '$[*].identifier')::text)), 'B') ||
    setweight(to_tsvector('simple'::regconfig, "provider_search_text"("summary")), 'C') ||
    setweight(to_tsvector('simple'::regconfig, coalesce("provider_search_text"("description"), '')), 'D')
) STORED;
CREATE INDEX "providers_searchVector_idx" ON "providers" USING GIN ("searchVector");
