/**
 * `Idempotency-Key` on intake, for REST (`POST /api/v1/providers`) and GraphQL (`createProvider`
 * on POST /graphql) alike: the key travels in the HTTP header on both doors, and is checked where
 * both meet, when the operation executes.
 *
 * - A new key: the intake runs; its transaction also records the key (idempotency.store.ts), and
 *   the answer — without the access token — is stored before it is sent.
 * - The same key with the same request within 24 hours: the first answer again (status and body),
 *   with `accessToken: null`, `notice` saying why, the header `Idempotent-Replayed: true` and, on
 *   GraphQL, `extensions.idempotency`. Nothing is written.
 * - The same key with another request: 422 UNPROCESSABLE_CONTENT. While the first request still
 *   runs: 409 CONFLICT with Retry-After.
 *
 * Keys are scoped by their value alone (not by client address): a retry often comes from another
 * address (a mobile network, another NAT port, another proxy), and a replay needs the same key and
 * the same body, so it shows nothing its sender did not already know but the codes and the
 * owner's view of the new profile. Clients should use random keys (UUIDs).
 *
 * "The same request" is the route, the operation document (printed, so spacing does not matter)
 * and its variables with object keys sorted (so key order does not matter). Only intakes take a key;
 * on other operations the header is ignored. A failed intake (400, 409 code taken, 429, …) keeps
 * nothing: a retry runs afresh.
 */
import { createHash } from "node:crypto";
import {
  type DocumentNode,
  type ExecutionResult,
  type FragmentDefinitionNode,
  getOperationAST,
  Kind,
  print,
  type SelectionSetNode,
} from "graphql";
import type { Plugin } from "graphql-yoga";
import type { Context } from "../builder.ts";
import { apiError, badInput } from "../errors.ts";
import { rootFields } from "../limits/limits.plugin.ts";
import { claim, release, saveAnswer } from "./idempotency.store.ts";

export const IDEMPOTENCY_HEADER = "Idempotency-Key";
export const REPLAYED_HEADER = "Idempotent-Replayed";
export const INTAKE_FIELD = "createProvider";
/** The mutations that are an intake: createProvider, and importProvider (src/interop), which runs the same intake. */
const INTAKE_FIELDS: ReadonlySet<string> = new Set([INTAKE_FIELD, "importProvider"]);
export const REPLAY_NOTICE =
  "This answer replays the intake first made with this Idempotency-Key; nothing was registered again. " +
  "The access token is shown in the first answer only, so accessToken is null here: if it was lost, " +
  "a reviewer can issue the agent a new one.";

/** What the plugin leaves on the context for the intake resolver. */
export interface IdempotencyState {
  key: string;
  claimId: string;
  /** Set by the resolver once its intake has committed under the key. */
  committed?: { accessToken: string };
  /** The intake committed earlier but its answer was never stored: answer it again, write nothing. */
  replayOf?: { providerId: number; providerCode: string; reviewCode: string };
}

/** The idempotency state of a request's context, when it carries a key for an intake. */
export function idempotencyOf(ctx: object): IdempotencyState | undefined {
  return (ctx as { idempotency?: IdempotencyState }).idempotency;
}

/** The key of a header value (a bare token or a quoted string, as the IETF draft writes it); null if unusable. */
function keyOf(header: string): string | null {
  const value = /^"(.*)"$/.exec(header.trim())?.[1] ?? header.trim();
  return /^[\x21-\x7e]{1,255}$/.test(value) ? value : null;
}

/** JSON with object keys sorted, so that the same variables always print the same. */
function canonical(value: unknown): string {
  return JSON.stringify(value, (_key, v: unknown) =>
    v && typeof v === "object" && !Array.isArray(v)
      ? Object.fromEntries(Object.entries(v as Record<string, unknown>).sort(([a], [b]) => (a < b ? -1 : 1)))
      : v,
  );
}

/** The fingerprint of a request: what "the same request" means. */
export function fingerprintOf(
  route: string,
  document: DocumentNode,
  operationName: string | null | undefined,
  variables: unknown,
) {
  return createHash("sha256")
    .update(canonical({ route, document: print(document), operationName: operationName ?? null, variables }))
    .digest("hex");
}

/** The response keys (alias or name) of the fields called `name` in a selection set, through fragments. */
function responseKeys(set: SelectionSetNode, name: string, fragments: Map<string, FragmentDefinitionNode>): string[] {
  const keys: string[] = [];
  const visit = (s: SelectionSetNode, seen: Set<string>) => {
    for (const selection of s.selections) {
      if (selection.kind === Kind.FIELD) {
        if (selection.name.value === name) keys.push(selection.alias?.value ?? name);
      } else if (selection.kind === Kind.INLINE_FRAGMENT) {
        visit(selection.selectionSet, seen);
      } else if (!seen.has(selection.name.value)) {
        const fragment = fragments.get(selection.name.value);
        if (fragment) visit(fragment.selectionSet, new Set([...seen, selection.name.value]));
      }
    }
  };
  visit(set, new Set());
  return keys;
}

/**
 * The answer as a replay shows it: the data only, the token nowhere (every string equal to it is
 * null, whatever its alias), and `notice` (under any alias the operation gave it) explaining why.
 */
