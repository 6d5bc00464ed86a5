/**
 * A test identity provider: a real OpenID provider (oidc-provider) on a free loopback port, named by
 * an issuer the service reaches through OUTBOUND_TEST_HOSTS (`testHosts`). It issues JWT access
 * tokens by the client_credentials grant with resource indicators (RFC 8707), for the audiences it is
 * given, with the registry's scopes and each client's `groups` as a claim; it counts the requests it
 * serves by path, so fetches of the discovery document and the JWKS are counted, not timed. Keys can
 * be rotated (`rekey`) and the server stopped and started again on the same port.
 *
 * People sign in too: `users` (each with `groups`, which the ID token carries under the `profile`
 * scope, as an IdP's "add to ID token" mapper does) and `webClients` (the authorization code flow,
 * PKCE required, RP-initiated logout). The IdP's login page is its own, plain HTML that a real
 * browser and a test's HTTP client go through alike:
 *
 * 1. The registry's `GET /auth/login?returnTo=/reviews` redirects (302) to `<issuer>/auth?…`, which
 *    redirects (303) to the login page, `<issuer>/interaction/<uid>` (cookies `_interaction*` set).
 * 2. The login page is one form: POST to `/interaction/<uid>/login`, one text field named `login`
 *    (label "User name": the user's name as `users` lists it, e.g. `reviewer`; no password), one
 *    button "Sign in" (`button[type=submit]`). An unknown name shows the form again, saying so.
 * 3. After it: 303 to `<issuer>/auth/<uid>`, 303 to the interaction again, where consent is given
 *    without asking (303), then 303 to the registry's `/auth/callback?code=…&state=…&iss=…`, which
 *    sets the session cookie and redirects (303) to `returnTo`.
 * 4. Signing out: the registry's sign-out answers 303 to `<issuer>/session/end?id_token_hint=…&
 *    post_logout_redirect_uri=…`, a page asking "Sign out of the test IdP?" with a button "Yes, sign
 *    me out" (`button[name=logout][value=yes]`), which posts to `/session/end/confirm` and is sent
 *    to the registry's `/`. A person never signed in at the IdP (or without a hint) gets the same page.
 *
 * A command-line tool signs people in as one of `nativeClients`: by the device flow (a code entered
 * at `<issuer>/device`, a confirmation, then the same login page; "Signed in" at the end), or by the
 * code flow with its redirect to a loopback port of its own.
 *
 * A browser reaches the issuer by its name (map `idp.test` to the loopback port, e.g. Chromium's
 * `--host-resolver-rules="MAP idp.test:80 127.0.0.1:<port>"`), or start it without `issuer`: it is
 * then `http://127.0.0.1:<port>` itself. Nothing here loads anything from another origin.
 *
 * Nothing here imports the app or the database, so the files that need neither
 * (tests/auth/access-token.test.ts) use it as well.
 */
import http from "node:http";
import type { AddressInfo, Socket } from "node:net";
import { exportJWK, generateKeyPair, type JWK, type JWTPayload, SignJWT } from "jose";
import Provider, {
  type Adapter,
  type AdapterPayload,
  type ClientMetadata,
  type Configuration,
  errors as oidcErrors,
} from "oidc-provider";

/** The scopes of the registry's protected resource metadata: what a token may ask for. */
export const SCOPES = "registry:read registry:review registry:admin";
export const DISCOVERY = "/.well-known/openid-configuration";
export const JWKS = "/jwks";
export const TOKEN = "/token";

export interface SigningKey {
  kid: string;
  privateKey: CryptoKey;
  publicKey: CryptoKey;
  /** The private JWK the provider is configured with (it publishes the public half). */
  jwk: JWK;
}

/** A fresh ES256 key pair under `kid`. */
export async function signingKey(kid: string): Promise<SigningKey> {
  const { privateKey, publicKey } = await generateKeyPair("ES256", { extractable: true });
  return { kid, privateKey, publicKey, jwk: { ...(await exportJWK(privateKey)), kid, alg: "ES256", use: "sig" } };
}

/** A client of the IdP: its id is the `sub` of its client_credentials tokens; its secret is `secretOf(id)`. */
export interface ClientSpec {
  /** The `groups` claim of its tokens. */
  groups: string[];
}

