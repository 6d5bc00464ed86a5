/**
 * The routes of people signing in, answered from `onRequest` like the transport routes:
 *
 * - `GET /auth/login?returnTo=/path`: a sign-in under way is stored (state, nonce, PKCE verifier,
 *   where to come back), bound to this browser by a cookie, and the browser is sent (302) to the
 *   identity provider's authorization endpoint.
 * - `GET /auth/callback`: the sign-in of the answer's `state` is taken (once), the code exchanged
 *   with the PKCE verifier, the ID token checked (issuer, audience, expiry, nonce) by openid-client;
 *   its claims give the roles, through the same mapping as access tokens (OIDC_ROLES_CLAIM,
 *   OIDC_ROLE_MAP). A session is stored, its cookie set, and the browser sent (303) back.
 * - `POST /auth/logout`: from the registry's own pages only (`Origin`); ends the session everywhere,
 *   clears the cookie and sends the browser (303) to the identity provider's sign-out when it has one.
 * - `GET /auth/session`: who is signed in, for the pages (`no-store`).
 *
 * A refused callback, and a dead session cookie shown to /auth/session, count as failed
 * authentications of the client's address (src/limits), as a bad credential anywhere does.
 */
import type { Plugin } from "graphql-yoga";
import * as client from "openid-client";
import { claimRoles } from "../auth/access.token.ts";
import { MAX_SUBJECT } from "../auth/reviewer.jwt.ts";
import type { AccessTokenConfig, SignInConfig } from "../config.ts";
import type { Db } from "../db/client.ts";
import { apiError, codeOf, unauthenticated } from "../errors.ts";
import { problemResponse } from "../http/rest/problem.ts";
import type { AddressSource, CredentialGuard } from "../limits/limits.plugin.ts";
import { type Outbound, OutboundError } from "../outbound/outbound.ts";
import { fits, isStorableText } from "../text.ts";
import { type RelyingParty, relyingParty } from "./signin.oidc.ts";
import {
  ATTEMPT_TTL_MS,
  BINDING_COOKIE,
  CALLBACK_PATH,
  clearCookie,
  cookieName,
  hashSecret,
  isSecretShaped,
  LOGIN_PATH,
  newSessionTimes,
  readCookie,
  rolesText,
  SESSION_COOKIE,
  safeReturnTo,
  setCookie,
} from "./signin.rules.ts";
import { newSecret, type Sessions } from "./signin.session.ts";
import { createSession, endSession, saveAttempt, takeAttempt } from "./signin.store.ts";

const NO_STORE = { "Cache-Control": "no-store" };
/** The longest display name kept. */
const MAX_NAME = 200;

export interface SignInRoutesOptions {
  db: Db;
  /** Undefined when people do not sign in: /auth/session says so, the other routes are not there. */
  signIn: SignInConfig | undefined;
  sessions: Sessions | undefined;
  /** The role mapping of access tokens, which the ID token's claims go through too. */
  accessTokens: AccessTokenConfig;
  outbound: Outbound;
  guard?: CredentialGuard | undefined;
  log: (line: Record<string, unknown>) => void;
}

/** A refusal of the callback: a 400 that says what to do, counted as a failed authentication. */
const refused = (message: string) => apiError("BAD_USER_INPUT", `${message}. Sign in again from ${LOGIN_PATH}.`);

/** The identity provider could not be reached: nothing the person did, so nothing is counted. */
class Unreachable extends Error {}

/** Whether an error of openid-client's came from the outbound door failing to reach the issuer. */
function unreachable(error: unknown): boolean {
  for (let cause = error, depth = 0; cause instanceof Error && depth < 5; depth++) {
    if (cause instanceof OutboundError) return true;
    cause = cause.cause;
  }
  return false;
}

function unreachableResponse(): Response {
  return Response.json(
    {
      type: "about:blank",
      title: "Bad gateway",
      status: 502,
      detail: "The identity provider could not be reached; try again in a moment",
      code: "BAD_GATEWAY",
    },
    { status: 502, headers: { ...NO_STORE, "Content-Type": "application/problem+json" } },
  );
}

function redirect(status: 302 | 303, location: string, cookies: string[]): Response {
  const headers = new Headers({ Location: location, ...NO_STORE });
  for (const cookie of cookies) headers.append("Set-Cookie", cookie);
  return new Response(null, { status, headers });
}

/** The display name of an ID token's claims, if it has a usable one. */
function displayName(claims: client.IDToken): string | null {
  for (const key of ["name", "preferred_username", "email"]) {
    const value = claims[key];
    if (typeof value === "string" && value.trim() && isStorableText(value)) {
      return fits(value.trim(), MAX_NAME) ? value.trim() : null;
    }
  }
  return null;
}

