/**
 * A test identity provider: a real OpenID provider (oidc-provider) on a free loopback port, named by
 * an issuer the service reaches through OUTBOUND_TEST_HOSTS (`testHosts`). It issues JWT access
 * tokens by the client_credentials grant with resource indicators (RFC 8707), for the audiences it is
 * given, with the registry's scopes and each client's `groups` as a claim; it counts the requests it
 * serves by path, so fetches of the discovery document and the JWKS are counted, not timed. Keys can
 * be rotated (`rekey`) and the server stopped and started again on the same port.
 *
 * Built for more than the client_credentials grant: the authorization-code login (users in reader,
 * reviewer and admin groups) belongs here too, as `users` beside `clients`, the account lookup and the
 * interaction routes in `configuration`. Nothing here imports the app or the database, so the files
 * that need neither (tests/auth/access-token.test.ts) use it as well.
 */
import http from "node:http";
import type { AddressInfo, Socket } from "node:net";
import { exportJWK, generateKeyPair, type JWK, type JWTPayload, SignJWT } from "jose";
import Provider, { type Adapter, type AdapterPayload, type Configuration, errors as oidcErrors } from "oidc-provider";

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

export interface IdpOptions {
  /** `http://<host>`: the `iss` of its tokens and the issuer of its discovery document. */
  issuer: string;
  /** The resources it issues tokens for (their `aud`); the first is the default resource. */
  audiences: [string, ...string[]];
  clients: Record<string, ClientSpec>;
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

function configuration(options: IdpOptions, keys: SigningKey[]): Configuration {
  const { audiences, clients } = options;
  return {
    adapter: memoryAdapter,
    jwks: { keys: keys.map((key) => key.jwk) },
    clients: Object.keys(clients).map((id) => ({
      client_id: id,
      client_secret: secretOf(id),
      grant_types: ["client_credentials"],
      redirect_uris: [],
      response_types: [],
      id_token_signed_response_alg: "ES256",
    })),
    features: {
      devInteractions: { enabled: false },
      clientCredentials: { enabled: true },
      resourceIndicators: {
        enabled: true,
        defaultResource: () => audiences[0],
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
    ttl: { ClientCredentials: options.accessTokenTTL ?? 300 },
    cookies: { keys: ["cookie-key-of-the-test-idp-0123456789"] },
  };
}

/** Starts an IdP on 127.0.0.1, port 0. The caller stops it (`stop`). */
export async function startIdp(options: IdpOptions): Promise<Idp> {
  const { issuer } = options;
  const host = new URL(issuer).host;
  const keys = options.keys ?? [await signingKey(`${host}-1`)];
  let handle = new Provider(issuer, configuration(options, keys)).callback();
  const served: string[] = [];
  const server = http.createServer((req, res) => {
    served.push(req.url ?? "");
    handle(req, res);
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
      handle = new Provider(issuer, configuration(options, next)).callback();
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
