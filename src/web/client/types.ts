/**
 * The shapes of /api/v1 answers the pages read: names for types of api.types.ts, which
 * `npm run api:types` generates from the served OpenAPI document (/openapi.json). Nothing here
 * lists fields, so a field the API changes is a type error in the page that reads it.
 */
import type { components, paths } from "./api.types.ts";

export type Schemas = components["schemas"];

type Method = "get" | "post" | "put" | "patch" | "delete";
type Operation<P extends keyof paths, M extends Method> = NonNullable<paths[P][M]>;
/**
 * The JSON body of a route's success answer (its 200 or 201). `unknown` (never `never`, which any
 * property access would pass) for a route without one, so a page that reads it does not compile.
 */
export type Answer<P extends keyof paths, M extends Method = "get"> =
  Operation<P, M> extends { responses: infer R }
    ? R[Extract<keyof R, 200 | 201>] extends { content: { "application/json": infer T } }
      ? T
      : unknown
    : unknown;
/** A route's query parameters, by name (none for a route without). */
export type Query<P extends keyof paths, M extends Method = "get"> = NonNullable<
  Operation<P, M> extends { parameters: { query?: infer Q } } ? Q : unknown
>;

// The answers, route by route.
export type ProviderPage = Answer<"/api/v1/providers">;
export type IntakeResult = Answer<"/api/v1/providers", "post">;
export type Provider = Answer<"/api/v1/providers/{providerCode}">;
export type VersionPage = Answer<"/api/v1/providers/{providerCode}/versions">;
export type Version = Answer<"/api/v1/providers/{providerCode}/versions/{version}">;
export type VersionDiff = Answer<"/api/v1/providers/{providerCode}/versions/{from}/diff/{to}">;
export type ReviewPage = Answer<"/api/v1/reviews/queue">;
export type EventPage = Answer<"/api/v1/events">;
export type WebhookPage = Answer<"/api/v1/webhooks">;
export type CreatedWebhook = Answer<"/api/v1/webhooks", "post">;
export type DeliveryPage = Answer<"/api/v1/webhooks/{webhookId}/deliveries">;
export type ApiKeyPage = Answer<"/api/v1/api-keys">;
export type DownProviders = Answer<"/api/v1/health/down">;
export type CheckedHealth = Answer<"/api/v1/providers/{providerCode}/health/check", "post">;
export type CreatedApiKey = Answer<"/api/v1/api-keys", "post">;
export type MirrorSourcePage = Answer<"/api/v1/mirror/sources">;
export type MirrorSource = Answer<"/api/v1/mirror/sources/{sourceId}">;

// What those answers hold.
export type ProviderSummary = ProviderPage["items"][number];
export type VersionSummary = VersionPage["items"][number];
/** The owner-editable part of a profile (what a version snapshot holds). */
export type Snapshot = Version["snapshot"];
export type Review = ReviewPage["items"][number];
export type PatchOperation = VersionDiff[number];
/** A provider's lifecycle, on summaries and profiles. */
export type Lifecycle = Pick<ProviderSummary, "lifecycle" | "lifecycleMessage" | "successorCode">;
export type ReviewStage = Schemas["ReviewStage"];
/** An event of the change log (named so as not to hide the DOM's `Event`). */
export type RegistryEvent = EventPage["items"][number];
export type EventKind = Schemas["EventKind"];
export type Webhook = WebhookPage["items"][number];
/** A webhook's message and its attempts (also the answer of a redelivery and of a test ping). */
export type Delivery = DeliveryPage["items"][number];
export type TrustTier = Schemas["TrustTier"];
/** What the registry's prober last found at an agent's endpoint. */
export type HealthState = Schemas["HealthState"];
export type Health = NonNullable<Provider["health"]>;
export type HealthCheck = Health["recentChecks"][number];
/** How the live agent differs from what it declares (owner and reviewers only). */
export type Drift = NonNullable<Provider["drift"]>;
export type DownProvider = DownProviders[number];
