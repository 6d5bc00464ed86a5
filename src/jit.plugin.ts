/**
 * Compiled execution (issue #7): graphql-jit turns an operation into a function once, instead of
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
import type { DocumentNode, ExecutionArgs, ExecutionResult } from "graphql";
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
  const operations = new WeakMap<DocumentNode, Map<string, Operation>>();
  return {
    onExecute({ args, executeFn, setExecuteFn }) {
      let byName = operations.get(args.document);
      if (!byName) {
        byName = new Map();
        operations.set(args.document, byName);
      }
      const name = args.operationName ?? "";
      let operation = byName.get(name);
      if (!operation) {
        operation = { runs: 0 };
        byName.set(name, operation);
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
