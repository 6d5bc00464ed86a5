/**
 * Signed agent cards (A2A v1 §8.4) and /.well-known/jwks.json: a consumer with nothing but `jose`
 * and an RFC 8785 library verifies an approved agent's card against the registry's JWKS; the keys
 * come from the key file (generated owner-only, reused) or from SIGNING_KEYS; rotation keeps cards
 * signed before it verifying for the grace period.
 */
import { execFile } from "node:child_process";
import { copyFileSync, mkdtempSync, readFileSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { afterEach, describe, expect, jest, test } from "@jest/globals";
import { Ajv2020 } from "ajv/dist/2020.js";
import { calculateJwkThumbprint, exportJWK, flattenedVerify, generateKeyPair, importJWK, type JWK } from "jose";
import { verifyCardSignatures } from "../../src/trust/card.signature.ts";
import { rotateKeyFile } from "../../src/trust/signing.rotate.ts";
import { type App, approve, appWith, call, gql, intake, PRODUCTION } from "../helpers.ts";
import { signedPayload } from "./a2a.payload.ts";

const run = promisify(execFile);
const folder = mkdtempSync(join(tmpdir(), "agent-registry-signing-"));
const DAY = 86_400_000;

/** A key file in a folder of its own that does not exist yet. */
const keyFile = (name: string) => join(folder, name, "keys", "signing-keys.json");

/** The app with its keys in this file (SIGNING_KEYS cleared, whatever the environment of the run says). */
const withKeyFile = (file: string) => appWith({ SIGNING_KEYS: "", SIGNING_KEYS_FILE: file });

const card = (app: App, providerCode: string) =>
  call("GET", `/api/v1/providers/${providerCode}/agent-card.json`, { app });
const jwksOf = async (app: App) => (await call("GET", "/.well-known/jwks.json", { app })).body as { keys: JWK[] };

/** An approved agent (through the shared app: same database) and its card as `app` signs it. */
async function approvedCard(app: App, overrides: Record<string, unknown> = {}) {
  const p = await intake(overrides);
  await approve(p.providerCode);
  const answer = await card(app, p.providerCode);
  expect(answer.status).toBe(200);
  return { providerCode: p.providerCode, card: answer.body };
}

// ── A consumer's verification, from A2A §8.4.3, with jose and canonicalize only ─────────────────

/**
 * §8.4.3: strip `signatures`, remove defaults, JCS, then verify each signature with the key its
 * `kid` names in the JWKS. Answers the protected header of each; throws if one does not verify.
 */
async function consumerVerify(signedCard: any, jwks: { keys: JWK[] }) {
  const { signatures, ...content } = signedCard;
  const payload = Buffer.from(signedPayload(content)).toString("base64url");
  const headers: { alg?: string; typ?: string; kid?: string }[] = [];
  for (const sig of signatures as { protected: string; signature: string }[]) {
    const header = JSON.parse(Buffer.from(sig.protected, "base64url").toString());
    const jwk = jwks.keys.find((k) => k.kid === header.kid);
    if (!jwk) throw new Error(`no key ${header.kid} in the JWKS`);
    const result = await flattenedVerify(
      { protected: sig.protected, signature: sig.signature, payload },
      await importJWK(jwk, header.alg),
    );
    headers.push(result.protectedHeader ?? {});
  }
  return headers;
}

/** The card with one byte of its description changed. */
const tampered = (signedCard: any) => ({
  ...signedCard,
  description: `${signedCard.description.slice(0, -1)}${signedCard.description.endsWith("x") ? "y" : "x"}`,
});

afterEach(() => {
  jest.restoreAllMocks();
});

describe("an approved agent's card is signed with the keys of /.well-known/jwks.json", () => {
  const app = withKeyFile(keyFile("main"));

  test("ES256 and EdDSA signatures verify with jose and canonicalize alone; one changed byte fails", async () => {
    const { card: signed } = await approvedCard(app, { description: "Plans routes for vans" });
    const jwks = await jwksOf(app);
    expect(signed.signatures).toHaveLength(2);
    const headers = await consumerVerify(signed, jwks);
    expect(headers).toEqual([
      { alg: "ES256", typ: "JOSE", kid: expect.any(String) },
      { alg: "EdDSA", typ: "JOSE", kid: expect.any(String) },
    ]);
    expect(jwks.keys.map((k) => k.kid).sort()).toEqual(headers.map((h) => h.kid).sort());
    for (const sig of signed.signatures) expect(Object.keys(sig).sort()).toEqual(["protected", "signature"]);

    await expect(consumerVerify(tampered(signed), jwks)).rejects.toThrow(/signature verification failed/);
    // Each signature on its own fails too, not only the first one tried.
    for (const sig of signed.signatures) {
      await expect(consumerVerify({ ...tampered(signed), signatures: [sig] }, jwks)).rejects.toThrow();
    }
    // Dropping a signed field, or adding one, fails as well.
    const { documentationUrl: _, ...dropped } = signed;
    await expect(consumerVerify(dropped, jwks)).rejects.toThrow();
    await expect(consumerVerify({ ...signed, iconUrl: "https://evil.example/i.png" }, jwks)).rejects.toThrow();
  });

  test("a signed card has no nulls and matches the schema the OpenAPI document declares for it", async () => {
    const { card: signed } = await approvedCard(app, {
      endpoint: { url: "https://a.example/a2a", protocol: "A2A", authScheme: "NONE" },
    });
    expect(JSON.stringify(signed)).not.toContain("null");
    const doc = (await call("GET", "/openapi.json")).body;
    const ajv = new Ajv2020({ strict: false, allErrors: true });
    ajv.addSchema({ $id: "doc", components: doc.components });
    const validate = ajv.compile({ $ref: "doc#/components/schemas/AgentCard" });
    expect({ ok: validate(signed), errors: validate.errors ?? null }).toEqual({ ok: true, errors: null });
    expect(validate({ ...signed, signatures: [{ protected: "e30" }] })).toBe(false);
  });

  test("the JWKS is public keys only, as application/jwk-set+json, cacheable, with an ETag, HEAD and 304", async () => {
    const answer = await call("GET", "/.well-known/jwks.json", { app });
    expect(answer.status).toBe(200);
    expect(answer.headers.get("content-type")).toBe("application/jwk-set+json");
    expect(answer.headers.get("cache-control")).toBe("public, max-age=300");
    const keys = answer.body.keys as JWK[];
    expect(keys.map((k) => [k.kty, k.crv, k.alg, k.use]).sort()).toEqual([
      ["EC", "P-256", "ES256", "sig"],
      ["OKP", "Ed25519", "EdDSA", "sig"],
    ]);
    for (const key of keys) {
      expect(Object.keys(key).sort()).toEqual(
        key.kty === "EC" ? ["alg", "crv", "kid", "kty", "use", "x", "y"] : ["alg", "crv", "kid", "kty", "use", "x"],
      );
      // A generated key's kid is its RFC 7638 thumbprint.
      expect(key.kid).toBe(await calculateJwkThumbprint(key));
    }
    const etag = answer.headers.get("etag") as string;
    expect(etag).toMatch(/^"[\w-]{16}"$/);
    const head = await call("HEAD", "/.well-known/jwks.json", { app });
    expect({ status: head.status, text: head.text, etag: head.headers.get("etag") }).toEqual({
      status: 200,
      text: "",
      etag,
    });
    const unchanged = await call("GET", "/.well-known/jwks.json", { app, headers: { "if-none-match": etag } });
    expect({ status: unchanged.status, text: unchanged.text }).toEqual({ status: 304, text: "" });
  });

  test("an agent that is not approved has an unsigned card: signatures: []", async () => {
    const p = await intake();
    const answer = await card(app, p.providerCode);
    expect(answer.status).toBe(200);
    expect(answer.body.signatures).toEqual([]);
    expect(await verifyCardSignatures(answer.body, await jwksOf(app))).toEqual({ status: "UNSIGNED" });
    // Approved later, the same agent's card is signed.
    await approve(p.providerCode);
    expect((await card(app, p.providerCode)).body.signatures).toHaveLength(2);
  });

  test("in production the registry signs only under PUBLIC_URL, never an origin the request's Host chose", async () => {
    const p = await intake();
    await approve(p.providerCode);
    const production = { ...PRODUCTION, SIGNING_KEYS: "", SIGNING_KEYS_FILE: keyFile("production") };
    const hostChosen = await card(appWith(production), p.providerCode);
    expect(hostChosen.status).toBe(200);
    expect(hostChosen.body.signatures).toEqual([]);
    const configured = appWith({ ...production, PUBLIC_URL: "https://registry.example.com" });
    const own = await card(configured, p.providerCode);
    expect(own.body.documentationUrl).toBe(`https://registry.example.com/providers/${p.providerCode}`);
    expect(own.body.signatures).toHaveLength(2);
    await consumerVerify(own.body, await jwksOf(configured));
  });

  test("GraphQL agentCard carries the same signatures, and none for an agent under review", async () => {
    const { providerCode, card: signed } = await approvedCard(app);
    const waiting = await intake();
    const query = `query($a: String!, $b: String!) {
      approved: agentCard(providerCode: $a) { signatures { protected signature } }
      waiting: agentCard(providerCode: $b) { signatures { protected signature } } }`;
    const answer = await gql(query, { a: providerCode, b: waiting.providerCode }, { app });
    expect(answer.body).toEqual({ data: { approved: { signatures: signed.signatures }, waiting: { signatures: [] } } });
  });

  test("the same card read twice has the same signatures (signed once), so its ETag holds", async () => {
    const { providerCode, card: first } = await approvedCard(app);
    const again = await card(app, providerCode);
    // ES256 signatures are randomized: equal ones were made once.
    expect(again.body.signatures).toEqual(first.signatures);
    expect(again.headers.get("etag")).toBe((await card(app, providerCode)).headers.get("etag"));
    // A change to the card signs it anew.
    const p = await intake();
    await approve(p.providerCode);
    const before = (await card(app, p.providerCode)).body;
    const patched = await call("PATCH", `/api/v1/providers/${p.providerCode}`, {
      token: p.accessToken,
      body: { summary: "A new summary" },
    });
    expect(patched.status).toBe(200);
    const after = (await card(app, p.providerCode)).body;
    expect(after.signatures[1].signature).not.toBe(before.signatures[1].signature);
    await consumerVerify(after, await jwksOf(app));
  });

  test("verifyCardSignatures: VERIFIED, INVALID when changed, UNTRUSTED_KEY for keys not in the set", async () => {
    const { card: signed } = await approvedCard(app);
    const jwks = await jwksOf(app);
    const es256 = JSON.parse(Buffer.from(signed.signatures[0].protected, "base64url").toString()).kid;
    expect(await verifyCardSignatures(signed, jwks)).toEqual({ status: "VERIFIED", kid: es256 });
    expect(await verifyCardSignatures(tampered(signed), jwks)).toEqual({ status: "INVALID" });
    // Only one of the two keys trusted: it must verify, and does; the other is not needed.
    expect(await verifyCardSignatures(signed, { keys: jwks.keys.filter((k) => k.alg === "EdDSA") })).toEqual({
      status: "VERIFIED",
      kid: expect.any(String),
    });
    const other = await jwksOf(withKeyFile(keyFile("other")));
    expect(await verifyCardSignatures(signed, other)).toEqual({ status: "UNTRUSTED_KEY", kid: es256 });
    // A signature whose kid names a trusted key that did not make it is INVALID, not untrusted.
    const impostor = { ...(other.keys.find((k) => k.alg === "ES256") as JWK), kid: es256 };
    expect(await verifyCardSignatures(signed, { keys: [impostor] })).toEqual({ status: "INVALID" });
  });
});

describe("the key file", () => {
  test("is generated at first start, owner-only, in a folder it creates, and reused by the next start", async () => {
    const file = keyFile("generated");
    const app = withKeyFile(file);
    expect(statSync(file).mode & 0o777).toBe(0o600);
    const stored = JSON.parse(readFileSync(file, "utf8")).keys;
    expect(stored.map((k: any) => [k.alg, typeof k.d, typeof k.createdAt, k.retiresAt])).toEqual([
      ["ES256", "string", "string", undefined],
      ["EdDSA", "string", "string", undefined],
    ]);
    const kids = (await jwksOf(app)).keys.map((k) => k.kid);
    expect(kids).toEqual(stored.map((k: any) => k.kid));
    // Another process, or this one restarted, on a copy of the file: the same keys, none generated.
    const copy = join(folder, "copy.json");
    copyFileSync(file, copy);
    expect((await jwksOf(withKeyFile(copy))).keys.map((k) => k.kid)).toEqual(kids);
    expect(JSON.parse(readFileSync(copy, "utf8")).keys).toEqual(stored);
  });
});

describe("SIGNING_KEYS", () => {
  async function privateJwk(alg: "ES256" | "EdDSA", kid: string, extra: Record<string, unknown> = {}) {
    const { privateKey } = await generateKeyPair(alg, {
      extractable: true,
      ...(alg === "EdDSA" ? { crv: "Ed25519" } : {}),
    });
    return { ...(await exportJWK(privateKey)), kid, alg, ...extra };
  }

  test("an inline private JWK set signs the cards, and only its public half is published", async () => {
    const key = await privateJwk("ES256", "inline-es256");
    const app = appWith({ SIGNING_KEYS: JSON.stringify({ keys: [key] }) });
    const jwks = await jwksOf(app);
    expect(jwks).toEqual({
      keys: [{ kty: "EC", crv: "P-256", x: key.x, y: key.y, kid: "inline-es256", alg: "ES256", use: "sig" }],
    });
    const { card: signed } = await approvedCard(app);
    expect(await consumerVerify(signed, jwks)).toEqual([{ alg: "ES256", typ: "JOSE", kid: "inline-es256" }]);
  });

  test.each([
    ["not JSON", () => "{keys:", /SIGNING_KEYS is not JSON/],
    ["no keys", () => '{"keys":[]}', /at least one key/],
    [
      "an RSA key",
      async () => ({
        keys: [
          {
            ...(await exportJWK((await generateKeyPair("RS256", { extractable: true })).privateKey)),
            kid: "r",
            alg: "RS256",
          },
        ],
      }),
      /"r".*ES256 or EdDSA/,
    ],
    [
      "a public key",
      async () => ({ keys: [{ ...(await privateJwk("ES256", "p")), d: undefined }] }),
      /"p".*private key/,
    ],
    [
      "a key without kid",
      async () => ({ keys: [{ ...(await privateJwk("EdDSA", "x")), kid: undefined }] }),
      /needs a "kid"/,
    ],
    [
      "a curve that is not the alg's",
      async () => ({ keys: [{ ...(await privateJwk("EdDSA", "c")), alg: "ES256" }] }),
      /"c".*EC key on P-256/,
    ],
    [
      "a shared secret",
      () => ({ keys: [{ kty: "oct", k: "c2VjcmV0", kid: "h", alg: "HS256" }] }),
      /"h".*ES256 or EdDSA/,
    ],
    [
      "no active key",
      async () => ({ keys: [await privateJwk("ES256", "old", { retiresAt: "2999-01-01T00:00:00Z" })] }),
      /no active key/,
    ],
    [
      "public members of another key",
      async () => {
        const [mine, other] = [await privateJwk("ES256", "m"), await privateJwk("ES256", "o")];
        return { keys: [{ ...mine, x: other.x, y: other.y }] };
      },
      /"m".*do not match its private key/,
    ],
    [
      "a kid twice",
      async () => ({ keys: [await privateJwk("ES256", "k"), await privateJwk("EdDSA", "k")] }),
      /"k".*twice/,
    ],
  ])("%s refuses to start, saying why and never showing the key", async (_what, make, message) => {
    const made = await make();
    const value = typeof made === "string" ? made : JSON.stringify(made);
    let error: Error | undefined;
    try {
      appWith({ SIGNING_KEYS: value });
    } catch (thrown) {
      error = thrown as Error;
    }
    expect(error?.message).toMatch(message);
    expect(error?.message).toMatch(/^SIGNING_KEYS/);
    const secret = typeof made === "string" ? undefined : (made as any).keys[0]?.d;
    if (secret) expect(error?.message).not.toContain(secret);
  });

  test("PostgreSQL in production needs keys the replicas share: SIGNING_KEYS or a shared SIGNING_KEYS_FILE", async () => {
    const postgres = {
      ...PRODUCTION,
      DATABASE_URL: "postgresql://registry@db.invalid:5432/registry",
      SIGNING_KEYS: "",
      SIGNING_KEYS_FILE: "",
    };
    expect(() => appWith(postgres)).toThrow(/SIGNING_KEYS must be set in production with PostgreSQL.*replicas/);
    const shared = appWith({ ...postgres, SIGNING_KEYS_FILE: keyFile("shared") });
    expect((await jwksOf(shared)).keys).toHaveLength(2);
    const inline = appWith({ ...postgres, SIGNING_KEYS: JSON.stringify({ keys: [await privateJwk("EdDSA", "e")] }) });
    expect((await jwksOf(inline)).keys.map((k) => k.kid)).toEqual(["e"]);
  });
});

describe("rotation", () => {
  /** Makes the clock of the key sets read `offset` ms ahead (a rotation is noticed within 10 s). */
  const later = (offset: number) => {
    const now = Date.now.bind(Date);
    jest.spyOn(Date, "now").mockImplementation(() => now() + offset);
  };

  test("the new keys sign from then on, the old stay published for the grace period, then go", async () => {
    const file = keyFile("rotated");
    const app = withKeyFile(file);
    const { providerCode, card: before } = await approvedCard(app);
    const oldKids = (await jwksOf(app)).keys.map((k) => k.kid);

    const rotation = rotateKeyFile(file, { graceDays: 30 });
    expect(rotation.retiredKids).toEqual(oldKids);
    expect(statSync(file).mode & 0o777).toBe(0o600);
    // The running app notices the new file without a restart.
    later(11_000);
    const jwks = await jwksOf(app);
    expect(jwks.keys.map((k) => k.kid).sort()).toEqual([...rotation.newKids, ...oldKids].sort());
    const { card: after } = await approvedCard(app);
    expect((await consumerVerify(after, jwks)).map((h) => h.kid)).toEqual(rotation.newKids);
    // The card signed before the rotation still verifies, and a card read now is signed anew.
    expect((await consumerVerify(before, jwks)).map((h) => h.kid)).toEqual(oldKids);
    const reread = (await card(app, providerCode)).body;
    expect((await consumerVerify(reread, jwks)).map((h) => h.kid)).toEqual(rotation.newKids);

    // After the grace period the old keys are no longer published, and old signatures find no key.
    jest.restoreAllMocks();
    later(31 * DAY);
    const expired = await jwksOf(app);
    expect(expired.keys.map((k) => k.kid).sort()).toEqual([...rotation.newKids].sort());
    await expect(consumerVerify(before, expired)).rejects.toThrow(/no key/);
    expect(await verifyCardSignatures(before, expired)).toEqual({ status: "UNTRUSTED_KEY", kid: oldKids[0] });

    // The next rotation prunes them from the file.
    const next = rotateKeyFile(file, { graceDays: 30, now: new Date(Date.now()) });
    expect(next.prunedKids.sort()).toEqual([...oldKids].sort());
    expect(
      JSON.parse(readFileSync(file, "utf8"))
        .keys.map((k: any) => k.kid)
        .sort(),
    ).toEqual([...next.newKids, ...rotation.newKids].sort());
  });

  test("npm run keys:rotate rotates the file; with SIGNING_KEYS it prints the rotated set instead", async () => {
    const file = keyFile("cli");
    const oldKids = (await jwksOf(withKeyFile(file))).keys.map((k) => k.kid);
    const cli = (env: Record<string, string>) =>
      run(process.execPath, ["--import", "tsx", "src/trust/signing.rotate.cli.ts"], {
        env: { ...process.env, NODE_ENV: "test", SIGNING_KEY_GRACE_DAYS: "7", ...env },
      });
    const { stdout } = await cli({ SIGNING_KEYS: "", SIGNING_KEYS_FILE: file });
    const stored = JSON.parse(readFileSync(file, "utf8")).keys;
    const active = stored.filter((k: any) => !k.retiresAt).map((k: any) => k.kid);
    expect(active).toHaveLength(2);
    expect(stdout).toContain(`new signing keys (sign from now on): ${active.join(", ")}`);
    expect(stdout).toContain(`: ${oldKids.join(", ")}`);
    for (const key of stored.filter((k: any) => k.retiresAt)) {
      expect(Date.parse(key.retiresAt) - Date.now()).toBeGreaterThan(6.9 * DAY);
    }

    const inline = JSON.stringify({ keys: stored.filter((k: any) => !k.retiresAt) });
    const printed = await cli({ SIGNING_KEYS: inline });
    expect(printed.stderr).toMatch(/Deploy the JWK set printed below as the new SIGNING_KEYS/);
    const rotated = JSON.parse(printed.stdout).keys;
    expect(rotated.filter((k: any) => k.retiresAt).map((k: any) => k.kid)).toEqual(active);
    // What it prints is a SIGNING_KEYS value the service accepts.
    const { card: signed } = await approvedCard(appWith({ SIGNING_KEYS: printed.stdout.trim() }));
    expect(signed.signatures).toHaveLength(2);
  });
});
