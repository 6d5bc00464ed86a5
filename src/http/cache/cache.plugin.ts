/**
 * The response cache: anonymous answers of public reads, kept in this process's memory until the
 * next write. This module puts it together — the entries (store.ts), the generation that says which
 * are still true (generation.ts) — and is its Yoga plugin; hits are answered first on the node side,
 * before Yoga (node.front.ts).
 *
 * What is kept: the 200 answer of an operation whose root fields are all public reads (`providers`,
 * `provider`, `providerVersions`, `providerVersion`, the MCP registry's `mcpServer…`), asked WITHOUT an
 * `Authorization` header or session cookie: a REST `GET /api/v1/providers…` or `/v0.1/servers…`, or a GraphQL query
 * (POST or GET /graphql). Such an answer holds nothing
 * private (contact, tokens and reviewer notes are null for anonymous callers, API.md §2), so any
 * anonymous caller may be given it; a request with credentials, of any kind, never reads or fills
 * the cache. An answer with GraphQL errors or a `Set-Cookie` is not kept.
 */
import { getOperationAST } from "graphql";
import type { Plugin } from "graphql-yoga";
import type { FeedNote } from "../../feed/feed.outbox.ts";
import { rootFieldNodes } from "../../limits/limits.plugin.ts";
import { hasSessionCookie } from "../../signin/signin.rules.ts";
import { Generation } from "./generation.ts";
import { dependsOn, touchedBy } from "./scope.ts";
import { cacheablePath, type Entry, EntryStore, keyOf, type StoreOptions } from "./store.ts";

/** The root fields whose anonymous answers may be shared: public reads only. */
const CACHEABLE_FIELDS = new Set([
  "providers",
  "providerFacets",
  "provider",
  "providerVersions",
  "providerVersion",
  "agentCard",
  "mcpServers",
  "mcpServerVersions",
  "mcpServerVersion",
]);
/**
 * Mutations that change nothing an anonymous read answers, so they keep the cache: a mirror source
 * made or asked to sync (what its sync writes is forgotten as it commits), webhooks and API keys.
 * Changing or removing a source changes its providers' `origin`, so those empty it as any write does.
 */
const KEEPING_MUTATIONS = new Set([
  "createMirrorSource",
  "syncMirrorSource",
  "createWebhook",
  "deleteWebhook",
  "retryWebhookDelivery",
  "testWebhook",
  "createApiKey",
  "revokeApiKey",
]);
/** How long the same key's requests wait at most for the first one's answer. */
const HOLD_MS = 5000;
/** Headers that belong to one answer, not to the resource. */
const UNSHARED_HEADERS = new Set(["x-request-id", "connection", "date", "content-length", "keep-alive", "x-cache"]);

export interface ResponseCacheOptions extends StoreOptions {
  enabled: boolean;
  redisUrl?: string;
  /** Prefix of the shared generation's key in Redis (replicas of one database share it). */
  keyPrefix?: string;
  log?: (line: Record<string, unknown>) => void;
}

/** What the plugin keeps on a request's server context. */
interface CacheState {
  key?: string;
  /** The generation when the request arrived; null: the cache is bypassed (Redis unreachable). */
  generation?: number | null;
  /** How many narrow forgettings had happened when the request arrived. */
  narrowings?: number;
  /** What the answer depends on (scope.ts), once the operation is known to be cacheable. */
  dependsOn?: string[] | null;
  /** The operation executed is a cacheable read. */
  cacheable?: boolean;
  /** A mutation executed: its bump (and publication) must be done before it is answered. */
  wrote?: Promise<void>;
  /** Ends this request's hold on its key (it was the first to miss it). */
  release?: () => void;
}
const STATE = Symbol("responseCache");
type WithState = { [STATE]?: CacheState; logFields?: { operation?: string } };

export class ResponseCache {
  readonly enabled: boolean;
  /** The Yoga plugin: lookups and fills on the fetch path, and the bump of every mutation. */
  readonly plugin: Plugin;
  private readonly store: EntryStore;
  private readonly generation: Generation;
  /** Forgettings of some providers' answers only (`forget`): a fill that raced one is not kept. */
  narrowings = 0;
  /** The keys a miss is being answered for: the same key's next requests wait for that answer. */
  private readonly held = new Map<string, Promise<void>>();

  constructor(options: ResponseCacheOptions) {
    this.enabled = options.enabled;
    this.store = new EntryStore(options);
    this.generation = new Generation(this.store, {
      redisUrl: options.enabled ? options.redisUrl : undefined,
      keyPrefix: options.keyPrefix,
      log: options.log,
    });
    this.plugin = cachePlugin(this);
  }

  /** How many answers are kept (tests). */
  get size(): number {
    return this.store.size;
  }

  /** The generation a read that arrives now notes; null while the cache is bypassed. */
  current(): number | null | Promise<number | null> {
    return this.generation.current();
  }

  /** The entry for a key, if the generation the request noted is still current and the entry is fresh. */
  lookup(key: string, since: number | null | undefined): Entry | undefined {
    return since === this.generation.value ? this.store.get(key) : undefined;
  }

  /**
   * Keeps an answer, if no write that could change it happened since the request noted the
   * generation and the narrow forgettings.
   */
  fill(key: string, since: { generation?: number | null; narrowings?: number }, entry: Entry): void {
    if (since.generation !== this.generation.value) return;
    if (since.narrowings !== this.narrowings && entry.dependsOn?.length !== 0) return;
    this.store.set(key, entry);
  }

