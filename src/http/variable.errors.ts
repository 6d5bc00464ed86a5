/**
 * graphql-js names a variable that does not fit its type by quoting the value it refused
 * (`Variable "$packages" got invalid value { name: "TOKEN", value: "hunter2" } at …`), and a scalar's
 * refusal quotes it again: a secret sent in the wrong place would come back in the answer, and into
 * whatever keeps answers. Such an error is rebuilt from the same coercion, naming the variable, the
 * place in it and what was expected there, never the value.
 */
import {
  coerceInputValue,
  type ExecutionArgs,
  type ExecutionResult,
  GraphQLError,
  type GraphQLInputType,
  getNamedType,
  getNullableType,
  getOperationAST,
  isEnumType,
  isInputObjectType,
  isLeafType,
  isListType,
  isNonNullType,
  typeFromAST,
} from "graphql";
import type { Plugin } from "graphql-yoga";

/** graphql-js's error of a variable whose value does not fit its type (the only one quoting the value). */
const REFUSED_VALUE = /^Variable "\$[_A-Za-z][_0-9A-Za-z]*" got invalid value /;

/** The input type at a path into a value of `type`, or undefined when the path leaves the type. */
function typeAt(type: GraphQLInputType, path: readonly (string | number)[]): GraphQLInputType | undefined {
  let at: GraphQLInputType | undefined = type;
  for (const key of path) {
    const nullable = getNullableType(at) as GraphQLInputType;
    if (typeof key === "number" && isListType(nullable)) at = nullable.ofType as GraphQLInputType;
    else if (typeof key === "string" && isInputObjectType(nullable)) at = nullable.getFields()[key]?.type;
    else return undefined;
    if (!at) return undefined;
  }
  return at;
}

/** What a leaf (a scalar or an enumeration) takes, in place of its own refusal, which may quote the value. */
function expected(type: GraphQLInputType): string {
  const named = getNamedType(type);
  if (isEnumType(named)) {
    return `Expected one of the values of "${named.name}": ${named
      .getValues()
      .map((v) => v.name)
      .join(", ")}.`;
  }
  return `Expected a value of type "${named.name}".`;
}

/** The text of a value's parts (keys included): what a message quoting it would contain. */
function partsOf(value: unknown, into: string[] = []): string[] {
  if (Array.isArray(value)) for (const item of value) partsOf(item, into);
  else if (typeof value === "object" && value !== null) {
    for (const [key, item] of Object.entries(value)) {
      into.push(key);
      partsOf(item, into);
    }
  } else if (value !== null && value !== undefined && String(value) !== "") into.push(String(value));
  return into;
}

/** Whether a message quotes any part of a value (or might: a part found anywhere in it counts). */
function quotes(message: string, value: unknown): boolean {
  return partsOf(value).some((part) => message.includes(part));
}

/** The errors of a variable's value, each naming its place and what is wrong, never the value. */
function errorsOf(args: ExecutionArgs): GraphQLError[] {
  const operation = getOperationAST(args.document, args.operationName);
  const values = (args.variableValues ?? {}) as Record<string, unknown>;
  const errors: GraphQLError[] = [];
  for (const definition of operation?.variableDefinitions ?? []) {
    const name = definition.variable.name.value;
    const type = typeFromAST(args.schema, definition.type as never) as GraphQLInputType | undefined;
    // graphql-js refuses these without coercing (and without quoting anything): so does this.
    if (!type || !(name in values) || (values[name] === null && isNonNullType(type))) continue;
    coerceInputValue(values[name], type, (path, value, error) => {
      const leaf = typeAt(type, path);
      // A leaf's own words are kept when they quote nothing of the value (the DateTime scalar's do not).
      const quoting = leaf && isLeafType(getNamedType(leaf)) && quotes(error.message, value);
      const reason = quoting ? expected(leaf) : error.message;
      const at = path.map((key) => (typeof key === "number" ? `[${key}]` : `.${key}`)).join("");
      errors.push(
        new GraphQLError(`Variable "$${name}" got an invalid value${at ? ` at "${name}${at}"` : ""}; ${reason}`, {
          nodes: definition,
        }),
      );
    });
  }
  return errors;
}

/**
 * A result refused for its variables, each error quoting a value replaced by its rebuilt twin (the
 * same coercion finds the same errors in the same order); the others, which quote nothing, kept.
 * Undefined when there is nothing to rebuild.
 */
export function withoutRefusedValues(args: ExecutionArgs, result: ExecutionResult): ExecutionResult | undefined {
  if ("data" in result || !result.errors?.some((e) => REFUSED_VALUE.test(e.message))) return undefined;
  const rebuilt = errorsOf(args);
  let next = 0;
  const errors = result.errors.map((error) => {
    if (!REFUSED_VALUE.test(error.message)) return error;
    // Should the coercion not find again what graphql-js found, the variable alone is named.
    const variable = /^Variable "\$([_A-Za-z][_0-9A-Za-z]*)"/.exec(error.message)?.[1];
    return rebuilt[next++] ?? new GraphQLError(`Variable "$${variable}" got an invalid value.`, { nodes: error.nodes });
  });
  return { ...result, errors };
}

/** Replaces a single result's refused-value errors (a stream's events are left as they are). */
function rebuildOf(args: ExecutionArgs) {
  return ({
    result,
    setResult,
  }: {
    result: ExecutionResult | AsyncIterable<unknown>;
    setResult: (r: ExecutionResult) => void;
  }) => {
    if (Symbol.asyncIterator in result) return;
    const rebuilt = withoutRefusedValues(args, result);
    if (rebuilt) setResult(rebuilt);
  };
}

/** Every operation's variable errors, /graphql's and the REST routes' alike, without the refused values. */
export const useVariableErrorsWithoutValues: Plugin = {
  onExecute: ({ args }) => ({ onExecuteDone: rebuildOf(args) }),
  onSubscribe: ({ args }) => ({ onSubscribeResult: rebuildOf(args) }),
};