/** A person who signs in at the IdP: the login name is their `sub`. */
export interface UserSpec {
  /** The `groups` claim of their ID token. */
  groups: string[];
  name?: string;
  email?: string;
}

/**
 * A relying party of the authorization code flow (the registry): PKCE required; its secret is
 * `secretOf(id)` (client_secret_post) unless it is public (no secret, PKCE alone).
 */
export interface WebClientSpec {
  redirectUris: string[];
  postLogoutRedirectUris: string[];
  public?: boolean;
}

export interface IdpOptions {
  /**
   * `http://<host>`: the `iss` of its tokens and the issuer of its discovery document. Unset:
   * `http://127.0.0.1:<port>`, the port it listens on (what a browser reaches without host mapping).
   */
  issuer?: string;
  /** The resources it issues tokens for (their `aud`); the first is the default resource. */
  audiences: [string, ...string[]];
  clients: Record<string, ClientSpec>;
  /** People who sign in, by login name (the `sub` of their ID tokens). */
  users?: Record<string, UserSpec>;
  /** Clients of the authorization code flow, by client id. */
  webClients?: Record<string, WebClientSpec>;
  /**
   * Public native clients by client id (a command-line tool): the device flow (RFC 8628) and the code
   * flow with PKCE to `http://127.0.0.1:<any port>/callback` (RFC 8252 §7.3), as a person signs in.
   */
  nativeClients?: string[];
  /** Its signing keys, the first signing (default: one made for it, kid `<host>-1`). */
  keys?: SigningKey[];
  /** How long its access tokens live, in seconds (default 300). */
  accessTokenTTL?: number;
}

export interface Idp {
  issuer: string;
  /** The host of the issuer, as OUTBOUND_TEST_HOSTS names it. */
  host: string;
  port: number;
  /** The default resource: the `aud` of its tokens unless another is asked for. */
  audience: string;
  /** The keys it publishes now, the first signing. */
  keys: SigningKey[];
  /** The paths (with query) of the requests it served, in order. */
  served: string[];
  /** How many requests it served for `path`. */
  count(path: string): number;
  /** A real access token by the client_credentials grant; without `scope`, none is asked for. */
  token(clientId: string, scope?: string, resource?: string): Promise<string>;
  /** From now on the IdP publishes these keys and signs with the first: a key rotated in. */
  rekey(keys: SigningKey[]): void;
  /** Stops listening and closes its connections (again: nothing). */
  stop(): Promise<void>;
  /** Listens again, on the same port. */
  start(): Promise<void>;
  running(): boolean;
}

export const secretOf = (clientId: string) => `secret-of-${clientId}`;

/**
 * oidc-provider's storage in memory, one Map per model (the provider makes an adapter per model name):
 * its own says at every construction that it is for development only.
 */
function memoryAdapter(): Adapter {
  const rows = new Map<string, AdapterPayload>();
  const where = async (test: (row: AdapterPayload) => boolean) => [...rows.values()].find(test);
  return {
    upsert: async (id, payload) => void rows.set(id, payload),
    find: async (id) => rows.get(id),
    findByUserCode: (userCode) => where((row) => row.userCode === userCode),
    findByUid: (uid) => where((row) => row.uid === uid),
    consume: async (id) => {
      const row = rows.get(id);
      if (row) row.consumed = Math.floor(Date.now() / 1000);
    },
    destroy: async (id) => void rows.delete(id),
    revokeByGrantId: async (grantId) => {
      for (const [id, row] of rows) if (row.grantId === grantId) rows.delete(id);
    },
  };
}

/** A page of the IdP's own: no script, nothing from another origin. */
function page(title: string, body: string): string {
  return `<!DOCTYPE html><html lang="en"><head><meta charset="utf-8"><title>${title}</title></head><body><h1>${title}</h1>${body}</body></html>`;
}

