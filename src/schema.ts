/**
 * The one schema: every domain registers its types and fields on the builder when imported.
 */
import { builder } from "./builder.ts";
import "./providers/provider.schema.ts";
import "./providers/provider.facets.schema.ts";
import "./providers/version.schema.ts";
import "./providers/provider.lifecycle.schema.ts";
import "./auth/token.schema.ts";
import "./apikeys/apikey.schema.ts";
import "./reviews/review.schema.ts";
import "./service/service.schema.ts";
import "./events/event.schema.ts";
import "./feed/feed.schema.ts";
import "./interop/interop.schema.ts";
import "./interop/mcp.registry.schema.ts";
import "./trust/domain.schema.ts";
import "./trust/card.schema.ts";
import "./webhooks/webhook.schema.ts";
import "./health/health.schema.ts";
import "./mirror/mirror.schema.ts";

export const schema = builder.toSchema({ sortSchema: false });
