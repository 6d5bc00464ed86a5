/**
 * HTTP caching of reads (API.md §4, "HTTP conventions"; src/http/conditional.ts): every GET route
 * answers HEAD as GET without the body; API reads carry a strong ETag of their bytes and answer a
 * matching If-None-Match with 304; anonymous reads may be kept briefly by shared caches, reads with
 * credentials never (`Vary: Authorization`), errors never. The response cache's hits, on the fetch
 * path and on the node side, answer the same way.
 */
import { afterAll, beforeAll, describe, expect, test } from "@jest/globals";
import { loadConfig } from "../../src/config.ts";
import { createApp } from "../../src/yoga.ts";
import { uniqueCode } from "../builders.ts";
import { type Answer, approve, call, config, db, intake, type Listening, listen, reviewerToken } from "../helpers.ts";

/** A tag of a body's bytes; a profile's is led by its version (`"3-…"`). */
const TAG = /^"(?:[0-9]+-)?[\w-]{16}"$/;

/** An approved provider with two versions, so that every read route has something to answer. */
async function approvedWithTwoVersions() {
  const created = await intake();
  await approve(created.providerCode);
  const patched = await call("PATCH", `/api/v1/providers/${created.providerCode}`, {
    token: created.accessToken,
    body: { summary: "A second version, for the diff" },
  });
  expect(patched.status).toBe(200);
  return created;
}

/** Headers as a plain object, without those that differ between any two answers. */
function headersOf(answer: Answer): Record<string, string> {
  const out: Record<string, string> = {};
  answer.headers.forEach((value, name) => {
    if (name !== "x-request-id" && name !== "date") out[name] = value;
  });
  return out;
}

const agent = await approvedWithTwoVersions();
const code = agent.providerCode;
const reads = {
  profile: `/api/v1/providers/${code}`,
  list: `/api/v1/providers?search=${encodeURIComponent(code)}`,
  versions: `/api/v1/providers/${code}/versions`,
  version: `/api/v1/providers/${code}/versions/1`,
  diff: `/api/v1/providers/${code}/versions/1/diff/2`,
  agentCard: `/api/v1/providers/${code}/agent-card.json`,
  description: "/api/v1",
  openapi: "/openapi.json",
};

describe("HEAD", () => {
  test.each([
    ...Object.entries(reads),
    ["health", "/health"],
    ["readiness", "/ready"],
    ["a web page", "/intake"],
    ["an unknown provider", "/api/v1/providers/no-such-agent"],
  ])("HEAD of %s answers GET's status and headers, without a body", async (_what, path) => {
    const get = await call("GET", path);
    const head = await call("HEAD", path);
    expect(head.text).toBe("");
    expect({ status: head.status, headers: headersOf(head) }).toEqual({ status: get.status, headers: headersOf(get) });
  });

  test("a route that has no GET answers HEAD with 405, and every 405 lists HEAD wherever GET is allowed", async () => {
    const postOnly = await call("HEAD", "/api/v1/providers/import");
    expect(postOnly.status).toBe(405);
    expect(postOnly.headers.get("allow")).toBe("POST");
    expect(postOnly.text).toBe("");
    const both = await call("DELETE", "/api/v1/providers");
    expect(both.status).toBe(405);
    expect(both.headers.get("allow")).toBe("GET, HEAD, POST");
  });

  test("HEAD of a route for reviewers without credentials is the same 401 as GET", async () => {
    const get = await call("GET", "/api/v1/reviews/queue");
    const head = await call("HEAD", "/api/v1/reviews/queue");
    expect(get.status).toBe(401);
    expect({ status: head.status, headers: headersOf(head), text: head.text }).toEqual({
      status: 401,
      headers: headersOf(get),
      text: "",
    });
  });
});

