/**
 * Who the publisher CLI acts as, and what an owner does with it, as processes against a live registry
 * (the `npm start` server process on this file's database, SQLite or PostgreSQL) whose identity
 * provider is a real OpenID provider (tests/auth/idp.ts): `login` with an agent token on stdin,
 * by the device flow and by the browser flow (the test goes through the IdP's own pages over HTTP, as
 * the person would), `whoami`, `logout`, `tokens rotate`, `status` (the owner's lifecycle changes, and
 * a reviewer signed in by the device flow undoing a retirement), `domains request|check` against a
 * local web server standing in for the domain, and refused tokens (unknown, revoked, another agent's,
 * malformed: that one is never sent). No token is ever printed (tests/cli/cli.process.ts checks each
 * run). Independent runs go side by side, all on one server.
 *
 * Over ten seconds (22 s alone on the two-core machine under load, 20 s of CPU with jest, the server
 * and the IdP) because the file runs some thirty CLI processes, each a Node start-up and 0.1–0.3 s of
 * CPU, and each device sign-in polls the IdP at its interval, a second.
 */

import { readFile } from "node:fs/promises";
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, test } from "@jest/globals";
import { mintToken } from "../../src/auth/agent.token.ts";
import { type Idp, startIdp } from "../auth/idp.ts";
import { intakeBody, uniqueCode } from "../builders.ts";
import { copyOfTemplate } from "../database.ts";
import { cleanUp, request, type Server, startServer } from "../process/server.process.ts";
import { loopbackRoute, UserAgent } from "../signin/user-agent.ts";
import {
  cli,
  countingListener,
  credentialsFile,
  freePort,
  put,
  secret,
  start,
  type User,
  user,
} from "./cli.process.ts";

/** What the stand-in web server serves, by path: the domain proofs the tests publish. */
const served = new Map<string, string>();
const web = createServer((req, res) => {
  const body = served.get(req.url ?? "");
  res.writeHead(body === undefined ? 404 : 200, { "content-type": "text/plain" }).end(body ?? "");
});

let server: Server;
let idp: Idp;
beforeAll(async () => {
  await new Promise<void>((resolve) => web.listen(0, "127.0.0.1", resolve));
  // The registry's URL is the audience of the tokens the IdP issues for it, so it is chosen first.
  const port = await freePort();
  const registry = `http://127.0.0.1:${port}`;
  idp = await startIdp({
    audiences: [registry],
    clients: {},
    users: { rita: { groups: [], name: "Rita Reviewer" } },
    nativeClients: ["agent-registry-cli"],
  });
  server = await startServer(await copyOfTemplate(), {
    // OUTBOUND_TEST_HOSTS is refused in production; nothing else here depends on it.
    NODE_ENV: "development",
    PORT: String(port),
    PUBLIC_URL: registry,
    OIDC_ISSUER: idp.issuer,
    OUTBOUND_TEST_HOSTS: `127.0.0.1=127.0.0.1:${idp.port},*.cli.test=127.0.0.1:${(web.address() as AddressInfo).port}`,
  });
});
afterAll(async () => {
  await idp?.stop();
  web.close();
  await cleanUp();
}, 30_000);

/** An agent made through the API, with its token. */
async function agent(overrides: Record<string, unknown> = {}) {
  const code = uniqueCode("acct");
  const made = await request(server, "POST", "/api/v1/providers", {
    body: intakeBody({
      providerCode: code,
      endpoint: { url: `https://${code}.cli.test/a2a`, protocol: "A2A", authScheme: "NONE" },
      ...overrides,
    }),
  });
  expect(made.status).toBe(201);
  return { code, token: secret(made.body.accessToken as string) };
}

/** A user logged in as that agent with `login --with-token`. */
async function loggedIn(a: { code: string; token: string }): Promise<User> {
  const u = user(server.url);
  const login = await cli(u, ["login", "--with-token", "--provider", a.code, "--json"], { stdin: `${a.token}\n` });
  expect([login.code, login.json]).toEqual([0, expect.objectContaining({ kind: "agent", providerCode: a.code })]);
  return u;
}

const storedFile = async (u: User) => JSON.parse(await readFile(credentialsFile(u), "utf8"));

