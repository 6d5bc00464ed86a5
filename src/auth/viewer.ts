/** Who is asking: the one type every domain reads the caller from, and how it is recorded as an actor. */

export type Viewer =
  | { kind: "anonymous" }
  | { kind: "agent"; providerId: number; providerCode: string; tokenId: string }
  | { kind: "reviewer"; subject: string; roles: string[] };

/** How the viewer is recorded as the actor of an event: `agent:<code>`, `reviewer:<subject>`. */
export function actorOf(viewer: Viewer): string {
  switch (viewer.kind) {
    case "agent":
      return `agent:${viewer.providerCode}`;
    case "reviewer":
      return `reviewer:${viewer.subject}`;
    default:
      return "anonymous";
  }
}