describe("ETag and If-None-Match", () => {
  test.each(Object.entries(reads))("GET of %s has a strong ETag of its bytes; naming it is a 304", async (_w, path) => {
    const first = await call("GET", path);
    expect(first.status).toBe(200);
    const etag = first.headers.get("etag") as string;
    expect(etag).toMatch(TAG);
    expect(first.headers.get("content-length")).toBe(String(Buffer.byteLength(first.text)));
    const again = await call("GET", path);
    expect(again.headers.get("etag")).toBe(etag);

    const unchanged = await call("GET", path, { headers: { "if-none-match": etag } });
    expect(unchanged.status).toBe(304);
    expect(unchanged.text).toBe("");
    expect(unchanged.headers.get("etag")).toBe(etag);
    expect(unchanged.headers.get("cache-control")).toBe(first.headers.get("cache-control"));
    expect(unchanged.headers.get("vary")).toBe(first.headers.get("vary"));
    expect(unchanged.headers.get("content-type")).toBeNull();
    expect(unchanged.headers.get("content-length")).toBeNull();
    const headUnchanged = await call("HEAD", path, { headers: { "if-none-match": etag } });
    expect(headUnchanged.status).toBe(304);
  });

  test("If-None-Match is a list compared weakly, or `*`; anything else gets the full answer", async () => {
    const first = await call("GET", reads.profile);
    const etag = first.headers.get("etag") as string;
    const statusWith = async (header: string) =>
      (await call("GET", reads.profile, { headers: { "if-none-match": header } })).status;
    expect(await statusWith(`"other", W/${etag}`)).toBe(304);
    expect(await statusWith(`"a",${etag} , "b"`)).toBe(304);
    expect(await statusWith("*")).toBe(304);
    expect(await statusWith('"other"')).toBe(200);
    expect(await statusWith(etag.slice(1, -1))).toBe(200);
    expect(await statusWith(`${etag}; junk`)).toBe(200);
    // The version is not a validator of the GET answer (see the suspension below).
    expect(await statusWith('"2"')).toBe(200);
  });

  test("after a PATCH the old tag gets the new profile with a new tag; the PATCH answer keeps its version tag", async () => {
    const created = await intake();
    await approve(created.providerCode);
    const path = `/api/v1/providers/${created.providerCode}`;
    const before = await call("GET", path);
    const oldTag = before.headers.get("etag") as string;
    const patched = await call("PATCH", path, { token: created.accessToken, body: { summary: "Changed since" } });
    expect(patched.headers.get("etag")).toBe('"2"');
    const after = await call("GET", path, { headers: { "if-none-match": oldTag } });
    expect(after.status).toBe(200);
    expect(after.body.summary).toBe("Changed since");
    expect(after.headers.get("etag")).toMatch(/^"2-[\w-]{16}"$/);
    expect(after.headers.get("etag")).not.toBe(oldTag);
  });

  test("If-Match takes the tag a GET gave: it names the version the body was read at", async () => {
    const created = await intake();
    const path = `/api/v1/providers/${created.providerCode}`;
    const read = await call("GET", path, { token: created.accessToken });
    const tag = read.headers.get("etag") as string;
    expect(tag).toMatch(/^"1-[\w-]{16}"$/);
    const first = { token: created.accessToken, headers: { "if-match": tag } };
    const patched = await call("PATCH", path, { ...first, body: { summary: "Read, then changed" } });
    expect([patched.status, patched.body.version]).toEqual([200, 2]);
    // The same tag again is stale now: 412, and nothing changes.
    const stale = await call("PATCH", path, { ...first, body: { summary: "Changed twice" } });
    expect(stale.status).toBe(412);
    expect((await call("GET", path)).body.summary).toBe("Read, then changed");
  });

  test("a suspension changes the profile but not its version: the old tag is not a 304", async () => {
    const created = await intake();
    await approve(created.providerCode);
    const reviewer = await reviewerToken("conditional-test");
    const path = `/api/v1/providers/${created.providerCode}`;
    const before = await call("GET", path, { token: reviewer });
    expect(before.body.reviewStage).toBe("APPROVED");
    const suspended = await call("POST", `${path}/suspend`, { token: reviewer, body: { note: "Checking a report" } });
    expect(suspended.status).toBe(200);
    const after = await call("GET", path, {
      token: reviewer,
      headers: { "if-none-match": before.headers.get("etag") as string },
    });
    expect(after.status).toBe(200);
    expect(after.body).toMatchObject({ reviewStage: "SUSPENDED", version: before.body.version });
    expect(after.headers.get("etag")).not.toBe(before.headers.get("etag"));
  });

  test("the owner and an anonymous caller see different profiles, with different tags", async () => {
    const owner = await call("GET", reads.profile, { token: agent.accessToken });
    const anonymous = await call("GET", reads.profile);
    expect(owner.body.contactEmail).toBe("ops@example.com");
    expect(anonymous.body.contactEmail).toBeNull();
    expect(owner.headers.get("etag")).not.toBe(anonymous.headers.get("etag"));
    const crossed = await call("GET", reads.profile, {
      token: agent.accessToken,
      headers: { "if-none-match": anonymous.headers.get("etag") as string },
    });
    expect(crossed.status).toBe(200);
  });
});

