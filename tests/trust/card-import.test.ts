/**
 * Signed agent cards in, through the front door: a card signed by its publisher (here with jose and
 * canonicalize, as A2A §8.4.2 says) is imported; its signature is trusted only with a key of the
 * configured trust list or of a domain this provider has verified (the domain's JWKS served by a
 * real HTTP server under a test name), never from a `jku` elsewhere. A signature that fails with a
 * trusted key is a 400 and nothing is written.
 */
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, test } from "@jest/globals";
import { exportJWK, FlattenedSign, generateKeyPair, type JWK } from "jose";
import { uniqueCode } from "../builders.ts";
import { type App, appWith, call, expectProblem, gql, reviewerToken } from "../helpers.ts";
import { signedPayload } from "./a2a.payload.ts";

/** Files served by the publisher's web server, by path; and how often each path was asked for. */
const files = new Map<string, string>();
const hits = new Map<string, number>();
let web: Server;
let app: App;
let rv: string;

interface Signer {
  kid: string;
  privateKey: CryptoKey;
  publicJwk: JWK;
}

async function signer(kid: string): Promise<Signer> {
  const { privateKey, publicKey } = await generateKeyPair("ES256", { extractable: true });
  return { kid, privateKey, publicJwk: { ...(await exportJWK(publicKey)), kid, alg: "ES256", use: "sig" } };
}

/** The card with a signature by `key` (A2A §8.4.2: detached JWS over the canonical card). */
async function signed(card: Record<string, unknown>, key: Signer, header: Record<string, unknown> = {}) {
  const payload = new TextEncoder().encode(signedPayload(card));
  const jws = await new FlattenedSign(payload)
    .setProtectedHeader({ alg: "ES256", typ: "JOSE", kid: key.kid, ...header })
    .sign(key.privateKey);
  return { ...card, signatures: [{ protected: jws.protected, signature: jws.signature }] };
}

/** An A2A card whose endpoint is under example.test, where the test's web server answers. */
function card(name = `Signed Agent ${uniqueCode("n")}`): Record<string, unknown> {
  return {
    name,
    description: "Plans routes.",
    supportedInterfaces: [{ url: "https://api.example.test/a2a", protocolBinding: "JSONRPC", protocolVersion: "1.0" }],
    provider: { organization: "Example", url: "https://example.test" },
    version: "1.0.0",
    capabilities: { streaming: false },
    defaultInputModes: ["text/plain"],
    defaultOutputModes: ["text/plain"],
    skills: [{ id: "route", name: "Route", description: "Plans a route", tags: ["maps"] }],
  };
}

const importCard = (document: unknown) =>
  call("POST", "/api/v1/providers/import", {
    app,
    body: { format: "a2a", document, contactEmail: "owner@example.test" },
  });
const profile = (code: string) => call("GET", `/api/v1/providers/${code}`, { app });

let trusted: Signer;

beforeAll(async () => {
  web = createServer((req, res) => {
    const path = req.url ?? "/";
    hits.set(path, (hits.get(path) ?? 0) + 1);
    const body = files.get(path);
    if (body === undefined) return void res.writeHead(404).end("not found");
    res.writeHead(200, { "content-type": "application/json" }).end(body);
  });
  await new Promise<void>((resolve) => web.listen(0, "127.0.0.1", resolve));
  const port = (web.address() as AddressInfo).port;
  trusted = await signer("trusted-1");
  app = appWith({
    OUTBOUND_TEST_HOSTS: `example.test=127.0.0.1:${port},elsewhere.test=127.0.0.1:${port}`,
    CARD_TRUST_JWKS: JSON.stringify({ keys: [trusted.publicJwk] }),
  });
  rv = await reviewerToken("card-import-reviewer");
});

afterAll(async () => {
  web.closeAllConnections();
  await new Promise((resolve) => web.close(resolve));
});

