/**
 * People sign in through the front door, against a real OpenID provider (tests/auth/idp.ts) whose own
 * login page the test goes through over HTTP: the authorization code flow with PKCE, a session in the
 * database behind a cookie (`__Host-` and Secure over https), the cookie as a credential on every door
 * (reads, the queue, an admin's API key), the CSRF rule of cookie writes, sign-out at the registry and
 * at the IdP, idle and absolute expiry, two replicas sharing sessions, and each hostile input (a
 * replayed cookie, a write from another origin, a tampered state or nonce, one state used twice, an
 * open redirect) refused with nothing changed. Dead cookies count toward the address's limit of
 * failed authentications.
 */
import { describe, expect, test } from "@jest/globals";
import { hashSecret, safeReturnTo } from "../../src/signin/signin.rules.ts";
import { secretOf, startIdp, testHosts } from "../auth/idp.ts";
import {
  type App,
  appWith,
  call,
  closeAfterAll,
  db,
  expectProblem,
  intake,
  listen,
  app as plainApp,
  reviewerToken,
} from "../helpers.ts";
import { type Hop, loopbackRoute, registryRoute, UserAgent } from "./user-agent.ts";

const AUDIENCE = "https://registry.test/api";
const HTTPS = "https://registry.test";
const HTTP = "http://registry.test";
const IDP = "http://idp.test";

const idp = await startIdp({
  issuer: IDP,
  audiences: [AUDIENCE],
  clients: {},
  users: {
    reader: { groups: ["registry-readers"], name: "Rae Reader" },
    reviewer: { groups: ["registry-reviewers", "unrelated-group"], name: "Rita Reviewer" },
    admin: { groups: ["registry-admins"], name: "Ada Admin" },
    nobody: { groups: ["unrelated-group"], name: "No Body" },
  },
  webClients: {
    "registry-web": {
      redirectUris: [`${HTTPS}/auth/callback`, `${HTTP}/auth/callback`],
      postLogoutRedirectUris: [`${HTTPS}/`, `${HTTP}/`],
    },
    "registry-public": {
      public: true,
      redirectUris: [`${HTTPS}/auth/callback`],
      postLogoutRedirectUris: [`${HTTPS}/`],
    },
  },
});
closeAfterAll(() => idp.stop());

const signInEnv = (extra: Record<string, string> = {}) => ({
  OIDC_ISSUER: idp.issuer,
  OIDC_AUDIENCE: AUDIENCE,
  OIDC_CLIENT_ID: "registry-web",
  OIDC_CLIENT_SECRET: secretOf("registry-web"),
  OUTBOUND_TEST_HOSTS: testHosts(idp),
  OIDC_ROLES_CLAIM: "groups",
  OIDC_ROLE_MAP: "registry-readers=reader,registry-reviewers=reviewer,registry-admins=admin",
  ...extra,
});

/** Reached over https (PUBLIC_URL), everything needing a credential. */
const secureApp = appWith(signInEnv({ PUBLIC_URL: HTTPS, READ_ACCESS: "authenticated" }));
/** Reached over plain http, its origin taken from the request (no PUBLIC_URL). */
const plainHttpApp = appWith(signInEnv({ READ_ACCESS: "authenticated" }));

const SESSION = "__Host-registry_session";

/** A user agent that reaches the registry (this app, over https unless told) and the IdP. */
function agent(registry: App = secureApp, remoteAddress?: string): UserAgent {
  return new UserAgent({
    "registry.test": registryRoute(registry, remoteAddress),
    "idp.test": loopbackRoute(idp.port),
  });
}

/**
 * Starts a sign-in at the registry and goes through the IdP's login page as `user`; answers the
 * callback URL the IdP sent the browser to (not requested yet) and the authorization request.
 */
async function toCallback(ua: UserAgent, user: string, options: { base?: string; returnTo?: string } = {}) {
  const base = options.base ?? HTTPS;
  const query = options.returnTo === undefined ? "" : `?returnTo=${encodeURIComponent(options.returnTo)}`;
  const start = await ua.request("GET", `${base}/auth/login${query}`);
  expect(start.status).toBe(302);
  const authorization = new URL(start.location as string);
  const page = await ua.follow(authorization.href);
  expect(page.status).toBe(200);
  expect(page.text).toContain('name="login"');
  const action = /<form method="post" action="([^"]+)"/.exec(page.text)?.[1] as string;
  const loggedIn = await ua.request("POST", new URL(action, page.url).href, { form: { login: user } });
  expect(loggedIn.status).toBe(303);
  const back = await ua.follow(loggedIn.location as string, (next) => next.host === "registry.test");
  const callback = new URL(back.location as string);
  expect(callback.pathname).toBe("/auth/callback");
  return { callback: callback.href, authorization, start };
}

