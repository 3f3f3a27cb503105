// `BalanceTransaction` and `Balance`: the ledger, like REST's /v1/balance_transactions and /v1/balance,
// with `balanceTransactions` (a connection with the same filters), `balance`, and each charge's own
// rows. Rules live in domain/balance-transactions.ts.
import { describe } from "../../domain/describe.js";
import { knownChain } from "../../chain/registry.js";
import {
  BALANCE_TRANSACTION_TYPES,
  type BalanceResource,
  balanceTransactionResource,
  balanceTransactionsOfCharge,
  countBalanceTransactions,
  getBalance,
  listBalanceTransactions,
  BalanceTransactionResource,
} from "../../domain/balance-transactions.js";
import { filterSchema, listSchema } from "../../domain/balance-transaction-requests.js";
import { parseInput } from "../../domain/validation.js";
import { builder } from "../builder.js";
import { connectionOf, countedConnection, pageEnd, pageRequest } from "../connection.js";

const TYPE_DESCRIPTIONS: Record<(typeof BALANCE_TRANSACTION_TYPES)[number], string> = {
  payment: "A buyer's confirmed transfer into a charge's address.",
  fee: "The protocol fee taken out of a charge's address by a payout.",
  payout: "Money paid out of a charge's address to your wallet (net of the fee).",
  refund: "Your wallet's confirmed transfer back to a buyer.",
  reversal: "Undoes a row whose transfer a chain reorganization removed.",
};

const BalanceTransactionType = builder.enumType("BalanceTransactionType", {
  values: Object.fromEntries(BALANCE_TRANSACTION_TYPES.map((t) => [t.toUpperCase(), { description: TYPE_DESCRIPTIONS[t] }])),
  description: "PAYMENT into a charge's address; PAYOUT and FEE out of it; REFUND from your wallet to a buyer; REVERSAL undoes a row a reorg removed.",
});

const X402Settlement = builder.objectRef<NonNullable<BalanceTransactionResource["x402"]>>("X402Settlement").implement({
  description: "The x402 settlement a payment to your x402 address records.",
  fields: (t) => ({
    id: t.exposeID("id", { description: "The settlement (x402pay_…)." }),
    payer: t.exposeString("payer", { description: "The address that paid." }),
    resource: t.exposeString("resource", { nullable: true, description: "What was paid for: the URL the resource server named." }),
    description: t.exposeString("description", { nullable: true, description: "The resource server's description of it." }),
  }),
});

export const BalanceTransaction = builder.objectRef<BalanceTransactionResource>("BalanceTransaction").implement({
  description: "One immutable movement of a charge's money, from a confirmed chain transfer (or its undoing).",
  fields: (t) => ({
    id: t.exposeID("id", { description: describe(BalanceTransactionResource, "id") }),
    livemode: t.exposeBoolean("livemode", { description: describe(BalanceTransactionResource, "livemode") }),
    type: t.field({ type: BalanceTransactionType, description: describe(BalanceTransactionResource, "type"), resolve: (b) => b.type.toUpperCase() }),
    amount: t.expose("amount", { type: "Amount", description: describe(BalanceTransactionResource, "amount") }),
    chargeId: t.exposeID("chargeId", { description: describe(BalanceTransactionResource, "chargeId") }),
    refundId: t.exposeID("refundId", { nullable: true, description: describe(BalanceTransactionResource, "refundId") }),
    invoiceId: t.exposeID("invoiceId", { nullable: true, description: describe(BalanceTransactionResource, "invoiceId") }),
    chainId: t.exposeInt("chainId", { description: describe(BalanceTransactionResource, "chainId") }),
    txHash: t.exposeString("txHash", { description: describe(BalanceTransactionResource, "txHash") }),
    blockNumber: t.exposeInt("blockNumber", { description: describe(BalanceTransactionResource, "blockNumber") }),
    reversesId: t.exposeID("reversesId", { nullable: true, description: describe(BalanceTransactionResource, "reversesId") }),
    x402: t.expose("x402", { type: X402Settlement, nullable: true, description: describe(BalanceTransactionResource, "x402") }),
    createdAt: t.expose("createdAt", { type: "DateTime", description: describe(BalanceTransactionResource, "createdAt") }),
  }),
});