export function useSignInRoutes(options: SignInRoutesOptions): Plugin {
  const { signIn, sessions } = options;
  if (signIn && sessions) return signInRoutes(options, signIn, sessions);
  return {
    onRequest({ request, url, endResponse }) {
      if (url.pathname === "/auth/session" && request.method === "GET") {
        endResponse(Response.json({ signedIn: false, signInUrl: null }, { headers: NO_STORE }));
      }
    },
  };
}

function signInRoutes(options: SignInRoutesOptions, signIn: SignInConfig, sessions: Sessions): Plugin {
  const { db, guard, log } = options;
  const party: RelyingParty = relyingParty(signIn, options.outbound);
  const configuration = () =>
    party.configuration().catch((error: unknown) => {
      log({
        time: new Date().toISOString(),
        level: "error",
        msg: "the identity provider could not be reached",
        error: String((error as Error)?.message ?? error),
      });
      throw new Unreachable();
    });
  // OIDC_ISSUER's subjects are the actors of what people do, as its access tokens' are; none may pose
  // as a further issuer's (`<issuer>#<sub>`).
  const furtherPrefixes = options.accessTokens.issuers.slice(1).map((listed) => `${listed.issuer}#`);
  const guarded = <T>(source: AddressSource, work: () => Promise<T>, failed?: (error: unknown) => boolean) =>
    guard ? guard(source, work, failed) : work();

  async function login(request: Request, url: URL): Promise<Response> {
    const secure = sessions.secure(url);
    const base = sessions.baseOf(url);
    const bindingName = cookieName(BINDING_COOKIE, secure);
    // One binding per browser, kept across its sign-ins, so two tabs signing in at once both succeed.
    const held = readCookie(request.headers.get("cookie"), bindingName);
    const binding = held && isSecretShaped(held) ? held : newSecret();
    const state = client.randomState();
    const nonce = client.randomNonce();
    const codeVerifier = client.randomPKCECodeVerifier();
    const oidc = await configuration();
    const now = Date.now();
    await saveAttempt(
      db,
      {
        stateHash: hashSecret(state),
        bindingHash: hashSecret(binding),
        nonce,
        codeVerifier,
        returnTo: safeReturnTo(url.searchParams.get("returnTo")),
        expiresAt: new Date(now + ATTEMPT_TTL_MS),
      },
      new Date(now),
    );
    const authorization = client.buildAuthorizationUrl(oidc, {
      redirect_uri: `${base}${CALLBACK_PATH}`,
      scope: signIn.scopes,
      state,
      nonce,
      code_challenge: await client.calculatePKCECodeChallenge(codeVerifier),
      code_challenge_method: "S256",
    });
    return redirect(302, authorization.href, [setCookie(bindingName, binding, secure, ATTEMPT_TTL_MS / 1000)]);
  }

  async function callback(request: Request, url: URL, source: AddressSource): Promise<Response> {
    const secure = sessions.secure(url);
    const base = sessions.baseOf(url);
    const cookies = request.headers.get("cookie");
    const state = url.searchParams.get("state");
    const signedIn = await guarded(
      source,
      async () => {
        if (!state) throw refused("The answer of the identity provider carries no state");
        const attempt = await takeAttempt(db, hashSecret(state));
        if (!attempt || attempt.expiresAt.getTime() <= Date.now()) {
          throw refused("This sign-in is unknown, was already used or has expired");
        }
        const binding = readCookie(cookies, cookieName(BINDING_COOKIE, secure));
        if (!binding || hashSecret(binding) !== attempt.bindingHash) {
          throw refused("This sign-in was started in another browser");
        }
        const oidc = await configuration();
        let tokens: Awaited<ReturnType<typeof client.authorizationCodeGrant>>;
        try {
          // The answer as the identity provider addressed it: the redirect URI, then its parameters.
          tokens = await client.authorizationCodeGrant(oidc, new URL(`${base}${CALLBACK_PATH}${url.search}`), {
            expectedState: state,
            expectedNonce: attempt.nonce,
            pkceCodeVerifier: attempt.codeVerifier,
            idTokenExpected: true,
          });
        } catch (error) {
          if (error instanceof Unreachable || unreachable(error)) throw new Unreachable();
          const reason = error instanceof client.AuthorizationResponseError ? error.error : "its tokens were refused";
          log({
            time: new Date().toISOString(),
            level: "info",
            msg: "a sign-in was refused",
            error: String((error as Error)?.message ?? error),
          });
          throw refused(`The identity provider's answer was refused (${reason})`);
        }
        const claims = tokens.claims();
        const subject = claims?.sub;
        if (
          !claims ||
          typeof subject !== "string" ||
          subject === "" ||
          !isStorableText(subject) ||
          !fits(subject, MAX_SUBJECT) ||
          furtherPrefixes.some((prefix) => subject.startsWith(prefix))
        ) {
          throw refused("The identity provider named nobody this registry can record");
        }
        // A browser that held a session hands it over: the old one ends with the new one's start.
        const previous = sessions.secretIn(cookies, url);
        if (previous && isSecretShaped(previous)) await endSession(db, hashSecret(previous), new Date());
        const secret = newSecret();
        await createSession(db, {
          hash: hashSecret(secret),
          subject,
          name: displayName(claims),
          roles: rolesText(claimRoles(claims, options.accessTokens)),
          idToken: tokens.id_token ?? null,
          ...newSessionTimes(Date.now(), signIn.idleMinutes, signIn.maxHours),
        });
        return { secret, returnTo: safeReturnTo(attempt.returnTo) };
      },
      (error) => codeOf(error) === "BAD_USER_INPUT",
    );
    return redirect(303, signedIn.returnTo, [
      setCookie(cookieName(SESSION_COOKIE, secure), signedIn.secret, secure, signIn.maxHours * 3600),
    ]);
  }

  async function logout(request: Request, url: URL): Promise<Response> {
    const secure = sessions.secure(url);
    const base = sessions.baseOf(url);
    // A sign-out is a write like any other the cookie makes: from the registry's own pages only.
    if (request.headers.get("origin") !== sessions.originOf(url)) {
      return problemResponse(apiError("FORBIDDEN", "Sign out from the registry's own pages"), NO_STORE);
    }
    const secret = sessions.secretIn(request.headers.get("cookie"), url);
    const ended = secret && isSecretShaped(secret) ? await endSession(db, hashSecret(secret), new Date()) : undefined;
    let location = "/";
    if (ended?.idToken) {
      // The identity provider's own session ends too, where it offers RP-initiated logout.
      try {
        const oidc = await configuration();
        if (oidc.serverMetadata().end_session_endpoint) {
          location = client.buildEndSessionUrl(oidc, {
            id_token_hint: ended.idToken,
            post_logout_redirect_uri: `${base}/`,
          }).href;
        }
      } catch (error) {
        if (!(error instanceof Unreachable)) throw error;
      }
    }
    return redirect(303, location, [clearCookie(cookieName(SESSION_COOKIE, secure), secure)]);
  }

  async function session(request: Request, url: URL, source: AddressSource): Promise<Response> {
    const secure = sessions.secure(url);
    const secret = sessions.secretIn(request.headers.get("cookie"), url);
    const signedOut = { signedIn: false, signInUrl: LOGIN_PATH };
    if (secret === undefined) return Response.json(signedOut, { headers: NO_STORE });
    try {
      const live = await guarded(source, async () => {
        const found = await sessions.resolve(secret);
        if (!found) throw unauthenticated();
        return found;
      });
      return Response.json(
        {
          signedIn: true,
          subject: live.subject,
          name: live.name,
          roles: live.roles,
          expiresAt: live.expiresAt.toISOString(),
          idleExpiresAt: live.idleExpiresAt.toISOString(),
        },
        { headers: NO_STORE },
      );
    } catch (error) {
      if (codeOf(error) !== "UNAUTHENTICATED") throw error;
      return Response.json(signedOut, {
        headers: { ...NO_STORE, "Set-Cookie": clearCookie(cookieName(SESSION_COOKIE, secure), secure) },
      });
    }
  }

  const routes: Record<string, { method: string; answer: typeof session }> = {
    [LOGIN_PATH]: { method: "GET", answer: login },
    [CALLBACK_PATH]: { method: "GET", answer: callback },
    "/auth/logout": { method: "POST", answer: logout },
    "/auth/session": { method: "GET", answer: session },
  };

  return {
    async onRequest({ request, url, serverContext, endResponse }) {
      if (!url.pathname.startsWith("/auth/")) return;
      const route = Object.hasOwn(routes, url.pathname) ? routes[url.pathname] : undefined;
      if (!route) return;
      if (request.method !== route.method) {
        return endResponse(
          problemResponse(apiError("METHOD_NOT_ALLOWED", `${url.pathname} takes ${route.method} only`), {
            Allow: route.method,
          }),
        );
      }
      const { req } = serverContext as { req?: AddressSource["req"] };
      const source: AddressSource = req ? { request, req } : { request };
      try {
        endResponse(await route.answer(request, url, source));
      } catch (error) {
        if (error instanceof Unreachable) return endResponse(unreachableResponse());
        if (codeOf(error) === "INTERNAL") {
          log({
            time: new Date().toISOString(),
            level: "error",
            msg: "internal error",
            error: String((error as Error)?.stack ?? error),
          });
        }
        endResponse(problemResponse(error, NO_STORE));
      }
    },
  };
}