/** Signs `user` in; answers the callback's answer (303 to returnTo with the cookie set). */
async function signIn(ua: UserAgent, user: string, options: { base?: string; returnTo?: string } = {}): Promise<Hop> {
  const { callback } = await toCallback(ua, user, options);
  return ua.request("GET", callback);
}

/** A request to the registry carrying this agent's cookies (and an Origin when told). */
function withCookies(
  ua: UserAgent,
  method: string,
  path: string,
  options: { origin?: string; body?: unknown; base?: string; app?: App } = {},
) {
  const base = options.base ?? HTTPS;
  const cookie = ua.cookieHeader(new URL(`${base}${path}`));
  return callAt(base, method, path, {
    app: options.app ?? secureApp,
    headers: { ...(cookie ? { cookie } : {}), ...(options.origin ? { origin: options.origin } : {}) },
    ...(options.body === undefined ? {} : { body: options.body }),
  });
}

/** `call`, at another base than http://registry.test. */
async function callAt(
  base: string,
  method: string,
  path: string,
  options: { app: App; headers?: Record<string, string>; body?: unknown; serverContext?: Record<string, unknown> },
) {
  const headers: Record<string, string> = { ...options.headers };
  let body: string | undefined;
  if (options.body !== undefined) {
    body = JSON.stringify(options.body);
    headers["content-type"] = "application/json";
  }
  const init = { method, headers, ...(body === undefined ? {} : { body }) };
  const res = options.serverContext
    ? await options.app.fetch(`${base}${path}`, init, options.serverContext)
    : await options.app.fetch(`${base}${path}`, init);
  const text = await res.text();
  let parsed: any = text;
  try {
    parsed = JSON.parse(text);
  } catch {}
  return { status: res.status, headers: res.headers, body: parsed, text };
}

const sessionCount = () => db.session.count();
const liveSessionOf = async (ua: UserAgent) => {
  const secret = ua.cookie("registry.test", SESSION) ?? ua.cookie("registry.test", "registry_session");
  return secret ? db.session.findUnique({ where: { hash: hashSecret(secret) } }) : null;
};