/** The hidden and other named inputs of the first form in a page. */
const inputsOf = (html: string) =>
  Object.fromEntries(
    [...html.matchAll(/<input[^>]*>/g)].map((m) => [
      /name="([^"]*)"/.exec(m[0])?.[1],
      /value="([^"]*)"/.exec(m[0])?.[1] ?? "",
    ]),
  ) as Record<string, string>;

/** Signs `login` in at the IdP's login page (already requested as `page`), as the named person. */
async function throughLoginPage(ua: UserAgent, page: { text: string; url: string }, name: string) {
  const action = /<form method="post" action="([^"]+)"/.exec(page.text)?.[1] as string;
  const hop = await ua.request("POST", new URL(action, page.url).href, { form: { login: name } });
  expect(hop.status).toBe(303);
  return hop.location as string;
}

/** Signs rita in by the device flow; answers the user with the sign-in kept. */
async function signedInByDevice(): Promise<User> {
  const u = user(server.url);
  const running = start(u, ["login", "--json"]);
  running.child.stdin?.end();
  const [, uri, code] = await running.waitFor(/open (http\S+) and enter the code (\S+)/);
  const ua = new UserAgent({ [`127.0.0.1:${idp.port}`]: loopbackRoute(idp.port) });
  const entry = await ua.follow(uri as string);
  expect(entry.text).toContain("Enter the code shown on your device");
  const confirm = await ua.request("POST", `${idp.issuer}/device`, {
    form: { ...inputsOf(entry.text), user_code: code as string },
  });
  expect(confirm.text).toContain(code as string);
  const toLogin = await ua.request("POST", `${idp.issuer}/device`, { form: inputsOf(confirm.text) });
  const end = await ua.follow(await throughLoginPage(ua, await ua.follow(toLogin.location as string), "rita"));
  expect(end.text).toContain("Signed in");
  const done = await running.done;
  expect([done.code, done.json]).toEqual([
    0,
    expect.objectContaining({ kind: "oidc", subject: "rita", issuer: idp.issuer }),
  ]);
  secret((await storedFile(u)).registries[server.url].oidc.accessToken);
  return u;
}

