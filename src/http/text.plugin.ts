/**
 * Text input is valid Unicode (API.md §5): a NUL or a lone surrogate in any string an operation is
 * given — a variable at any depth, which is where every REST body, path and query value arrives, or
 * a literal in the document — is a 400 naming the field, before anything runs. Neither could be
 * stored as sent: PostgreSQL refuses NUL in text and JSON, and UTF-8 has no encoding for a lone
 * surrogate (SQLite would store U+FFFD in its place).
 */
import { type ArgumentNode, type DocumentNode, Kind, type ValueNode, visit } from "graphql";
import type { Plugin } from "graphql-yoga";
import { badInput, type FieldError } from "../errors.ts";
import { isStorableText } from "../text.ts";

const UTF8 = new TextDecoder("utf-8", { fatal: true });

/**
 * A request's body as text, refused with a 400 when it is not UTF-8: decoding it leniently would
 * store U+FFFD where the client sent something else.
 */
export async function bodyText(request: Request): Promise<string> {
  const bytes = await request.arrayBuffer();
  try {
    return UTF8.decode(bytes);
  } catch {
    throw badInput("The body is not valid UTF-8", [{ path: "(body)", message: "not valid UTF-8" }]);
  }
}

const PROBLEM = "contains a NUL character or a lone surrogate; send valid Unicode text";

/**
 * The first string (or key) in a JSON value that is not storable, by its dotted path. Iterative:
 * a value may be nested thousands deep (the import's `document`) and is refused elsewhere for that.
 */
function badValue(root: unknown, rootPath: string): FieldError | null {
  const stack: [unknown, string][] = [[root, rootPath]];
  for (let next = stack.pop(); next; next = stack.pop()) {
    const [value, path] = next;
    if (typeof value === "string") {
      if (!isStorableText(value)) return { path, message: PROBLEM };
    } else if (typeof value === "object" && value !== null) {
      for (const [key, item] of Object.entries(value)) {
        if (!isStorableText(key)) return { path, message: PROBLEM };
        stack.push([item, `${path}.${key}`]);
      }
    }
  }
  return null;
}

/** The first string literal of an argument that is not storable. */
function badLiteral(node: ValueNode, path: string): FieldError | null {
  switch (node.kind) {
    case Kind.STRING:
      return isStorableText(node.value) ? null : { path, message: PROBLEM };
    case Kind.LIST:
      for (const [i, item] of node.values.entries()) {
        const bad = badLiteral(item, `${path}.${i}`);
        if (bad) return bad;
      }
      return null;
    case Kind.OBJECT:
      for (const field of node.fields) {
        const bad = badLiteral(field.value, `${path}.${field.name.value}`);
        if (bad) return bad;
      }
      return null;
    default:
      return null;
  }
}

/** A document's literals are checked once: documents are cached and run again. */
const literalVerdicts = new WeakMap<DocumentNode, FieldError | null>();

function badLiteralIn(document: DocumentNode): FieldError | null {
  let verdict = literalVerdicts.get(document);
  if (verdict === undefined) {
    verdict = null;
    visit(document, {
      Argument(node: ArgumentNode) {
        verdict ??= badLiteral(node.value, node.name.value);
        return verdict ? false : undefined;
      },
    });
    literalVerdicts.set(document, verdict);
  }
  return verdict;
}

/** The first variable (at any depth) holding a string that is not storable. */
function badVariable(variables: Record<string, unknown> | null | undefined): FieldError | null {
  for (const [name, value] of Object.entries(variables ?? {})) {
    const bad = badValue(value, name);
    if (bad) return bad;
  }
  return null;
}

export const useValidText: Plugin = {
  onExecute({ args, setResultAndStopExecution }) {
    const bad = badLiteralIn(args.document) ?? badVariable(args.variableValues);
    if (bad) setResultAndStopExecution({ errors: [badInput(`${bad.path} ${bad.message}`, [bad])] });
  },
};