describe("signing in", () => {
  test("the reviewer over https: code flow with PKCE, a __Host- cookie, then the queue with only the cookie", async () => {
    const ua = agent();
    const { callback, authorization, start } = await toCallback(ua, "reviewer", { returnTo: "/reviews" });
    // The authorization request: code, PKCE S256, state, nonce, the configured scopes, our redirect URI.
    expect(`${authorization.origin}${authorization.pathname}`).toBe(`${IDP}/auth`);
    const asked = Object.fromEntries(authorization.searchParams);
    expect(asked).toMatchObject({
      response_type: "code",
      client_id: "registry-web",
      redirect_uri: `${HTTPS}/auth/callback`,
      scope: "openid profile email",
      code_challenge_method: "S256",
    });
    for (const key of ["state", "nonce", "code_challenge"]) expect(asked[key]).toMatch(/^[\w-]{32,}$/);
    expect(start.headers.get("cache-control")).toBe("no-store");
    // The sign-in under way is kept by the state's hash, never the state itself.
    const attempt = await db.signInAttempt.findUnique({ where: { stateHash: hashSecret(asked.state as string) } });
    expect(attempt).toMatchObject({ returnTo: "/reviews" });
    expect(JSON.stringify(attempt)).not.toContain(asked.state as string);

    const before = await sessionCount();
    const answer = await ua.request("GET", callback);
    expect(answer.status).toBe(303);
    expect(answer.location).toBe(`${HTTPS}/reviews`);
    expect(answer.headers.get("location")).toBe("/reviews");
    const cookie = answer.headers.getSetCookie().find((c) => c.startsWith(`${SESSION}=`)) as string;
    expect(cookie).toMatch(
      new RegExp(`^${SESSION}=[\\w-]{43}; Path=/; Max-Age=43200; HttpOnly; SameSite=Lax; Secure$`),
    );
    expect(await sessionCount()).toBe(before + 1);
    // The attempt is gone; the session keeps only the secret's hash.
    expect(await db.signInAttempt.count({ where: { stateHash: hashSecret(asked.state as string) } })).toBe(0);
    const secret = ua.cookie("registry.test", SESSION) as string;
    const row = await db.session.findUniqueOrThrow({ where: { hash: hashSecret(secret) } });
    expect(row).toMatchObject({ subject: "reviewer", name: "Rita Reviewer", roles: "reviewer", endedAt: null });
    expect(row.idToken).toMatch(/^ey/);
    expect(JSON.stringify(row)).not.toContain(secret);

    const queue = await withCookies(ua, "GET", "/api/v1/reviews/queue");
    expect(queue.status).toBe(200);
    expect(Array.isArray(queue.body.items)).toBe(true);
    // Answers to a cookie are private, as answers to Authorization are.
    const read = await withCookies(ua, "GET", "/api/v1/providers");
    expect(read.status).toBe(200);
    expect(read.headers.get("cache-control")).toBe("private, no-cache");

    const who = await withCookies(ua, "GET", "/auth/session");
    expect(who.status).toBe(200);
    expect(who.headers.get("cache-control")).toBe("no-store");
    expect(who.body).toMatchObject({ signedIn: true, subject: "reviewer", name: "Rita Reviewer", roles: ["reviewer"] });
    expect(Date.parse(who.body.expiresAt)).toBe(row.expiresAt.getTime());
    // Without the cookie: nobody, and where to sign in.
    const nobody = await callAt(HTTPS, "GET", "/auth/session", { app: secureApp });
    expect(nobody.body).toEqual({ signedIn: false, signInUrl: "/auth/login" });
    expectProblem(await callAt(HTTPS, "GET", "/api/v1/reviews/queue", { app: secureApp }), 401, "UNAUTHENTICATED");
  });

  test("over plain http (no PUBLIC_URL) the cookie has no __Host- prefix and no Secure", async () => {
    const ua = agent(plainHttpApp);
    const answer = await signIn(ua, "reviewer", { base: HTTP, returnTo: "/webhooks" });
    expect(answer.status).toBe(303);
    expect(answer.headers.get("location")).toBe("/webhooks");
    const cookies = answer.headers.getSetCookie();
    expect(cookies.some((c) => c.startsWith("__Host-"))).toBe(false);
    expect(cookies.find((c) => c.startsWith("registry_session="))).toMatch(
      /^registry_session=[\w-]{43}; Path=\/; Max-Age=43200; HttpOnly; SameSite=Lax$/,
    );
    const queue = await withCookies(ua, "GET", "/api/v1/reviews/queue", { base: HTTP, app: plainHttpApp });
    expect(queue.status).toBe(200);
    // The https app does not read a cookie of the http name.
    const secret = ua.cookie("registry.test", "registry_session") as string;
    expectProblem(
      await callAt(HTTPS, "GET", "/api/v1/reviews/queue", {
        app: secureApp,
        headers: { cookie: `registry_session=${secret}` },
      }),
      401,
      "UNAUTHENTICATED",
    );
  });

  test("a public client (no secret) signs in with PKCE alone", async () => {
    const publicApp = appWith(
      signInEnv({ PUBLIC_URL: HTTPS, OIDC_CLIENT_ID: "registry-public", OIDC_CLIENT_SECRET: "" }),
    );
    const ua = agent(publicApp);
    const answer = await signIn(ua, "admin");
    expect(answer.status).toBe(303);
    expect(answer.headers.get("location")).toBe("/");
    const who = await withCookies(ua, "GET", "/auth/session", { app: publicApp });
    expect(who.body).toMatchObject({ signedIn: true, subject: "admin", roles: ["admin"] });
  });

  test("the reader reads under READ_ACCESS=authenticated, but not the queue", async () => {
    const ua = agent();
    expect((await signIn(ua, "reader")).status).toBe(303);
    expect((await withCookies(ua, "GET", "/api/v1/providers")).status).toBe(200);
    const graphql = await withCookies(ua, "POST", "/graphql", {
      origin: HTTPS,
      body: { query: "{ providers { items { providerCode } } }" },
    });
    expect(graphql.status).toBe(200);
    expect(graphql.body.errors).toBeUndefined();
    expectProblem(await withCookies(ua, "GET", "/api/v1/reviews/queue"), 403, "FORBIDDEN");
  });

  test("a person with no role is signed in but anonymous: 403 insufficient_scope where reads need a credential", async () => {
    const ua = agent();
    expect((await signIn(ua, "nobody")).status).toBe(303);
    expect((await withCookies(ua, "GET", "/auth/session")).body).toMatchObject({
      signedIn: true,
      subject: "nobody",
      roles: [],
    });
    const refused = await withCookies(ua, "GET", "/api/v1/providers");
    expectProblem(refused, 403, "FORBIDDEN");
    expect(refused.headers.get("www-authenticate")).toContain('error="insufficient_scope"');
    // Where anyone reads, the cookie takes nothing away.
    const open = appWith(signInEnv({ PUBLIC_URL: HTTPS }));
    expect((await withCookies(ua, "GET", "/api/v1/providers", { app: open })).status).toBe(200);
    expectProblem(await withCookies(ua, "GET", "/api/v1/reviews/queue", { app: open }), 401, "UNAUTHENTICATED");
  });

  test("returnTo that would leave the registry comes back to /", async () => {
    expect(safeReturnTo("/reviews?tab=open#x")).toBe("/reviews?tab=open#x");
    for (const hostile of [
      "//evil.example",
      "https://evil.example/x",
      "/\\evil.example",
      "javascript:alert(1)",
      "/\t/evil.example",
      "/\n/evil.example",
      "\\\\evil.example",
      "evil.example",
      "",
    ]) {
      expect([hostile, safeReturnTo(hostile)]).toEqual([hostile, "/"]);
    }
    for (const hostile of ["//evil.example", "https://evil.example/x", "/\\evil.example", "javascript:alert(1)"]) {
      const answer = await signIn(agent(), "reader", { returnTo: hostile });
      expect([hostile, answer.status, answer.headers.get("location")]).toEqual([hostile, 303, "/"]);
    }
  });

  test("an IdP started without a name is its loopback address, as a browser reaches it", async () => {
    const loopback = await startIdp({
      audiences: [AUDIENCE],
      clients: {},
      users: { reviewer: { groups: ["registry-reviewers"] } },
      webClients: {
        "registry-web": { redirectUris: [`${HTTPS}/auth/callback`], postLogoutRedirectUris: [`${HTTPS}/`] },
      },
    });
    closeAfterAll(() => loopback.stop());
    expect(loopback.issuer).toBe(`http://127.0.0.1:${loopback.port}`);
    const viaLoopback = appWith(
      signInEnv({ PUBLIC_URL: HTTPS, OIDC_ISSUER: loopback.issuer, OUTBOUND_TEST_HOSTS: testHosts(loopback) }),
    );
    const ua = new UserAgent({
      "registry.test": registryRoute(viaLoopback),
      [`127.0.0.1:${loopback.port}`]: loopbackRoute(loopback.port),
    });
    const start = await ua.request("GET", `${HTTPS}/auth/login`);
    expect(start.location?.startsWith(`${loopback.issuer}/auth?`)).toBe(true);
    const page = await ua.follow(start.location as string);
    const action = /<form method="post" action="([^"]+)"/.exec(page.text)?.[1] as string;
    const unknown = await ua.request("POST", new URL(action, page.url).href, { form: { login: "mallory" } });
    expect([unknown.status, unknown.text.includes("There is no user named &quot;mallory&quot;")]).toEqual([200, true]);
    const loggedIn = await ua.request("POST", new URL(action, page.url).href, { form: { login: "reviewer" } });
    const back = await ua.follow(loggedIn.location as string, (next) => next.host === "registry.test");
    const answer = await ua.request("GET", back.location as string);
    expect([answer.status, answer.headers.get("location")]).toEqual([303, "/"]);
    expect((await withCookies(ua, "GET", "/api/v1/reviews/queue", { app: viaLoopback })).status).toBe(200);
  });

  test("sign-in is off without OIDC_CLIENT_ID: /auth/session says so, /auth/login is not there", async () => {
    const off = await call("GET", "/auth/session", { app: plainApp });
    expect(off.status).toBe(200);
    expect(off.headers.get("cache-control")).toBe("no-store");
    expect(off.body).toEqual({ signedIn: false, signInUrl: null });
    expect((await call("GET", "/auth/login", { app: plainApp })).status).toBe(404);
  });
});

