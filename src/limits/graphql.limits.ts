/**
 * The GraphQL limits of API.md §6: depth, aliases, tokens, cost and directives (graphql-armor's
 * envelop plugins), and no introspection in production unless GraphiQL is on there (config.ts).
 * They hold for every operation that executes, whichever door it came through:
 *
 * - /graphql: Yoga parses (token limit) and validates (the other limits) each document as usual.
 * - /api/v1: SOFA builds each route's document itself and calls only Yoga's `execute` — no parse,
 *   no validate (ARCHITECTURE.md, "Known traps"). So any document that reaches execution without
 *   having passed Yoga's validate phase is put through it here — printed and parsed with Yoga's
 *   parser (the token limit), then validated with Yoga's rules (armor's and the introspection rule) —
 *   before it runs; a refusal is a 400 BAD_USER_INPUT problem, like any bad request. SOFA's documents
 *   are built once per route, so each is checked once and the verdict kept.
 */
import { EnvelopArmorPlugin } from "@escape.tech/graphql-armor";
import {
  type DocumentNode,
  type GraphQLError,
  NoSchemaIntrospectionCustomRule,
  print,
  type ValidationContext,
} from "graphql";
import type { Plugin } from "graphql-yoga";
import type { GraphqlLimitsConfig } from "../config.ts";
import { apiError, notFound } from "../errors.ts";
import type { GetEnveloped } from "../http/operation.runner.ts";
import { graphqlErrorResponse } from "../http/rest/problem.ts";

/**
 * A refusal of a validation rule is reported as a validation error (not thrown, armor's default),
 * so that Yoga answers it as it answers any invalid document: 400 with GraphQL's response type.
 */
const report = {
  propagateOnRejection: false,
  onReject: [(context: ValidationContext | null, error: GraphQLError) => context?.reportError(error)],
};

/** armor's options for a configuration: a limit of 0 turns that protection off. */
function armorOptions(limits: GraphqlLimitsConfig) {
  const on = (n: number) => ({ enabled: n > 0, n: Math.max(n, 1) });
  return {
    maxDepth: { ...on(limits.maxDepth), ignoreIntrospection: true, ...report },
    maxAliases: { ...on(limits.maxAliases), ...report },
    // Counted while parsing, where there is no validation context: that refusal is thrown.
    maxTokens: on(limits.maxTokens),
    maxDirectives: { ...on(limits.maxDirectives), ...report },
    costLimit: {
      enabled: limits.maxCost > 0,
      maxCost: Math.max(limits.maxCost, 1),
      ignoreIntrospection: true,
      ...report,
    },
    // "Did you mean …?" would spell out the schema that introspection is closed to hide.
    blockFieldSuggestion: { enabled: !limits.introspection },
  };
}

/**
 * The limits as Yoga plugins, in the order they must run (before anything that executes). With
 * `graphiql` off (GRAPHIQL; off in production by default), a browser asking /graphql for GraphiQL
 * gets a 404 in the GraphQL error shape rather than Yoga's empty 406.
 */
export function useGraphqlLimits(limits: GraphqlLimitsConfig, options: { graphiql: boolean }): Plugin[] {
  const noGraphiql: Plugin = {
    onRequest({ request, url, endResponse }) {
      if (options.graphiql || url.pathname !== "/graphql" || request.method !== "GET") return;
      if (url.searchParams.has("query") || !(request.headers.get("accept") ?? "").includes("text/html")) return;
      endResponse(
        graphqlErrorResponse(notFound("GraphiQL is turned off here; send GraphQL requests to /graphql with a query")),
      );
    },
  };

  const noIntrospection: Plugin = {
    onValidate({ addValidationRule }) {
      if (!limits.introspection) addValidationRule(NoSchemaIntrospectionCustomRule);
    },
  };

  /**
   * The verdict of validation on each document: a /graphql document's from Yoga's validate phase, a
   * REST route's from here, before it first runs. An app's rules are the same for every request, so a
   * verdict holds for good. It stands in for Yoga's validation cache (turned off in yoga.ts), which
   * keys its entries by the names of the rules, joined afresh for every request.
   */
  const verdicts = new WeakMap<DocumentNode, readonly GraphQLError[]>();
  let getEnveloped: GetEnveloped | undefined;

  const everyOperation: Plugin = {
    onYogaInit({ yoga }) {
      getEnveloped = yoga.getEnveloped as unknown as GetEnveloped;
    },
    onValidate({ params, setResult }) {
      const known = verdicts.get(params.documentAST);
      if (known) return setResult(known);
      return ({ result }) => {
        verdicts.set(params.documentAST, result as readonly GraphQLError[]);
      };
    },
    onExecute({ args, setResultAndStopExecution }) {
      let errors = verdicts.get(args.document);
      if (!errors) {
        if (!getEnveloped) throw new Error("graphql limits: Yoga did not initialise the plugin");
        const enveloped = getEnveloped(args.contextValue as unknown as Record<string, unknown>);
        try {
          // The parse is for the token limit only; the document that runs is SOFA's own. The
          // verdict of validate is kept by the hook above.
          enveloped.parse(print(args.document));
          errors = enveloped.validate(enveloped.schema, args.document) as readonly GraphQLError[];
        } catch (error) {
          errors = [error as GraphQLError];
          verdicts.set(args.document, errors);
        }
      }
      if (errors.length > 0) {
        setResultAndStopExecution({
          errors: errors.map((e) => apiError("BAD_USER_INPUT", `The operation is refused: ${e.message}`)),
        });
      }
    },
  };

  return [noGraphiql, EnvelopArmorPlugin(armorOptions(limits)) as Plugin, noIntrospection, everyOperation];
}
