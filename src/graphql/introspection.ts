// The standard introspection query (graphql-js's getIntrospectionQuery(), which codegen,
// graphql-inspector and IDEs send) nests __Type.ofType deeper than graphql-armor's depth limit lets
// operations go, so that limit leaves __schema out and this rule bounds introspection on its own: a
// chain of ofType hundreds deep is still refused.
import { type FieldNode, Kind, type SelectionSetNode, type ValidationContext, type ValidationRule } from "graphql";
import type { Plugin } from "graphql-yoga";
import { parameterError } from "./parameters.js";

/**
 * How deep fields may nest from __schema or __type down, fragments flattened. The standard query
 * needs 15 (__schema types fields type, then nine ofType, then name); the room above it is for
 * tools whose query reads a few more ofType.
 */
export const MAX_INTROSPECTION_DEPTH = 20;

/** Refuses an operation whose introspection nests deeper than `max` fields, as 400 parameter_invalid naming the query. */
export function introspectionDepthRule(max = MAX_INTROSPECTION_DEPTH): ValidationRule {
  return (context) => ({
    Field(node) {
      if (node.name.value !== "__schema" && node.name.value !== "__type") return;
      const depth = fieldDepth(node, context);
      if (depth > max) context.reportError(parameterError(`Introspection depth limit of ${max} exceeded, found ${depth}.`, "query", { nodes: node }));
      // Below, only introspection types: this rule has seen all it needs.
      return false;
    },
  });
}

/** The plugin that adds introspectionDepthRule to every operation's validation. */
export function introspectionDepthPlugin(): Plugin {
  return { onValidate: ({ addValidationRule }) => addValidationRule(introspectionDepthRule()) };
}

/** How many fields nest from `field` down, itself included. */
function fieldDepth(field: FieldNode, context: ValidationContext): number {
  // Each fragment is measured once (a fragment spread twice in each of thirty fragments must not
  // cost 2^30 walks); -1 while it is being measured, so a cycle (refused by validation too) ends.
  const fragments = new Map<string, number>();
  const ofField = (node: FieldNode): number => 1 + (node.selectionSet ? ofSet(node.selectionSet) : 0);
  const ofSet = (set: SelectionSetNode): number => {
    let depth = 0;
    for (const selection of set.selections) {
      if (selection.kind === Kind.FIELD) depth = Math.max(depth, ofField(selection));
      else if (selection.kind === Kind.INLINE_FRAGMENT) depth = Math.max(depth, ofSet(selection.selectionSet));
      else {
        const name = selection.name.value;
        const fragment = context.getFragment(name);
        if (fragment && !fragments.has(name)) {
          fragments.set(name, -1);
          fragments.set(name, ofSet(fragment.selectionSet));
        }
        depth = Math.max(depth, fragments.get(name) ?? 0);
      }
    }
    return depth;
  };
  return ofField(field);
}
