/**
 * One check of one endpoint, speaking its protocol with its official library: an MCP server with the
 * MCP SDK's client (`initialize`, then `tools/list` when it lists tools without credentials), an A2A
 * agent by its card read with the A2A SDK, anything else by a GET of its health URL. Every request
 * goes through the prober's outbound door; none carries a credential. The libraries wrap transport
 * errors in their own, so what the door refused and what the peer answered are watched beside them
 * (`Exchange`), and the outcome is decided from those facts rather than from error messages.
 */
import { setMaxListeners } from "node:events";
import type { AgentCard } from "@a2a-js/sdk";
import type { Transport } from "@modelcontextprotocol/sdk/shared/transport.js";
import { SERVICE_VERSION } from "../config.ts";
import type { FetchLike, Outbound, OutboundError } from "../outbound/outbound.ts";
import { type CheckResult, cardParts, liveTools, type Target } from "./health.rules.ts";

/** The A2A card's well-known paths, the current one first. */
const CARD_PATHS = ["/.well-known/agent-card.json", "/.well-known/agent.json"] as const;

/**
 * One check's exchange with the peer: every request through the door under the check's deadline,
 * and the facts the outcome is decided from — what the peer answered, what the door refused, when
 * the first answer came, whether the deadline passed.
 */
class Exchange {
  /** The status of each answer, in order. */
  readonly statuses: number[] = [];
  refused: OutboundError | undefined;
  timedOut = false;
  /** Milliseconds from the start to the first answer's headers. */
  firstAnswerMs: number | null = null;
  readonly fetch: FetchLike;
  readonly signal: AbortSignal;
  private readonly controller = new AbortController();
  private readonly started = performance.now();
  private readonly timer: NodeJS.Timeout;

  private readonly stop: AbortSignal | undefined;
  private readonly stopped = () => this.controller.abort();

  constructor(outbound: Outbound, timeoutMs: number, stop?: AbortSignal, declineStream = false) {
    this.signal = this.controller.signal;
    // Each request's signal listens to this one: more than Node's default ten is no leak.
    setMaxListeners(0, this.signal);
    this.stop = stop;
    stop?.addEventListener("abort", this.stopped, { once: true });
    this.timer = setTimeout(() => {
      this.timedOut = true;
      this.controller.abort();
    }, timeoutMs);
    // Cancellations are the check's own (its deadline, or a client closing its stream), not the peer's doing.
    const door = outbound.fetcher((error) => {
      if (error.reason !== "CANCELLED") this.refused ??= error;
    });
    this.fetch = async (url, init) => {
      // The MCP client opens a stream for what the server may send unasked; a check has no use for
      // it, and "405: no such stream" is an answer the client takes. One request fewer per check.
      if (declineStream && (init?.method ?? "GET").toUpperCase() === "GET") return new Response(null, { status: 405 });
      const signal = init?.signal ? AbortSignal.any([init.signal, this.signal]) : this.signal;
      const answer = await door(url, { ...init, signal });
      this.firstAnswerMs ??= Math.round(performance.now() - this.started);
      this.statuses.push(answer.status);
      return answer;
    };
  }

  /** The first answer whose status passes `test`. */
  status(test: (status: number) => boolean): number | undefined {
    return this.statuses.find(test);
  }

  /** Ends what is still open (a stream the client left), the deadline's timer, and its hold on `stop`. */
  end(): void {
    clearTimeout(this.timer);
    this.stop?.removeEventListener("abort", this.stopped);
    this.controller.abort();
  }
}

/** A validator that accepts anything: see `probeMcp`. */
const ACCEPT_ANY = {
  getValidator: () => (input: unknown) => ({ valid: true as const, data: input as never, errorMessage: undefined }),
};

/**
 * The SDKs, loaded when the first check runs: every process that builds the app (each test file,
 * a replica with HEALTH=off) would otherwise load both clients and their validators for nothing.
 */
const mcpSdk = lazy(async () => ({
  ...(await import("@modelcontextprotocol/sdk/client/index.js")),
  ...(await import("@modelcontextprotocol/sdk/client/sse.js")),
  ...(await import("@modelcontextprotocol/sdk/client/streamableHttp.js")),
}));
const a2aSdk = lazy(async () => ({
  ...(await import("@a2a-js/sdk")),
  ...(await import("@a2a-js/sdk/client")),
}));

function lazy<T>(load: () => Promise<T>): () => Promise<T> {
  let loaded: Promise<T> | undefined;
  return () => {
    loaded ??= load();
    return loaded;
  };
}

/** MCP's JSON-RPC error code for a request that timed out (the SDK's ErrorCode.RequestTimeout). */
const REQUEST_TIMEOUT = -32001;

