/**
 * Which relations a Provider field's selection asks for, so that the profile's one statement
 * (provider.store.ts) loads them with the row, and Pothos is told the row holds them.
 */
import { setLoaderMappings } from "@pothos/selection-mapper";
import { type FieldNode, type GraphQLResolveInfo, getNamedType, Kind, type SelectionSetNode } from "graphql";
import type { Relations } from "./provider.store.ts";

/** The Provider fields whose rows `readProvider` loads with the profile, by the relation they read. */
const RELATION_OF_FIELD: Record<string, keyof Relations | undefined> = {
  tokens: "tokens",
  reviewTimeline: "events",
  verifiedDomains: "domains",
};

/** What the loaded row holds beneath a relation field: plain columns, nothing loaded beneath them. */
const LOADED = Object.freeze({ nested: Object.freeze({}) });

interface Asked {
  relations: Relations;
  /** For @pothos/selection-mapper: `Type@responseKey` of each relation field the row comes with. */
  mappings: Record<string, typeof LOADED>;
}
/** By the field node, which is the parsed document's own and lives as long as it is cached. */
const askedByField = new WeakMap<FieldNode, Asked>();

/**
 * Which relations the Provider field `info` resolves asks for (`readProvider` then loads them with
 * the row), and Pothos told that the row it resolves with holds them — what `t.prismaField` would
 * learn from its query plan, which is walked afresh on every request through every field of the
 * profile (a sixth of an uncached profile read, docs/architecture.md). Here the selection is walked once
 * per document, through its fragments and under its aliases; a relation field not recorded would
 * load its own rows (tests/perf/round-trips.test.ts counts them). The answer is shared: frozen.
 */
export function relationsAsked(ctx: object, info: GraphQLResolveInfo): Relations {
  const node = info.fieldNodes.length === 1 ? info.fieldNodes[0] : undefined;
  let asked = node && askedByField.get(node);
  if (!asked) {
    asked = askedOf(info);
    if (node) askedByField.set(node, asked);
  }
  setLoaderMappings(ctx, info, asked.mappings);
  return asked.relations;
}

function askedOf(info: GraphQLResolveInfo): Asked {
  const type = getNamedType(info.returnType).name;
  const asked: Asked = { relations: { tokens: false, events: false, domains: false }, mappings: {} };
  const fragments = new Set<string>();
  const walk = (set: SelectionSetNode | undefined) => {
    for (const selection of set?.selections ?? []) {
      if (selection.kind === Kind.FIELD) {
        const relation = RELATION_OF_FIELD[selection.name.value];
        if (!relation) continue;
        asked.relations[relation] = true;
        asked.mappings[`${type}@${(selection.alias ?? selection.name).value}`] = LOADED;
      } else if (selection.kind === Kind.INLINE_FRAGMENT) {
        walk(selection.selectionSet);
      } else if (!fragments.has(selection.name.value)) {
        fragments.add(selection.name.value);
        walk(info.fragments[selection.name.value]?.selectionSet);
      }
    }
  };
  for (const field of info.fieldNodes) walk(field.selectionSet);
  Object.freeze(asked.relations);
  return asked;
}
