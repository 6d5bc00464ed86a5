/**
 * Compiled execution: graphql-jit turns an operation into a function once, instead of
 * graphql-js walking the document for every request — a fifth of the CPU of an uncached profile
 * read, and much of its garbage. Only operations run before are compiled: Yoga hands the same
 * document object for the same query text (its parse cache), every REST route runs one fixed
 * document, and a one-off query (compiling costs more than one run) is executed as before.
 *
 * An operation is a document and the name of the operation in it: a document of several operations
 * compiles each on its own (@envelop/graphql-jit, used before, kept one compiled function per document,
 * and so ran the first operation asked for whatever name a later request gave). A request error —
 * variables that do not fit their types, found before anything runs — is answered by the standard
 * executor, as it is for the first runs: graphql-jit reports it in its own words and without the HTTP
 * status (400) that the standard executor gives it. Subscriptions are not compiled: each runs long.
 */
import { type ExecutionArgs, type ExecutionResult, getOperationAST, type OperationDefinitionNode } from "graphql";
import { type CompiledQuery, compileQuery, isCompiledQuery } from "graphql-jit";
import { makeExecute, mapMaybePromise, type Plugin } from "graphql-yoga";

/** Runs of an operation before it is compiled. */
const HOT = 2;

type Execute = (args: ExecutionArgs) => unknown;

interface Operation {
  runs: number;
  /** The compiled operation's executor; null when graphql-jit cannot compile it. */
  execute?: Execute | null;
}

/** The compiled operation, falling back to `standard` for a request error. */
function compiledExecute(compiled: CompiledQuery, standard: Execute): Execute {
  return makeExecute((args) =>
    mapMaybePromise(compiled.query(args.rootValue, args.contextValue, args.variableValues), (result) => {
      if (!("data" in result)) return standard(args) as ExecutionResult;
      return Object.assign(result, { stringify: compiled.stringify });
    }),
  ) as Execute;
}

export function useCompiledExecution(): Plugin {
  // Keyed by the operation's node in the document: bounded by the documents kept (Yoga's parse cache,
  // SOFA's routes), whatever names requests send.
  const operations = new WeakMap<OperationDefinitionNode, Operation>();
  return {
    onExecute({ args, executeFn, setExecuteFn }) {
      const node = getOperationAST(args.document, args.operationName);
      if (!node) return; // nothing to run: the standard executor says so
      let operation = operations.get(node);
      if (!operation) {
        operation = { runs: 0 };
        operations.set(node, operation);
      }
      if (operation.execute === undefined) {
        operation.runs += 1;
        if (operation.runs < HOT) return;
        const compiled = compileQuery(args.schema, args.document, args.operationName ?? undefined);
        operation.execute = isCompiledQuery(compiled) ? compiledExecute(compiled, executeFn as Execute) : null;
      }
      if (operation.execute) setExecuteFn(operation.execute as never);
    },
  };
}
