-- At most one active review per provider: an UPDATE review opens only while none is active, and the
-- database holds that rule whatever the order of concurrent writes (docs/security.md).
CREATE UNIQUE INDEX "reviews_one_active_per_provider" ON "reviews"("providerId")
  WHERE "status" IN ('OPEN', 'IN_PROGRESS', 'CHANGES_REQUESTED');
