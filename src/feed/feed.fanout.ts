/**
 * One execution per event, not per subscriber. A feed result depends on the event, the document and
 * its variables only (the Event type's fields read nothing else; who may see an event is decided
 * before it is handed over): so each event is executed once per distinct document and variables,
 * and every subscriber asking the same gets the same result, serialized once. With a thousand
 * subscribers an event costs one execution and a thousand writes instead of a thousand of each.
 */
import { createSourceEventStream, type DocumentNode, type ExecutionResult, execute, getOperationAST } from "graphql";
import { isAsyncIterable, mapAsyncIterator, type Plugin } from "graphql-yoga";
import type { LoggedEvent } from "../events/event.store.ts";

/** How many recent events keep their shared results (subscribers are at most this far apart). */
const KEPT = 256;

/** The number of each document seen: a document is parsed once and cached by Yoga, so kept by identity. */
const documentIds = new WeakMap<DocumentNode, number>();
let documents = 0;

export function useFeedFanOut(): Plugin {
  const shared = new Map<number, Map<string, Promise<ExecutionResult>>>();
  const resultOf = (event: LoggedEvent, key: string, run: () => Promise<ExecutionResult>) => {
    let byKey = shared.get(event.seq);
    if (!byKey) {
      byKey = new Map();
      shared.set(event.seq, byKey);
      // Maps keep insertion order: the oldest event's results go first.
      if (shared.size > KEPT) shared.delete(shared.keys().next().value as number);
    }
    let result = byKey.get(key);
    if (!result) {
      result = run().then((executed) => {
        if (executed.errors?.length) return executed;
        // Yoga's SSE and WebSocket writers call a result's own `stringify`: once for everyone.
        let text: string | undefined;
        return Object.assign(executed, { stringify: (r: unknown) => (text ??= JSON.stringify(r)) });
      });
      byKey.set(key, result);
    }
    return result;
  };

  return {
    onSubscribe({ args, setSubscribeFn }) {
      const operation = getOperationAST(args.document, args.operationName);
      const field = operation?.selectionSet.selections[0];
      if (operation?.selectionSet.selections.length !== 1 || field?.kind !== "Field" || field.name.value !== "feed") {
        return;
      }
      setSubscribeFn(async (subscribeArgs) => {
        const source = await createSourceEventStream(subscribeArgs);
        if (!isAsyncIterable(source)) return source;
        let id = documentIds.get(subscribeArgs.document);
        if (id === undefined) {
          id = ++documents;
          documentIds.set(subscribeArgs.document, id);
        }
        const key = `${id}:${subscribeArgs.operationName ?? ""}:${JSON.stringify(subscribeArgs.variableValues ?? {})}`;
        return mapAsyncIterator(source as AsyncIterable<LoggedEvent>, (event) =>
          resultOf(event, key, async () => execute({ ...subscribeArgs, rootValue: event })),
        );
      });
    },
  };
}