describe("writes with the cookie", () => {
  const keyCount = () => db.apiKey.count();

  test("the admin makes an API key from the registry's origin; from another origin or none, 403 and no key", async () => {
    const ua = agent();
    expect((await signIn(ua, "admin")).status).toBe(303);
    const made = await withCookies(ua, "POST", "/api/v1/api-keys", { origin: HTTPS, body: { name: "By cookie" } });
    expect(made.status).toBe(201);
    expect(made.body.apiKey).toMatchObject({ name: "By cookie", createdBy: "reviewer:admin", active: true });

    const before = await keyCount();
    const evil = await withCookies(ua, "POST", "/api/v1/api-keys", {
      origin: "https://evil.example",
      body: { name: "Evil" },
    });
    expectProblem(evil, 403, "FORBIDDEN");
    expect(evil.body.detail).toContain("Origin");
    expectProblem(await withCookies(ua, "POST", "/api/v1/api-keys", { body: { name: "No origin" } }), 403, "FORBIDDEN");
    // The same origin over http is another origin.
    expectProblem(
      await withCookies(ua, "POST", "/api/v1/api-keys", { origin: HTTP, body: { name: "Downgraded" } }),
      403,
      "FORBIDDEN",
    );
    const graphql = await withCookies(ua, "POST", "/graphql", {
      origin: "https://evil.example",
      body: { query: 'mutation { createApiKey(name: "Evil") { secret } }' },
    });
    expect(graphql.status).toBe(403);
    expect(graphql.body.errors[0].extensions.code).toBe("FORBIDDEN");
    // A GET runs no mutation, cookie or not (SameSite=Lax sends the cookie on a link from anywhere).
    const byGet = await withCookies(
      ua,
      "GET",
      `/graphql?query=${encodeURIComponent('mutation { createApiKey(name: "Linked") { secret } }')}`,
    );
    expect(byGet.status).toBe(405);
    expect(await keyCount()).toBe(before);
  });

  test("Authorization takes precedence over the cookie, and is no cookie write", async () => {
    const ua = agent();
    expect((await signIn(ua, "reader")).status).toBe(303);
    const cookie = ua.cookieHeader(new URL(HTTPS)) as string;
    // A reviewer's token beside a reader's cookie: the token decides.
    const token = await reviewerToken("rv-beside-cookie");
    const queue = await callAt(HTTPS, "GET", "/api/v1/reviews/queue", {
      app: secureApp,
      headers: { cookie, authorization: `Bearer ${token}` },
    });
    expect(queue.status).toBe(200);
    // A bad token beside a live cookie is refused: the cookie does not rescue it.
    expectProblem(
      await callAt(HTTPS, "GET", "/api/v1/providers", {
        app: secureApp,
        headers: { cookie, authorization: "Bearer nonsense" },
      }),
      401,
      "UNAUTHENTICATED",
    );
    // A write made with a token needs no Origin, cookie or not.
    const agentAnswer = await intake();
    const assigned = await callAt(HTTPS, "POST", `/api/v1/reviews/${agentAnswer.reviewCode}/assign`, {
      app: secureApp,
      headers: { cookie, authorization: `Bearer ${token}` },
    });
    expect(assigned.status).toBe(200);
  });
});

