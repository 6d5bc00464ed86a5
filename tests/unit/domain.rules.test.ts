/** The pure rules of verified domains: which domain may be claimed, what proves it, what a failed re-check does. */
import { describe, expect, test } from "@jest/globals";
import {
  afterFailedRecheck,
  challengeOf,
  covers,
  fileHoldsToken,
  normalizeDomain,
  txtHoldsToken,
} from "../../src/trust/domain.rules.ts";

const ENDPOINT = "https://api.example.com/a2a";

describe("normalizeDomain", () => {
  test.each([
    ["example.com", "example.com"],
    ["api.example.com", "api.example.com"],
    ["  Example.COM. ", "example.com"],
  ])("%s for an endpoint at api.example.com is %s", (input, expected) => {
    expect(normalizeDomain(input, ENDPOINT)).toEqual({ ok: true, value: expected });
  });

  test("an internationalized name is stored as its A-labels", () => {
    expect(normalizeDomain("bücher.de", "https://shop.xn--bcher-kva.de/")).toEqual({
      ok: true,
      value: "xn--bcher-kva.de",
    });
  });

  test.each([
    ["com", ENDPOINT],
    ["co.uk", "https://api.shop.co.uk/"],
    ["github.io", "https://me.github.io/"],
    ["other.com", ENDPOINT],
    ["x.api.example.com", ENDPOINT],
    ["192.168.1.1", "https://192.168.1.1/"],
    ["[::1]", ENDPOINT],
    ["localhost", "http://localhost:8080/"],
    ["exa mple.com", ENDPOINT],
    ["-bad-.example.com", ENDPOINT],
    ["example.com/path", ENDPOINT],
    ["", ENDPOINT],
  ])("refuses %s (endpoint %s), naming domain", (input, endpoint) => {
    const checked = normalizeDomain(input, endpoint);
    expect(checked.ok).toBe(false);
    if (!checked.ok) expect(checked.errors.map((e) => e.path)).toEqual(["domain"]);
  });
});

test("covers: the host itself or a parent, never a sibling or a suffix of a label", () => {
  expect(covers("example.com", "api.example.com")).toBe(true);
  expect(covers("example.com", "example.com")).toBe(true);
  expect(covers("example.com", "badexample.com")).toBe(false);
  expect(covers("example.com", null)).toBe(false);
});

test("the proofs: a file line or a TXT record that is exactly the token", () => {
  const proof = challengeOf("example.com", "route-planner", "tok");
  expect(proof).toEqual({
    http: { url: "https://example.com/.well-known/agent-registry/route-planner.txt", body: "tok" },
    dns: { name: "_agent-registry.example.com", value: "agent-registry-verification=tok" },
  });
  expect(fileHoldsToken("tok\n", "tok")).toBe(true);
  expect(fileHoldsToken("# comment\r\n  tok  \r\n", "tok")).toBe(true);
  expect(fileHoldsToken("token", "tok")).toBe(false);
  expect(txtHoldsToken(["v=spf1", "agent-registry-verification=tok"], "tok")).toBe(true);
  expect(txtHoldsToken(["agent-registry-verification=tok2"], "tok")).toBe(false);
});

test("a failed re-check counts; the third in a row loses the verification", () => {
  expect(afterFailedRecheck(0)).toEqual({ failures: 1, lost: false });
  expect(afterFailedRecheck(1)).toEqual({ failures: 2, lost: false });
  expect(afterFailedRecheck(2)).toEqual({ failures: 0, lost: true });
});