describe("logging in", () => {
  test("an agent token on stdin: checked, kept, shown by whoami, forgotten by logout", async () => {
    const a = await agent();
    const u = await loggedIn(a);
    const kept = await storedFile(u);
    expect(kept.registries[server.url].agents[a.code].token).toBe(a.token);
    const [who, words] = await Promise.all([cli(u, ["whoami", "--json"]), cli(u, ["whoami"])]);
    expect([who.code, who.json]).toEqual([
      0,
      expect.objectContaining({
        kind: "agent",
        source: "file",
        providerCode: a.code,
        reviewStage: "SUBMITTED",
        tokenPrefix: a.token.slice(0, 10),
      }),
    ]);
    expect(words.stdout).toContain(`Agent ${a.code} (Route Planner, SUBMITTED, version 1)`);

    const out = await cli(u, ["logout", "--json"]);
    expect([out.code, out.json?.forgotten]).toEqual([0, [`agent ${a.code}`]]);
    const [again, nobody] = await Promise.all([cli(u, ["logout"]), cli(u, ["whoami"])]);
    expect([again.code, again.stderr]).toEqual([1, expect.stringContaining("nothing to forget")]);
    expect([nobody.code, nobody.stderr]).toEqual([1, expect.stringContaining(`Not logged in to ${server.url}`)]);
    expect((await storedFile(u)).registries).toEqual({});
  });

  test("refused tokens: unknown, another agent's, malformed (never sent), revoked", async () => {
    const [a, b] = await Promise.all([agent(), agent()]);
    const unknown = secret(mintToken().secret);
    const listener = await countingListener();
    const [asUnknown, othersToken, malformed] = await Promise.all([
      cli(user(server.url), ["whoami", "--provider", a.code, "--json"], { env: { AGENT_REGISTRY_TOKEN: unknown } }),
      cli(user(server.url), ["login", "--with-token", "--provider", a.code], { stdin: b.token }),
      cli(user(listener.url), ["login", "--with-token", "--provider", a.code], { stdin: secret("agr_notatoken") }),
    ]);
    expect([asUnknown.code, asUnknown.json?.error?.status]).toEqual([1, 401]);
    expect(asUnknown.json.error.message).toContain("The registry refused the credentials");
    expect([othersToken.code, othersToken.stderr]).toEqual([
      1,
      expect.stringContaining(`This token is not one of ${a.code}'s`),
    ]);
    expect([malformed.code, malformed.stderr]).toEqual([1, expect.stringContaining("not an agent token")]);
    expect(listener.connections()).toBe(0);
    await listener.close();

    // AGENT_REGISTRY_TOKEN, as CI sets it: works, then refused once revoked.
    const ci = user(server.url);
    put(
      ci,
      "agent-registry.json",
      intakeBody({
        providerCode: a.code,
        summary: "From CI",
        endpoint: { url: `https://${a.code}.cli.test/a2a`, protocol: "A2A", authScheme: "NONE" },
      }),
    );
    const tokens = await request(server, "GET", `/api/v1/providers/${a.code}`, { token: a.token });
    const env = { AGENT_REGISTRY_TOKEN: a.token };
    const before = await cli(ci, ["publish", "--dry-run", "--json"], { env });
    expect([before.code, before.json?.changedFields]).toEqual([0, ["summary"]]);
    const revoked = await request(
      server,
      "DELETE",
      `/api/v1/providers/${a.code}/tokens/${tokens.body.tokens[0].tokenId}`,
      {
        token: a.token,
      },
    );
    expect(revoked.status).toBe(200);
    const after = await cli(ci, ["publish", "--yes"], { env });
    expect([after.code, after.stderr]).toEqual([1, expect.stringContaining("The registry refused the credentials")]);
    expect((await request(server, "GET", `/api/v1/providers/${a.code}`)).body.summary).toBe(
      "Plans delivery routes across a city",
    );
  });

  test("a person by the device flow: a code to enter at the IdP, then a reviewer's whoami", async () => {
    const u = await signedInByDevice();
    const who = await cli(u, ["whoami", "--json"]);
    expect([who.code, who.json]).toEqual([
      0,
      expect.objectContaining({
        kind: "oidc",
        subject: "rita",
        issuer: idp.issuer,
        reviewer: true,
        scopes: ["registry:read", "registry:review"],
      }),
    ]);
  });

  test("a person by the browser flow: the code comes back to the CLI's loopback port", async () => {
    const u = user(server.url);
    const running = start(u, ["login", "--web", "--json"]);
    running.child.stdin?.end();
    const [, address] = await running.waitFor(/open (http:\/\/127\.0\.0\.1:\d+\/auth\?\S+)/);
    const authorization = new URL(address as string);
    const redirect = new URL(authorization.searchParams.get("redirect_uri") as string);
    expect(Object.fromEntries(authorization.searchParams)).toMatchObject({
      client_id: "agent-registry-cli",
      code_challenge_method: "S256",
      resource: server.url,
      response_type: "code",
    });
    const cliHost = redirect.host;
    const ua = new UserAgent({
      [`127.0.0.1:${idp.port}`]: loopbackRoute(idp.port),
      [cliHost]: loopbackRoute(Number(redirect.port)),
    });
    const loginPage = await ua.follow(address as string);
    const back = await ua.follow(await throughLoginPage(ua, loginPage, "rita"), (next) => next.host === cliHost);
    const landed = await ua.request("GET", back.location as string);
    expect([landed.status, landed.text]).toEqual([200, expect.stringContaining("Signed in")]);
    const done = await running.done;
    expect([done.code, done.json]).toEqual([0, expect.objectContaining({ kind: "oidc", subject: "rita" })]);
    secret((await storedFile(u)).registries[server.url].oidc.accessToken);
  });
});