describe("signing out", () => {
  test("ends the session everywhere, and the IdP's: the replayed cookie is a 401 that clears it", async () => {
    const ua = agent();
    expect((await signIn(ua, "reviewer")).status).toBe(303);
    const cookie = ua.cookieHeader(new URL(HTTPS)) as string;
    const row = await liveSessionOf(ua);
    expect(row?.endedAt).toBeNull();

    // From another origin: refused, still signed in.
    const forged = await withCookies(ua, "POST", "/auth/logout", { origin: "https://evil.example" });
    expectProblem(forged, 403, "FORBIDDEN");
    expect((await withCookies(ua, "GET", "/api/v1/reviews/queue")).status).toBe(200);

    const out = await ua.request("POST", `${HTTPS}/auth/logout`, { headers: { origin: HTTPS } });
    expect(out.status).toBe(303);
    expect(out.headers.getSetCookie()).toContain(`${SESSION}=; Path=/; Max-Age=0; HttpOnly; SameSite=Lax; Secure`);
    const end = new URL(out.location as string);
    expect(`${end.origin}${end.pathname}`).toBe(`${IDP}/session/end`);
    expect(end.searchParams.get("id_token_hint")).toBe(row?.idToken);
    expect(end.searchParams.get("post_logout_redirect_uri")).toBe(`${HTTPS}/`);
    expect((await db.session.findUniqueOrThrow({ where: { id: row?.id as number } })).endedAt).not.toBeNull();
    expect(ua.cookie("registry.test", SESSION)).toBeUndefined();

    // The IdP takes the hint: its page asks, and sends the browser back to the registry.
    const ask = await ua.request("GET", end.href);
    expect(ask.status).toBe(200);
    expect(ask.text).toContain('name="logout" value="yes"');
    const form = /<form[^>]*action="([^"]+)"[^>]*>([\s\S]*?)<\/form>/.exec(ask.text);
    const fields = Object.fromEntries(
      [...(form?.[2] ?? "").matchAll(/name="([^"]+)" value="([^"]*)"/g)].map((m) => [m[1], m[2]]),
    );
    const confirmed = await ua.request("POST", new URL(form?.[1] as string, ask.url).href, {
      form: { ...fields, logout: "yes" },
    });
    expect(confirmed.status).toBe(303);
    expect(confirmed.location).toBe(`${HTTPS}/`);

    // The old cookie, replayed: 401, cleared again, nothing readable.
    for (const path of ["/api/v1/reviews/queue", "/api/v1/providers"]) {
      const replayed = await callAt(HTTPS, "GET", path, { app: secureApp, headers: { cookie } });
      expectProblem(replayed, 401, "UNAUTHENTICATED");
      expect(replayed.headers.get("set-cookie")).toBe(`${SESSION}=; Path=/; Max-Age=0; HttpOnly; SameSite=Lax; Secure`);
    }
    const graphql = await callAt(HTTPS, "POST", "/graphql", {
      app: secureApp,
      headers: { cookie, origin: HTTPS },
      body: { query: "{ reviewQueue { items { reviewCode } } }" },
    });
    expect(graphql.status).toBe(401);
    expect(graphql.headers.get("set-cookie")).toContain(`${SESSION}=; Path=/; Max-Age=0`);
    const who = await callAt(HTTPS, "GET", "/auth/session", { app: secureApp, headers: { cookie } });
    expect(who.body).toEqual({ signedIn: false, signInUrl: "/auth/login" });
    expect(who.headers.get("set-cookie")).toContain("Max-Age=0");
    // Signing out again with it: nothing to end, home.
    const again = await callAt(HTTPS, "POST", "/auth/logout", { app: secureApp, headers: { cookie, origin: HTTPS } });
    expect([again.status, again.headers.get("location")]).toEqual([303, "/"]);
  });
});

