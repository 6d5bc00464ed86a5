/**
 * Verified publisher domains through the front door: a real HTTP server serves the well-known files
 * (OUTBOUND_TEST_HOSTS sends https://example.test there) and a real DNS server (dns2) the TXT
 * records. Challenges, checks by file and by TXT, refusals, the profile and timeline, re-checks
 * (losing a verification, two replicas racing), the endpoint moving away, and the reviewers' side.
 */

import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, test } from "@jest/globals";
import dns2 from "dns2";
import { loadConfig } from "../../src/config.ts";
import { openDb } from "../../src/db/client.ts";
import { createOutbound, type Outbound } from "../../src/outbound/outbound.ts";
import { summariesByIds } from "../../src/providers/provider.store.ts";
import { recheckDue } from "../../src/trust/domain.recheck.ts";
import { uniqueCode } from "../builders.ts";
import { FEED_QUERY, readSse } from "../feed/sse.ts";
import {
  type App,
  activeReviewCode,
  appWith,
  call,
  db,
  errorPaths,
  expectProblem,
  gql,
  intake,
  reviewerToken,
} from "../helpers.ts";

const { Packet } = dns2;

/** The well-known files served, by path; the TXT records, by name. */
const files = new Map<string, string>();
const txt = new Map<string, string[]>();
/** GETs the file server received, by path. */
const hits = new Map<string, number>();

let web: Server;
let dns: ReturnType<typeof dns2.createServer>;
let app: App;
let outbound: Outbound;
let env: Record<string, string>;
let rv: string;

const TRUST = { recheckIntervalSeconds: 86_400, challengeTtlSeconds: 7 * 86_400 };
const DAY = 86_400_000;

beforeAll(async () => {
  web = createServer((req, res) => {
    const path = req.url ?? "/";
    hits.set(path, (hits.get(path) ?? 0) + 1);
    const body = files.get(path);
    if (body === undefined) {
      res.writeHead(404).end("not found");
      return;
    }
    res.writeHead(200, { "content-type": "text/plain" }).end(body);
  });
  await new Promise<void>((resolve) => web.listen(0, "127.0.0.1", resolve));
  dns = dns2.createServer({
    udp: true,
    handle: (request, send) => {
      const response = Packet.createResponseFromRequest(request);
      const question = request.questions[0];
      const records = question ? txt.get(question.name.toLowerCase()) : undefined;
      if (!question || !records) {
        response.header.rcode = Packet.RCODE.NXDOMAIN;
        return void send(response);
      }
      for (const data of records)
        response.answers.push({
          name: question.name,
          class: Packet.CLASS.IN,
          ttl: 60,
          type: Packet.TYPE.TXT,
          data,
        } as dns2.Packet.Resource);
      send(response);
    },
  });
  const listening = await dns.listen({ udp: { port: 0, address: "127.0.0.1" } });
  env = {
    OUTBOUND_TEST_HOSTS: `example.test=127.0.0.1:${(web.address() as AddressInfo).port}`,
    OUTBOUND_TEST_DNS: `127.0.0.1:${listening.udp?.port}`,
  };
  app = appWith(env);
  outbound = createOutbound(loadConfig({ ...process.env, NODE_ENV: "test", ...env }).outbound);
  rv = await reviewerToken("domains-reviewer");
});

afterAll(async () => {
  web.closeAllConnections();
  await new Promise((resolve) => web.close(resolve));
  await dns.close();
});

/** An agent whose endpoint is under example.test. */
const agent = () =>
  intake({ endpoint: { url: "https://api.example.test/a2a", protocol: "A2A", authScheme: "BEARER" } });
const challenge = (code: string, token: string, domain: string) =>
  call("POST", `/api/v1/providers/${code}/domains`, { app, token, body: { domain } });
const check = (code: string, token: string, domain = "example.test") =>
  call("POST", `/api/v1/providers/${code}/domains/${domain}/check`, { app, token });
const profile = (code: string, token?: string) =>
  call("GET", `/api/v1/providers/${code}`, { app, ...(token ? { token } : {}) });
const kinds = async (code: string) =>
  ((await profile(code, rv)).body.reviewTimeline as { kind: string }[]).map((e) => e.kind);

