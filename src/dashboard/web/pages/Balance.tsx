// Balance: the merchant's money in this mode from the ledger, per chain and in total (held in the
// charges' addresses, on its way, paid out, fees, refunds), and the ledger's rows filtered by type and
// period, paged by cursor (an x402 payment's row says what was paid for and by whom, and links to the x402 page); filters and page live in the URL, and the period's CSV exports are a click away.
import { useQuery } from "@urql/preact";
import { graphql, type ResultOf } from "../graphql.js";
import { AnyOf, ChargeRef, type Column, cursorPage, DataTable, FilterForm, ListCount, TxCell, useListQuery } from "../list.js";
import { Link } from "../router.js";
import { ErrorNote, Explorer, Money, Section, Time, units, usdc } from "../ui.js";
import { ExportLinks, instants, Pager, PeriodFields, periodOf } from "../period.js";

const BalanceQuery = graphql(`
  query Balance {
    balance {
      held {
        chainId
        chainName
        amount
      }
      onItsWay {
        chainId
        chainName
        amount
      }
      paidOut {
        chainId
        chainName
        amount
      }
      fees {
        chainId
        chainName
        amount
      }
      refunded {
        chainId
        chainName
        amount
      }
    }
  }
`);

const LedgerQuery = graphql(`
  query BalanceLedger($first: Int, $after: String, $last: Int, $before: String, $type: BalanceTransactionType, $createdGte: String, $createdLt: String) {
    chains {
      chainId
      name
      explorerUrl
    }
    balanceTransactions(first: $first, after: $after, last: $last, before: $before, type: $type, createdGte: $createdGte, createdLt: $createdLt) {
      totalCount
      pageInfo {
        hasNextPage
        hasPreviousPage
        startCursor
        endCursor
      }
      edges {
        node {
          id
          type
          amount
          chargeId
          chainId
          txHash
          createdAt
          x402 {
            id
            payer
            resource
            description
          }
        }
      }
    }
  }
`);

const TYPES = ["PAYMENT", "FEE", "PAYOUT", "REFUND", "REVERSAL"] as const;
type BalanceData = NonNullable<ResultOf<typeof BalanceQuery>["balance"]>;

/** The columns of the balance, in the order shown. */
const COLUMNS: [keyof Omit<BalanceData, "__typename">, string][] = [
  ["held", "Held in charges' addresses"],
  ["onItsWay", "On its way"],
  ["paidOut", "Paid out"],
  ["fees", "Fees"],
  ["refunded", "Refunds"],
];

export function Balance({ mode }: { mode: string }) {
  const [{ data, error }] = useQuery({ query: BalanceQuery });
  return (
    <>
      <h1>Balance</h1>
      <ErrorNote error={error} />
      {data && <BalanceTable balance={data.balance} />}
      <Ledger mode={mode} />
    </>
  );
}

function BalanceTable({ balance }: { balance: BalanceData }) {
  const names = new Map(COLUMNS.flatMap(([key]) => balance[key].map((a) => [a.chainId, a.chainName] as const)));
  const chains = [...names.keys()].sort((a, b) => a - b);
  const on = (key: (typeof COLUMNS)[number][0], chainId: number) => balance[key].find((a) => a.chainId === chainId)?.amount ?? "0.00";
  const total = (key: (typeof COLUMNS)[number][0]) => usdc(balance[key].reduce((sum, a) => sum + units(a.amount), 0n));
  return (
    <Section title="Your money">
      {/* Focusable, so that a keyboard can scroll it sideways on a narrow screen (it has no link of its own). */}
      <div class="table-wrap" role="region" aria-label="Your money per chain" tabIndex={0}>
        <table data-balance>
          <thead>
            <tr>
              <th scope="col">Chain</th>
              {COLUMNS.map(([key, label]) => (
                <th key={key} scope="col" class="num">
                  {label}
                </th>
              ))}
            </tr>
          </thead>
          <tbody>
            {chains.map((chainId) => (
              <tr key={chainId} data-chain={chainId}>
                <th scope="row">{names.get(chainId)}</th>
                {COLUMNS.map(([key]) => (
                  <td key={key} class="num" data-column={key}>
                    <Money value={on(key, chainId)} />
                  </td>
                ))}
              </tr>
            ))}
          </tbody>
          <tfoot>
            <tr data-chain="total">
              <th scope="row">Total</th>
              {COLUMNS.map(([key]) => (
                <td key={key} class="num" data-column={key}>
                  <Money value={total(key)} />
                </td>
              ))}
            </tr>
          </tfoot>
        </table>
      </div>
      <p class="muted small">
        Held: confirmed in your charges' addresses, waiting for its payout. On its way: seen on chain and not confirmed yet. Paid out: in your wallet, net of
        fees.
      </p>
    </Section>
  );
}