describe("a hostile callback is refused and changes nothing", () => {
  test("a tampered state: 400, no session, no cookie; the real one still works", async () => {
    const ua = agent();
    const { callback } = await toCallback(ua, "admin");
    const before = await sessionCount();
    const tampered = new URL(callback);
    tampered.searchParams.set("state", `${tampered.searchParams.get("state")}x`);
    const answer = await ua.request("GET", tampered.href);
    expect(answer.status).toBe(400);
    expect(answer.headers.get("content-type")).toBe("application/problem+json");
    expect(JSON.parse(answer.text).detail).toMatch(/unknown, was already used or has expired.*Sign in again/);
    expect(answer.headers.getSetCookie().some((c) => c.includes("registry_session"))).toBe(false);
    const withoutState = new URL(callback);
    withoutState.searchParams.delete("state");
    expect((await ua.request("GET", withoutState.href)).status).toBe(400);
    expect(await sessionCount()).toBe(before);

    expect((await ua.request("GET", callback)).status).toBe(303);
    expect(await sessionCount()).toBe(before + 1);
  });

  test("a nonce that does not match the ID token's: 400, no session", async () => {
    const ua = agent();
    const { callback } = await toCallback(ua, "admin");
    const stateHash = hashSecret(new URL(callback).searchParams.get("state") as string);
    expect(
      (await db.signInAttempt.updateMany({ where: { stateHash }, data: { nonce: "not-the-nonce-sent" } })).count,
    ).toBe(1);
    const before = await sessionCount();
    const answer = await ua.request("GET", callback);
    expect(answer.status).toBe(400);
    expect(JSON.parse(answer.text).detail).toContain("The identity provider's answer was refused");
    expect(answer.headers.getSetCookie()).toEqual([]);
    expect(await sessionCount()).toBe(before);
  });

  test("a callback from another browser than the one that started the sign-in: 400, no session", async () => {
    const { callback } = await toCallback(agent(), "admin");
    const before = await sessionCount();
    const other = await agent().request("GET", callback);
    expect(other.status).toBe(400);
    expect(JSON.parse(other.text).detail).toContain("another browser");
    expect(await sessionCount()).toBe(before);
  });

  test("one state used twice at once: exactly one session", async () => {
    const ua = agent();
    const { callback } = await toCallback(ua, "reviewer");
    const before = await sessionCount();
    const answers = await Promise.all([
      ua.request("GET", callback),
      ua.request("GET", callback),
      ua.request("GET", callback),
    ]);
    expect(answers.map((a) => a.status).sort()).toEqual([303, 400, 400]);
    expect(await sessionCount()).toBe(before + 1);
  });
});