/** An agent with example.test verified by its well-known file. */
async function verifiedAgent() {
  const created = await agent();
  const asked = await challenge(created.providerCode, created.accessToken, "example.test");
  files.set(`/.well-known/agent-registry/${created.providerCode}.txt`, `${asked.body.token}\n`);
  const checked = await check(created.providerCode, created.accessToken);
  expect(checked.body).toMatchObject({ verified: true, method: "HTTP" });
  return created;
}

describe("a challenge", () => {
  test("answers the token and both proofs, 201, not cached; asking again replaces a pending one", async () => {
    const created = await agent();
    const first = await challenge(created.providerCode, created.accessToken, "Example.TEST.");
    expect(first.status).toBe(201);
    expect(first.headers.get("cache-control")).toContain("no-store");
    const token = first.body.token as string;
    expect(token).toMatch(/^[A-Za-z0-9_-]{32}$/);
    expect(first.body).toEqual({
      domain: "example.test",
      token,
      http: { url: `https://example.test/.well-known/agent-registry/${created.providerCode}.txt`, body: token },
      dns: { name: "_agent-registry.example.test", value: `agent-registry-verification=${token}` },
      expiresAt: expect.any(String),
      verified: false,
    });
    const days = (Date.parse(first.body.expiresAt) - Date.now()) / DAY;
    expect(days).toBeGreaterThan(6.9);
    expect(days).toBeLessThanOrEqual(7);
    const again = await challenge(created.providerCode, created.accessToken, "api.example.test");
    expect(again.status).toBe(201);
    const replaced = await challenge(created.providerCode, created.accessToken, "example.test");
    expect(replaced.body.token).not.toBe(token);
    expect(await db.domainVerification.count({ where: { provider: { providerCode: created.providerCode } } })).toBe(2);
  });

  test.each([
    ["a domain that is not the endpoint's host or a parent of it", "other.test"],
    ["a child of the endpoint's host", "x.api.example.test"],
    ["an IP address", "127.0.0.1"],
    ["an IPv6 literal", "[::1]"],
    ["localhost", "localhost"],
    ["a public suffix", "test"],
    ["a URL", "https://example.test/"],
    ["an empty name", " "],
  ])("refuses %s: 400 naming /domain", async (_what, domain) => {
    const created = await agent();
    const answer = await challenge(created.providerCode, created.accessToken, domain);
    expectProblem(answer, 400, "BAD_USER_INPUT");
    expect(errorPaths(answer)).toEqual(["/domain"]);
  });

  test("com and co.uk are public suffixes even for an endpoint under them", async () => {
    const created = await intake({
      endpoint: { url: "https://api.shop.co.uk/a2a", protocol: "A2A", authScheme: "NONE" },
    });
    for (const domain of ["co.uk", "uk"]) {
      const answer = await challenge(created.providerCode, created.accessToken, domain);
      expect([answer.status, errorPaths(answer)]).toEqual([400, ["/domain"]]);
    }
    expect((await challenge(created.providerCode, created.accessToken, "shop.co.uk")).status).toBe(201);
  });

  test("only the owner: another agent's token 403, no token 401, a reviewer 403", async () => {
    const created = await agent();
    const other = await agent();
    expectProblem(await challenge(created.providerCode, other.accessToken, "example.test"), 403, "FORBIDDEN");
    expectProblem(await check(created.providerCode, other.accessToken), 403, "FORBIDDEN");
    const anonymous = await call("POST", `/api/v1/providers/${created.providerCode}/domains`, {
      app,
      body: { domain: "example.test" },
    });
    expectProblem(anonymous, 401, "UNAUTHENTICATED");
    expectProblem(await challenge(created.providerCode, rv, "example.test"), 403, "FORBIDDEN");
  });
});