describe("what an owner does", () => {
  test("status: deprecate with a successor, show, retire; the owner may not undo it, a reviewer may", async () => {
    // The reviewer signs in meanwhile: it takes a while, and needs nothing of the owner's.
    const reviewer = signedInByDevice();
    const [a, successor] = await Promise.all([agent(), agent()]);
    const u = await loggedIn(a);
    const deprecated = await cli(u, [
      "status",
      a.code,
      "--deprecated",
      "--message",
      "Use the new planner",
      "--successor",
      successor.code,
      "--json",
    ]);
    expect([deprecated.code, deprecated.json]).toEqual([
      0,
      expect.objectContaining({ lifecycle: "DEPRECATED", successorCode: successor.code, version: 2 }),
    ]);
    const shown = await cli(u, ["status", a.code]);
    expect(shown.stdout).toContain(`DEPRECATED: Use the new planner (use ${successor.code} instead)`);
    const retired = await cli(u, ["status", a.code, "--retired"]);
    expect([retired.code, retired.stdout]).toEqual([0, expect.stringContaining(`${a.code} is now RETIRED`)]);
    const undo = await cli(u, ["status", a.code, "--active", "--json"]);
    expect([undo.code, undo.json?.error?.status, undo.json?.error?.code]).toEqual([1, 409, "CONFLICT"]);

    const reactivated = await cli(await reviewer, ["status", a.code, "--active", "--json"]);
    expect([reactivated.code, reactivated.json?.lifecycle]).toEqual([0, "ACTIVE"]);
    expect((await request(server, "GET", `/api/v1/providers/${a.code}`)).body.lifecycle).toBe("ACTIVE");
  });

  test("domains: the proof to publish, a check that finds none (exit 1), then one that does", async () => {
    const a = await agent();
    const u = await loggedIn(a);
    const domain = `${a.code}.cli.test`;
    const [asked, words] = await Promise.all([
      cli(u, ["domains", "request", domain, "--provider", a.code, "--json"]),
      cli(u, ["domains", "request", domain, "--provider", a.code]),
    ]);
    expect(asked.code).toBe(0);
    expect(asked.json).toMatchObject({
      domain,
      verified: false,
      http: { url: `https://${domain}/.well-known/agent-registry/${a.code}.txt` },
      dns: { name: `_agent-registry.${domain}` },
    });
    expect(words.stdout).toContain(`A file at https://${domain}/.well-known/agent-registry/${a.code}.txt`);
    expect(words.stdout).toMatch(/value: agent-registry-verification=\S+/);
    // The later request's challenge is the one in force.
    const latest = (await cli(u, ["domains", "request", domain, "--provider", a.code, "--json"])).json;
    const missing = await cli(u, ["domains", "check", domain, "--provider", a.code]);
    expect([missing.code, missing.stderr]).toEqual([1, expect.stringContaining(`${domain} is not verified`)]);
    served.set(`/.well-known/agent-registry/${a.code}.txt`, `${latest.http.body}\n`);
    const found = await cli(u, ["domains", "check", domain, "--provider", a.code, "--json"]);
    expect([found.code, found.json]).toEqual([0, expect.objectContaining({ domain, verified: true, method: "HTTP" })]);
    const profile = await request(server, "GET", `/api/v1/providers/${a.code}`);
    expect(profile.body.verifiedDomains.map((d: { domain: string }) => d.domain)).toEqual([domain]);
  });

  test("tokens rotate: the new token kept first, then the old one revoked", async () => {
    const a = await agent();
    const u = await loggedIn(a);
    const rotated = await cli(u, ["tokens", "rotate", "--provider", a.code, "--label", "laptop", "--json"]);
    expect(rotated.code).toBe(0);
    const fresh = secret((await storedFile(u)).registries[server.url].agents[a.code].token as string);
    expect(fresh).not.toBe(a.token);
    expect(rotated.json).toMatchObject({
      providerCode: a.code,
      tokenPrefix: fresh.slice(0, 10),
      revokedTokenId: expect.stringMatching(/^tok_/),
    });
    const [oldOne, newOne] = await Promise.all([
      request(server, "GET", `/api/v1/providers/${a.code}`, { token: a.token }),
      request(server, "GET", `/api/v1/providers/${a.code}`, { token: fresh }),
    ]);
    expect([oldOne.status, newOne.status]).toEqual([401, 200]);
    expect(newOne.body.tokens.find((t: { prefix: string }) => t.prefix === fresh.slice(0, 10))?.label).toBe("laptop");
    const [who, fromEnv] = await Promise.all([
      cli(u, ["whoami", "--json"]),
      cli(u, ["tokens", "rotate", "--provider", a.code], { env: { AGENT_REGISTRY_TOKEN: fresh } }),
    ]);
    expect([who.code, who.json?.tokenPrefix]).toEqual([0, fresh.slice(0, 10)]);
    expect([fromEnv.code, fromEnv.stderr]).toEqual([2, expect.stringContaining("AGENT_REGISTRY_TOKEN is set")]);
  });
});
