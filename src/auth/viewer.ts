/** Who is asking: the one type every domain reads the caller from, and how it is recorded as an actor. */

export type Viewer =
  | { kind: "anonymous" }
  | { kind: "agent"; providerId: number; providerCode: string; tokenId: string }
  /** An API key, or an access token whose only role is reader: reads what anyone may see. */
  | { kind: "reader"; subject: string }
  /** A reviewer or admin (roles.ts): a reviewer JWT, or an access token from a listed issuer. */
  | { kind: "reviewer"; subject: string; roles: string[] };

/** How the viewer is recorded as the actor of an event: `agent:<code>`, `reviewer:<subject>`. */
export function actorOf(viewer: Viewer): string {
  switch (viewer.kind) {
    case "agent":
      return `agent:${viewer.providerCode}`;
    case "reviewer":
      return `reviewer:${viewer.subject}`;
    case "reader":
      return `reader:${viewer.subject}`;
    default:
      return "anonymous";
  }
}