describe("a check", () => {
  test("the well-known file proves control: verified by HTTP, on the profile for everyone, on the timeline", async () => {
    const created = await verifiedAgent();
    const again = await check(created.providerCode, created.accessToken);
    expect(again.status).toBe(200);
    expect(again.body).toEqual({
      domain: "example.test",
      verified: true,
      method: "HTTP",
      verifiedAt: expect.any(String),
      lastCheckedAt: expect.any(String),
      reason: null,
    });
    for (const token of [undefined, created.accessToken, rv]) {
      const seen = await profile(created.providerCode, token);
      expect(seen.body.verifiedDomains).toEqual([
        {
          domain: "example.test",
          method: "HTTP",
          verifiedAt: again.body.verifiedAt,
          lastCheckedAt: again.body.lastCheckedAt,
        },
      ]);
    }
    const timeline = await kinds(created.providerCode);
    expect(timeline.filter((k) => k === "DOMAIN_VERIFIED")).toHaveLength(1);
    // A verified domain asked for again keeps its token (the proof in place) and its state.
    const asked = await challenge(created.providerCode, created.accessToken, "example.test");
    expect(asked.body.token).toBe(files.get(`/.well-known/agent-registry/${created.providerCode}.txt`)?.trim());
    expect(asked.body.verified).toBe(true);
  });

  test("the TXT record proves control when there is no file: verified by DNS; GraphQL answers the same", async () => {
    const created = await agent();
    const asked = await gql(
      `mutation ($code: String!) { requestDomainChallenge(providerCode: $code, domain: "example.test") { token dns { name value } } }`,
      { code: created.providerCode },
      { app, token: created.accessToken },
    );
    const { token, dns: record } = asked.body.data.requestDomainChallenge;
    txt.set(record.name, [...(txt.get(record.name) ?? []), record.value]);
    const checked = await gql(
      `mutation ($code: String!) { checkDomain(providerCode: $code, domain: "example.test") { verified method reason } }`,
      { code: created.providerCode },
      { app, token: created.accessToken },
    );
    expect(checked.body.data.checkDomain).toEqual({ verified: true, method: "DNS", reason: null });
    expect(token).toBeTruthy();
    const read = await gql(
      `query ($code: String!) { provider(providerCode: $code) { verifiedDomains { domain method } } }`,
      { code: created.providerCode },
      { app },
    );
    expect(read.body.data.provider).toEqual({
      verifiedDomains: [{ domain: "example.test", method: "DNS" }],
    });
  });

  test("a conditional GET of the profile from before the verification answers 200 with the badge, not 304", async () => {
    const created = await agent();
    const before = await profile(created.providerCode);
    const etag = before.headers.get("etag") as string;
    expect(etag).toBeTruthy();
    const asked = await challenge(created.providerCode, created.accessToken, "example.test");
    files.set(`/.well-known/agent-registry/${created.providerCode}.txt`, asked.body.token);
    expect((await check(created.providerCode, created.accessToken)).body.verified).toBe(true);
    const after = await call("GET", `/api/v1/providers/${created.providerCode}`, {
      app,
      headers: { "if-none-match": etag },
    });
    expect(after.status).toBe(200);
    expect(after.body.verifiedDomains).toHaveLength(1);
    expect(after.body.version).toBe(before.body.version);
  });

  test("the change feed announces a verification to its subscribers", async () => {
    const created = await agent();
    const abort = new AbortController();
    const response = await app.fetch("http://registry.test/graphql", {
      method: "POST",
      headers: { accept: "text/event-stream", "content-type": "application/json", authorization: `Bearer ${rv}` },
      body: JSON.stringify({ query: FEED_QUERY, variables: { providerCode: created.providerCode } }),
      signal: abort.signal,
    });
    const stream = readSse(response, abort);
    try {
      const asked = await challenge(created.providerCode, created.accessToken, "example.test");
      files.set(`/.well-known/agent-registry/${created.providerCode}.txt`, asked.body.token);
      expect((await check(created.providerCode, created.accessToken)).body.verified).toBe(true);
      const event = await stream.next();
      // The publisher changed, and with it the public snapshot: publisherVerified, nothing else.
      expect(event.data.feed).toMatchObject({
        kind: "PUBLISHER_CHANGED",
        providerCode: created.providerCode,
        patch: [{ op: "replace", path: "/publisherVerified", from: null, value: true }],
        stateHash: expect.stringMatching(/^[0-9a-f]{64}$/),
        note: "example.test verified",
      });
      expect(await stream.drain(200)).toEqual([]);
    } finally {
      await stream.close();
    }
  });

  test("the wrong token: 200, verified false, a reason in plain words; nothing on the profile", async () => {
    const created = await agent();
    await challenge(created.providerCode, created.accessToken, "example.test");
    files.set(`/.well-known/agent-registry/${created.providerCode}.txt`, "not-the-token");
    const checked = await check(created.providerCode, created.accessToken);
    expect(checked.status).toBe(200);
    expect(checked.body).toMatchObject({ domain: "example.test", verified: false, method: null, verifiedAt: null });
    expect(checked.body.reason).toContain("does not hold the token");
    expect(checked.body.reason).toContain("_agent-registry.example.test");
    expect((await profile(created.providerCode)).body.verifiedDomains).toEqual([]);
    expect(await kinds(created.providerCode)).not.toContain("DOMAIN_VERIFIED");
  });

  test("an expired challenge is a 409; a domain never asked for a 404", async () => {
    const created = await agent();
    await challenge(created.providerCode, created.accessToken, "example.test");
    await db.domainVerification.updateMany({
      where: { provider: { providerCode: created.providerCode } },
      data: { expiresAt: new Date(Date.now() - 1000) },
    });
    const expired = await check(created.providerCode, created.accessToken);
    expectProblem(expired, 409, "CONFLICT");
    expect(expired.body.detail).toContain("expired");
    expectProblem(await check(created.providerCode, created.accessToken, "api.example.test"), 404, "NOT_FOUND");
  });
});

