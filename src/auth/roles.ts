/**
 * The roles a credential carries, decided here and nowhere else. A reader reads (under
 * READ_ACCESS=authenticated every request but the public routes needs one); a reviewer works the
 * queue; an admin manages what belongs to the registry as a whole (API keys). Each role includes
 * the ones before it.
 */
import type { Viewer } from "./viewer.ts";

export const ROLES = ["reader", "reviewer", "admin"] as const;
export type Role = (typeof ROLES)[number];

/** The OAuth scopes of the protected resource metadata, and the role each one grants. */
export const SCOPE_ROLES: Readonly<Record<string, Role>> = {
  "registry:read": "reader",
  "registry:review": "reviewer",
  "registry:admin": "admin",
};

/** The highest of some roles (undefined for none): what a credential with them may do. */
export function highestRole(roles: Iterable<string>): Role | undefined {
  let rank = -1;
  for (const role of roles) rank = Math.max(rank, ROLES.indexOf(role as Role));
  return rank < 0 ? undefined : ROLES[rank];
}

/** Whether the viewer holds `role`: an agent token reads (its agent is a member of the registry). */
export function hasRole(viewer: Viewer, role: Role): boolean {
  switch (viewer.kind) {
    case "anonymous":
      return false;
    case "agent":
    case "reader":
      return role === "reader";
    case "reviewer":
      return role !== "admin" || viewer.roles.includes("admin");
  }
}