describe("expiry", () => {
  test("a session idle too long is over; one in use moves its idle expiry, at most once a minute", async () => {
    const ua = agent();
    expect((await signIn(ua, "reviewer")).status).toBe(303);
    const row = (await liveSessionOf(ua))!;
    // Used two minutes ago, idle expiry close: a request moves it an hour on.
    const now = Date.now();
    await db.session.update({
      where: { id: row.id },
      data: { lastSeenAt: new Date(now - 120_000), idleExpiresAt: new Date(now + 30_000) },
    });
    expect((await withCookies(ua, "GET", "/api/v1/reviews/queue")).status).toBe(200);
    const moved = await db.session.findUniqueOrThrow({ where: { id: row.id } });
    expect(moved.lastSeenAt.getTime()).toBeGreaterThanOrEqual(now);
    expect(moved.idleExpiresAt.getTime()).toBeGreaterThanOrEqual(now + 59 * 60_000);
    // Within the minute: not written again.
    expect((await withCookies(ua, "GET", "/api/v1/reviews/queue")).status).toBe(200);
    expect((await db.session.findUniqueOrThrow({ where: { id: row.id } })).lastSeenAt).toEqual(moved.lastSeenAt);

    await db.session.update({ where: { id: row.id }, data: { idleExpiresAt: new Date(Date.now() - 1000) } });
    const idle = await withCookies(ua, "GET", "/api/v1/reviews/queue");
    expectProblem(idle, 401, "UNAUTHENTICATED");
    expect(idle.headers.get("set-cookie")).toContain("Max-Age=0");
  });

  test("a session past its absolute expiry is over however busy, and the idle expiry never passes it", async () => {
    const ua = agent();
    expect((await signIn(ua, "reviewer")).status).toBe(303);
    const row = (await liveSessionOf(ua))!;
    expect(row.expiresAt.getTime() - row.createdAt.getTime()).toBe(12 * 3_600_000);
    expect(row.idleExpiresAt.getTime() - row.createdAt.getTime()).toBe(60 * 60_000);
    const now = Date.now();
    // Ten seconds left of its twelve hours, last seen two minutes ago: the idle expiry stops at the end.
    await db.session.update({
      where: { id: row.id },
      data: { lastSeenAt: new Date(now - 120_000), expiresAt: new Date(now + 10_000) },
    });
    expect((await withCookies(ua, "GET", "/api/v1/reviews/queue")).status).toBe(200);
    expect((await db.session.findUniqueOrThrow({ where: { id: row.id } })).idleExpiresAt.getTime()).toBe(now + 10_000);

    await db.session.update({ where: { id: row.id }, data: { expiresAt: new Date(Date.now() - 1000) } });
    expectProblem(await withCookies(ua, "GET", "/api/v1/reviews/queue"), 401, "UNAUTHENTICATED");
    expect((await withCookies(ua, "GET", "/auth/session")).body.signedIn).toBe(false);
  });

  test("SESSION_IDLE_MINUTES and SESSION_MAX_HOURS set the times and the cookie's lifetime", async () => {
    const short = appWith(signInEnv({ PUBLIC_URL: HTTPS, SESSION_IDLE_MINUTES: "5", SESSION_MAX_HOURS: "2" }));
    const ua = agent(short);
    const answer = await signIn(ua, "reader");
    expect(answer.headers.getSetCookie().find((c) => c.startsWith(SESSION))).toContain("Max-Age=7200;");
    const row = (await liveSessionOf(ua))!;
    expect(row.idleExpiresAt.getTime() - row.createdAt.getTime()).toBe(5 * 60_000);
    expect(row.expiresAt.getTime() - row.createdAt.getTime()).toBe(2 * 3_600_000);
  });
});

test("two replicas on one database: started on one, finished on the other, read and signed out across", async () => {
  const one = appWith(signInEnv({ PUBLIC_URL: HTTPS, READ_ACCESS: "authenticated" }));
  const two = appWith(signInEnv({ PUBLIC_URL: HTTPS, READ_ACCESS: "authenticated" }));
  const ua = agent(one);
  const { callback } = await toCallback(ua, "reviewer");
  ua.routes.set("registry.test", registryRoute(two));
  expect((await ua.request("GET", callback)).status).toBe(303);
  ua.routes.set("registry.test", registryRoute(one));
  expect((await withCookies(ua, "GET", "/api/v1/reviews/queue", { app: one })).status).toBe(200);
  expect((await withCookies(ua, "GET", "/api/v1/reviews/queue", { app: two })).status).toBe(200);
  const cookie = ua.cookieHeader(new URL(HTTPS)) as string;
  const out = await callAt(HTTPS, "POST", "/auth/logout", { app: two, headers: { cookie, origin: HTTPS } });
  expect(out.status).toBe(303);
  expectProblem(
    await callAt(HTTPS, "GET", "/api/v1/reviews/queue", { app: one, headers: { cookie } }),
    401,
    "UNAUTHENTICATED",
  );
});