describe("the endpoint moving", () => {
  test("a PATCH to a host outside the verified domain removes it, with DOMAIN_REMOVED; one inside keeps it", async () => {
    const created = await verifiedAgent();
    const patch = (url: string) =>
      call("PATCH", `/api/v1/providers/${created.providerCode}`, {
        app,
        token: created.accessToken,
        body: { endpoint: { url } },
      });
    const inside = await patch("https://v2.example.test/a2a");
    expect(inside.status).toBe(200);
    expect(inside.body.verifiedDomains).toHaveLength(1);
    const outside = await patch("https://api.elsewhere.test/a2a");
    expect(outside.status).toBe(200);
    expect(outside.body.verifiedDomains).toEqual([]);
    expect(await kinds(created.providerCode)).toContain("DOMAIN_REMOVED");
    expect(await db.domainVerification.count({ where: { provider: { providerCode: created.providerCode } } })).toBe(0);
  });
});

describe("the directory's summaries", () => {
  /**
   * `publisherVerified` of one agent as every read of the list form answers it: the plain list, the
   * search and the updatedSince list over REST and GraphQL, and the change feed's summaries.
   */
  async function flags(code: string) {
    const label = (await db.provider.findUniqueOrThrow({ where: { providerCode: code } })).labels as string[];
    const [first] = label;
    const since = new Date(Date.now() - 3_600_000).toISOString();
    const rest = async (query: string) => {
      const answer = await call("GET", `/api/v1/providers?${query}`, { app, token: rv });
      expect(answer.status).toBe(200);
      const items = answer.body.items as { providerCode: string; publisherVerified: boolean }[];
      return items.find((i) => i.providerCode === code)?.publisherVerified;
    };
    const read = await gql(
      `query ($label: String!, $code: String!, $since: DateTime!) {
        plain: providers(labels: [$label]) { items { providerCode publisherVerified } }
        search: providers(search: $code) { items { providerCode publisherVerified } }
        changes: providers(labels: [$label], updatedSince: $since) { items { providerCode publisherVerified } }
      }`,
      { label: first, code, since },
      { app, token: rv },
    );
    const graphql = (list: { items: { providerCode: string; publisherVerified: boolean }[] }) =>
      list.items.find((i) => i.providerCode === code)?.publisherVerified;
    const { id } = await db.provider.findUniqueOrThrow({ where: { providerCode: code }, select: { id: true } });
    const [feed] = await summariesByIds(db, [id]);
    return {
      restPlain: await rest(`labels=${first}`),
      restSearch: await rest(`search=${code}`),
      restChanges: await rest(`labels=${first}&updatedSince=${encodeURIComponent(since)}`),
      graphqlPlain: graphql(read.body.data.plain),
      graphqlSearch: graphql(read.body.data.search),
      graphqlChanges: graphql(read.body.data.changes),
      feed: feed?.publisherVerified,
    };
  }
  const all = (flag: boolean) => ({
    restPlain: flag,
    restSearch: flag,
    restChanges: flag,
    graphqlPlain: flag,
    graphqlSearch: flag,
    graphqlChanges: flag,
    feed: flag,
  });
  /** An agent under example.test with a label of its own, so the plain list holds it alone. */
  const labelled = () =>
    intake({
      labels: [uniqueCode("pv")],
      endpoint: { url: "https://api.example.test/a2a", protocol: "A2A", authScheme: "BEARER" },
    });
  /** Verifies a domain of the agent by its TXT record; answers the record. */
  async function verify(created: { providerCode: string; accessToken: string }, domain = "example.test") {
    const asked = await challenge(created.providerCode, created.accessToken, domain);
    const record = asked.body.dns as { name: string; value: string };
    txt.set(record.name, [...(txt.get(record.name) ?? []), record.value]);
    expect((await check(created.providerCode, created.accessToken, domain)).body.verified).toBe(true);
    return record;
  }

  test("say verified publisher once a domain is verified, in every list, and not before", async () => {
    const created = await labelled();
    expect(await flags(created.providerCode)).toEqual(all(false));
    await challenge(created.providerCode, created.accessToken, "example.test");
    expect(await flags(created.providerCode)).toEqual(all(false));
    await verify(created);
    expect(await flags(created.providerCode)).toEqual(all(true));
  });

  test("lose it when the endpoint leaves the last verified domain, not while another still covers it", async () => {
    const created = await labelled();
    await verify(created, "example.test");
    await verify(created, "api.example.test");
    const patch = (url: string) =>
      call("PATCH", `/api/v1/providers/${created.providerCode}`, {
        app,
        token: created.accessToken,
        body: { endpoint: { url } },
      });
    // api.example.test is removed; example.test still covers the new host.
    expect((await patch("https://v2.example.test/a2a")).status).toBe(200);
    expect((await profile(created.providerCode)).body.verifiedDomains).toEqual([
      expect.objectContaining({ domain: "example.test" }),
    ]);
    expect(await flags(created.providerCode)).toEqual(all(true));
    expect((await patch("https://api.elsewhere.test/a2a")).status).toBe(200);
    expect(await flags(created.providerCode)).toEqual(all(false));
  });

  test("lose it when the re-checks lose the verification", async () => {
    const created = await labelled();
    const record = await verify(created);
    // Its record goes; other agents' records under the same name stay.
    txt.set(
      record.name,
      (txt.get(record.name) ?? []).filter((value) => value !== record.value),
    );
    let now = Date.now();
    for (let round = 0; round < 3; round++) {
      now += 2 * DAY;
      await recheckDue(db, outbound, TRUST, new Date(now));
    }
    expect(await kinds(created.providerCode)).toContain("DOMAIN_VERIFICATION_LOST");
    expect(await flags(created.providerCode)).toEqual(all(false));
  });
});

