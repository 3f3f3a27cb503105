// Wrong or missing arguments and variables are the caller's to fix (.docs/api.md "REST conventions"): 400
// `parameter_invalid` naming the parameter in extensions.param, never a masked internal_error, and
// nothing is logged above info. A variable is named by its path without the `$` (`i.amount`,
// `ids[1]`), as the input guard names text in variables; a literal in the document by the argument
// path that leads to it (`input.amount`, `first`).
import {
  type ASTNode,
  BREAK,
  coerceInputValue,
  type DocumentNode,
  type ExecutionArgs,
  type ExecutionResult,
  getOperationAST,
  GraphQLError,
  type GraphQLErrorOptions,
  type GraphQLSchema,
  isInputType,
  isNonNullType,
  Kind,
  ProvidedRequiredArgumentsRule,
  typeFromAST,
  validate,
  ValuesOfCorrectTypeRule,
  VariablesInAllowedPositionRule,
  visit,
} from "graphql";
import type { Plugin } from "graphql-yoga";
import { argumentPath } from "./input-guard.js";

/**
 * A `parameter_invalid` error that fails the whole operation. extensions.http (which yoga does not
 * show) makes it HTTP 400 whatever the Accept header: `spec: false` keeps yoga from answering a
 * validation error with 200 to `application/json`.
 */
export function parameterError(message: string, param: string, at: Pick<GraphQLErrorOptions, "nodes" | "source" | "positions"> = {}): GraphQLError {
  return new GraphQLError(message, {
    nodes: at.nodes,
    source: at.source,
    positions: at.positions,
    extensions: { code: "parameter_invalid", param, statusCode: 400, http: { status: 400, spec: false } },
  });
}

/**
 * Refuses an operation whose variables do not fit their declared types (a missing required one,
 * null for a non-null one, a value of the wrong type anywhere inside one) before anything runs, over
 * every transport: the executor would report them too, but without the path inside the variable.
 */
export function variablesPlugin(): Plugin {
  const check = (args: ExecutionArgs, stop: (result: ExecutionResult) => void) => {
    const error = invalidVariable(args.schema, args.document, args.operationName, args.variableValues ?? {});
    if (error) stop({ errors: [error] });
  };
  return {
    onExecute: ({ args, setResultAndStopExecution }) => check(args, setResultAndStopExecution),
    onSubscribe: ({ args, setResultAndStopExecution }) => check(args, setResultAndStopExecution),
  };
}

/** The error of the first variable of the operation that does not fit its type, or null. */
function invalidVariable(
  schema: GraphQLSchema,
  document: DocumentNode,
  operationName: string | null | undefined,
  values: Readonly<Record<string, unknown>>,
): GraphQLError | null {
  for (const definition of getOperationAST(document, operationName)?.variableDefinitions ?? []) {
    const name = definition.variable.name.value;
    const type = typeFromAST(schema, definition.type);
    // Validation has refused a variable of an unknown or output type already.
    if (!isInputType(type)) continue;
    if (!Object.hasOwn(values, name)) {
      if (isNonNullType(type) && !definition.defaultValue)
        return parameterError(`Variable "$${name}" of required type "${type}" was not provided.`, name, { nodes: definition });
      continue;
    }
    let error: GraphQLError | null = null;
    coerceInputValue(values[name], type, (path, _value, cause) => {
      // A missing or unknown input field is reported at its object, and named only in the message
      // (`Field "email" of required type …`; a name cannot hold a quote, so this reads it exactly).
      const field = /^Field "(\w+)" (?:of required type|is not defined by type)/.exec(cause.message)?.[1];
      const param = name + [...path, ...(field ? [field] : [])].map((key) => (typeof key === "number" ? `[${key}]` : `.${key}`)).join("");
      error ??= parameterError(`Variable "$${name}" is invalid${param === name ? "" : ` at ${param}`}: ${cause.message}`, param, { nodes: definition });
    });
    if (error) return error;
  }
  return null;
}

/** The validation rules whose errors are about a parameter: a literal of the wrong type, a missing required argument, a variable where its type does not fit. */
const PARAMETER_RULES = [ValuesOfCorrectTypeRule, ProvidedRequiredArgumentsRule, VariablesInAllowedPositionRule];

/**
 * Turns the validation errors of PARAMETER_RULES into `parameter_invalid` naming the argument, input
 * field or variable; other validation errors stay as GraphQL words them (GRAPHQL_VALIDATION_FAILED).
 */
export function parameterValidationPlugin(): Plugin {
  return {
    onValidate({ params: { schema, documentAST } }) {
      return ({ valid, result, setResult }) => {
        if (valid || result.every((e) => e.extensions.code === "parameter_invalid")) return;
        // Only an invalid document pays for this second pass, over the three rules alone.
        const ofParameters = validate(schema, documentAST, PARAMETER_RULES);
        const fromRule = (e: GraphQLError) => ofParameters.some((p) => p.message === e.message && p.nodes?.[0] === e.nodes?.[0]);
        setResult(result.map((e) => (e.extensions.code !== "parameter_invalid" && fromRule(e) ? parameterError(e.message, paramOf(e, documentAST), e) : e)));
      };
    },
  };
}

/** The parameter a PARAMETER_RULES error is about. */
function paramOf(error: GraphQLError, document: DocumentNode): string {
  const node = error.nodes?.[0];
  if (node?.kind === Kind.VARIABLE_DEFINITION) return node.variable.name.value;
  // graphql-js names a missing argument or input field only in its message (`Field "f" argument "id"
  // of type …`, `Field "Input.email" of required type …`); a name cannot hold a quote, so these read it exactly.
  if (node?.kind === Kind.FIELD || node?.kind === Kind.DIRECTIVE) return /argument "(\w+)"/.exec(error.message)?.[1] ?? node.name.value;
  if (!node) return "query";
  const field = node.kind === Kind.OBJECT ? /^Field "\w+\.(\w+)" of required type/.exec(error.message)?.[1] : undefined;
  return field ? `${literalPath(document, node)}.${field}` : literalPath(document, node);
}

/** The argument path of a value or input field in `document`: `input.lineItems[0].quantity`. */
function literalPath(document: DocumentNode, target: ASTNode): string {
  let found = "query";
  visit(document, {
    enter(node, _key, parent, path, ancestors) {
      if (node !== target) return;
      // An input field named in the error (an unknown one) belongs to the path; a value is where it leads.
      const chain = [...ancestors, parent as ASTNode, ...(node.kind === Kind.OBJECT_FIELD ? [node] : [])];
      found = argumentPath(chain, path) || "query";
      return BREAK;
    },
  });
  return found;
}