type LedgerRow = ResultOf<typeof LedgerQuery>["balanceTransactions"]["edges"][number]["node"];
type Chains = ResultOf<typeof LedgerQuery>["chains"];

/** An x402 payment's row: what was paid for and by whom, linking to the x402 page (its address is no charge). */
function X402Ref({ x402, chains, chainId }: { x402: NonNullable<LedgerRow["x402"]>; chains: Chains; chainId: number }) {
  return (
    <>
      <Link href="/x402">x402 payment</Link>
      {x402.resource && <div class="small copy">{x402.resource}</div>}
      <div class="muted small">
        from <Explorer base={chains.find((c) => c.chainId === chainId)?.explorerUrl} kind="address" value={x402.payer} />
      </div>
    </>
  );
}

/** The ledger's columns; the transaction's column names its chain. */
const ledgerColumns = (chains: Chains): Column<LedgerRow>[] => [
  { header: "Type", cell: (b) => b.type.toLowerCase() },
  { header: "Amount", num: true, cell: (b) => <Money value={b.amount} /> },
  { header: "Charge", cell: (b) => (b.x402 ? <X402Ref x402={b.x402} chains={chains} chainId={b.chainId} /> : <ChargeRef id={b.chargeId} />) },
  { header: "Transaction", cell: (b) => <TxCell chains={chains} chainId={b.chainId} txHash={b.txHash} /> },
  { header: "Time", cell: (b) => <Time iso={b.createdAt} /> },
];

/** The ledger's rows, filtered by type and period and paged (all in the URL), with the period's CSV exports. */
function Ledger({ mode }: { mode: string }) {
  const list = useListQuery();
  const period = periodOf(list.params);
  const type = TYPES.find((t) => t === list.params.get("type")) ?? null;
  const variables = { ...cursorPage(list.params), ...(type && { type }), ...instants(period) };
  const [{ data, error }] = useQuery({ query: LedgerQuery, variables });
  const rows = data?.balanceTransactions;
  return (
    <Section title="Balance transactions">
      <FilterForm list={list} label="Filter balance transactions" toQuery={(v) => ({ type: v.type, from: v.from, to: v.to, after: null, before: null })}>
        <AnyOf label="Type" name="type" options={TYPES.map((t) => [t, t.toLowerCase()] as const)} selected={type ?? undefined} />
        <PeriodFields period={period} />
      </FilterForm>
      <ExportLinks period={period} mode={mode} />
      <ErrorNote error={error} />
      {rows && (
        <>
          <ListCount count={rows.totalCount} noun={["row", "rows"]} />
          <DataTable columns={ledgerColumns(data.chains)} rows={rows.edges.map((e) => e.node)} rowData={(b) => ({ "data-btx": b.id, "data-type": b.type })} />
          {rows.edges.length === 0 && <p class="muted">No balance transactions match.</p>}
          <Pager pageInfo={rows.pageInfo} filters={{ type, from: period.from, to: period.to }} />
        </>
      )}
    </Section>
  );
}