describe("importing a signed card", () => {
  test("a signature by a key of the trust list is VERIFIED, with its kid; signatures are mapped, not unmapped", async () => {
    const answer = await importCard(await signed(card(), trusted));
    expect(answer.status).toBe(201);
    expect(answer.body.mapped).toContainEqual({ from: "/signatures", to: "cardSignature" });
    expect(answer.body.unmapped).not.toContain("/signatures");
    const read = await profile(answer.body.providerCode);
    expect(read.body.cardSignature).toEqual({ status: "VERIFIED", domain: null, kid: "trusted-1" });
  });

  test("a card changed after it was signed by a trusted key is a 400, and nothing is written", async () => {
    const name = `Tampered ${uniqueCode("n")}`;
    const document = { ...(await signed(card(name), trusted)), description: "Plans routes!" };
    const answer = await importCard(document);
    expectProblem(answer, 400, "BAD_USER_INPUT");
    expect(answer.body.errors).toContainEqual(expect.objectContaining({ path: "/document/signatures" }));
    const listed = await call("GET", `/api/v1/providers?search=${encodeURIComponent(name)}`, { app, token: rv });
    expect(listed.status).toBe(200);
    expect(listed.body.items).toEqual([]);
  });

  test("a malformed signature is a 400", async () => {
    const document = { ...card(), signatures: [{ protected: "not-base64-json", signature: "x" }] };
    expectProblem(await importCard(document), 400, "BAD_USER_INPUT");
  });

  test("an unsigned card is UNSIGNED; a provider not imported has no cardSignature", async () => {
    const answer = await importCard(card());
    expect(answer.status).toBe(201);
    expect((await profile(answer.body.providerCode)).body.cardSignature).toEqual({
      status: "UNSIGNED",
      domain: null,
      kid: null,
    });
    const plain = await call("POST", "/api/v1/providers", {
      app,
      body: {
        name: "Plain",
        summary: "Not imported",
        agentType: "ASSISTANT",
        contactEmail: "a@example.test",
        endpoint: { url: "https://api.example.test/x", protocol: "A2A", authScheme: "NONE" },
      },
    });
    expect((await profile(plain.body.providerCode)).body.cardSignature).toBeNull();
  });

  test("a key named by a jku on a host the provider has not verified is never fetched: UNTRUSTED_KEY", async () => {
    const stranger = await signer("stranger-1");
    files.set("/stranger.json", JSON.stringify({ keys: [stranger.publicJwk] }));
    const document = await signed(card(), stranger, { jku: "https://elsewhere.test/stranger.json" });
    const answer = await importCard(document);
    expect(answer.status).toBe(201);
    expect((await profile(answer.body.providerCode)).body.cardSignature).toEqual({
      status: "UNTRUSTED_KEY",
      domain: null,
      kid: "stranger-1",
    });
    expect(hits.get("/stranger.json")).toBeUndefined();
  });
});

describe("a domain verified later vouches for the card's key", () => {
  async function importedThenVerified(jwks: { keys: JWK[] }) {
    const publisher = await signer(`publisher-${uniqueCode("k")}`);
    const answer = await importCard(await signed(card(), publisher));
    expect(answer.status).toBe(201);
    const { providerCode, accessToken } = answer.body;
    expect((await profile(providerCode)).body.cardSignature.status).toBe("UNTRUSTED_KEY");
    files.set("/.well-known/jwks.json", JSON.stringify(jwks.keys.length ? jwks : { keys: [publisher.publicJwk] }));
    const asked = await call("POST", `/api/v1/providers/${providerCode}/domains`, {
      app,
      token: accessToken,
      body: { domain: "example.test" },
    });
    expect(asked.status).toBe(201);
    files.set(`/.well-known/agent-registry/${providerCode}.txt`, asked.body.token);
    const checked = await call("POST", `/api/v1/providers/${providerCode}/domains/example.test/check`, {
      app,
      token: accessToken,
    });
    expect(checked.body).toMatchObject({ verified: true });
    return { providerCode, accessToken, publisher };
  }

  test("when the verified domain's JWKS holds the key, the card becomes VERIFIED with the domain", async () => {
    const { providerCode, publisher } = await importedThenVerified({ keys: [] });
    const read = await profile(providerCode);
    expect(read.body.cardSignature).toEqual({ status: "VERIFIED", domain: "example.test", kid: publisher.kid });
    // GraphQL reads the same record.
    const answer = await gql(
      `query($c: String!) { provider(providerCode: $c) { cardSignature { status domain kid } } }`,
      { c: providerCode },
      { app },
    );
    expect(answer.body.data.provider.cardSignature).toEqual(read.body.cardSignature);
  });

  test("when the domain publishes other keys only, the card stays UNTRUSTED_KEY", async () => {
    const other = await signer("other-1");
    const { providerCode } = await importedThenVerified({ keys: [other.publicJwk] });
    expect((await profile(providerCode)).body.cardSignature.status).toBe("UNTRUSTED_KEY");
  });

  test("moving the endpoint off the domain that vouched puts the card back to UNTRUSTED_KEY", async () => {
    const { providerCode, accessToken, publisher } = await importedThenVerified({ keys: [] });
    const moved = await call("PATCH", `/api/v1/providers/${providerCode}`, {
      app,
      token: accessToken,
      body: { endpoint: { url: "https://api.other.test/a2a" } },
    });
    expect(moved.status).toBe(200);
    expect(moved.body.cardSignature).toEqual({ status: "UNTRUSTED_KEY", domain: null, kid: publisher.kid });
  });
});
