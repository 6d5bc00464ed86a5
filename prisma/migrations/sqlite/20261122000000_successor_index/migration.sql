-- The predecessors of a provider (those naming it as successor) are read with every detail, ordered
-- by code. With an index on successorCode alone, SQLite's planner (no statistics) walked the
-- providerCode index for the ORDER BY and checked every row: 0.2 ms at 1,000 agents, a full scan at
-- 1,000,000. One index answers both the filter and the order.
DROP INDEX "providers_successorCode_idx";

CREATE INDEX "providers_successorCode_providerCode_idx" ON "providers"("successorCode", "providerCode");