function forReplay(
  result: ExecutionResult,
  document: DocumentNode,
  operationName: string | null | undefined,
  accessToken: string | null,
): { data: unknown } {
  const data = JSON.parse(
    JSON.stringify(result.data ?? null, (_key, value: unknown) =>
      accessToken && value === accessToken ? null : value,
    ),
  ) as Record<string, Record<string, unknown> | null> | null;
  const operation = getOperationAST(document, operationName);
  const fragments = new Map(
    document.definitions.flatMap((d) => (d.kind === Kind.FRAGMENT_DEFINITION ? [[d.name.value, d] as const] : [])),
  );
  if (data && operation) {
    for (const selection of operation.selectionSet.selections) {
      if (selection.kind !== Kind.FIELD || !INTAKE_FIELDS.has(selection.name.value) || !selection.selectionSet)
        continue;
      const answer = data[selection.alias?.value ?? selection.name.value];
      if (!answer) continue;
      for (const key of responseKeys(selection.selectionSet, "accessToken", fragments)) answer[key] = null;
      for (const key of responseKeys(selection.selectionSet, "notice", fragments)) answer[key] = REPLAY_NOTICE;
    }
  }
  return { data };
}

type Log = (line: Record<string, unknown>) => void;

/** The Yoga plugin; place it before the rate limits, so that a replay or a refusal costs no intake. */
export function useIdempotency(log: Log = () => {}): Plugin {
  const keyed: Plugin = {
    async onExecute({ args, setResultAndStopExecution }) {
      const ctx = args.contextValue as unknown as Context & { idempotency?: IdempotencyState; restNulls?: string[] };
      const header = ctx.request.headers.get(IDEMPOTENCY_HEADER);
      if (header === null) return;
      const operation = getOperationAST(args.document, args.operationName);
      if (operation?.operation !== "mutation") return;
      const fields = rootFields(args.document, operation);
      const intake = fields.find((f) => INTAKE_FIELDS.has(f));
      if (intake === undefined) return;

      const stop = (error: unknown) => setResultAndStopExecution({ errors: [error as never] });
      if (fields.length !== 1) {
        return stop(
          badInput(`${IDEMPOTENCY_HEADER} applies to one intake: send ${intake} as the only field of the mutation`, [
            { path: IDEMPOTENCY_HEADER, message: `a mutation with ${intake} and nothing else` },
          ]),
        );
      }
      const key = keyOf(header);
      if (key === null) {
        return stop(
          badInput(`${IDEMPOTENCY_HEADER} must be 1–255 visible ASCII characters (a UUID is a good key)`, [
            { path: IDEMPOTENCY_HEADER, message: "1–255 visible ASCII characters" },
          ]),
        );
      }
      // SOFA drops a body's explicit nulls from the variables; the REST plugin puts them back later.
      const nulls = Object.fromEntries((ctx.restNulls ?? []).map((k) => [k, null]));
      const route = new URL(ctx.request.url).pathname;
      let fingerprint: string;
      try {
        fingerprint = fingerprintOf(route, args.document, args.operationName, { ...args.variableValues, ...nulls });
      } catch (error) {
        // A JSON argument (importProvider's document) nested thousands deep is more than JSON.stringify can print.
        if (!(error instanceof RangeError)) throw error;
        return stop(badInput("The request is nested too deeply", [{ path: "(body)", message: "nested too deeply" }]));
      }

      const claimed = await claim(ctx.db, key, fingerprint);
      switch (claimed.kind) {
        case "mismatch":
          return stop(
            apiError(
              "UNPROCESSABLE_CONTENT",
              `This ${IDEMPOTENCY_HEADER} was first used with another request; send a new key for a new intake`,
            ),
          );
        case "inFlight":
          return stop(
            apiError("CONFLICT", `A request with this ${IDEMPOTENCY_HEADER} is still being processed; retry shortly`, {
              headers: { "Retry-After": String(claimed.retryAfterSeconds) },
            }),
          );
        case "replay":
          ctx.response.headers.set("Cache-Control", "no-store");
          ctx.response.headers.set(REPLAYED_HEADER, "true");
          return setResultAndStopExecution({
            ...(claimed.response as ExecutionResult),
            extensions: { idempotency: { replayed: true, message: REPLAY_NOTICE } },
          });
        case "committed": {
          const { claimId, ...replayOf } = claimed;
          ctx.idempotency = { key, claimId, replayOf };
          ctx.response.headers.set(REPLAYED_HEADER, "true");
          break;
        }
        case "claimed":
          ctx.idempotency = { key, claimId: claimed.claimId };
          break;
      }

      return {
        async onExecuteDone({ result, setResult }) {
          const state = ctx.idempotency;
          if (!state || Symbol.asyncIterator in Object(result)) return;
          const done = result as ExecutionResult;
          const ok = !done.errors?.length && done.data != null;
          try {
            if (state.replayOf) {
              if (ok)
                await saveAnswer(ctx.db, key, state.claimId, forReplay(done, args.document, args.operationName, null));
              setResult({
                ...done,
                extensions: { ...done.extensions, idempotency: { replayed: true, message: REPLAY_NOTICE } },
              });
            } else if (!state.committed) {
              await release(ctx.db, key, state.claimId);
            } else if (ok) {
              const answer = forReplay(done, args.document, args.operationName, state.committed.accessToken);
              await saveAnswer(ctx.db, key, state.claimId, answer);
            }
            // Committed but answered with an error: the key stays COMMITTED; a retry answers afresh.
          } catch (error) {
            // The intake stands either way; only the stored answer is missing, and a retry renders it.
            log({
              time: new Date().toISOString(),
              level: "warn",
              msg: "idempotency key not updated",
              error: String(error),
            });
          }
        },
      };
    },
  };
  return {
    // An operation without the header goes on at once, without waiting a turn.
    onExecute(payload) {
      const ctx = payload.args.contextValue as unknown as Context;
      // `get`, not `has`: the fetch ponyfill answers `has` false for a header sent empty.
      if (ctx.request.headers.get(IDEMPOTENCY_HEADER) !== null) return keyed.onExecute?.(payload);
    },
  };
}
