/**
 * The change feed's GraphQL surface: `Subscription.feed`, the event log (src/events) as a stream,
 * over Server-Sent Events at /graphql (`Accept: text/event-stream`) and over WebSocket.
 *
 * Each SSE message carries its event's seq as its `id` (feed.sse.ts), so a client that reconnects
 * with `Last-Event-ID` — as EventSource does by itself — goes on after it: everything it missed, in
 * order, once. Who sees what is the log's rule; an agent's stream ends when its token is revoked or
 * its provider suspended (which revokes every token).
 */
import { builder } from "../builder.ts";
import { badInput } from "../errors.ts";
import { assertRetained, audienceOf, EventKindRef, EventRef, seqArg } from "../events/event.schema.ts";
import { lastSeq } from "../events/event.store.ts";
import { feedOf } from "./feed.pubsub.ts";
import { seqsFor } from "./feed.sse.ts";

builder.subscriptionType({});

builder.subscriptionField("feed", (t) =>
  t.field({
    type: EventRef,
    description:
      "The change log as it grows, each event once, in order, what the caller may see only (as `events`). From `after` (or the SSE `Last-Event-ID` header, which wins) when given — every event since, then live — else from now. Over SSE: GET or POST /graphql with `Accept: text/event-stream`; each message's `id` is its seq.",
    args: {
      after: t.arg.int({ description: "Start after this seq (the last one processed)" }),
      providerCode: t.arg.string({ description: "Only this provider's events" }),
      kinds: t.arg({ type: [EventKindRef], description: "Only these kinds" }),
    },
    subscribe: async (_root, args, ctx) => {
      if (args.kinds && args.kinds.length === 0) {
        throw badInput("kinds must name at least one kind", [{ path: "kinds", message: "empty" }]);
      }
      const header = ctx.request.headers.get("last-event-id");
      const resumed = header === null || header.trim() === "" ? undefined : Number(header.trim());
      if (resumed !== undefined && !/^\d+$/.test(header?.trim() ?? "")) {
        throw badInput("Last-Event-ID must be a seq", [{ path: "Last-Event-ID", message: "must be a whole number" }]);
      }
      const asked = resumed ?? seqArg(args.after, "after");
      if (asked !== undefined) await assertRetained(ctx.db, asked);
      // "From now" is fixed before the stream is answered: a write the client makes once it has
      // the answer's headers is in its stream.
      const after = asked ?? (await lastSeq(ctx.db));
      const viewer = ctx.viewer;
      const own = viewer.kind === "agent" ? viewer : null;
      return feedOf(ctx).stream({
        after,
        audience: audienceOf(viewer),
        providerCode: args.providerCode ?? undefined,
        kinds: args.kinds ? new Set<string>(args.kinds) : undefined,
        // An agent's stream ends when its provider is suspended (every token revoked) …
        until: (event) =>
          own !== null &&
          event.providerId === own.providerId &&
          event.patch.some(
            (op) =>
              (op as { path?: string; value?: unknown }).path === "/reviewStage" &&
              (op as { value?: unknown }).value === "SUSPENDED",
          ),
        // … or its own token revoked.
        revoked: (signal) =>
          own !== null && signal.providerId === own.providerId && signal.tokenIds.includes(own.tokenId),
        seen: seqsFor(ctx.request),
      });
    },
    resolve: (event) => event,
  }),
);
