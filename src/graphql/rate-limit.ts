// Admitting GraphQL operations (.docs/api.md "Idempotency and rate limits"): one unit per root field
// of the request budgets, so fifteen aliased mutations cost fifteen creates. A key spends the budget
// of each field's kind (mutations: create; connections and lists: list; other queries and a
// subscription's start: read); a caller without a key spends its address's public budget and waits
// for a place in the anonymous bulkhead, or, a hosted page following its own charge (its page
// token's), in the hosted pages' lane.
import {
  type DocumentNode,
  type FieldNode,
  type FragmentDefinitionNode,
  type GraphQLError,
  type GraphQLOutputType,
  type GraphQLSchema,
  getOperationAST,
  Kind,
  type OperationDefinitionNode,
  type SelectionSetNode,
} from "graphql";
import type { Plugin } from "graphql-yoga";
import { AppError } from "../domain/errors.js";
import type { Bulkhead, Release } from "../http/bulkhead.js";
import type { HostedPages } from "../http/hosted-pages.js";
import type { RateLimiter, RouteGroup } from "../http/rate-limit.js";
import type { LiveCharges } from "../realtime/charges.js";
import type { GraphQLContext } from "./context.js";
import { graphqlError } from "./errors.js";

/** Units per budget that `operation` spends: one per root field (through fragments). */
export function operationCost(schema: GraphQLSchema, document: DocumentNode, operation: OperationDefinitionNode): Map<RouteGroup, number> {
  const fragments = new Map(document.definitions.filter((d): d is FragmentDefinitionNode => d.kind === Kind.FRAGMENT_DEFINITION).map((f) => [f.name.value, f]));
  const root = schema.getRootType(operation.operation);
  const cost = new Map<RouteGroup, number>();
  const visit = (set: SelectionSetNode, seen: Set<string>) => {
    for (const selection of set.selections) {
      if (selection.kind === Kind.INLINE_FRAGMENT) visit(selection.selectionSet, seen);
      else if (selection.kind === Kind.FRAGMENT_SPREAD) {
        const fragment = fragments.get(selection.name.value);
        // A fragment spread twice (or in a cycle, which validation refuses) is counted once.
        if (fragment && !seen.has(fragment.name.value)) visit(fragment.selectionSet, new Set([...seen, fragment.name.value]));
      } else {
        const budget = budgetOf(operation.operation, root?.getFields()[selection.name.value]?.type);
        cost.set(budget, (cost.get(budget) ?? 0) + 1);
      }
    }
  };
  visit(operation.selectionSet, new Set());
  return cost;
}

function budgetOf(kind: OperationDefinitionNode["operation"], type: GraphQLOutputType | undefined): RouteGroup {
  if (kind === "mutation") return "create";
  if (kind === "subscription" || !type) return "read";
  // Judged from the type's printed form ("[Charge!]!", "QueryChargesConnection!"): lists and
  // connections are pages of records, whatever wraps them.
  const printed = String(type).replace(/!$/, "");
  return printed.startsWith("[") || printed.endsWith("Connection") ? "list" : "read";
}

/**
 * Admits each operation (HTTP, SSE and WebSocket alike) before it runs: it spends its cost, and one
 * without a key then takes a place in the anonymous bulkhead for as long as it runs (a
 * subscription: until its first read is done; a running stream holds none). Past a budget, a
 * full bulkhead or a charge with all the live subscribers it may have, the operation fails with 429.
 */
export function admissionPlugin(limiter: RateLimiter, bulkhead: Bulkhead, hostedPages: HostedPages, live: LiveCharges): Plugin<GraphQLContext> {
  const admit = async (args: AdmittedArgs): Promise<Release | null> => {
    const operation = getOperationAST(args.document, args.operationName);
    if (!operation) return null;
    const ctx = args.contextValue as GraphQLContext;
    const cost = operationCost(args.schema, args.document, operation);
    if (ctx.principal) {
      for (const [budget, units] of cost) await limiter.consume(ctx.principal.credentialId, budget, units);
      refuseFullCharges(operation, args.variableValues, live);
      return null;
    }
    const units = [...cost.values()].reduce((a, b) => a + b, 0);
    if (units > 0) await limiter.consume(`ip:${ctx.address}`, "public", units);
    refuseFullCharges(operation, args.variableValues, live);
    if (ctx.pageCharge !== null && onlyAbout(operation, args.variableValues, ctx.pageCharge)) return hostedPages.enter(ctx.pageCharge);
    return bulkhead.enter();
  };
  const admitOrStop = async (args: AdmittedArgs, stop: (result: { errors: GraphQLError[] }) => void): Promise<Release | null> => {
    try {
      return await admit(args);
    } catch (e) {
      if (!(e instanceof AppError)) throw e;
      stop({ errors: [graphqlError(e)] });
      return null;
    }
  };
  return {
    async onExecute({ args, setResultAndStopExecution }) {
      const release = await admitOrStop(args, setResultAndStopExecution);
      if (release) return { onExecuteDone: () => release() };
    },
    async onSubscribe({ args, setResultAndStopExecution }) {
      const release = await admitOrStop(args, setResultAndStopExecution);
      if (release) return { onSubscribeResult: () => release(), onSubscribeError: () => release() };
    },
  };
}

/** The hosted page's own fields: what it reads of its charge. */
const PAGE_FIELDS = new Set(["paymentSession", "paymentSessionUpdated"]);

type Variables = Record<string, unknown> | null | undefined;

/** Whether every root field of `operation` is a hosted page's view of `chargeId` (and nothing else). */
export function onlyAbout(operation: OperationDefinitionNode, variables: Variables, chargeId: string): boolean {
  return operation.selectionSet.selections.every(
    (selection) => selection.kind === Kind.FIELD && PAGE_FIELDS.has(selection.name.value) && chargeArgument(selection, variables) === chargeId,
  );
}

/** The `chargeId` a root field is asked with (a literal or a variable's value), if any. */
function chargeArgument(field: FieldNode, variables: Variables): unknown {
  const value = field.arguments?.find((a) => a.name.value === "chargeId")?.value;
  if (value?.kind === Kind.STRING) return value.value;
  return value?.kind === Kind.VARIABLE ? variables?.[value.name.value] : undefined;
}

/**
 * Refuses a hosted page's live view of a charge that already has all the subscribers this process
 * takes, before the operation takes a place or runs: a flood of subscriptions to one charge is
 * turned away for the price of a budget unit. (The stream checks again when it opens: two may race.)
 */
function refuseFullCharges(operation: OperationDefinitionNode, variables: Variables, live: LiveCharges): void {
  if (operation.operation !== "subscription") return;
  for (const selection of operation.selectionSet.selections) {
    if (selection.kind !== Kind.FIELD || selection.name.value !== "paymentSessionUpdated") continue;
    const chargeId = chargeArgument(selection, variables);
    if (typeof chargeId === "string") live.refuseWhenFull(chargeId);
  }
}

type AdmittedArgs = {
  schema: GraphQLSchema;
  document: DocumentNode;
  operationName?: string | null | undefined;
  contextValue: unknown;
  variableValues?: Record<string, unknown> | null | undefined;
};
