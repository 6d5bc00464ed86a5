/**
 * The pure rules of webhooks: targets and filters a subscription may have, the backoff schedule
 * (full jitter, capped, never past the deadline), and signatures a receiver verifies with the
 * `standardwebhooks` package.
 */
import { describe, expect, test } from "@jest/globals";
import { Webhook } from "standardwebhooks";
import {
  attemptOutcome,
  checkKinds,
  checkUrl,
  messageBody,
  newMessageId,
  newSecret,
  nextAttemptAt,
  retryDelayMs,
  signedHeaders,
} from "../../src/webhooks/webhook.rules.ts";

const BACKOFF = { backoffBaseMs: 1000, backoffMaxMs: 60_000 };

describe("a subscription's URL", () => {
  test.each([
    ["https://hooks.example.com/in?x=1", true],
    ["https://93.184.215.14/hook", true],
    ["https://203.0.113.9/hook", false],
    ["http://hooks.example.com/in", false],
    ["ftp://hooks.example.com/in", false],
    ["https://user:pass@hooks.example.com/", false],
    ["https://localhost/hook", false],
    ["https://a.localhost/hook", false],
    ["https://127.0.0.1/hook", false],
    ["https://10.1.2.3/hook", false],
    ["https://169.254.169.254/latest", false],
    ["https://[::1]/hook", false],
    ["/relative", false],
    [`https://example.com/${"a".repeat(2000)}`, false],
  ])("%.60s → %s", (url, ok) => {
    const checked = checkUrl(url);
    expect(checked.ok).toBe(ok);
    if (!checked.ok) expect(checked.errors.map((e) => e.path)).toEqual(["url"]);
  });
});

describe("a subscription's kinds", () => {
  test("absent is every kind; known kinds pass", () => {
    expect(checkKinds(undefined)).toEqual({ ok: true, value: null });
    expect(checkKinds(["PROVIDER_UPDATED", "REVIEW_DECIDED"])).toEqual({
      ok: true,
      value: ["PROVIDER_UPDATED", "REVIEW_DECIDED"],
    });
  });
  test("empty, unknown and repeated kinds are refused by index", () => {
    expect(checkKinds([])).toMatchObject({ ok: false, errors: [{ path: "kinds" }] });
    expect(checkKinds(["PROVIDER_UPDATED", "NOPE", "PROVIDER_UPDATED"])).toMatchObject({
      ok: false,
      errors: [{ path: "kinds.1" }, { path: "kinds.2", message: "named twice" }],
    });
  });
});

describe("the backoff", () => {
  test("full jitter: up to a ceiling that doubles from the base to the maximum", () => {
    expect(retryDelayMs(1, BACKOFF, () => 0.999_999)).toBe(999);
    expect(retryDelayMs(2, BACKOFF, () => 0.999_999)).toBe(1999);
    expect(retryDelayMs(4, BACKOFF, () => 0.5)).toBe(4000);
    expect(retryDelayMs(30, BACKOFF, () => 0.999_999)).toBe(59_999);
    expect(retryDelayMs(10_000, BACKOFF, () => 0.5)).toBe(30_000);
    expect(retryDelayMs(3, BACKOFF, () => 0)).toBe(0);
  });
  test("the next attempt never passes the deadline, and none is made after it", () => {
    const now = new Date("2026-11-28T10:00:00Z");
    const deadline = new Date("2026-11-28T10:00:10Z");
    expect(nextAttemptAt(1, now, deadline, BACKOFF, () => 0.5)?.toISOString()).toBe("2026-11-28T10:00:00.500Z");
    expect(nextAttemptAt(20, now, deadline, BACKOFF, () => 0.9)?.toISOString()).toBe(deadline.toISOString());
    expect(nextAttemptAt(20, deadline, deadline, BACKOFF)).toBeNull();
  });
  test("the attempts of a day with the default schedule stay a few dozen", () => {
    const defaults = { backoffBaseMs: 5000, backoffMaxMs: 3_600_000 };
    let now = new Date("2026-11-28T00:00:00Z");
    const deadline = new Date(now.getTime() + 86_400_000);
    let attempts = 1;
    for (;;) {
      const next = nextAttemptAt(attempts, now, deadline, defaults, () => 0.5);
      if (!next) break;
      now = next;
      attempts += 1;
    }
    expect(attempts).toBeGreaterThan(20);
    expect(attempts).toBeLessThan(70);
  });
});

describe("messages", () => {
  test("are signed as Standard Webhooks says: the package's verify accepts them", () => {
    const secret = newSecret();
    expect(secret).toMatch(/^whsec_[A-Za-z0-9+/]{32}$/);
    const id = newMessageId();
    const body = messageBody({ kind: "PROVIDER_UPDATED", at: new Date(), data: { seq: 7 } });
    const headers = signedHeaders(secret, id, body, new Date());
    expect(headers["webhook-signature"]).toMatch(/^v1,[A-Za-z0-9+/]+=*$/);
    expect(new Webhook(secret).verify(body, headers)).toEqual(JSON.parse(body));
    expect(() => new Webhook(newSecret()).verify(body, headers)).toThrow();
    expect(() => new Webhook(secret).verify(body.replace("7", "8"), headers)).toThrow();
  });
  test("an outcome is a success for 2xx only", () => {
    expect(attemptOutcome({ status: 204 })).toEqual({ ok: true, statusCode: 204, error: null });
    expect(attemptOutcome({ status: 302 })).toMatchObject({ ok: false, error: "the receiver answered 302" });
    expect(attemptOutcome({ error: "timeout" })).toEqual({ ok: false, statusCode: null, error: "timeout" });
  });
});
