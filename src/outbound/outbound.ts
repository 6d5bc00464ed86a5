/**
 * The one outbound door: every request the service makes to an address a caller supplied (domain
 * checks, DNS TXT records, JWKS of verified domains, webhooks) goes through here, because such
 * requests are SSRF. `https:` only; each hop's name is resolved once, every address checked, and the
 * connection made to the checked address; redirects stay on the original registrable domain; one
 * deadline covers the whole request; bodies are capped; requests under way at once are capped.
 * A POST (a webhook's delivery) follows no redirect.
 */
import { Resolver } from "node:dns/promises";
import http from "node:http";
import https from "node:https";
import type { LookupFunction } from "node:net";
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

export type OutboundFailure = "BAD_URL" | "PRIVATE_ADDRESS" | "DNS" | "TIMEOUT" | "TOO_LARGE" | "REDIRECT" | "NETWORK";

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
  /** GET an https: URL; any HTTP status is returned (not thrown); refusals and failures throw OutboundError. */
  get(url: string, options?: { accept?: string }): Promise<OutboundResponse>;
  /**
   * POSTs a body to an https: URL (webhooks), with the same checks and deadline as `get`; a redirect
   * is not followed but answered as it is, like any other status.
   */
  post(url: string, body: string, headers: Record<string, string>): Promise<OutboundResponse>;
  /** TXT records of a name (each record's strings joined), [] when there is none (NXDOMAIN/NODATA); failures throw OutboundError("DNS"). */
  resolveTxt(name: string): Promise<string[]>;
}

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

/** What a POST sends: its body and headers of its own. */
interface Sending {
  body: string;
  headers: Record<string, string>;
}

export function createOutbound(config: OutboundConfig): Outbound {
  const acquire = semaphore(config.concurrency);

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
    const test = config.testHosts.get(hostname);
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

  /** One request: to the checked addresses (or the test host), read within the deadline and the cap. */
  function request(target: Target, checked: string[], accept: string, deadline: number, send?: Sending): Promise<Hop> {
    const headers: Record<string, string> = {
      ...send?.headers,
      "user-agent": `agent-registry/${SERVICE_VERSION}`,
      accept,
      "accept-encoding": "identity",
      ...(send ? { "content-length": String(Buffer.byteLength(send.body)) } : {}),
    };
    const method = send ? "POST" : "GET";
    let req: http.ClientRequest;
    if (target.test) {
      req = http.request({
        method,
        host: target.test.host,
        port: target.test.port,
        path: target.url.pathname + target.url.search,
        headers: { ...headers, host: target.url.host },
        agent: false,
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
        agent: false,
      });
    }
    return new Promise<Hop>((resolve, reject) => {
      const fail = (error: OutboundError) => {
        clearTimeout(timer);
        reject(error);
        req.destroy();
      };
      const timer = setTimeout(
        () => fail(new OutboundError("TIMEOUT", `${target.hostname} did not answer in time`)),
        Math.max(0, deadline - Date.now()),
      );
      req.on("error", (error: NodeJS.ErrnoException) =>
        fail(new OutboundError("NETWORK", `could not reach ${target.hostname} (${error.code ?? error.message})`)),
      );
      req.on("response", (res) => {
        const status = res.statusCode ?? 0;
        const location = res.headers.location;
        if (!send && REDIRECT_STATUSES.has(status) && location) {
          clearTimeout(timer);
          res.destroy();
          resolve({ redirect: location });
          return;
        }
        const tooLarge = () =>
          fail(
            new OutboundError(
              "TOO_LARGE",
              `the answer of ${target.hostname} is larger than ${config.maxBodyBytes} bytes`,
            ),
          );
        const declared = Number(res.headers["content-length"]);
        if (declared > config.maxBodyBytes) return tooLarge();
        const chunks: Buffer[] = [];
        let size = 0;
        res.on("data", (chunk: Buffer) => {
          size += chunk.length;
          if (size > config.maxBodyBytes) tooLarge();
          else chunks.push(chunk);
        });
        res.on("end", () => {
          clearTimeout(timer);
          const answer = new Headers();
          for (let i = 0; i + 1 < res.rawHeaders.length; i += 2)
            answer.append(res.rawHeaders[i]!, res.rawHeaders[i + 1]!);
          resolve({ status, headers: answer, body: Buffer.concat(chunks).toString("utf8"), url: target.url.href });
        });
        res.on("error", () => fail(new OutboundError("NETWORK", `the answer of ${target.hostname} was cut off`)));
      });
      req.end(send?.body);
    });
  }

  async function get(url: string, options?: { accept?: string }): Promise<OutboundResponse> {
    const first = parse(url);
    const release = await acquire();
    try {
      // The deadline starts with the turn: time spent waiting for a slot is bounded by the others' deadlines.
      const deadline = Date.now() + config.timeoutMs;
      let target = first;
      for (let redirects = 0; ; redirects++) {
        const checked = target.test ? [] : await addresses(target.hostname, deadline);
        const hop = await request(target, checked, options?.accept ?? "*/*", deadline);
        if (!("redirect" in hop)) return hop;
        if (redirects === MAX_REDIRECTS) {
          throw new OutboundError("REDIRECT", `more than ${MAX_REDIRECTS} redirects from ${first.hostname}`);
        }
        let next: Target;
        try {
          next = parse(hop.redirect, target.url);
        } catch (error) {
          throw new OutboundError(
            "REDIRECT",
            `a redirect from ${target.hostname} was refused: ${(error as Error).message}`,
          );
        }
        if (!sameDomain(first.hostname, next.hostname)) {
          throw new OutboundError("REDIRECT", `${first.hostname} redirected to another domain (${next.hostname})`);
        }
        target = next;
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
      return (await request(target, checked, "*/*", deadline, { body, headers })) as OutboundResponse;
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

  return { get, post, resolveTxt };
}