const escapeHtml = (text: string) =>
  text.replace(
    /[&<>"']/g,
    (c) => ({ "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#39;" })[c] as string,
  );

function configuration(options: IdpOptions, issuer: string, keys: SigningKey[]): Configuration {
  const { audiences, clients } = options;
  const users = options.users ?? {};
  const webClients = options.webClients ?? {};
  return {
    adapter: memoryAdapter,
    jwks: { keys: keys.map((key) => key.jwk) },
    clients: [
      ...Object.keys(clients).map(
        (id): ClientMetadata => ({
          client_id: id,
          client_secret: secretOf(id),
          grant_types: ["client_credentials"],
          redirect_uris: [],
          response_types: [],
          id_token_signed_response_alg: "ES256",
        }),
      ),
      ...Object.entries(webClients).map(
        ([id, spec]): ClientMetadata => ({
          client_id: id,
          ...(spec.public
            ? { token_endpoint_auth_method: "none" }
            : { client_secret: secretOf(id), token_endpoint_auth_method: "client_secret_post" }),
          grant_types: ["authorization_code"],
          response_types: ["code"],
          redirect_uris: spec.redirectUris,
          post_logout_redirect_uris: spec.postLogoutRedirectUris,
          id_token_signed_response_alg: "ES256",
        }),
      ),
      ...(options.nativeClients ?? []).map(
        (id): ClientMetadata => ({
          client_id: id,
          application_type: "native",
          token_endpoint_auth_method: "none",
          grant_types: ["authorization_code", "urn:ietf:params:oauth:grant-type:device_code"],
          response_types: ["code"],
          redirect_uris: ["http://127.0.0.1/callback"],
          id_token_signed_response_alg: "ES256",
        }),
      ),
    ],
    findAccount: (_ctx, id) => {
      const user = Object.hasOwn(users, id) ? users[id] : undefined;
      if (!user) return undefined;
      return {
        accountId: id,
        claims: () => ({ sub: id, name: user.name ?? id, email: user.email ?? `${id}@idp.test`, groups: user.groups }),
      };
    },
    // `groups` under `profile`, and scope claims in the ID token itself: what Keycloak's "Add to ID
    // token", Okta's groups claim on the ID token and Entra's `groups` claim do.
    claims: { openid: ["sub"], profile: ["name", "groups"], email: ["email"] },
    conformIdTokenClaims: false,
    pkce: { required: () => true },
    interactions: { url: (_ctx, interaction) => `/interaction/${interaction.uid}` },
    renderError: (ctx, out) => {
      ctx.type = "html";
      ctx.body = page(
        "Something went wrong",
        Object.entries(out)
          .map(([key, value]) => `<p><strong>${escapeHtml(key)}</strong>: ${escapeHtml(String(value))}</p>`)
          .join(""),
      );
    },
    features: {
      devInteractions: { enabled: false },
      clientCredentials: { enabled: true },
      // The device flow's own pages, plain forms (the defaults load a web font from another origin):
      // the code is entered at /device, then the login page as in the code flow, then "Signed in".
      deviceFlow: {
        enabled: true,
        userCodeInputSource: (ctx, form, _out, error) => {
          ctx.body = page(
            "Enter the code shown on your device",
            `${error ? '<p role="alert">That code is not right.</p>' : ""}${form}<button type="submit" form="op.deviceInputForm">Continue</button>`,
          );
        },
        userCodeConfirmSource: (ctx, form, _client, _device, userCode) => {
          ctx.body = page(
            "Is this your device?",
            `<p>Code <code>${escapeHtml(userCode)}</code></p>${form}<button type="submit" form="op.deviceConfirmForm">Continue</button>`,
          );
        },
        successSource: (ctx) => {
          ctx.body = page("Signed in", "<p>You can go back to your device.</p>");
        },
      },
      rpInitiatedLogout: {
        enabled: true,
        logoutSource: (ctx, form) => {
          ctx.body = page(
            "Sign out of the test IdP?",
            `${form}<button type="submit" form="op.logoutForm" name="logout" value="yes">Yes, sign me out</button> <button type="submit" form="op.logoutForm">No, stay signed in</button>`,
          );
        },
        postLogoutSuccessSource: (ctx) => {
          ctx.body = page("Signed out", `<p>You are signed out of ${escapeHtml(issuer)}.</p>`);
        },
      },
      resourceIndicators: {
        enabled: true,
        // The client_credentials clients' tokens are for the registry's API by default; a person's
        // sign-in asks for no resource.
        defaultResource: (_ctx, client) =>
          client && Object.hasOwn(clients, client.clientId) ? audiences[0] : (undefined as unknown as string),
        useGrantedResource: () => true,
        getResourceServerInfo: (_ctx, resource) => {
          if (!audiences.includes(resource)) throw new oidcErrors.InvalidTarget();
          return {
            scope: SCOPES,
            audience: resource,
            accessTokenFormat: "jwt",
            accessTokenTTL: options.accessTokenTTL ?? 300,
            jwt: { sign: { alg: "ES256" } },
          };
        },
      },
    },
    extraTokenClaims: (_ctx, token) =>
      "clientId" in token && token.clientId ? { groups: clients[token.clientId]?.groups ?? [] } : undefined,
    enabledJWA: { idTokenSigningAlgValues: ["ES256"] },
    ttl: {
      ClientCredentials: options.accessTokenTTL ?? 300,
      AccessToken: 300,
      AuthorizationCode: 60,
      DeviceCode: 600,
      IdToken: 300,
      Interaction: 600,
      Session: 3600,
      Grant: 3600,
    },
    cookies: { keys: ["cookie-key-of-the-test-idp-0123456789"] },
  };
}

/** A request body, form-encoded. */
async function formOf(req: http.IncomingMessage): Promise<URLSearchParams> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  return new URLSearchParams(Buffer.concat(chunks).toString("utf8"));
}