test("dead cookies and refused callbacks count toward the address's failed authentications", async () => {
  const limited = appWith(
    signInEnv({
      PUBLIC_URL: HTTPS,
      READ_ACCESS: "authenticated",
      RATE_LIMITS: "on",
      REDIS_URL: "",
      TRUST_PROXY: "",
      RATE_LIMIT_AUTH_FAILURES_PER_15MIN: "3",
    }),
  );
  const from = (remoteAddress: string) => ({ serverContext: { req: { socket: { remoteAddress } } } });
  // A live session, signed in from elsewhere.
  const ua = agent(limited, "192.0.2.40");
  expect((await signIn(ua, "reviewer")).status).toBe(303);
  const live = ua.cookieHeader(new URL(HTTPS)) as string;

  const dead = [`${SESSION}=${"A".repeat(43)}`, `${SESSION}=not-even-shaped`];
  for (const cookie of dead) {
    expectProblem(
      await callAt(HTTPS, "GET", "/api/v1/providers", { app: limited, headers: { cookie }, ...from("192.0.2.41") }),
      401,
      "UNAUTHENTICATED",
    );
  }
  // A tampered callback from the same address is the third.
  const attacker = agent(limited, "192.0.2.41");
  const { callback } = await toCallback(attacker, "admin");
  const tampered = new URL(callback);
  tampered.searchParams.set("state", "forged-state-value");
  expect((await attacker.request("GET", tampered.href)).status).toBe(400);

  const limitedAnswer = await callAt(HTTPS, "GET", "/api/v1/reviews/queue", {
    app: limited,
    headers: { cookie: live },
    ...from("192.0.2.41"),
  });
  expectProblem(limitedAnswer, 429, "RATE_LIMITED");
  expect(
    (await callAt(HTTPS, "GET", "/auth/session", { app: limited, headers: { cookie: live }, ...from("192.0.2.41") }))
      .status,
  ).toBe(429);
  // Another address goes on with the same cookie.
  expect(
    (
      await callAt(HTTPS, "GET", "/api/v1/reviews/queue", {
        app: limited,
        headers: { cookie: live },
        ...from("192.0.2.42"),
      })
    ).status,
  ).toBe(200);
});

test("the response cache neither keeps nor serves answers to a session cookie", async () => {
  const cached = appWith(signInEnv({ RESPONSE_CACHE: "on" }));
  const ua = agent(cached);
  expect((await signIn(ua, "reviewer", { base: HTTP })).status).toBe(303);
  const secret = ua.cookie("registry.test", "registry_session") as string;
  // Private: only its owner and reviewers see it, in a list or by its code.
  const underReview = await intake({ visibility: "PRIVATE" });
  const server = await listen(cached);
  const list = (cookie?: string) =>
    fetch(`${server.url}/api/v1/providers?limit=100`, { headers: cookie ? { cookie } : {} }).then(async (res) => ({
      cacheControl: res.headers.get("cache-control"),
      codes: ((await res.json()) as { items: { providerCode: string }[] }).items.map((item) => item.providerCode),
    }));
  // Anonymous first (kept), then the reviewer (not served the anonymous answer), then anonymous again
  // (not served the reviewer's).
  expect((await list()).codes).not.toContain(underReview.providerCode);
  const reviewer = await list(`registry_session=${secret}`);
  expect(reviewer.codes).toContain(underReview.providerCode);
  expect(reviewer.cacheControl).toBe("private, no-cache");
  const anonymous = await list();
  expect(anonymous.codes).not.toContain(underReview.providerCode);
  expect(anonymous.cacheControl).toMatch(/^public/);
  // And through app.fetch (the plugin's side): the reviewer's profile read is never kept for anyone.
  const profile = await callAt(HTTP, "GET", `/api/v1/providers/${underReview.providerCode}`, {
    app: cached,
    headers: { cookie: `registry_session=${secret}` },
  });
  expect(profile.status).toBe(200);
  expect((await call("GET", `/api/v1/providers/${underReview.providerCode}`, { app: cached })).status).toBe(404);
});