describe("Cache-Control and Vary", () => {
  test.each(Object.entries(reads))("an anonymous read of %s is public for a short while", async (_w, path) => {
    const answer = await call("GET", path);
    expect(answer.headers.get("cache-control")).toBe(`public, max-age=${config.httpCacheMaxAge}`);
    expect(answer.headers.get("vary")).toMatch(/(^|, )Authorization(,|$)/);
  });

  test("a read with credentials is private, for any credential and any route", async () => {
    const reviewer = await reviewerToken("conditional-private");
    for (const [path, token] of [
      [reads.profile, agent.accessToken],
      [reads.list, reviewer],
      ["/api/v1/reviews/queue", reviewer],
      [`/api/v1/reviews/${agent.reviewCode}`, reviewer],
    ] as const) {
      const answer = await call("GET", path, { token });
      expect({ path, status: answer.status, cacheControl: answer.headers.get("cache-control") }).toEqual({
        path,
        status: 200,
        cacheControl: "private, no-cache",
      });
      expect(answer.headers.get("vary")).toMatch(/Authorization/);
      expect(answer.headers.get("etag")).toMatch(TAG);
    }
  });

  test("errors are never kept: 400, 401, 403, 404 and 405 are no-store", async () => {
    const answers = [
      await call("GET", "/api/v1/providers?limit=0"),
      await call("GET", "/api/v1/reviews/queue"),
      await call("GET", "/api/v1/reviews/queue", { token: agent.accessToken }),
      await call("GET", `/api/v1/providers/${uniqueCode("none")}`),
      await call("GET", "/api/v1/no-such-route"),
      await call("GET", "/api/v1/providers/import"),
    ];
    expect(answers.map((a) => a.status)).toEqual([400, 401, 403, 404, 404, 405]);
    for (const answer of answers) {
      expect(answer.headers.get("cache-control")).toBe("no-store");
      expect(answer.headers.get("etag")).toBeNull();
    }
  });

  test("health checks and answers that hold a secret keep no-store", async () => {
    for (const path of ["/health", "/ready", "/api/v1/health"]) {
      expect((await call("GET", path)).headers.get("cache-control")).toBe("no-store");
    }
    const issued = await call("POST", `/api/v1/providers/${agent.providerCode}/tokens`, {
      token: agent.accessToken,
      body: { label: "conditional" },
    });
    expect(issued.status).toBe(201);
    expect(issued.headers.get("cache-control")).toBe("no-store");
  });

  test("HTTP_CACHE_MAX_AGE sets max-age; CORS's Vary: Origin is kept beside Authorization and Accept-Encoding", async () => {
    expect(() => loadConfig({ NODE_ENV: "test", HTTP_CACHE_MAX_AGE: "soon" })).toThrow(/HTTP_CACHE_MAX_AGE/);
    const tuned = createApp(
      {
        ...loadConfig({ ...process.env, NODE_ENV: "test", HTTP_CACHE_MAX_AGE: "45" }),
        corsOrigins: ["https://a.example"],
      },
      db,
    );
    const answer = await call("GET", reads.profile, { app: tuned, headers: { origin: "https://a.example" } });
    expect(answer.headers.get("cache-control")).toBe("public, max-age=45");
    expect(answer.headers.get("vary")?.split(/,\s*/).sort()).toEqual(["Accept-Encoding", "Authorization", "Origin"]);
  });
});

