/**
 * The one outbound door: every request the service makes to an address a caller supplied (domain
 * checks, DNS TXT records, JWKS of verified domains, webhooks) goes through here, because such
 * requests are SSRF. `https:` only; each hop's name is resolved once, every address checked, and the
 * connection made to the checked address; redirects stay on the original registrable domain; one
 * deadline covers the whole request; bodies are capped; requests under way at once are capped.
 * A POST (a webhook's delivery) follows no redirect. `fetcher` offers the same door as a WHATWG
 * `fetch` for the protocol libraries that take one (the health prober's MCP and A2A clients).
 */
import { Resolver } from "node:dns/promises";
import http from "node:http";
import https from "node:https";
import type { LookupFunction } from "node:net";
import { finished } from "node:stream/promises";
import ipaddr from "ipaddr.js";
import { getDomain } from "tldts";
import { type OutboundConfig, SERVICE_VERSION } from "../config.ts";

export interface OutboundResponse {
  status: number;
  headers: Headers;
  body: string;
  /** The URL that answered, after redirects. */
  url: string;
}

export type OutboundFailure =
  | "BAD_URL"
  | "PRIVATE_ADDRESS"
  | "DNS"
  | "TIMEOUT"
  | "TOO_LARGE"
  | "REDIRECT"
  | "NETWORK"
  /** The caller's signal aborted it (`fetcher` only). */
  | "CANCELLED";

/** A refused or failed outbound request; the message is in plain words and safe to show a caller. */
export class OutboundError extends Error {
  readonly reason: OutboundFailure;
  constructor(reason: OutboundFailure, message: string) {
    super(message);
    this.name = "OutboundError";
    this.reason = reason;
  }
}

export interface Outbound {
  /**
   * GET an https: URL; any HTTP status is returned (not thrown); refusals and failures throw OutboundError.
   * `headers` (a credential) go to the first URL's host only: a redirect to another host is sent without them.
   */
  get(url: string, options?: { accept?: string; headers?: Record<string, string> }): Promise<OutboundResponse>;
  /**
   * POSTs a body to an https: URL (webhooks), with the same checks and deadline as `get`; a redirect
   * is not followed but answered as it is, like any other status.
   */
  post(url: string, body: string, headers: Record<string, string>): Promise<OutboundResponse>;
  /** TXT records of a name (each record's strings joined), [] when there is none (NXDOMAIN/NODATA); failures throw OutboundError("DNS"). */
  resolveTxt(name: string): Promise<string[]>;
  /**
   * A `fetch` through the door: any method, the answer's body streamed but capped and cut at the
   * deadline, a slot held until the body is read or cancelled, `init.signal` honoured; a GET follows
   * redirects within the registrable domain, other methods none. Libraries wrap the errors of the
   * fetch they are given in their own, so every refusal or failure is also told to `onFailure`.
   */
  fetcher(onFailure?: (error: OutboundError) => void): FetchLike;
}

/** The WHATWG fetch's shape, as the protocol libraries take it. */
export type FetchLike = (url: string | URL, init?: RequestInit) => Promise<Response>;

/** Redirects followed before the request is refused. */
const MAX_REDIRECTS = 3;
const REDIRECT_STATUSES = new Set([301, 302, 303, 307, 308]);
/** DNS answers that mean "no such record", as opposed to a failure to find out. */
const NO_RECORD = new Set(["ENODATA", "ENOTFOUND"]);

/** How a refused address range is named to the caller. */
const RANGE_WORDS: Record<string, string> = {
  private: "private",
  loopback: "loopback",
  linkLocal: "link-local",
  carrierGradeNat: "carrier-grade NAT",
  multicast: "multicast",
  unspecified: "unspecified",
  broadcast: "broadcast",
  uniqueLocal: "private",
  reserved: "reserved",
};

/**
 * Why an address may not be connected to, or undefined when it is public unicast. Anything
 * ipaddr.js does not classify as plain `unicast` is refused, 6to4, Teredo and NAT64 included (they
 * can embed any IPv4 address); an IPv4-mapped IPv6 address is judged by its IPv4 address.
 */
export function refusedRange(address: string): string | undefined {
  let ip: ipaddr.IPv4 | ipaddr.IPv6;
  try {
    ip = ipaddr.parse(address);
  } catch {
    return "not an IP address";
  }
  if (ip.kind() === "ipv6" && (ip as ipaddr.IPv6).isIPv4MappedAddress()) {
    return refusedRange((ip as ipaddr.IPv6).toIPv4Address().toString());
  }
  const range = ip.range();
  if (range !== "unicast") return RANGE_WORDS[range] ?? `special-purpose (${range})`;
  // ::/8 holds the deprecated IPv4-compatible addresses (::127.0.0.1), which ipaddr.js calls unicast.
  if (ip.kind() === "ipv6" && (ip as ipaddr.IPv6).parts[0] === 0) return "reserved";
  return undefined;
}

