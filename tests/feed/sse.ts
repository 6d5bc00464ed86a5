/**
 * A tiny Server-Sent Events client for the feed tests: reads a GraphQL-over-SSE response (Yoga's
 * `event: next` / `event: complete` messages) and hands out the `data` of each `next`.
 */

export interface SseStream {
  /** The next `next` payload, or fails after `ms`. */
  next(ms?: number): Promise<any>;
  /** Payloads received within `ms`, without waiting for any in particular. */
  drain(ms: number): Promise<any[]>;
  /**
   * The payloads that pass `keep` until there are `count` of them, waiting for each as `next` does,
   * then those that arrive within `settle` ms more (so that one too many still shows). Others pass.
   */
  collect(count: number, keep: (payload: any) => boolean, settle?: number): Promise<any[]>;
  /** The SSE `id` of the last payload `next` gave (the event's seq), if it had one. */
  readonly lastId: string | undefined;
  /** Whether the server completed the stream (`event: complete` or end of body). */
  readonly ended: boolean;
  close(): Promise<void>;
}

/** `SseStream.collect`, for any stream that has `next` and `drain` (the WebSocket tests' too). */
export async function collectFrom(
  stream: Pick<SseStream, "next" | "drain">,
  count: number,
  keep: (payload: any) => boolean,
  settle = 100,
): Promise<any[]> {
  const kept: any[] = [];
  while (kept.length < count) {
    const payload = await stream.next();
    if (keep(payload)) kept.push(payload);
  }
  return [...kept, ...(await stream.drain(settle)).filter(keep)];
}

export function readSse(response: Response, abort?: AbortController): SseStream {
  if (!response.body) throw new Error("no body");
  // A real fetch answers a web ReadableStream; `yoga.fetch` in process a stream that is async-iterable.
  const body = response.body as unknown as AsyncIterable<Uint8Array> & {
    getReader?: () => ReadableStreamDefaultReader;
  };
  const chunks: AsyncIterator<Uint8Array> =
    typeof body[Symbol.asyncIterator] === "function"
      ? body[Symbol.asyncIterator]()
      : (() => {
          const reader = (body.getReader as () => ReadableStreamDefaultReader<Uint8Array>)();
          return {
            next: () => reader.read() as Promise<IteratorResult<Uint8Array>>,
            return: async () => {
              await reader.cancel();
              return { done: true, value: undefined };
            },
          };
        })();
  const decoder = new TextDecoder();
  const queue: any[] = [];
  const ids: (string | undefined)[] = [];
  let lastId: string | undefined;
  const waiters: (() => void)[] = [];
  let buffer = "";
  let ended = false;
  const wake = () => {
    for (const w of waiters.splice(0)) w();
  };
  void (async () => {
    try {
      for (;;) {
        const { value, done } = await chunks.next();
        if (done) break;
        buffer += decoder.decode(value, { stream: true });
        let cut = buffer.indexOf("\n\n");
        while (cut !== -1) {
          const message = buffer.slice(0, cut);
          buffer = buffer.slice(cut + 2);
          const event = /^event: (.*)$/m.exec(message)?.[1];
          const id = /^id: ?(.*)$/m.exec(message)?.[1];
          const data = message
            .split("\n")
            .filter((l) => l.startsWith("data:"))
            .map((l) => l.slice(5).trimStart())
            .join("\n");
          if (event === "complete") ended = true;
          else if (data) {
            queue.push(JSON.parse(data));
            ids.push(id);
          }
          wake();
          cut = buffer.indexOf("\n\n");
        }
      }
    } catch {
      // aborted
    }
    ended = true;
    wake();
  })();
  const wait = (ms: number) =>
    new Promise<void>((resolve) => {
      const timer = setTimeout(resolve, ms);
      waiters.push(() => {
        clearTimeout(timer);
        resolve();
      });
    });
  return {
    async next(ms = 10_000) {
      const until = Date.now() + ms;
      while (queue.length === 0) {
        if (ended) throw new Error("the stream ended");
        const left = until - Date.now();
        if (left <= 0) throw new Error(`no event within ${ms} ms`);
        await wait(left);
      }
      lastId = ids.shift();
      return queue.shift();
    },
    async drain(ms) {
      await new Promise((r) => setTimeout(r, ms));
      lastId = ids.splice(0).at(-1) ?? lastId;
      return queue.splice(0);
    },
    collect(count, keep, settle) {
      return collectFrom(this, count, keep, settle);
    },
    get lastId() {
      return lastId;
    },
    get ended() {
      return ended;
    },
    async close() {
      abort?.abort();
      await chunks.return?.().catch(() => {});
    },
  };
}

export const FEED_QUERY = `subscription Feed($providerCode: String, $kinds: [EventKind!], $after: Int) {
  feed(providerCode: $providerCode, kinds: $kinds, after: $after) {
    seq kind providerCode version reviewCode at patch { op path from value } stateHash note
  }
}`;