const ChainAmount = builder.objectRef<{ chainId: number; amount: string }>("ChainAmount").implement({
  description: "An amount of USDC on one chain.",
  fields: (t) => ({
    chainId: t.exposeInt("chainId", { description: "The chain." }),
    chainName: t.string({
      description: "The chain's name from the registry of known chains (e.g. Base), whether or not this service runs it now.",
      resolve: (a) => knownChain(a.chainId)?.name ?? `Chain ${a.chainId}`,
    }),
    amount: t.expose("amount", { type: "Amount", description: "USDC." }),
  }),
});

const Balance = builder.objectRef<BalanceResource>("Balance").implement({
  description: "Your money in this mode, per chain.",
  fields: (t) => ({
    livemode: t.exposeBoolean("livemode", { description: "True in live mode, false in test mode." }),
    held: t.field({ type: [ChainAmount], description: "Confirmed, in your charges' addresses, waiting to be paid out.", resolve: (b) => b.held }),
    onItsWay: t.field({
      type: [ChainAmount],
      description: "Seen on chain and not confirmed yet, or accepted without gas and not on chain yet.",
      resolve: (b) => b.onItsWay,
    }),
    paidOut: t.field({ type: [ChainAmount], description: "Paid to your wallet (net of fees).", resolve: (b) => b.paidOut }),
    fees: t.field({ type: [ChainAmount], description: "Protocol fees taken by payouts.", resolve: (b) => b.fees }),
    refunded: t.field({ type: [ChainAmount], description: "Refunds your wallet paid.", resolve: (b) => b.refunded }),
  }),
});

builder.queryFields((t) => ({
  balanceTransactions: t.connection(
    {
      type: BalanceTransaction,
      description: "The ledger, newest first.",
      args: {
        chargeId: t.arg.id({ description: "Only the rows of this charge." }),
        refundId: t.arg.id({ description: "Only the rows of this refund." }),
        type: t.arg({ type: BalanceTransactionType, description: "Only rows of this type." }),
        createdGte: t.arg.string({ description: "ISO 8601: rows recorded at or after this instant." }),
        createdLt: t.arg.string({ description: "ISO 8601: rows recorded before this instant." }),
      },
      resolve: async (_root, args, ctx) => {
        const scope = ctx.scope();
        const filters = {
          chargeId: args.chargeId ?? undefined,
          refundId: args.refundId ?? undefined,
          type: args.type?.toLowerCase(),
          createdGte: args.createdGte ?? undefined,
          createdLt: args.createdLt ?? undefined,
        };
        const page = await listBalanceTransactions(ctx.prisma, scope, parseInput(listSchema, { ...pageRequest(args), ...filters }), pageEnd(args));
        return connectionOf({ ...page, data: page.data.map(balanceTransactionResource) }, args, () =>
          countBalanceTransactions(ctx.prisma, scope, parseInput(filterSchema, filters)),
        );
      },
    },
    countedConnection("Balance transactions matching the filters."),
  ),
  balance: t.field({
    type: Balance,
    description: "Your money in the key's mode, per chain, from the ledger.",
    resolve: (_root, _args, ctx) => getBalance(ctx.prisma, ctx.scope()),
  }),
}));

builder.prismaObjectField("Charge", "balanceTransactions", (t) =>
  t.field({
    type: [BalanceTransaction],
    description: "The charge's ledger rows, oldest first: what its money fields add up.",
    resolve: async (c, _args, ctx) => (await balanceTransactionsOfCharge(ctx.prisma, ctx.scope(), c.id)).map(balanceTransactionResource),
  }),
);
