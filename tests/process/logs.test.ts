/**
 * The request log of the real process (API.md §6): structured JSON on stdout, exactly one line per
 * request with its request id, route pattern, status and latency — and no token, no JWT and no
 * `Authorization` value anywhere in the output, whichever way a client sends one: in the header
 * (valid, revoked, malformed, a JWT with a bad signature, Basic), in a body, in the query string, in
 * the path, as a GraphQL operation name, as the `X-Request-Id` — nor when the answer carries a new one.
 */
import { randomBytes } from "node:crypto";
import { join } from "node:path";
import { afterAll, describe, expect, test } from "@jest/globals";
import { signReviewerToken } from "../../src/auth/reviewer.jwt.ts";
import { loadConfig } from "../../src/config.ts";
import { intakeBody } from "../builders.ts";
import {
  type Answer,
  cleanUp,
  PROCESS_JWT_SECRET,
  request,
  type Server,
  startServer,
  stopServer,
  tempDir,
  waitForLine,
} from "./server.process.ts";

afterAll(cleanUp, 30_000);

interface Sent {
  id: string;
  method: string;
  route: string | null;
  status: number;
  operation?: string;
}

const base62 = (n: number) =>
  [...randomBytes(n)].map((b) => "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"[b % 62]).join("");

describe("the request log of the real process", () => {
  test("one line per request with id, route, status and latency; no credential ever", async () => {
    const server: Server = await startServer(`file:${join(tempDir(), "logs.db")}`);
    // The lines so far are the start-up's and its readiness probe's (whose line may follow its answer:
    // a turn's lines leave together, src/http/request.log.ts); the test's requests follow.
    await waitForLine(server, /"route":"\/ready","status":200/);
    const startLines = server.lines.length;
    const run = randomBytes(3).toString("hex");
    const sent: Sent[] = [];
    /** Every credential and Authorization value sent or received. */
    const secrets = new Set<string>();
    let n = 0;
    let unlabelled = 0;

    /** Sends a request with a fresh request id and records what its log line must say. */
    async function send(
      method: string,
      path: string,
      route: string | null,
      options: {
        body?: unknown;
        raw?: string;
        token?: string;
        headers?: Record<string, string>;
        operation?: string;
      } = {},
    ): Promise<Answer> {
      const id = `log-${run}-${n++}`;
      const headers: Record<string, string> = { "x-request-id": id, ...options.headers };
      if (options.token) secrets.add(`Bearer ${options.token}`);
      if (headers.authorization) secrets.add(headers.authorization);
      const answer =
        options.raw === undefined
          ? await request(server, method, path, { ...options, headers })
          : await fetch(`${server.url}${path}`, {
              method,
              headers: {
                ...headers,
                "content-type": "application/json",
                ...(options.token ? { authorization: `Bearer ${options.token}` } : {}),
              },
              body: options.raw,
            }).then(async (r) => ({ status: r.status, headers: r.headers, body: null, text: await r.text() }));
      expect(answer.headers.get("x-request-id")).toBe(id);
      sent.push({
        id,
        method,
        route,
        status: answer.status,
        ...(options.operation ? { operation: options.operation } : {}),
      });
      return answer;
    }

    const reviewerJwt = await signReviewerToken(
      loadConfig({ NODE_ENV: "test", REVIEWER_JWT_SECRET: PROCESS_JWT_SECRET }),
      "log-reviewer",
      { roles: ["reviewer"] },
    );
    secrets.add(reviewerJwt);

    // Intake over REST and over GraphQL: the answers carry tokens.
    const intake = await send("POST", "/api/v1/providers", "/api/v1/providers", {
      body: intakeBody(),
      operation: "mutation createProvider",
    });
    expect(intake.status).toBe(201);
    const { providerCode: code, accessToken: token } = intake.body;
    secrets.add(token);
    const viaGraphql = await send("POST", "/graphql", "/graphql", {
      body: {
        query: `mutation Intake($providerCode: String, $name: String!, $summary: String!, $agentType: AgentType!,
          $contactEmail: String!, $endpoint: EndpointInput!, $labels: [String!]) {
          createProvider(providerCode: $providerCode, name: $name, summary: $summary, agentType: $agentType,
            contactEmail: $contactEmail, endpoint: $endpoint, labels: $labels) { accessToken }
        }`,
        variables: intakeBody(),
      },
    });
    const gqlToken: string = viaGraphql.body?.data?.createProvider?.accessToken;
    expect(gqlToken).toMatch(/^agr_/);
    secrets.add(gqlToken);
    sent[sent.length - 1] = { ...(sent.at(-1) as Sent), operation: "mutation createProvider" };

    // The owner reads and writes; a token in a body (here: as the summary) is still a body.
    const providerRoute = "/api/v1/providers/{providerCode}";
    expect(
      (await send("GET", `/api/v1/providers/${code}`, providerRoute, { token, operation: "query provider" })).status,
    ).toBe(200);
    const patched = await send("PATCH", `/api/v1/providers/${code}`, providerRoute, {
      token,
      body: { summary: `my token is ${token}` },
      operation: "mutation updateProvider",
    });
    expect(patched.status).toBe(200);

    // Rotation: a new token in the answer, then revoked, then used.
    const issued = await send("POST", `/api/v1/providers/${code}/tokens`, "/api/v1/providers/{providerCode}/tokens", {
      token,
      body: { label: "second" },
      operation: "mutation issueToken",
    });
    expect(issued.status).toBe(201);
    const second: string = issued.body.accessToken;
    secrets.add(second);
    const revoked = await send(
      "DELETE",
      `/api/v1/providers/${code}/tokens/${issued.body.token.tokenId}`,
      "/api/v1/providers/{providerCode}/tokens/{tokenId}",
      { token, operation: "mutation revokeToken" },
    );
    expect(revoked.status).toBe(200);
    expect((await send("GET", `/api/v1/providers/${code}`, providerRoute, { token: second })).status).toBe(401);

    // A reviewer, and an agent where only reviewers may go.
    const queue = "/api/v1/reviews/queue";
    expect((await send("GET", queue, queue, { token: reviewerJwt, operation: "query reviewQueue" })).status).toBe(200);
    expect([403, 404]).toContain((await send("GET", queue, queue, { token })).status);

    // Bad credentials of every kind.
    const badChecksum = `agr_${base62(38)}`;
    const forgedJwt = `${reviewerJwt.slice(0, -6)}${base62(6)}`;
    for (const authorization of [
      `Bearer ${badChecksum}`,
      `Bearer ${forgedJwt}`,
      `bearer   ${token}x`,
      `Basic ${Buffer.from(`user:${token}`).toString("base64")}`,
      `Token ${token}`,
    ]) {
      secrets.add(authorization);
      secrets.add(authorization.split(/\s+/)[1] as string);
      expect((await send("GET", "/api/v1/providers", "/api/v1/providers", { headers: { authorization } })).status).toBe(
        401,
      );
    }

    // Tokens where they do not belong: the query string, the path, a malformed body, a GraphQL
    // operation name (a valid GraphQL name), an unknown route, and the request id itself.
    expect((await send("GET", `/api/v1/providers?access_token=${token}`, "/api/v1/providers")).status).toBe(400);
    expect(
      (await send("GET", `/api/v1/providers/${token}`, providerRoute, { operation: "query provider" })).status,
    ).toBe(404);
    expect(
      (
        await send(
          "GET",
          `/api/v1/providers/${code}/versions/${token}`,
          "/api/v1/providers/{providerCode}/versions/{version}",
        )
      ).status,
    ).toBe(400);
    expect(
      (await send("PATCH", `/api/v1/providers/${code}`, providerRoute, { token, raw: `{"summary": "${token}` })).status,
    ).toBe(400);
    expect((await send("GET", `/nowhere/${token}`, null)).status).toBe(404);
    expect((await send("GET", `/api/v1/nowhere/${token}`, null)).status).toBe(404);
    const named = await send("POST", "/graphql", "/graphql", {
      body: { query: `query ${token} { api { name } }`, operationName: token },
      operation: "query api",
    });
    expect(named.status).toBe(200);
    expect([200, 404]).toContain(
      (
        await send("POST", "/graphql", "/graphql", {
          body: { query: "query P($c: String!) { provider(providerCode: $c) { version } }", variables: { c: token } },
          token: reviewerJwt,
          operation: "query provider",
        })
      ).status,
    );
    const echoed = await request(server, "GET", "/health", { headers: { "x-request-id": token } });
    expect(echoed.status).toBe(200);
    expect(echoed.headers.get("x-request-id")).not.toBe(token);
    unlabelled++;

    // Transport routes, and a bulk of ordinary reads with and without credentials.
    for (const path of ["/health", "/ready", "/openapi.json", "/api/v1", "/api/v1/health"]) {
      expect((await send("GET", path, path)).status).toBe(200);
    }
    await Promise.all(
      Array.from({ length: 40 }, (_, i) =>
        send("GET", `/api/v1/providers/${code}/versions`, "/api/v1/providers/{providerCode}/versions", {
          ...(i % 2 ? { token } : { token: reviewerJwt }),
          operation: "query providerVersions",
        }),
      ),
    );

    expect(await stopServer(server)).toEqual({ code: 0, signal: null });
    const output = [...server.lines, ...server.stderr];

    // No credential, whole or as its secret part, and no Authorization value in any line.
    for (const secret of secrets) {
      const core = secret.replace(/^\S+\s+/, "");
      const parts = [secret, core, core.startsWith("agr_") ? core.slice(4, 36) : core.slice(-40)];
      for (const part of parts) expect(output.filter((line) => line.includes(part))).toEqual([]);
    }
    expect(output.filter((line) => /authorization|bearer |basic /i.test(line))).toEqual([]);

    // Every stdout line is JSON; the request lines are exactly one per request.
    const parsed = server.lines.map((line) => JSON.parse(line) as Record<string, unknown>);
    const requestLines = parsed.slice(startLines).filter((l) => "requestId" in l);
    expect(requestLines).toHaveLength(sent.length + unlabelled);
    for (const s of sent) {
      const lines = requestLines.filter((l) => l.requestId === s.id);
      expect(lines).toHaveLength(1);
      const line = lines[0] as Record<string, unknown>;
      expect(line).toMatchObject({ method: s.method, route: s.route, status: s.status });
      if (s.operation) expect(line.operation).toBe(s.operation);
      expect(typeof line.time).toBe("string");
      expect(line.level).toBe("info");
      expect(typeof line.ms).toBe("number");
      expect(line.ms as number).toBeGreaterThanOrEqual(0);
      expect(Object.keys(line).sort()).toEqual(
        [
          "level",
          "method",
          "ms",
          "requestId",
          "route",
          "status",
          "time",
          ...("operation" in line ? ["operation"] : []),
        ].sort(),
      );
    }
    console.info(`logs: ${requestLines.length} request lines checked against ${secrets.size} credentials`);
  }, 60_000);
});
