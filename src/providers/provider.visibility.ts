/**
 * Who sees what (API.md §2), as Prisma filters and predicates. A provider a caller may not see is
 * reported as not found, never as forbidden, so codes cannot be probed.
 */
import type { Viewer } from "../auth/viewer.ts";
import type { Context } from "../builder.ts";
import { notFound } from "../errors.ts";
import type { Prisma } from "../generated/prisma/client.ts";

const LISTED_PUBLICLY: Prisma.ProviderWhereInput = { visibility: "PUBLIC", reviewStage: "APPROVED" };
const HIDDEN_STAGES = ["REJECTED", "SUSPENDED"];

/** The providers a caller may find in a list. */
export function listableWhere(viewer: Viewer): Prisma.ProviderWhereInput {
  switch (viewer.kind) {
    case "reviewer":
      return {};
    case "agent":
      return { OR: [LISTED_PUBLICLY, { id: viewer.providerId }] };
    default:
      return LISTED_PUBLICLY;
  }
}

interface Visible {
  id: number;
  visibility: string;
  reviewStage: string;
}

/** Whether the caller may see the provider's profile (and its versions). */
export function canSee(viewer: Viewer, provider: Visible): boolean {
  if (isPrivileged(viewer, provider.id)) return true;
  return provider.visibility !== "PRIVATE" && !HIDDEN_STAGES.includes(provider.reviewStage);
}

/**
 * Goes on only with a provider the caller may see; otherwise the same 404 as for a code that does
 * not exist, so codes cannot be probed.
 */
export function assertVisible<T extends Visible>(
  viewer: Viewer,
  provider: T | null | undefined,
  providerCode: string,
): asserts provider is T {
  if (!provider || !canSee(viewer, provider)) throw notFound(`No provider "${providerCode}"`);
}

/** Whether the caller may see private fields: tokens, contact, reviewer notes. */
export function isPrivileged(viewer: Viewer, providerId: number): boolean {
  return viewer.kind === "reviewer" || (viewer.kind === "agent" && viewer.providerId === providerId);
}

/** How an actor is shown: reviewers' identities only to the privileged. */
export function shownActor(viewer: Viewer, providerId: number, actor: string): string {
  if (isPrivileged(viewer, providerId)) return actor;
  return actor.startsWith("reviewer:") ? "reviewer" : actor;
}

/**
 * The scope of an owner-only operation. Another agent is refused with 403 where it may see the
 * provider and 404 where it may not, so codes cannot be probed (API.md §2–3).
 */
export async function ownerScope(ctx: Pick<Context, "viewer" | "db">, providerCode: string, orReviewer = false) {
  if (ctx.viewer.kind === "agent" && ctx.viewer.providerCode !== providerCode) {
    const provider = await ctx.db.provider.findUnique({
      where: { providerCode },
      select: { id: true, visibility: true, reviewStage: true },
    });
    assertVisible(ctx.viewer, provider, providerCode);
  }
  return orReviewer ? { $any: { ownerOf: providerCode, reviewer: true } } : { ownerOf: providerCode };
}
