/**
 * How an operation runs, from either door: through Yoga's envelope of the app's plugins for its
 * request — the app's context, the GraphQL limits and their validation verdicts, valid text,
 * idempotency, rate limits, compiled execution, the feed — as Yoga itself would run it. The REST lane
 * (rest/rest.plugin.ts) gives SOFA this runner's `context` and `executeInEnvelope`; the /graphql fast lane
 * (graphql.http.ts) prepares and runs a posted operation here. An app has one runner, made from its
 * Yoga instance by whichever lane meets it first (`onYogaInit`).
 */
import {
  type DocumentNode,
  type ExecutionArgs,
  type ExecutionResult,
  type GraphQLError,
  getOperationAST,
} from "graphql";
import { isPromise, type YogaServerInstance } from "graphql-yoga";

/** Yoga's maker of a request's envelope of plugins. */
export type GetEnveloped = YogaServerInstance<Record<string, unknown>, Record<string, unknown>>["getEnveloped"];
type Enveloped = ReturnType<GetEnveloped>;

/** A GraphQL request's parameters, as Yoga reads them. */
export interface OperationParams {
  query: string;
  variables?: Record<string, unknown> | null;
  operationName?: string | null;
}

/** An operation ready to run: its parameters, its request's envelope and its parsed, valid document. */
export interface Prepared {
  params: OperationParams;
  run: Enveloped;
  document: DocumentNode;
}

/**
 * Where an operation's context keeps the envelope it was built in, for an `execute` that is handed
 * only the context (SOFA's, graphql-ws'). On the context itself, not in a WeakMap keyed by it: V8's
 * minor GC keeps a WeakMap's entries alive, so every request's context and envelope would be promoted
 * and freed only by a full GC (docs/architecture.md, "One operation runner").
 */
const ENVELOPE = Symbol("envelope");

/** Records the envelope a context was built in. */
export function keepEnvelope(contextValue: object, run: Enveloped): void {
  (contextValue as { [ENVELOPE]?: Enveloped })[ENVELOPE] = run;
}

/** The envelope a context was built in (`keepEnvelope`). */
export function envelopeOf(contextValue: unknown): Enveloped {
  const run = (contextValue as { [ENVELOPE]?: Enveloped } | null)?.[ENVELOPE];
  if (!run) throw new TypeError("An operation ran without the app's context");
  return run;
}

export class OperationRunner {
  constructor(private readonly getEnveloped: GetEnveloped) {}

  /**
   * The operation of a request, parsed and validated in its envelope; undefined when its text does
   * not parse, names no operation, is a subscription, or does not validate (Yoga's own pipeline then
   * answers it). As Yoga's handler of params, the request and its params are set on the context
   * before the envelope is made; parse and validation are Yoga's, cached.
   */
  prepare(serverContext: Record<string, unknown>, request: Request, params: OperationParams): Prepared | undefined {
    const run = this.getEnveloped(Object.assign(serverContext, { request, params }));
    let document: DocumentNode;
    try {
      document = run.parse(params.query);
    } catch {
      return undefined;
    }
    const operation = getOperationAST(document, params.operationName);
    if (!operation || operation.operation === "subscription") return undefined;
    if (run.validate(run.schema, document).length > 0) return undefined;
    return { params, run, document };
  }

  /**
   * Builds the context of a prepared operation and executes it. What throws (a credential that does
   * not verify, while the context is built) becomes the result's error through `maskError`, as Yoga
   * answers it.
   */
  async run(prepared: Prepared, maskError: (error: unknown) => GraphQLError): Promise<ExecutionResult> {
    const { params, run, document } = prepared;
    try {
      const built = run.contextFactory();
      // Awaited only when it is a promise: an anonymous request's context is built synchronously.
      const contextValue = isPromise(built) ? await built : built;
      return (await run.execute({
        schema: run.schema,
        document,
        contextValue,
        variableValues: params.variables,
        operationName: params.operationName,
      } as ExecutionArgs)) as ExecutionResult;
    } catch (error) {
      return { errors: [maskError(error)] };
    }
  }

  /** SOFA's context factory: the envelope of the request's server context, and the context it builds. */
  readonly context = async (serverContext: unknown): Promise<object> => {
    const run = this.getEnveloped(serverContext as Record<string, unknown>);
    const contextValue = (await run.contextFactory()) as object;
    keepEnvelope(contextValue, run);
    return contextValue;
  };
}

/** SOFA's execute: in the envelope its context was built in, whichever app built it. */
export const executeInEnvelope = (args: ExecutionArgs): unknown =>
  envelopeOf(args.contextValue).execute(args as Parameters<Enveloped["execute"]>[0]);

const runners = new WeakMap<object, OperationRunner>();

/** The app's runner, for its Yoga instance (at `onYogaInit`). */
export function operationRunner(yoga: { getEnveloped: unknown }): OperationRunner {
  let runner = runners.get(yoga);
  if (!runner) {
    runner = new OperationRunner(yoga.getEnveloped as GetEnveloped);
    runners.set(yoga, runner);
  }
  return runner;
}