/**
 * Whether a redirect may go from `original` to `next`: the same registrable domain (public suffix
 * list, private suffixes such as github.io included, so one tenant cannot send us to another), or
 * the same host when either has none (an IP address, a bare suffix).
 */
function sameDomain(original: string, next: string): boolean {
  if (original === next) return true;
  const options = { allowPrivateDomains: true };
  const domain = getDomain(original, options);
  return domain !== null && domain === getDomain(next, options);
}

/** A FIFO semaphore: at most `size` holders; `acquire` resolves with the release function. */
function semaphore(size: number): () => Promise<() => void> {
  let active = 0;
  const waiting: Array<() => void> = [];
  const release = () => {
    const next = waiting.shift();
    if (next) next();
    else active--;
  };
  return () =>
    new Promise((resolve) => {
      const grant = () => resolve(once(release));
      if (active < size) {
        active++;
        grant();
      } else waiting.push(grant);
    });
}

function once(fn: () => void): () => void {
  let done = false;
  return () => {
    if (!done) {
      done = true;
      fn();
    }
  };
}

/** Rejects with TIMEOUT at `deadline` (calling `onTimeout` first), unless `work` settles before. */
function within<T>(deadline: number, work: Promise<T>, what: string, onTimeout: () => void): Promise<T> {
  return new Promise((resolve, reject) => {
    const timer = setTimeout(
      () => {
        onTimeout();
        reject(new OutboundError("TIMEOUT", `${what} took too long`));
      },
      Math.max(0, deadline - Date.now()),
    );
    work.then(
      (value) => {
        clearTimeout(timer);
        resolve(value);
      },
      (error) => {
        clearTimeout(timer);
        reject(error);
      },
    );
  });
}

interface Target {
  url: URL;
  /** The name as the caller wrote it (brackets of an IPv6 literal removed). */
  hostname: string;
  /** Set for OUTBOUND_TEST_HOSTS: where plain http: goes instead. */
  test?: { host: string; port: number };
}

/** A hop's answer: a redirect to follow, or the final response. */
type Hop = { redirect: string } | OutboundResponse;

/** What a request sends beyond a plain GET: its method, headers of its own and body. */
interface Sending {
  method: string;
  body?: string | Uint8Array | undefined;
  headers: Record<string, string>;
}

/**
 * Keeps connections per host name, though many test hosts share one loopback port: what a real
 * host's own address gives the https agent (a test host never shares another name's connection).
 */
class PerNameAgent extends http.Agent {
  override getName(options: http.ClientRequestArgs = {}): string {
    const headers = options.headers as Record<string, string> | undefined;
    return `${super.getName(options)}:${headers?.host ?? ""}`;
  }
}

