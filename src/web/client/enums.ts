/**
 * The enumerations the pages offer as choices: the server's own lists, from modules without
 * imports, so a page that needs a list does not load the validation library with it. Each is
 * checked against the API's enumeration of the same values (api.types.ts, generated from the
 * served OpenAPI document): a list that differs from it is a type error here.
 */
import type * as provider from "../../providers/provider.enums.ts";
import type * as review from "../../reviews/review.enums.ts";
import type { Schemas } from "./types.ts";

export * from "../../providers/provider.enums.ts";
export { ACTIVE_STATUSES, PRIORITIES } from "../../reviews/review.enums.ts";

/** True when a list holds exactly the values of an enumeration. */
type Same<List extends readonly string[], Enum extends string> = [List[number]] extends [Enum]
  ? [Enum] extends [List[number]]
    ? true
    : false
  : false;
/** True when a list holds only values of an enumeration. */
type Within<List extends readonly string[], Enum extends string> = [List[number]] extends [Enum] ? true : false;
type AllTrue<T extends true[]> = T;

/** A type error here means a list of src/ and the served OpenAPI document disagree (`npm run api:types`). */
export type EnumListsMatchTheApi = AllTrue<
  [
    Same<typeof provider.AGENT_TYPES, Schemas["AgentType"]>,
    Same<typeof provider.VISIBILITIES, Schemas["Visibility"]>,
    Same<typeof provider.TRUST_TIERS, Schemas["TrustTier"]>,
    Same<typeof provider.REVIEW_STAGES, Schemas["ReviewStage"]>,
    Same<typeof provider.MODEL_ROLES, Schemas["ModelRole"]>,
    Same<typeof provider.TOOL_KINDS, Schemas["ToolKind"]>,
    Same<typeof provider.TOOL_SCOPES, Schemas["ToolScope"]>,
    Same<typeof provider.PROTOCOLS, Schemas["EndpointProtocol"]>,
    Same<typeof provider.AUTH_SCHEMES, Schemas["AuthScheme"]>,
    Same<typeof provider.HUMAN_OVERSIGHT, Schemas["HumanOversight"]>,
    Same<typeof provider.ROLE_KINDS, Schemas["RoleKind"]>,
    Same<typeof provider.PACKAGE_REGISTRIES, Schemas["PackageRegistry"]>,
    Same<typeof provider.PACKAGE_TRANSPORTS, Schemas["TransportType"]>,
    Within<typeof review.ACTIVE_STATUSES, Schemas["ReviewStatus"]>,
    Same<typeof review.PRIORITIES, Schemas["ReviewPriority"]>,
  ]
>;
