/**
 * A small user agent for sign-in tests: a cookie jar kept as browsers keep one (per host and path,
 * `Secure` only over https, `__Host-` only with Secure, Path=/ and no Domain, Max-Age=0 deletes), and
 * requests to named hosts: the registry (an app's `fetch`, with a client address when asked) and the
 * test IdP (its loopback port, with its name as Host). It follows redirects only where a test asks.
 */
import http from "node:http";
import type { App } from "../helpers.ts";

interface Cookie {
  name: string;
  value: string;
  path: string;
  secure: boolean;
}

export interface Hop {
  status: number;
  headers: Headers;
  text: string;
  url: string;
  /** The absolute URL of `Location`, if any. */
  location?: string;
}

export type Route = (
  url: URL,
  init: { method: string; headers: Record<string, string>; body?: string },
) => Promise<Response>;

/** The registry as a route: its app's `fetch`, from a client address when one is given. */
export function registryRoute(app: App, remoteAddress?: string): Route {
  return (url, init) =>
    remoteAddress
      ? (app.fetch(url.href, init, { req: { socket: { remoteAddress } } }) as Promise<Response>)
      : (app.fetch(url.href, init) as Promise<Response>);
}

/** A server on a loopback port as a route, addressed by the URL's host name. */
export function loopbackRoute(port: number): Route {
  return (url, init) =>
    new Promise((resolve, reject) => {
      const req = http.request(
        {
          host: "127.0.0.1",
          port,
          method: init.method,
          path: url.pathname + url.search,
          headers: { ...init.headers, host: url.host },
          agent: false,
        },
        (res) => {
          const chunks: Buffer[] = [];
          res.on("data", (chunk: Buffer) => chunks.push(chunk));
          res.on("end", () => {
            const headers = new Headers();
            for (let i = 0; i + 1 < res.rawHeaders.length; i += 2)
              headers.append(res.rawHeaders[i]!, res.rawHeaders[i + 1]!);
            const status = res.statusCode ?? 0;
            resolve(new Response(status === 204 || status === 304 ? null : Buffer.concat(chunks), { status, headers }));
          });
          res.on("error", reject);
        },
      );
      req.on("error", reject);
      req.end(init.body);
    });
}

export class UserAgent {
  private cookies: Map<string, Cookie> = new Map();
  /** Each host's route; a host may be changed (another replica, another address) between requests. */
  readonly routes: Map<string, Route>;

  constructor(routes: Record<string, Route>) {
    this.routes = new Map(Object.entries(routes));
  }

  /** The cookies this agent would send to `url`, as a `Cookie` header (undefined for none). */
  cookieHeader(url: URL): string | undefined {
    const sent = [...this.cookies.entries()]
      .filter(([key, c]) => key.startsWith(`${url.host}|`) && url.pathname.startsWith(c.path))
      .filter(([, c]) => !c.secure || url.protocol === "https:")
      .map(([, c]) => `${c.name}=${c.value}`);
    return sent.length ? sent.join("; ") : undefined;
  }

  /** The value of a cookie held for a host, if any. */
  cookie(host: string, name: string): string | undefined {
    for (const [key, c] of this.cookies) if (key.startsWith(`${host}|`) && c.name === name) return c.value;
    return undefined;
  }

  /** Keeps a cookie as a browser would, or drops it as a browser would refuse it. */
  private keep(url: URL, header: string): void {
    const [pair = "", ...attributes] = header.split(";").map((part) => part.trim());
    const at = pair.indexOf("=");
    if (at <= 0) return;
    const name = pair.slice(0, at);
    const value = pair.slice(at + 1);
    const attrs = new Map(
      attributes.map((a) => {
        const eq = a.indexOf("=");
        return eq < 0 ? [a.toLowerCase(), ""] : [a.slice(0, eq).toLowerCase(), a.slice(eq + 1)];
      }),
    );
    const secure = attrs.has("secure");
    const path = attrs.get("path") || "/";
    if (secure && url.protocol !== "https:") return;
    if (name.startsWith("__Host-") && (!secure || path !== "/" || attrs.has("domain"))) return;
    const key = `${url.host}|${name}|${path}`;
    const maxAge = attrs.get("max-age");
    const expires = attrs.get("expires");
    if ((maxAge !== undefined && Number(maxAge) <= 0) || (expires && Date.parse(expires) <= Date.now())) {
      this.cookies.delete(key);
      return;
    }
    this.cookies.set(key, { name, value, path, secure });
  }

  async request(
    method: string,
    target: string,
    options: { headers?: Record<string, string>; form?: Record<string, string> } = {},
  ): Promise<Hop> {
    const url = new URL(target);
    const route = this.routes.get(url.host);
    if (!route) throw new Error(`no route to ${url.host} (${target})`);
    const headers: Record<string, string> = { ...options.headers };
    const cookie = this.cookieHeader(url);
    if (cookie) headers.cookie = cookie;
    let body: string | undefined;
    if (options.form) {
      body = new URLSearchParams(options.form).toString();
      headers["content-type"] = "application/x-www-form-urlencoded";
    }
    const answer = await route(url, { method, headers, ...(body === undefined ? {} : { body }) });
    for (const header of answer.headers.getSetCookie()) this.keep(url, header);
    const location = answer.headers.get("location");
    return {
      status: answer.status,
      headers: answer.headers,
      text: await answer.text(),
      url: url.href,
      ...(location ? { location: new URL(location, url).href } : {}),
    };
  }

  /** GETs `target` and follows redirects while `until` does not hold for the next location; answers the last hop. */
  async follow(target: string, until: (location: URL) => boolean = () => false): Promise<Hop> {
    let hop = await this.request("GET", target);
    for (let redirects = 0; hop.location && [301, 302, 303, 307].includes(hop.status); redirects++) {
      if (redirects > 10) throw new Error(`too many redirects from ${target}`);
      if (until(new URL(hop.location))) return hop;
      hop = await this.request("GET", hop.location);
    }
    return hop;
  }
}
