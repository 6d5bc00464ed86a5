/**
 * Reviewer-JWT test helpers shared by the REST, GraphQL and unit tests: claims, signed and unsigned
 * tokens, key pairs, and a JWKS served by a real `node:http` server on 127.0.0.1. Nothing here opens
 * the database, so unit tests with their own configuration can use it too.
 */
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { exportJWK, generateKeyPair, type JWK, SignJWT } from "jose";
import type { Config } from "../src/config.ts";

export const encode = (s: string) => new TextEncoder().encode(s);

/**
 * A `claims(overrides)` maker for reviewer tokens with this subject, and the issuer and audience of
 * this configuration; in the claims it makes, a key set to undefined is left out of the token.
 */
export function claimsFor(
  subject: string,
  config: Pick<Config, "reviewerJwtIssuer" | "reviewerJwtAudience">,
): (overrides?: Record<string, unknown>) => Record<string, unknown> {
  return (overrides = {}) => {
    const now = Math.floor(Date.now() / 1000);
    const all: Record<string, unknown> = {
      sub: subject,
      iss: config.reviewerJwtIssuer,
      aud: config.reviewerJwtAudience,
      iat: now - 10,
      exp: now + 600,
      roles: ["reviewer"],
      ...overrides,
    };
    for (const key of Object.keys(all)) if (all[key] === undefined) delete all[key];
    return all;
  };
}

/** A signed token; HS256 unless the header names another `alg`. */
export function sign(
  payload: Record<string, unknown>,
  key: Parameters<SignJWT["sign"]>[0],
  header: { alg?: string; kid?: string } = {},
): Promise<string> {
  return new SignJWT(payload).setProtectedHeader({ alg: "HS256", typ: "JWT", ...header }).sign(key);
}

/** An unsigned token made by hand: header `{"alg":"none","typ":"JWT"}`, the payload, an empty signature. */
export function unsigned(payload: Record<string, unknown>, header: Record<string, unknown> = {}): string {
  const part = (v: unknown) => Buffer.from(JSON.stringify(v)).toString("base64url");
  return `${part({ alg: "none", typ: "JWT", ...header })}.${part(payload)}.`;
}

/** An extractable key pair and its public JWK, named by `kid`. */
export async function keyPair(alg: "RS256" | "ES256", kid: string) {
  const pair = await generateKeyPair(alg, { extractable: true });
  const jwk: JWK = { ...(await exportJWK(pair.publicKey)), kid, alg, use: "sig" };
  return { ...pair, kid, alg, jwk };
}

export type KeyPair = Awaited<ReturnType<typeof keyPair>>;

export interface JwksServer {
  url: string;
  /** Replaces the keys the server answers with. */
  serve(keys: JWK[]): void;
  /** How many times the JWKS was fetched. */
  fetches(): number;
  close(): Promise<void>;
}

/** A JWKS at `/jwks.json` on 127.0.0.1; `mode` makes it fail on purpose (500, or never answer). */
export async function jwksServer(keys: JWK[], mode: "ok" | "hang" | "error" = "ok"): Promise<JwksServer> {
  let current = keys;
  let count = 0;
  const server: Server = createServer((req, res) => {
    count++;
    if (mode === "hang") return; // never answers
    if (mode === "error") {
      res.writeHead(500).end("broken");
      return;
    }
    if (req.url !== "/jwks.json") {
      res.writeHead(404).end();
      return;
    }
    res.writeHead(200, { "content-type": "application/json" }).end(JSON.stringify({ keys: current }));
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/jwks.json`,
    serve: (next) => {
      current = next;
    },
    fetches: () => count,
    close: () =>
      new Promise((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/** A port on 127.0.0.1 nothing listens on. */
export async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  await new Promise((resolve) => server.close(resolve));
  return port;
}