/** A check's outcome before its latency is added. */
type Outcome = Omit<CheckResult, "latencyMs">;

const AUTH_STATUSES = new Set([401, 402, 403]);
const GONE_STATUSES = new Set([404, 410]);

/** The outcome of a door's refusal or failure. */
function refusal(error: OutboundError): Outcome {
  switch (error.reason) {
    case "DNS":
    case "NETWORK":
      return { outcome: "DOWN", reason: `Not reachable: ${error.message}.` };
    case "TIMEOUT":
      return { outcome: "UNKNOWN", reason: `No answer in time: ${error.message}.` };
    case "TOO_LARGE":
      return { outcome: "UNKNOWN", reason: `Not judged: ${error.message}.` };
    default:
      // A private address, a redirect elsewhere, a URL the door does not take: never connected to.
      return { outcome: "UNKNOWN", reason: `Not checked: ${error.message}.` };
  }
}

/** The outcome of statuses the peer answered that settle the check, if any did. */
function byStatus(exchange: Exchange): Outcome | undefined {
  const auth = exchange.status((s) => AUTH_STATUSES.has(s));
  if (auth) return { outcome: "AUTH_REQUIRED", reason: `Answers, but asks for credentials (HTTP ${auth}).` };
  const gone = exchange.status((s) => GONE_STATUSES.has(s));
  if (gone) return { outcome: "DOWN", reason: `Not there: the endpoint answered HTTP ${gone}.` };
  const failed = exchange.status((s) => s >= 500);
  if (failed) return { outcome: "UNKNOWN", reason: `The endpoint failed with HTTP ${failed}.` };
  return undefined;
}

/** An MCP server: `initialize`, then `tools/list` when it offers tools. */
async function probeMcp(target: Target, exchange: Exchange, timeoutMs: number): Promise<Outcome> {
  const url = new URL(target.url);
  const { Client, SSEClientTransport, StreamableHTTPClientTransport } = await mcpSdk();
  const client = new Client(
    { name: "agent-registry-prober", version: SERVICE_VERSION },
    // The prober calls no tool, so it never checks a tool's output against its schema; the SDK's
    // default would build a JSON Schema compiler for every check.
    { jsonSchemaValidator: ACCEPT_ANY },
  );
  // The SDK's default: redirects only within the origin; the door also keeps them to the domain.
  const transport: Transport =
    target.transport === "SSE"
      ? new SSEClientTransport(url, { fetch: exchange.fetch })
      : new StreamableHTTPClientTransport(url, { fetch: exchange.fetch });
  const options = { signal: exchange.signal, timeout: timeoutMs };
  try {
    try {
      await client.connect(transport, options);
    } catch (error) {
      return failed(exchange, error, "an MCP server");
    }
    const named = client.getServerVersion()?.name ?? "The server";
    if (!client.getServerCapabilities()?.tools)
      return { outcome: "UP", reason: `${named} answers MCP (no tools offered).` };
    try {
      const { tools } = await client.listTools(undefined, options);
      return {
        outcome: "UP",
        reason: `${named} answers MCP and lists ${tools.length} tool${tools.length === 1 ? "" : "s"}.`,
        live: { kind: "MCP_TOOLS", tools: liveTools(tools) },
      };
    } catch {
      // Alive and speaking MCP: tools it keeps for callers with credentials are not its health.
      return { outcome: "UP", reason: `${named} answers MCP; its tools are not listed without credentials.` };
    }
  } finally {
    await client.close().catch(() => {});
  }
}

/** The outcome of a failed exchange: the deadline, the door's refusal, a telling status, or not the protocol. */
function failed(exchange: Exchange, error: unknown, what: string): Outcome {
  const message = error instanceof Error ? error.message : String(error);
  if (exchange.timedOut || (error as { code?: unknown })?.code === REQUEST_TIMEOUT) {
    return { outcome: "UNKNOWN", reason: "No answer in time." };
  }
  if (exchange.refused) return refusal(exchange.refused);
  const settled = byStatus(exchange);
  if (settled) return settled;
  if (/unauthori[sz]ed|authenticat/i.test(message)) {
    return { outcome: "AUTH_REQUIRED", reason: "Answers, but asks for credentials." };
  }
  if (exchange.statuses.length > 0) {
    return {
      outcome: "WRONG_PROTOCOL",
      reason: `Answers (HTTP ${exchange.statuses.at(-1)}), but not as ${what}: ${message.slice(0, 200)}.`,
    };
  }
  return { outcome: "UNKNOWN", reason: `The check failed: ${message.slice(0, 200)}.` };
}

