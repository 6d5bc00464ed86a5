/**
 * Where the rate limits meet a request: the client address, the Yoga plugin that counts intakes
 * and agent writes when an operation executes (REST operations run through SOFA execute the same
 * way, so both doors share one count), and the guard the viewer plugin puts around credentials.
 */
import { isIP } from "node:net";
import {
  type DocumentNode,
  type FieldNode,
  getOperationAST,
  Kind,
  type OperationDefinitionNode,
  type SelectionSetNode,
} from "graphql";
import type { Plugin } from "graphql-yoga";
import type { Viewer } from "../auth/viewer.ts";
import { codeOf } from "../errors.ts";
import type { Limits } from "./rate.limits.ts";

/** The parts of a request (Yoga context or server context) the client address is read from. */
export interface AddressSource {
  request: Request;
  /** Node's request, on the server context when served by node:http (main.ts). */
  req?: { socket?: { remoteAddress?: string } };
}

/** An IPv6 address as its 8 groups, or null. */
function ipv6Groups(address: string): string[] | null {
  const [head = "", tail, ...rest] = address.split("::");
  if (rest.length) return null;
  const left = head ? head.split(":") : [];
  const right = tail ? tail.split(":") : [];
  const groups = tail === undefined ? left : [...left, ...Array(8 - left.length - right.length).fill("0"), ...right];
  return groups.length === 8 ? groups.map((g) => Number.parseInt(g || "0", 16).toString(16)) : null;
}

/**
 * The key a client address is counted under: IPv4 as it is (IPv4-mapped IPv6 included), IPv6 by
 * its /64 network, which one subscriber usually holds whole (so cannot step around a limit by
 * changing the low bits).
 */
export function addressKey(address: string): string {
  const bare = address.replace(/%.*$/, "");
  const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(bare);
  if (mapped?.[1]) return mapped[1];
  if (isIP(bare) !== 6) return bare;
  const groups = ipv6Groups(bare);
  return groups ? `${groups.slice(0, 4).join(":")}::/64` : bare;
}

/**
 * The client's address. The socket's peer, unless `trustProxy` (TRUST_PROXY) says that many
 * proxies in front of the service append to `X-Forwarded-For`: then the address the outermost
 * trusted proxy saw, counted from the right, since a client can write anything to the left.
 */
export function clientAddress(source: AddressSource, trustProxy: number): string {
  const socket = source.req?.socket?.remoteAddress;
  if (trustProxy > 0) {
    const forwarded = (source.request.headers.get("x-forwarded-for") ?? "")
      .split(",")
      .map((part) => part.trim())
      .filter(Boolean);
    const hop = forwarded[Math.max(0, forwarded.length - trustProxy)];
    if (hop && isIP(hop.replace(/%.*$/, ""))) return addressKey(hop);
  }
  return socket ? addressKey(socket) : "unknown";
}

/** The root fields an operation selects, through fragments, each as often as it is selected. */
export function rootFields(document: DocumentNode, operation: OperationDefinitionNode): string[] {
  return rootFieldNodes(document, operation).map((field) => field.name.value);
}

/** The root field selections of an operation, through fragments, each as often as it is selected. */
export function rootFieldNodes(document: DocumentNode, operation: OperationDefinitionNode): FieldNode[] {
  const fragments = new Map(
    document.definitions.flatMap((d) => (d.kind === Kind.FRAGMENT_DEFINITION ? [[d.name.value, d] as const] : [])),
  );
  const fields: FieldNode[] = [];
  const visit = (set: SelectionSetNode, seen: Set<string>) => {
    for (const selection of set.selections) {
      if (selection.kind === Kind.FIELD) fields.push(selection);
      else if (selection.kind === Kind.INLINE_FRAGMENT) visit(selection.selectionSet, seen);
      else {
        const fragment = fragments.get(selection.name.value);
        if (fragment && !seen.has(fragment.name.value)) {
          visit(fragment.selectionSet, new Set([...seen, fragment.name.value]));
        }
      }
    }
  };
  visit(operation.selectionSet, new Set());
  return fields;
}

/** The mutations that are an intake. */
const INTAKE_FIELDS = new Set(["createProvider", "importProvider"]);

/**
 * Counts each mutation as it executes: every intake field against the client address, every field
 * of a mutation made with an agent token against that token. Over a limit, the operation does not
 * run and answers RATE_LIMITED (429 with Retry-After, on /graphql and /api/v1 alike).
 */
export function useLimits(limits: Limits, trustProxy: number): Plugin<{ viewer: Viewer } & AddressSource> {
  return {
    // Synchronous until there is something to count: a read goes on without waiting a turn.
    onExecute({ args, setResultAndStopExecution }) {
      if (!limits.enabled) return;
      const operation = getOperationAST(args.document, args.operationName);
      if (operation?.operation !== "mutation") return;
      const fields = rootFields(args.document, operation);
      const context = args.contextValue;
      const count = async () => {
        const intakes = fields.filter((f) => INTAKE_FIELDS.has(f)).length;
        if (intakes > 0) await limits.consume("intake", clientAddress(context, trustProxy), intakes);
        if (context.viewer?.kind === "agent") await limits.consume("writes", context.viewer.tokenId, fields.length);
      };
      return count().catch((error: unknown) => {
        if (codeOf(error) !== "RATE_LIMITED") throw error;
        setResultAndStopExecution({ errors: [error as never] });
      });
    },
    async onDispose() {
      await limits.close();
    },
  };
}

/**
 * The guard around reading credentials: an address that has failed authentication too often is
 * refused with 429 before its credentials are verified, and every 401 is counted against it (or
 * whatever `failed` calls a failure: a refused sign-in's answer is a 400, src/signin/).
 */
export function credentialGuard(limits: Limits, trustProxy: number) {
  return async <T>(
    source: AddressSource,
    authenticate: () => Promise<T>,
    failed: (error: unknown) => boolean = (error) => codeOf(error) === "UNAUTHENTICATED",
  ): Promise<T> => {
    if (!limits.enabled) return authenticate();
    const address = clientAddress(source, trustProxy);
    await limits.check("authFailures", address);
    try {
      return await authenticate();
    } catch (error) {
      if (failed(error)) await limits.penalize("authFailures", address);
      throw error;
    }
  };
}

export type CredentialGuard = ReturnType<typeof credentialGuard>;