function loginPage(uid: string, message?: string): string {
  return page(
    "Sign in to the test IdP",
    `${message ? `<p role="alert">${escapeHtml(message)}</p>` : ""}<form method="post" action="/interaction/${escapeHtml(uid)}/login"><label>User name <input type="text" name="login" autocomplete="username" autofocus required></label> <button type="submit">Sign in</button></form>`,
  );
}

/**
 * The login and consent of the authorization code flow: `GET /interaction/<uid>` shows the login
 * form, or gives consent to whatever the client asked for and goes on; `POST /interaction/<uid>/login`
 * signs the named user in.
 */
async function interaction(
  provider: Provider,
  users: Record<string, UserSpec>,
  req: http.IncomingMessage,
  res: http.ServerResponse,
  uid: string,
  login: boolean,
): Promise<void> {
  const details = await provider.interactionDetails(req, res);
  if (details.uid !== uid) throw new oidcErrors.SessionNotFound("interaction of another uid");
  if (login) {
    const name = (await formOf(req)).get("login")?.trim() ?? "";
    if (!Object.hasOwn(users, name)) {
      res.writeHead(200, { "content-type": "text/html; charset=utf-8" });
      res.end(loginPage(uid, `There is no user named "${name}" here.`));
      return;
    }
    await provider.interactionFinished(req, res, { login: { accountId: name } }, { mergeWithLastSubmission: false });
    return;
  }
  if (details.prompt.name === "login") {
    res.writeHead(200, { "content-type": "text/html; charset=utf-8" });
    res.end(loginPage(uid));
    return;
  }
  // Consent without asking: a test IdP's users agree to everything.
  const accountId = details.session?.accountId as string;
  const grant = details.grantId
    ? ((await provider.Grant.find(details.grantId)) as InstanceType<Provider["Grant"]>)
    : new provider.Grant({ accountId, clientId: String(details.params.client_id) });
  const missing = details.prompt.details as {
    missingOIDCScope?: string[];
    missingOIDCClaims?: string[];
    missingResourceScopes?: Record<string, string[]>;
  };
  if (missing.missingOIDCScope) grant.addOIDCScope(missing.missingOIDCScope.join(" "));
  if (missing.missingOIDCClaims) grant.addOIDCClaims(missing.missingOIDCClaims);
  for (const [resource, scopes] of Object.entries(missing.missingResourceScopes ?? {})) {
    grant.addResourceScope(resource, scopes.join(" "));
  }
  const grantId = await grant.save();
  await provider.interactionFinished(req, res, { consent: { grantId } }, { mergeWithLastSubmission: true });
}