  /**
   * The hold on a key while its first miss is answered, so that a burst of requests for one answer
   * (a cold cache's facets) costs one execution, not one each: `wait` is the hold another request
   * has; else `release`, which the request calls once its answer is kept or known not to be (a hold
   * ends by itself after HOLD_MS, so a request that never ends holds nothing for long).
   */
  hold(key: string): { wait: Promise<void> } | { release: () => void } {
    const wait = this.held.get(key);
    if (wait) return { wait };
    let release!: () => void;
    const promise = new Promise<void>((resolve) => {
      const timer = setTimeout(() => release(), HOLD_MS);
      timer.unref();
      release = () => {
        clearTimeout(timer);
        if (this.held.get(key) === promise) this.held.delete(key);
        resolve();
      };
    });
    this.held.set(key, promise);
    return { release };
  }

  /** Empties this process's cache and tells the other replicas to empty theirs. */
  invalidate(): Promise<void> {
    return this.generation.invalidate();
  }

  /**
   * Forgets what committed changes made untrue: the answers naming the providers they touched, when
   * that is all they can change (scope.ts); else everything. Replicas share only the generation, so
   * with them every change empties every cache.
   */
  forget(notes: readonly FeedNote[]): Promise<void> {
    const codes = touchedBy(notes);
    if (codes === null || this.generation.isShared) return this.invalidate();
    this.narrowings += 1;
    this.store.forget(codes);
    return Promise.resolve();
  }

  close(): Promise<void> {
    return this.generation.close();
  }
}

export function createResponseCache(options: ResponseCacheOptions): ResponseCache {
  return new ResponseCache(options);
}

function cachePlugin(cache: ResponseCache): Plugin {
  const { enabled } = cache;
  return {
    async onDispose() {
      await cache.close();
    },
    async onRequest({ request, url, serverContext, endResponse }) {
      // Every request gets its state (the context shares it): a mutation's bump is awaited on it.
      const state: CacheState = {};
      (serverContext as WithState)[STATE] = state;
      if (!enabled || request.headers.has("authorization") || !cacheablePath(url.pathname)) return;
      // A person's session cookie is a credential too (src/signin/).
      if (hasSessionCookie(request.headers.get("cookie"))) return;
      let body: Buffer | undefined;
      if (request.method === "POST") {
        if (url.pathname !== "/graphql") return;
        // The HTTP edge has read and capped the body already (edge.plugin.ts). Keyed by its bytes'
        // digest, as the node side keys it.
        body = Buffer.from(await request.clone().arrayBuffer());
      } else if (request.method !== "GET" && request.method !== "HEAD") return;
      // HEAD is answered from GET's entry (the edge drops the body); it fills nothing, having none.
      const key = keyOf(
        request.method === "POST" ? "POST" : "GET",
        url.host,
        url.pathname + url.search,
        request.headers.get("accept") ?? "",
        request.headers.get("origin") ?? "",
        body,
      );
      const look = async () => {
        state.generation = await cache.current();
        state.narrowings = cache.narrowings;
        return cache.lookup(key, state.generation);
      };
      let entry = await look();
      if (!entry && request.method !== "HEAD") {
        const hold = cache.hold(key);
        if ("release" in hold) state.release = hold.release;
        else {
          await hold.wait;
          entry = await look();
          if (!entry) {
            // The first answer was not kept (an error, a write meanwhile): this one is executed too.
            const again = cache.hold(key);
            if ("release" in again) state.release = again.release;
          }
        }
        if (!entry) state.key = key;
      }
      if (!entry) return;
      const fields = (serverContext as WithState).logFields;
      if (fields) fields.operation = entry.operation;
      const headers = new Headers(entry.headers);
      headers.set("X-Cache", "HIT");
      headers.set("Content-Length", String(entry.body.byteLength));
      endResponse(new Response(new Uint8Array(entry.body), { status: entry.status, headers }));
    },
    onExecute({ args }) {
      if (!enabled) return undefined;
      const context = args.contextValue as WithState;
      const operation = getOperationAST(args.document, args.operationName);
      if (operation?.operation === "mutation") {
        if (rootFieldNodes(args.document, operation).every((f) => KEEPING_MUTATIONS.has(f.name.value)))
          return undefined;
        // Bumped once the mutation has run (its transaction committed), before it is answered.
        return {
          onExecuteDone() {
            const wrote = cache.invalidate();
            const state = context[STATE];
            if (state) state.wrote = wrote;
          },
        };
      }
      const state = context[STATE];
      if (state?.key && operation?.operation === "query") {
        const fields = rootFieldNodes(args.document, operation);
        state.cacheable = fields.every((f) => CACHEABLE_FIELDS.has(f.name.value));
        if (state.cacheable) state.dependsOn = dependsOn(fields, args.variableValues ?? undefined);
      }
      return undefined;
    },
    async onResponse({ response, serverContext }) {
      const state = (serverContext as WithState)[STATE];
      if (!state) return;
      try {
        await keep(cache, state, response, serverContext as WithState);
      } finally {
        state.release?.();
      }
    },
  };
}

/** Keeps a cacheable read's answer; a mutation's answer waits for its bump instead. */
async function keep(cache: ResponseCache, state: CacheState, response: Response, serverContext: WithState) {
  if (state.wrote) {
    await state.wrote;
    return;
  }
  if (!state.key) return;
  if (!state.cacheable || response.status !== 200 || response.headers.has("set-cookie")) {
    return;
  }
  const body = Buffer.from(await response.clone().arrayBuffer());
  // A GraphQL answer with errors (partial data) is not kept.
  if (body.includes('"errors":')) return;
  const headers: [string, string][] = [];
  response.headers.forEach((value, name) => {
    if (!UNSHARED_HEADERS.has(name.toLowerCase())) headers.push([name, value]);
  });
  cache.fill(state.key, state, {
    status: response.status,
    headers,
    body,
    operation: serverContext.logFields?.operation,
    storedAt: Date.now(),
    dependsOn: state.dependsOn ?? null,
  });
}