export function createOutbound(config: OutboundConfig): Outbound {
  const acquire = semaphore(config.concurrency);
  // Kept-alive connections are the ones made to checked addresses: a reused one is never looked up
  // again. Idle ones close after a few seconds; TLS sessions are resumed from the agent's cache.
  const kept = { keepAlive: true, maxSockets: 8, timeout: 4000 };
  const keptAlive = config.keepAlive ? new https.Agent(kept) : false;
  const testKeptAlive = config.keepAlive && config.testHosts.size > 0 ? new PerNameAgent(kept) : false;

  /** A resolver of its own per look-up, so a deadline can cancel it without touching others. */
  function resolver(): Resolver {
    // c-ares backs off between tries; two tries of a third each fit the deadline, which bounds it anyway.
    const r = new Resolver({ timeout: Math.max(1, Math.floor(config.timeoutMs / 3)), tries: 2 });
    const dns = config.testDns;
    if (dns) r.setServers([dns.host.includes(":") ? `[${dns.host}]:${dns.port}` : `${dns.host}:${dns.port}`]);
    return r;
  }

  function parse(raw: string, base?: URL): Target {
    let url: URL;
    try {
      url = new URL(raw, base);
    } catch {
      throw new OutboundError("BAD_URL", "the address is not a valid URL");
    }
    const hostname = url.hostname.replace(/^\[|\]$/g, "").toLowerCase();
    // `*.example.test` stands for every name under it (a fake answering for many hosts).
    const test = config.testHosts.get(hostname) ?? config.testHosts.get(`*${hostname.slice(hostname.indexOf("."))}`);
    if (url.protocol !== "https:" && !(test && url.protocol === "http:")) {
      throw new OutboundError("BAD_URL", `only https: addresses are allowed, not ${url.protocol}`);
    }
    if (url.username || url.password) {
      throw new OutboundError("BAD_URL", "the address may not carry a user name or password");
    }
    if (!hostname) throw new OutboundError("BAD_URL", "the address has no host");
    return test ? { url, hostname, test } : { url, hostname };
  }

  /** The host's addresses, each checked; throws when any is refused. An IP literal is checked as is. */
  async function addresses(hostname: string, deadline: number): Promise<string[]> {
    let found: string[];
    if (ipaddr.isValid(hostname)) {
      found = [hostname];
    } else {
      const r = resolver();
      const answers = await within(
        deadline,
        Promise.allSettled([r.resolve4(hostname), r.resolve6(hostname)]),
        `looking up ${hostname}`,
        () => r.cancel(),
      );
      found = answers.flatMap((a) => (a.status === "fulfilled" ? a.value : []));
      if (found.length === 0) {
        const failure = answers
          .map((a) => (a.status === "rejected" ? (a.reason as NodeJS.ErrnoException).code : undefined))
          .find((code) => code && !NO_RECORD.has(code));
        throw new OutboundError(
          "DNS",
          failure ? `could not look up ${hostname} (${failure})` : `${hostname} has no address`,
        );
      }
    }
    for (const address of found) {
      const refused = refusedRange(address);
      if (refused) throw new OutboundError("PRIVATE_ADDRESS", `the address of ${hostname} is ${refused} (${address})`);
    }
    return found;
  }

  /**
   * Opens one request to the checked addresses (or the test host) and answers its response once
   * the headers are in, within the deadline; `signal` aborts it.
   */
  function connect(
    target: Target,
    checked: string[],
    accept: string,
    deadline: number,
    send?: Sending,
    signal?: AbortSignal | null,
  ): Promise<http.IncomingMessage> {
    if (signal?.aborted) {
      return Promise.reject(new OutboundError("CANCELLED", `the request to ${target.hostname} was cancelled`));
    }
    const body = send?.body;
    const headers: Record<string, string> = {
      ...send?.headers,
      "user-agent": `agent-registry/${SERVICE_VERSION}`,
      accept,
      "accept-encoding": "identity",
      ...(body !== undefined ? { "content-length": String(Buffer.byteLength(body)) } : {}),
    };
    const method = send?.method ?? "GET";
    let req: http.ClientRequest;
    if (target.test) {
      req = http.request({
        method,
        host: target.test.host,
        port: target.test.port,
        path: target.url.pathname + target.url.search,
        headers: { ...headers, host: target.url.host },
        agent: testKeptAlive,
      });
    } else {
      // The name was resolved and checked once: the connection goes to those addresses, never to a
      // second look-up, while SNI and the certificate check still use the real name.
      const lookup: LookupFunction = (_name, options, callback) => {
        const all = checked.map((address) => ({ address, family: address.includes(":") ? 6 : 4 }));
        if (options.all) callback(null, all);
        else callback(null, all[0]!.address, all[0]!.family);
      };
      req = https.request({
        method,
        host: target.hostname,
        port: target.url.port || 443,
        path: target.url.pathname + target.url.search,
        headers,
        lookup,
        servername: ipaddr.isValid(target.hostname) ? undefined : target.hostname,
        agent: keptAlive,
      });
    }
    return new Promise((resolve, reject) => {
      const fail = (error: OutboundError) => {
        clearTimeout(timer);
        signal?.removeEventListener("abort", aborted);
        reject(error);
        req.destroy();
      };
      const aborted = () => fail(new OutboundError("CANCELLED", `the request to ${target.hostname} was cancelled`));
      signal?.addEventListener("abort", aborted, { once: true });
      const timer = setTimeout(
        () => fail(new OutboundError("TIMEOUT", `${target.hostname} did not answer in time`)),
        Math.max(0, deadline - Date.now()),
      );
      req.on("error", (error: NodeJS.ErrnoException) =>
        fail(new OutboundError("NETWORK", `could not reach ${target.hostname} (${error.code ?? error.message})`)),
      );
      req.on("response", (res) => {
        clearTimeout(timer);
        signal?.removeEventListener("abort", aborted);
        resolve(res);
      });
      req.end(body);
    });
  }

  const tooLarge = (target: Target) =>
    new OutboundError("TOO_LARGE", `the answer of ${target.hostname} is larger than ${config.maxBodyBytes} bytes`);

  /** The response's headers as a Headers object. */
  function headersOf(res: http.IncomingMessage): Headers {
    const answer = new Headers();
    for (let i = 0; i + 1 < res.rawHeaders.length; i += 2) answer.append(res.rawHeaders[i]!, res.rawHeaders[i + 1]!);
    return answer;
  }

  /** One request, its answer read whole within the deadline and the cap. */
  async function request(
    target: Target,
    checked: string[],
    accept: string,
    deadline: number,
    send?: Sending,
  ): Promise<Hop> {
    const res = await connect(target, checked, accept, deadline, send);
    const status = res.statusCode ?? 0;
    const location = res.headers.location;
    if ((send?.method ?? "GET") === "GET" && REDIRECT_STATUSES.has(status) && location) {
      res.destroy();
      return { redirect: location };
    }
    return new Promise<Hop>((resolve, reject) => {
      const fail = (error: OutboundError) => {
        clearTimeout(timer);
        reject(error);
        res.destroy();
      };
      const timer = setTimeout(
        () => fail(new OutboundError("TIMEOUT", `${target.hostname} did not answer in time`)),
        Math.max(0, deadline - Date.now()),
      );
      if (Number(res.headers["content-length"]) > config.maxBodyBytes) return fail(tooLarge(target));
      const chunks: Buffer[] = [];
      let size = 0;
      res.on("data", (chunk: Buffer) => {
        size += chunk.length;
        if (size > config.maxBodyBytes) fail(tooLarge(target));
        else chunks.push(chunk);
      });
      res.on("end", () => {
        clearTimeout(timer);
        resolve({
          status,
          headers: headersOf(res),
          body: Buffer.concat(chunks).toString("utf8"),
          url: target.url.href,
        });
      });
      res.on("error", () => fail(new OutboundError("NETWORK", `the answer of ${target.hostname} was cut off`)));
    });
  }

  /** The next hop of a redirect from `target`, or the refusal of it. */
  function redirectTarget(first: Target, target: Target, location: string, redirects: number): Target {
    if (redirects === MAX_REDIRECTS) {
      throw new OutboundError("REDIRECT", `more than ${MAX_REDIRECTS} redirects from ${first.hostname}`);
    }
    let next: Target;
    try {
      next = parse(location, target.url);
    } catch (error) {
      throw new OutboundError(
        "REDIRECT",
        `a redirect from ${target.hostname} was refused: ${(error as Error).message}`,
      );
    }
    if (!sameDomain(first.hostname, next.hostname)) {
      throw new OutboundError("REDIRECT", `${first.hostname} redirected to another domain (${next.hostname})`);
    }
    return next;
  }

  async function get(
    url: string,
    options?: { accept?: string; headers?: Record<string, string> },
  ): Promise<OutboundResponse> {
    const first = parse(url);
    const release = await acquire();
    try {
      // The deadline starts with the turn: time spent waiting for a slot is bounded by the others' deadlines.
      const deadline = Date.now() + config.timeoutMs;
      let target = first;
      for (let redirects = 0; ; redirects++) {
        const checked = target.test ? [] : await addresses(target.hostname, deadline);
        const own = options?.headers && target.url.host === first.url.host ? options.headers : undefined;
        const hop = await request(
          target,
          checked,
          options?.accept ?? "*/*",
          deadline,
          own && { method: "GET", headers: own },
        );
        if (!("redirect" in hop)) return hop;
        target = redirectTarget(first, target, hop.redirect, redirects);
      }
    } finally {
      release();
    }
  }

  async function post(url: string, body: string, headers: Record<string, string>): Promise<OutboundResponse> {
    const target = parse(url);
    const release = await acquire();
    try {
      const deadline = Date.now() + config.timeoutMs;
      const checked = target.test ? [] : await addresses(target.hostname, deadline);
      return (await request(target, checked, "*/*", deadline, { method: "POST", body, headers })) as OutboundResponse;
    } finally {
      release();
    }
  }

  async function resolveTxt(name: string): Promise<string[]> {
    const host = name.replace(/\.$/, "").toLowerCase();
    if (
      host.length > 253 ||
      !/^(?:[a-z0-9_](?:[a-z0-9_-]{0,61}[a-z0-9_])?\.)*[a-z0-9_](?:[a-z0-9_-]{0,61}[a-z0-9_])?$/.test(host)
    ) {
      throw new OutboundError("DNS", "not a domain name");
    }
    const release = await acquire();
    const r = resolver();
    try {
      const records = await within(Date.now() + config.timeoutMs, r.resolveTxt(host), `looking up ${host}`, () =>
        r.cancel(),
      );
      return records.map((strings) => strings.join(""));
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code;
      if (code && NO_RECORD.has(code)) return [];
      if (error instanceof OutboundError) throw new OutboundError("DNS", `looking up ${host} took too long`);
      throw new OutboundError("DNS", `could not look up ${host} (${code ?? "failed"})`);
    } finally {
      release();
    }
  }

  function fetcher(onFailure?: (error: OutboundError) => void): FetchLike {
    const told = (error: unknown) => {
      if (error instanceof OutboundError) onFailure?.(error);
      return error;
    };
    return async (url, init = {}) => {
      const first = parse(String(url));
      const method = (init.method ?? "GET").toUpperCase();
      const headers: Record<string, string> = {};
      new Headers(init.headers).forEach((value, name) => {
        headers[name] = value;
      });
      const accept = headers.accept ?? "*/*";
      delete headers.accept;
      const body = typeof init.body === "string" || init.body instanceof Uint8Array ? init.body : undefined;
      if (init.body != null && body === undefined) throw new OutboundError("BAD_URL", "the body must be text or bytes");
      const release = await acquire();
      let released = false;
      const done = () => {
        if (!released) {
          released = true;
          release();
        }
      };
      try {
        const deadline = Date.now() + config.timeoutMs;
        let target = first;
        for (let redirects = 0; ; redirects++) {
          const checked = target.test ? [] : await addresses(target.hostname, deadline);
          const res = await connect(target, checked, accept, deadline, { method, body, headers }, init.signal);
          const location = res.headers.location;
          if (method === "GET" && REDIRECT_STATUSES.has(res.statusCode ?? 0) && location) {
            res.destroy();
            target = redirectTarget(first, target, location, redirects);
            continue;
          }
          return streamed(target, res, deadline, init.signal, done, told);
        }
      } catch (error) {
        done();
        throw told(error);
      }
    };
  }

  /**
   * The response as a WHATWG one whose body is read from `res` as the reader asks: cut with
   * TOO_LARGE past the cap and with TIMEOUT at the deadline, the slot given back when it ends.
   */
  function streamed(
    target: Target,
    res: http.IncomingMessage,
    deadline: number,
    signal: AbortSignal | null | undefined,
    done: () => void,
    told: (error: unknown) => unknown,
  ): Response {
    const status = res.statusCode ?? 0;
    let size = 0;
    let timer: NodeJS.Timeout | undefined;
    // Once cancelled, cut or ended, what `res` still emits has nowhere to go.
    let over = false;
    // An answer whose bytes are all in is drained rather than cut, so its connection is kept alive.
    const finish = () => {
      over = true;
      clearTimeout(timer);
      signal?.removeEventListener("abort", aborted);
      if (res.complete) res.resume();
      else res.destroy();
      done();
    };
    let controller: ReadableStreamDefaultController<Uint8Array>;
    const fail = (error: OutboundError) => {
      if (over) return;
      finish();
      told(error);
      controller.error(error);
    };
    const aborted = () => fail(new OutboundError("CANCELLED", `the request to ${target.hostname} was cancelled`));
    const body = new ReadableStream<Uint8Array>({
      start(c) {
        controller = c;
        timer = setTimeout(
          () => fail(new OutboundError("TIMEOUT", `${target.hostname} did not answer in time`)),
          Math.max(0, deadline - Date.now()),
        );
        signal?.addEventListener("abort", aborted, { once: true });
        if (Number(res.headers["content-length"]) > config.maxBodyBytes) return fail(tooLarge(target));
        res.on("data", (chunk: Buffer) => {
          if (over) return;
          size += chunk.length;
          if (size > config.maxBodyBytes) return fail(tooLarge(target));
          controller.enqueue(new Uint8Array(chunk.buffer, chunk.byteOffset, chunk.byteLength));
          if ((controller.desiredSize ?? 1) <= 0) res.pause();
        });
        res.on("end", () => {
          if (over) return;
          finish();
          controller.close();
        });
        res.on("error", () => fail(new OutboundError("NETWORK", `the answer of ${target.hostname} was cut off`)));
      },
      pull() {
        res.resume();
      },
      cancel() {
        // An answer already in whole (a 202's empty body) ends in a moment: the caller that waits
        // for the cancel then finds its connection free for the next request.
        const ending = res.complete && !over ? finished(res).catch(() => {}) : undefined;
        finish();
        return ending;
      },
    });
    // A body-less status may not carry a body in a WHATWG Response.
    const empty = status === 204 || status === 205 || status === 304;
    if (empty) finish();
    return new Response(empty ? null : body, { status, headers: headersOf(res) });
  }

  return { get, post, resolveTxt, fetcher };
}
