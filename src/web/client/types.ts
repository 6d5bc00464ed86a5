/** The shapes of /api/v1 answers the pages read (see /openapi.json). */

/** A provider's lifecycle, on summaries and profiles. */
export interface Lifecycle {
  lifecycle: "ACTIVE" | "DEPRECATED" | "RETIRED";
  lifecycleMessage: string | null;
  successorCode: string | null;
}

export interface ProviderSummary extends Lifecycle {
  providerCode: string;
  name: string;
  summary: string;
  agentType: string;
  visibility: string;
  trustTier: string;
  reviewStage: string;
  labels: string[];
  endpoint: { protocol: string };
  updatedAt: string;
}

export interface Page<T> {
  items: T[];
  nextCursor: string | null;
}

export interface Capability {
  key: string;
  name: string;
  description: string | null;
  tags: string[];
  inputModes: string[];
  outputModes: string[];
}

export interface Model {
  vendor: string;
  model: string;
  role: string;
  contextWindow: number | null;
}

export interface Tool {
  name: string;
  kind: string;
  description: string | null;
  scopes: string[];
}

export interface Endpoint {
  url: string;
  protocol: string;
  authScheme: string;
  healthUrl: string | null;
}

export interface Policy {
  dataRetentionDays: number | null;
  humanOversight: string;
  allowedUseCases: string[];
  prohibitedUseCases: string[];
  termsUrl: string | null;
  privacyUrl: string | null;
}

export interface Role {
  subject: string;
  role: string;
}

export interface TokenInfo {
  tokenId: string;
  prefix: string;
  label: string | null;
  createdAt: string;
  lastUsedAt: string | null;
  expiresAt: string | null;
  revokedAt: string | null;
}

export interface TimelineEvent {
  at: string;
  kind: string;
  actor: string;
  note: string | null;
}

/** The owner-editable part of a profile (what a version snapshot holds). */
export interface Snapshot {
  name: string;
  summary: string;
  description: string | null;
  labels: string[];
  agentType: string;
  visibility: string;
  contactEmail: string | null;
  capabilities: Capability[];
  models: Model[];
  tools: Tool[];
  endpoint: Endpoint;
  policy: Policy | null;
  roles: Role[];
}

export interface Provider extends Snapshot, Lifecycle {
  providerCode: string;
  /** Providers naming this one as their successor. */
  predecessors: string[];
  trustTier: string;
  reviewStage: string;
  tokens: TokenInfo[] | null;
  reviewTimeline: TimelineEvent[];
  version: number;
  createdAt: string;
  updatedAt: string;
}

export interface VersionSummary {
  providerCode: string;
  version: number;
  createdAt: string;
  actor: string;
  changedFields: string[];
}

export interface Version extends VersionSummary {
  snapshot: Snapshot;
}

export interface Review {
  reviewCode: string;
  providerCode: string;
  providerName: string;
  kind: string;
  status: string;
  priority: string;
  assignedTo: string | null;
  createdAt: string;
  updatedAt: string;
  decidedAt: string | null;
}

export interface IntakeResult {
  providerCode: string;
  reviewCode: string;
  accessToken: string;
  provider: Provider;
}