describe("reviewers", () => {
  const queue = (query: string) => call("GET", `/api/v1/reviews/queue?${query}`, { app, token: rv });
  const decide = (reviewCode: string, body: Record<string, unknown>) =>
    call("POST", `/api/v1/reviews/${reviewCode}/decision`, { app, token: rv, body });

  test("the queue shows and filters by whether the endpoint's domain is verified", async () => {
    const verified = await verifiedAgent();
    const plain = await agent();
    for (const [created, flag] of [
      [verified, true],
      [plain, false],
    ] as const) {
      const all = await queue(`providerCode=${created.providerCode}`);
      expect(all.body.items.map((i: { endpointVerified: boolean }) => i.endpointVerified)).toEqual([flag]);
      expect((await queue(`providerCode=${created.providerCode}&endpointVerified=${flag}`)).body.items).toHaveLength(1);
      expect((await queue(`providerCode=${created.providerCode}&endpointVerified=${!flag}`)).body.items).toHaveLength(
        0,
      );
    }
  });

  test("approving an unverified endpoint needs a note; a verified one does not", async () => {
    const plain = await agent();
    const code = await activeReviewCode(plain.providerCode);
    const refused = await decide(code, { decision: "APPROVE" });
    expectProblem(refused, 400, "BAD_USER_INPUT");
    expect(refused.body.errors).toEqual([
      { path: "/note", message: "is required when the endpoint's domain is not verified" },
    ]);
    expect((await decide(code, { decision: "APPROVE", note: "Called the vendor" })).body.status).toBe("APPROVED");

    const verified = await verifiedAgent();
    const approved = await decide(await activeReviewCode(verified.providerCode), { decision: "APPROVE" });
    expect([approved.status, approved.body.status]).toEqual([200, "APPROVED"]);
  });
});