/** An A2A agent: its card at the endpoint's origin, read as an A2A v1 card (a v0.3 card translated). */
async function probeA2a(target: Target, exchange: Exchange): Promise<Outcome> {
  const origin = new URL(target.url).origin;
  const { AgentCard, DefaultAgentCardResolver } = await a2aSdk();
  const resolver = new DefaultAgentCardResolver({
    fetchImpl: exchange.fetch as typeof fetch,
    legacyCompat: { enabled: true },
  });
  let last: unknown;
  for (const path of CARD_PATHS) {
    const before = exchange.statuses.length;
    try {
      const card = wireForm(await resolver.resolve(origin, path), AgentCard);
      const problem = cardProblem(card);
      if (problem) return { outcome: "WRONG_PROTOCOL", reason: `Serves ${path}, but not an A2A card: ${problem}.` };
      const parts = cardParts(card as unknown as Parameters<typeof cardParts>[0]);
      return {
        outcome: "UP",
        reason: `Serves its A2A card at ${path} (${parts.skills.length} skill${parts.skills.length === 1 ? "" : "s"}).`,
        live: { kind: "A2A_CARD", card: parts },
      };
    } catch (error) {
      last = error;
      // Only a card that is not there sends the check on to the older path.
      const status = exchange.statuses[before];
      if (exchange.refused || status === undefined || !GONE_STATUSES.has(status)) break;
    }
  }
  const outcome = failed(exchange, last, "an A2A agent card");
  if (outcome.outcome !== "DOWN" || exchange.refused) return outcome;
  return { outcome: "DOWN", reason: `No A2A agent card at ${origin} (${CARD_PATHS.join(" or ")}).` };
}

/**
 * The card in A2A v1's JSON form: the SDK answers its parsed (ts-proto) form when the card's
 * security is written the proto way, and the JSON as it came otherwise; drift compares the JSON form.
 */
function wireForm(
  card: unknown,
  AgentCard: { fromJSON(o: unknown): AgentCard; toJSON(c: AgentCard): unknown },
): unknown {
  if (typeof card !== "object" || card === null) return card;
  const parsed = JSON.stringify(card).includes('"$case"') ? (card as AgentCard) : AgentCard.fromJSON(card);
  return AgentCard.toJSON(parsed);
}

/** What makes a parsed card not an A2A v1 card, in plain words; undefined when it is one. */
function cardProblem(card: unknown): string | undefined {
  if (typeof card !== "object" || card === null || Array.isArray(card)) return "the answer is not a JSON object";
  const c = card as Record<string, unknown>;
  if (typeof c.name !== "string" || !c.name) return "it has no name";
  if (!Array.isArray(c.supportedInterfaces) || c.supportedInterfaces.length === 0) return "it names no interface";
  const bad = c.supportedInterfaces.find(
    (i) => typeof i !== "object" || i === null || typeof (i as { url?: unknown }).url !== "string",
  );
  if (bad !== undefined) return "an interface has no URL";
  if (!Array.isArray(c.skills)) return "it has no skills list";
  return undefined;
}

/** Any other protocol: a GET of the health URL, judged by its status. */
async function probeHealthUrl(target: Target, exchange: Exchange): Promise<Outcome> {
  try {
    const answer = await exchange.fetch(target.url);
    await answer.body?.cancel();
    if (answer.ok) return { outcome: "UP", reason: `The health URL answers HTTP ${answer.status}.` };
    return (
      byStatus(exchange) ?? {
        outcome: "WRONG_PROTOCOL",
        reason: `The health URL answers HTTP ${answer.status}, not a success.`,
      }
    );
  } catch (error) {
    return failed(exchange, error, "a health URL");
  }
}

/**
 * Checks one target within `timeoutMs`, every request of it included; never throws. `stop` ends it
 * early (a replica shutting down); its result then says nothing and is not to be recorded.
 */
export async function probe(
  target: Target,
  outbound: Outbound,
  timeoutMs: number,
  stop?: AbortSignal,
): Promise<CheckResult> {
  const exchange = new Exchange(
    outbound,
    timeoutMs,
    stop,
    target.protocol === "MCP" && target.transport === "STREAMABLE_HTTP",
  );
  let result: Outcome;
  try {
    result =
      target.protocol === "MCP"
        ? await probeMcp(target, exchange, timeoutMs)
        : target.protocol === "A2A"
          ? await probeA2a(target, exchange)
          : await probeHealthUrl(target, exchange);
  } catch (error) {
    result = failed(exchange, error, "its protocol");
  } finally {
    exchange.end();
  }
  return { ...result, latencyMs: exchange.firstAnswerMs };
}
