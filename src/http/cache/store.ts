/**
 * The response cache's entries: what an answer is kept as, its key, and the bounds of what is kept
 * (bytes in all, bytes per answer, age). Whether an answer may be read or kept at all is the
 * generation's to say (generation.ts); this only holds them.
 *
 * The key is the method, the full URL (host included), the `Accept` and `Origin` headers (the
 * answer's type and CORS headers depend on them) and, for a POST, the SHA-256 of the body (the
 * GraphQL document and variables): computed natively, it costs about half of building and hashing a
 * key that holds the body itself, keeps every key short, and names a body as surely as automatic
 * persisted queries name a document by it.
 */
import { hash } from "node:crypto";

/** A kept answer. */
export interface Entry {
  status: number;
  headers: [string, string][];
  body: Buffer;
  /** The log line's `operation` (edge.plugin.ts) of the request that filled it. */
  operation: string | undefined;
  storedAt: number;
  /** The codes of the providers whose unlisted changes make it untrue; null: any change does (scope.ts). */
  dependsOn: readonly string[] | null;
  /** Its body compressed, made when first asked for (compression.ts); smaller than the body it is counted by. */
  encoded?: Partial<Record<"br" | "gzip", Buffer>>;
}

export interface StoreOptions {
  /** The bodies kept, in bytes at most (the oldest stored go first); 32 MiB by default. */
  maxBytes?: number;
  /** Answers larger than this are not kept (256 KiB by default). */
  maxEntryBytes?: number;
  /** Entries expire after this (60 s by default). */
  maxAgeMs?: number;
}

/** Whether a path (without the query) may hold a cacheable answer. */
export function cacheablePath(path: string): boolean {
  return (
    path === "/graphql" ||
    path === "/api/v1/providers" ||
    path.startsWith("/api/v1/providers/") ||
    path === "/v0.1/servers" ||
    path.startsWith("/v0.1/servers/")
  );
}

/** The key of an answer; the node side and the plugin build it from the same parts. */
export function keyOf(
  method: string,
  host: string,
  path: string,
  accept: string,
  origin: string,
  body?: Buffer,
): string {
  const key = `${method} ${host}${path}\n${accept}\n${origin}`;
  return body === undefined ? key : `${key}\n${hash("sha256", body, "base64")}`;
}

/** The kept answers, in the order they were stored, within their bounds. */
export class EntryStore {
  private readonly entries = new Map<string, Entry>();
  /** The bytes of the bodies kept (keys and headers are small beside them). */
  private bytes = 0;
  private readonly maxBytes: number;
  private readonly maxEntryBytes: number;
  private readonly maxAgeMs: number;

  constructor(options: StoreOptions) {
    this.maxBytes = options.maxBytes ?? 32 * 1024 * 1024;
    this.maxEntryBytes = options.maxEntryBytes ?? 256 * 1024;
    this.maxAgeMs = options.maxAgeMs ?? 60_000;
  }

  get size(): number {
    return this.entries.size;
  }

  clear(): void {
    this.entries.clear();
    this.bytes = 0;
  }

  /** Drops the entries that depend on any of these codes, or on any change. */
  forget(codes: readonly string[]): void {
    const touched = new Set(codes);
    for (const [key, entry] of this.entries) {
      if (entry.dependsOn === null || entry.dependsOn.some((code) => touched.has(code))) this.drop(key, entry);
    }
  }

  /** The entry for a key, unless it has expired (then it is dropped). */
  get(key: string): Entry | undefined {
    const entry = this.entries.get(key);
    if (entry && Date.now() - entry.storedAt > this.maxAgeMs) {
      this.drop(key, entry);
      return undefined;
    }
    return entry;
  }

  /** Keeps an entry, unless it is too large; the oldest go first while the bodies would exceed maxBytes. */
  set(key: string, entry: Entry): void {
    if (entry.body.byteLength > this.maxEntryBytes) return;
    const previous = this.entries.get(key);
    if (previous) this.drop(key, previous);
    while (this.bytes + entry.body.byteLength > this.maxBytes && this.entries.size > 0) {
      const [oldest, dropped] = this.entries.entries().next().value as [string, Entry];
      this.drop(oldest, dropped);
    }
    this.entries.set(key, entry);
    this.bytes += entry.body.byteLength;
  }

  private drop(key: string, entry: Entry): void {
    this.entries.delete(key);
    this.bytes -= entry.body.byteLength;
  }
}