describe("re-checks", () => {
  const rowOf = (providerCode: string) =>
    db.domainVerification.findFirstOrThrow({ where: { provider: { providerCode } } });

  test("three failed re-checks in a row lose the verification, with an event; a success resets the count", async () => {
    const lost = await verifiedAgent();
    const kept = await verifiedAgent();
    const lostFile = `/.well-known/agent-registry/${lost.providerCode}.txt`;
    const keptFile = `/.well-known/agent-registry/${kept.providerCode}.txt`;
    const keptToken = files.get(keptFile) as string;
    files.delete(lostFile);
    files.delete(keptFile);
    let now = Date.now();
    for (const round of [1, 2]) {
      now += 2 * DAY;
      await recheckDue(db, outbound, TRUST, new Date(now));
      expect((await rowOf(lost.providerCode)).failures).toBe(round);
      expect((await rowOf(kept.providerCode)).failures).toBe(round);
    }
    // The file is back for one of them: its count starts again.
    files.set(keptFile, keptToken);
    now += 2 * DAY;
    const result = await recheckDue(db, outbound, TRUST, new Date(now));
    expect(result.lost).toBeGreaterThanOrEqual(1);
    const back = await rowOf(kept.providerCode);
    expect([back.state, back.failures, back.lastCheckedAt?.getTime()]).toEqual(["VERIFIED", 0, now]);
    const gone = await rowOf(lost.providerCode);
    expect([gone.state, gone.method, gone.verifiedAt]).toEqual(["PENDING", null, null]);
    expect((await profile(lost.providerCode)).body.verifiedDomains).toEqual([]);
    const timeline = (await profile(lost.providerCode, rv)).body.reviewTimeline as { kind: string; actor: string }[];
    expect(timeline.at(-1)).toMatchObject({ kind: "DOMAIN_VERIFICATION_LOST", actor: "system" });
    // What the re-check logged, for the feed to announce: the publisher no longer verified.
    const lostEvents = result.notes.flatMap((n) => (n.kind === "APPENDED" ? n.events : []));
    expect(lostEvents.filter((e) => e.providerId === gone.providerId)).toEqual([
      expect.objectContaining({
        kind: "PUBLISHER_CHANGED",
        providerCode: lost.providerCode,
        patch: [{ op: "replace", path: "/publisherVerified", value: false }],
        note: "example.test no longer verified",
      }),
    ]);
    // The one that kept its verification changed nothing public: nothing logged for it.
    expect(lostEvents.filter((e) => e.providerCode === kept.providerCode)).toEqual([]);
    // And it is in the log: the provider's newest event.
    const logged = await gql(
      "query ($code: String) { events(providerCode: $code, last: 1) { items { kind patch { op path value } note } } }",
      { code: lost.providerCode },
      { app, token: rv },
    );
    expect(logged.body.errors).toBeUndefined();
    expect(logged.body.data.events.items).toEqual([
      {
        kind: "PUBLISHER_CHANGED",
        patch: [{ op: "replace", path: "/publisherVerified", value: false }],
        note: "example.test no longer verified",
      },
    ]);
  });

  test("expired challenges are deleted by the re-checks", async () => {
    const created = await agent();
    await challenge(created.providerCode, created.accessToken, "example.test");
    await recheckDue(db, outbound, TRUST, new Date(Date.now() + 8 * DAY));
    expect(await db.domainVerification.count({ where: { provider: { providerCode: created.providerCode } } })).toBe(0);
  });

  test("two replicas re-checking at once check each due domain once", async () => {
    const agents = [await verifiedAgent(), await verifiedAgent(), await verifiedAgent()];
    const other = await openDb(loadConfig({ ...process.env, NODE_ENV: "test" }).databaseUrl);
    try {
      hits.clear();
      const now = new Date(Date.now() + 30 * DAY);
      const [a, b] = await Promise.all([recheckDue(db, outbound, TRUST, now), recheckDue(other, outbound, TRUST, now)]);
      for (const created of agents) {
        expect(hits.get(`/.well-known/agent-registry/${created.providerCode}.txt`)).toBe(1);
        const row = await rowOf(created.providerCode);
        expect([row.state, row.lastCheckedAt?.getTime(), row.claimedUntil]).toEqual(["VERIFIED", now.getTime(), null]);
      }
      // Every file fetched was fetched once, whichever replica did it.
      expect([...hits.values()].every((n) => n === 1)).toBe(true);
      expect(a.checked + b.checked).toBeGreaterThanOrEqual(agents.length);
    } finally {
      await other.$disconnect();
    }
  });
});
