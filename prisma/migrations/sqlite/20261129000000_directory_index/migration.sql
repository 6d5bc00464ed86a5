-- The directory filtered by type and trust tier (anonymous lists: PUBLIC, APPROVED), newest first.
-- The index on (visibility, reviewStage, updatedAt, id) alone made a filtered page read and discard
-- every listed row of other types and tiers: ~340 rows for 20 at 100,000 agents.
CREATE INDEX "providers_directory_type_tier_idx" ON "providers"("visibility", "reviewStage", "agentType", "trustTier", "updatedAt", "id");
