/**
 * The registry as an OpenID Connect relying party, with openid-client: the issuer's configuration
 * (its discovery document) fetched when first needed and again after an hour, every request it makes
 * (discovery, token endpoint, JWKS) sent through the outbound door. The issuer is the operator's,
 * not a caller's, but the door's checks (https, public addresses, deadline, size cap) cost nothing
 * here and keep one way out of the process. Plain http is allowed only where the configuration allows
 * an http issuer: outside production, for tests (OUTBOUND_TEST_HOSTS).
 */
import * as client from "openid-client";
import type { SignInConfig } from "../config.ts";
import type { Outbound } from "../outbound/outbound.ts";

/** How long a discovered configuration is used before it is fetched again. */
const CONFIGURATION_MAX_AGE_MS = 60 * 60_000;

/** Statuses whose answers have no body (the fetch API refuses one). */
const NO_BODY = new Set([101, 204, 205, 304]);

/**
 * openid-client's `fetch`, made by the door: GET (discovery, JWKS) and POST of a form (the token
 * endpoint). Nothing else is asked for: the userinfo endpoint is not used (roles come from the ID
 * token), so a GET carrying a credential is refused rather than sent without it.
 */
export function doorFetch(outbound: Outbound): client.CustomFetch {
  return async (url, options) => {
    const headers = options.headers;
    let answer: Awaited<ReturnType<Outbound["get"]>>;
    if (options.method === "GET" && headers.authorization === undefined && headers.dpop === undefined) {
      answer = await outbound.get(url, headers.accept === undefined ? {} : { accept: headers.accept });
    } else if (options.method === "POST" && options.body instanceof URLSearchParams) {
      answer = await outbound.post(url, options.body.toString(), headers);
    } else {
      throw new Error(`the sign-in makes no ${options.method} request of this kind (${new URL(url).pathname})`);
    }
    return new Response(NO_BODY.has(answer.status) ? null : answer.body, {
      status: answer.status,
      headers: answer.headers,
    });
  };
}

export interface RelyingParty {
  /** The issuer's configuration for this client; rejects when the issuer cannot be reached (tried again next time). */
  configuration(): Promise<client.Configuration>;
}

export function relyingParty(config: SignInConfig, outbound: Outbound): RelyingParty {
  const fetch = doorFetch(outbound);
  const insecure = new URL(config.issuer).protocol === "http:";
  let current: { at: number; configuration: Promise<client.Configuration> } | undefined;
  return {
    configuration() {
      if (current && Date.now() - current.at < CONFIGURATION_MAX_AGE_MS) return current.configuration;
      const fetched = {
        at: Date.now(),
        // A secret: client_secret_post (the door sends no Authorization of its own). None: a public
        // client, PKCE alone.
        configuration: client.discovery(new URL(config.issuer), config.clientId, config.clientSecret, undefined, {
          [client.customFetch]: fetch,
          execute: insecure ? [client.allowInsecureRequests] : [],
        }),
      };
      current = fetched;
      fetched.configuration.catch(() => {
        if (current === fetched) current = undefined;
      });
      return fetched.configuration;
    },
  };
}
