// GraphQL's side of the text guard (domain/text.ts): the variables and every string literal of the
// document are checked before any resolver runs. ws.ts runs operations through the same envelop as
// HTTP and SSE, so onExecute and onSubscribe see every operation of every transport.
import { type ASTNode, BREAK, type DocumentNode, type ExecutionArgs, type ExecutionResult, Kind, visit } from "graphql";
import type { Plugin } from "graphql-yoga";
import { invalidTextError, invalidTextPath } from "../domain/text.js";
import { graphqlError } from "./errors.js";

/** Refuses an operation whose variables or string literals hold NUL or an unpaired surrogate, as 400 parameter_invalid. */
export function inputGuardPlugin(): Plugin {
  // Yoga caches parsed documents: each one is walked once, not on every operation.
  const literals = new WeakMap<DocumentNode, string | null>();
  const literalPath = (document: DocumentNode) => {
    if (!literals.has(document)) literals.set(document, invalidLiteralPath(document));
    return literals.get(document)!;
  };
  const check = (args: ExecutionArgs, stop: (result: ExecutionResult) => void) => {
    const param = invalidTextPath(args.variableValues ?? null) ?? literalPath(args.document);
    if (param !== null) stop({ errors: [graphqlError(invalidTextError(param))] });
  };
  return {
    onExecute: ({ args, setResultAndStopExecution }) => check(args, setResultAndStopExecution),
    onSubscribe: ({ args, setResultAndStopExecution }) => check(args, setResultAndStopExecution),
  };
}

/** The argument path (`input.metadata.cart`, `ids[1]`) of the first bad string literal in `document`, or null. */
function invalidLiteralPath(document: DocumentNode): string | null {
  let found: string | null = null;
  visit(document, {
    StringValue(node, _key, parent, path, ancestors) {
      if (invalidTextPath(node.value) === null) return;
      found = argumentPath([...ancestors, parent as ASTNode], path);
      return BREAK;
    },
  });
  return found;
}

/** Names a literal by the argument, input fields and list indexes that lead to it; `chain[i]` is reached through `path[i]`. */
export function argumentPath(chain: readonly (ASTNode | readonly ASTNode[])[], path: readonly (string | number)[]): string {
  let param = "";
  chain.forEach((node, i) => {
    if (!("kind" in node)) return;
    if (node.kind === Kind.ARGUMENT || node.kind === Kind.OBJECT_FIELD) param = param ? `${param}.${node.name.value}` : node.name.value;
    else if (node.kind === Kind.VARIABLE_DEFINITION) param = node.variable.name.value;
    else if (node.kind === Kind.LIST) param = `${param}[${path[i + 1]}]`;
  });
  return param;
}
