/**
 * Which answers a committed change can make untrue (src/http/cache/scope.ts), for the events the log's
 * own rules draft (event.rules.ts): only its provider's by-code answers while it is in no list and
 * names no successor; everything otherwise. tests/cache/scoped.cache.test.ts shows it through a sync.
 */
import { describe, expect, test } from "@jest/globals";
import { draftsOfWrite, type ProviderState, publicSnapshot } from "../../src/events/event.rules.ts";
import type { FeedNote } from "../../src/feed/feed.outbox.ts";
import { touchedBy } from "../../src/http/cache/scope.ts";

const state = (changes: Partial<ProviderState> & Record<string, unknown> = {}): ProviderState => ({
  providerCode: "weather-bot",
  name: "Weather bot",
  summary: "Forecasts",
  visibility: "PUBLIC",
  lifecycle: "ACTIVE",
  lifecycleMessage: null,
  successorCode: null,
  reviewStage: "SUBMITTED",
  trustTier: "UNVERIFIED",
  publisherVerified: false,
  ...changes,
});

/** The note of one write, as the provider writes append it. */
function noteOf(before: ProviderState | null, after: ProviderState, kind = "PROVIDER_UPDATED"): FeedNote {
  const drafts = draftsOfWrite({
    providerId: 1,
    before: before && publicSnapshot(before),
    after: publicSnapshot(after),
    version: 2,
    events: [{ kind: (before ? kind : "PROVIDER_CREATED") as never }],
  });
  return { kind: "APPENDED", events: drafts.map((d, i) => ({ ...d, seq: i + 1, at: new Date() })) };
}

describe("what a change forgets", () => {
  test("a provider in review, made or changed, forgets its own answers only", () => {
    expect(touchedBy([noteOf(null, state())])).toEqual(["weather-bot"]);
    expect(touchedBy([noteOf(state(), state({ summary: "Forecasts, hourly" }))])).toEqual(["weather-bot"]);
    expect(touchedBy([noteOf(state(), state({ lifecycle: "DEPRECATED", lifecycleMessage: "old" }))])).toEqual([
      "weather-bot",
    ]);
    // Its health moved: an event with an empty patch.
    expect(touchedBy([noteOf(state(), state(), "HEALTH_CHANGED")])).toEqual(["weather-bot"]);
    expect(touchedBy([noteOf(null, state()), noteOf(null, state({ providerCode: "rain-bot" }))])).toEqual([
      "weather-bot",
      "rain-bot",
    ]);
  });

  test("a listed provider's change, or one that moves whom it is a predecessor of, forgets everything", () => {
    const approved = state({ reviewStage: "APPROVED" });
    expect(touchedBy([noteOf(approved, { ...approved, summary: "Forecasts, hourly" })])).toBeNull();
    expect(touchedBy([noteOf(null, approved)])).toBeNull();
    expect(touchedBy([noteOf(state(), approved, "STAGE_CHANGED")])).toBeNull();
    expect(touchedBy([noteOf(null, state({ successorCode: "rain-bot" }))])).toBeNull();
    expect(touchedBy([noteOf(state(), state({ successorCode: "rain-bot" }))])).toBeNull();
    expect(touchedBy([noteOf(state({ successorCode: "rain-bot" }), state({ visibility: "PRIVATE" }))])).toBeNull();
    expect(touchedBy([noteOf(state(), state({ reviewStage: "REJECTED" }), "STAGE_CHANGED")])).toBeNull();
    expect(touchedBy([noteOf(null, state()), { kind: "TOKENS_REVOKED", providerId: 1, tokenIds: ["t"] }])).toBeNull();
  });
});