describe("the response cache's hits", () => {
  const cached = createApp({ ...config, responseCache: true }, db);

  test("a hit on the fetch path carries the same headers, honours If-None-Match and answers HEAD", async () => {
    const created = await intake();
    await approve(created.providerCode);
    const path = `/api/v1/providers/${created.providerCode}`;
    const miss = await call("GET", path, { app: cached });
    expect(miss.headers.get("x-cache")).toBeNull();
    const hit = await call("GET", path, { app: cached });
    expect(hit.headers.get("x-cache")).toBe("HIT");
    const { "x-cache": _hit, ...same } = headersOf(hit);
    expect(same).toEqual(headersOf(miss));
    const etag = miss.headers.get("etag") as string;
    const notModified = await call("GET", path, { app: cached, headers: { "if-none-match": etag } });
    expect({ status: notModified.status, cache: notModified.headers.get("x-cache"), text: notModified.text }).toEqual({
      status: 304,
      cache: "HIT",
      text: "",
    });
    const head = await call("HEAD", path, { app: cached });
    expect({ status: head.status, text: head.text }).toEqual({ status: 200, text: "" });
    expect(headersOf(head)).toEqual(headersOf(hit));
  });

  test("HEAD does not fill the cache with an empty body", async () => {
    const created = await intake();
    await approve(created.providerCode);
    const path = `/api/v1/providers/${created.providerCode}`;
    const head = await call("HEAD", path, { app: cached });
    expect(head.status).toBe(200);
    const get = await call("GET", path, { app: cached });
    expect(get.headers.get("x-cache")).toBeNull();
    expect(get.body.providerCode).toBe(created.providerCode);
  });

  describe("behind node:http, answered before Yoga", () => {
    let server: Listening;
    let base: string;
    beforeAll(async () => {
      server = await listen((req, res) => void cached(req, res));
      base = server.url;
    });
    afterAll(() => server.close());

    test("a hit honours If-None-Match and HEAD with the headers of the miss", async () => {
      const created = await intake();
      await approve(created.providerCode);
      const url = `${base}/api/v1/providers/${created.providerCode}`;
      const miss = await fetch(url);
      const body = await miss.text();
      const etag = miss.headers.get("etag") as string;
      expect(etag).toMatch(TAG);
      const hit = await fetch(url);
      expect(hit.headers.get("x-cache")).toBe("HIT");
      expect(await hit.text()).toBe(body);
      for (const name of ["etag", "cache-control", "vary", "content-type", "content-length"]) {
        expect({ name, value: hit.headers.get(name) }).toEqual({ name, value: miss.headers.get(name) });
      }

      const notModified = await fetch(url, { headers: { "if-none-match": `W/${etag}` } });
      expect(notModified.status).toBe(304);
      expect(notModified.headers.get("x-cache")).toBe("HIT");
      expect(notModified.headers.get("etag")).toBe(etag);
      expect(notModified.headers.get("cache-control")).toBe(miss.headers.get("cache-control"));
      expect(notModified.headers.get("vary")).toBe(miss.headers.get("vary"));
      expect(notModified.headers.get("content-type")).toBeNull();
      expect(await notModified.text()).toBe("");

      const other = await fetch(url, { headers: { "if-none-match": '"something-else"' } });
      expect(other.status).toBe(200);
      expect(await other.text()).toBe(body);

      const head = await fetch(url, { method: "HEAD" });
      expect(head.status).toBe(200);
      expect(head.headers.get("x-cache")).toBe("HIT");
      expect(head.headers.get("content-length")).toBe(String(Buffer.byteLength(body)));
      expect(head.headers.get("etag")).toBe(etag);
      expect(await head.text()).toBe("");
    });

    test("HEAD over a socket, missed by the cache: GET's Content-Length, no body, the connection goes on", async () => {
      const created = await intake();
      await approve(created.providerCode);
      const url = `${base}/api/v1/providers/${created.providerCode}/versions`;
      const head = await fetch(url, { method: "HEAD" });
      expect(head.headers.get("x-cache")).toBeNull();
      const get = await fetch(url);
      const text = await get.text();
      expect(head.status).toBe(200);
      expect(head.headers.get("content-length")).toBe(String(Buffer.byteLength(text)));
      expect(head.headers.get("etag")).toBe(get.headers.get("etag"));
      expect(await head.text()).toBe("");
    });
  });
});