/** Starts an IdP on 127.0.0.1, port 0. The caller stops it (`stop`). */
export async function startIdp(options: IdpOptions): Promise<Idp> {
  const users = options.users ?? {};
  let provider: Provider | undefined;
  let handle: ReturnType<Provider["callback"]> | undefined;
  const served: string[] = [];
  const server = http.createServer((req, res) => {
    served.push(req.url ?? "");
    const at = /^\/interaction\/([\w-]+)(\/login)?(?:\?|$)/.exec(req.url ?? "");
    if (at && provider) {
      const login = at[2] !== undefined;
      if ((login ? "POST" : "GET") !== req.method) {
        res.writeHead(405).end();
        return;
      }
      interaction(provider, users, req, res, at[1] as string, login).catch((error: Error) => {
        if (res.headersSent) return void res.end();
        res.writeHead(400, { "content-type": "text/html; charset=utf-8" });
        res.end(page("Sign-in failed", `<p>${escapeHtml(error.message)}</p>`));
      });
      return;
    }
    handle?.(req, res);
  });
  const sockets = new Set<Socket>();
  server.on("connection", (socket) => {
    sockets.add(socket);
    socket.once("close", () => sockets.delete(socket));
  });
  const listen = (port: number) =>
    new Promise<void>((resolve, reject) => {
      server.once("error", reject);
      server.listen(port, "127.0.0.1", () => {
        server.off("error", reject);
        resolve();
      });
    });
  await listen(0);
  const { port } = server.address() as AddressInfo;
  const issuer = options.issuer ?? `http://127.0.0.1:${port}`;
  const host = new URL(issuer).hostname;
  const keys = options.keys ?? [await signingKey(`${host}-1`)];
  const serve = (next: SigningKey[]) => {
    provider = new Provider(issuer, configuration(options, issuer, next));
    // A device polls every `interval` seconds, 5 when the answer names none (RFC 8628 §3.2): a second
    // keeps each device sign-in of a test from waiting five.
    provider.on("device_authorization.success", (ctx) => {
      (ctx.body as Record<string, unknown>).interval = 1;
    });
    handle = provider.callback();
  };
  serve(keys);
  const idp: Idp = {
    issuer,
    host,
    port,
    audience: options.audiences[0],
    keys,
    served,
    count: (path) => served.filter((p) => p === path).length,
    async token(clientId, scope, resource) {
      const response = await fetch(`http://127.0.0.1:${port}${TOKEN}`, {
        method: "POST",
        headers: {
          authorization: `Basic ${Buffer.from(`${clientId}:${secretOf(clientId)}`).toString("base64")}`,
          "content-type": "application/x-www-form-urlencoded",
        },
        body: new URLSearchParams({
          grant_type: "client_credentials",
          resource: resource ?? idp.audience,
          ...(scope ? { scope } : {}),
        }),
      });
      const body = (await response.json()) as { access_token?: string };
      if (response.status !== 200 || !body.access_token) {
        throw new Error(`${issuer} answered ${response.status}: ${JSON.stringify(body)}`);
      }
      return body.access_token;
    },
    rekey(next) {
      idp.keys = next;
      serve(next);
    },
    async stop() {
      if (!server.listening) return;
      const closed = new Promise((resolve) => server.close(resolve));
      for (const socket of sockets) socket.destroy();
      await closed;
    },
    start: () => listen(port),
    running: () => server.listening,
  };
  return idp;
}

/** OUTBOUND_TEST_HOSTS for these IdPs: their hosts sent to their loopback ports. */
export function testHosts(...idps: Idp[]): string {
  return idps.map((idp) => `${idp.host}=127.0.0.1:${idp.port}`).join(",");
}

/**
 * A token signed with `key` (by default the IdP's own signing key) as the IdP would make it: valid for
 * its default audience, with `registry:read`, for five minutes, unless `claims` say otherwise (a claim
 * set to undefined is left out).
 */
export function crafted(idp: Idp, claims: JWTPayload, key: SigningKey = idp.keys[0] as SigningKey): Promise<string> {
  const now = Math.floor(Date.now() / 1000);
  return new SignJWT({
    iss: idp.issuer,
    aud: idp.audience,
    sub: "crafted-client",
    scope: "registry:read",
    exp: now + 300,
    iat: now,
    ...claims,
  })
    .setProtectedHeader({ alg: "ES256", typ: "at+jwt", kid: key.kid })
    .sign(key.privateKey);
}
