/**
 * The feed over Server-Sent Events: Yoga's message format (`event: next` / `event: complete`, a
 * comment as keep-alive), with each event's seq as the message's `id`, which a reconnecting client
 * sends back as `Last-Event-ID` (feed.schema.ts).
 *
 * A message is written as one chunk, encoded once per event and shared by every subscriber that
 * gets the same result (feed.fanout.ts): with a thousand subscribers that is what an event costs.
 */

import { Readable } from "node:stream";
import { type ExecutionResult, GraphQLError } from "graphql";
import { isAsyncIterable, type Plugin } from "graphql-yoga";

const seqsOf = new WeakMap<Request, number[]>();

/** Where a feed stream notes the seq of each event it hands out, for the message that will carry it. */
export function seqsFor(request: Request): (seq: number) => void {
  const seqs: number[] = [];
  seqsOf.set(request, seqs);
  return (seq) => seqs.push(seq);
}

/** How often a comment keeps an idle stream open through proxies (Yoga's own interval). */
const PING_MS = 12_000;
const encoder = new TextEncoder();
const PING = encoder.encode(":\n\n");
const COMPLETE = encoder.encode("event: complete\ndata:\n\n");
/** Each shared result's message, by its seq: encoded once. */
const encoded = new WeakMap<object, Map<number | undefined, Uint8Array>>();

/** A result as Yoga writes it: without the internal `http` extension (the result's, and its errors'). */
function json(result: ExecutionResult & { stringify?: (r: unknown) => string }): string {
  if (!result.errors?.length && !(result.extensions as { http?: unknown } | undefined)?.http) {
    return result.stringify ? result.stringify(result) : JSON.stringify(result);
  }
  const { http: _http, ...extensions } = (result.extensions ?? {}) as Record<string, unknown>;
  const errors = result.errors?.map((error) => {
    const shown = error instanceof GraphQLError ? error.toJSON() : error;
    const { http: _status, ...rest } = (shown.extensions ?? {}) as Record<string, unknown>;
    return { ...shown, extensions: rest };
  });
  return JSON.stringify({ ...result, errors, extensions: Object.keys(extensions).length ? extensions : undefined });
}

function message(result: ExecutionResult, seq: number | undefined): Uint8Array {
  let bySeq = encoded.get(result);
  if (!bySeq) {
    bySeq = new Map();
    encoded.set(result, bySeq);
  }
  let bytes = bySeq.get(seq);
  if (!bytes) {
    bytes = encoder.encode(`${seq === undefined ? "" : `id: ${seq}\n`}event: next\ndata: ${json(result)}\n\n`);
    bySeq.set(seq, bytes);
  }
  return bytes;
}

/** `onOpen` is called as each stream opens; what it answers, once as the stream closes (the metrics count them). */
export function useFeedSse(options: { onOpen?: () => () => void } = {}): Plugin {
  return {
    onResultProcess({ request, result, resultProcessor, setResultProcessor }) {
      const seqs = seqsOf.get(request);
      if (!seqs || !resultProcessor || !isAsyncIterable(result)) return;
      setResultProcessor((input, fetchAPI) => {
        const iterator = (input as AsyncIterable<ExecutionResult>)[Symbol.asyncIterator]();
        let ping: NodeJS.Timeout | undefined;
        let reading = false;
        const closed = options.onOpen?.();
        // A Node stream, which the server pipes straight into the socket (a web stream would add a
        // layer of promises to every message).
        const body = new Readable({
          read() {
            if (reading) return;
            reading = true;
            void iterator.next().then(
              (next) => {
                reading = false;
                if (next.value != null) body.push(message(next.value, seqs.shift()));
                if (next.done) {
                  clearInterval(ping);
                  body.push(COMPLETE);
                  body.push(null);
                }
              },
              (error: unknown) => body.destroy(error as Error),
            );
          },
          // Called once however the stream ends: its end read (autoDestroy), the client gone, an error.
          destroy(error, done) {
            clearInterval(ping);
            closed?.();
            Promise.resolve(iterator.return?.()).then(
              () => done(error),
              () => done(error),
            );
          },
        });
        // A first comment, so that a browser that waits for the first bytes sees the stream open.
        body.push(PING);
        ping = setInterval(() => body.push(PING), PING_MS);
        return new fetchAPI.Response(body as unknown as BodyInit, {
          status: 200,
          headers: {
            "Content-Type": "text/event-stream",
            Connection: "keep-alive",
            "Cache-Control": "no-cache",
            "Content-Encoding": "none",
          },
        });
      }, "text/event-stream");
    },
  };
}
