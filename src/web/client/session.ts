/**
 * People signed in through the registry's identity provider: a session behind an HttpOnly cookie,
 * which the pages' requests carry by themselves (same origin). `GET /auth/session` says who it is;
 * signing out is a form posted to `/auth/logout`, so it works without a script and carries the
 * `Origin` the server checks.
 */
import { h, replace } from "./dom.ts";

export interface Session {
  signedIn: boolean;
  subject?: string;
  name?: string | null;
  roles?: string[];
  expiresAt?: string;
  /** Where to sign in; null when the registry has no identity provider. */
  signInUrl?: string | null;
}

let current: Promise<Session> | undefined;

/** The session of this browser, asked once per page. */
export function session(): Promise<Session> {
  current ??= fetch("/auth/session", { headers: { Accept: "application/json" }, cache: "no-store" })
    .then((answer) => (answer.ok ? (answer.json() as Promise<Session>) : { signedIn: false, signInUrl: null }))
    .catch(() => ({ signedIn: false, signInUrl: null }));
  return current;
}

/** Whether the signed-in person holds a role (each role includes the ones before it: reader, reviewer, admin). */
export function sessionHas(s: Session, role: "reader" | "reviewer" | "admin"): boolean {
  const roles = s.roles ?? [];
  if (role === "admin") return roles.includes("admin");
  if (role === "reviewer") return roles.includes("reviewer") || roles.includes("admin");
  return roles.length > 0;
}

/** Sign in, coming back to this page afterwards. */
export function signInLink(label = "Sign in", className = "button secondary"): HTMLAnchorElement {
  const returnTo = `${location.pathname}${location.search}`;
  return h("a", { href: `/auth/login?returnTo=${encodeURIComponent(returnTo)}`, class: className }, label);
}

export function signOutForm(className = "button secondary"): HTMLFormElement {
  return h(
    "form",
    { method: "post", action: "/auth/logout", class: "signout" },
    h("button", { type: "submit", class: className }, "Sign out"),
  );
}

/** Fills the header's account corner, where the registry has sign-in: who is signed in, or "Sign in". */
export async function mountAccount(): Promise<void> {
  const corner = document.getElementById("account");
  if (!corner) return;
  const s = await session();
  if (s.signedIn) {
    replace(corner, h("span", { class: "who" }, s.name || s.subject || "Signed in"), signOutForm("button link"));
  } else if (s.signInUrl) {
    replace(corner, signInLink("Sign in", "button link"));
  }
}
