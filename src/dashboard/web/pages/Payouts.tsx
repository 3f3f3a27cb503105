// Payouts: each transaction that paid the charges' money out to the merchant's wallet, from the
// ledger: its transaction in the explorer, chain, what reached the wallet, the fee, the charges it
// paid, when and whether it stands; filtered by period and paged, both in the URL, with the period's
// CSV exports.
import { useQuery } from "@urql/preact";
import { graphql, type ResultOf } from "../graphql.js";
import { ChargeRef, type Column, cursorPage, DataTable, FilterForm, ListCount, TxCell, useListQuery } from "../list.js";
import { ErrorNote, Money, Section, Status, Time } from "../ui.js";
import { ExportLinks, instants, Pager, PeriodFields, periodOf } from "../period.js";

const PayoutsQuery = graphql(`
  query Payouts($first: Int, $after: String, $last: Int, $before: String, $createdGte: String, $createdLt: String) {
    chains {
      chainId
      name
      explorerUrl
    }
    payouts(first: $first, after: $after, last: $last, before: $before, createdGte: $createdGte, createdLt: $createdLt) {
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
          chainId
          txHash
          amount
          feeAmount
          chargeIds
          status
          createdAt
        }
      }
    }
  }
`);

type Payout = ResultOf<typeof PayoutsQuery>["payouts"]["edges"][number]["node"];
type Chains = ResultOf<typeof PayoutsQuery>["chains"];

/** The table's columns; the transaction's column names its chain. */
const columns = (chains: Chains): Column<Payout>[] => [
  { header: "Time", cell: (p) => <Time iso={p.createdAt} /> },
  { header: "Transaction", cell: (p) => <TxCell chains={chains} chainId={p.chainId} txHash={p.txHash} /> },
  { header: "Paid to you", num: true, name: "amount", cell: (p) => <Money value={p.amount} /> },
  { header: "Fee", num: true, name: "fee", cell: (p) => <Money value={p.feeAmount} /> },
  {
    header: "Charges",
    cell: (p) => (
      <ul class="plain">
        {p.chargeIds.map((id) => (
          <li key={id}>
            <ChargeRef id={id} />
          </li>
        ))}
      </ul>
    ),
  },
  { header: "Status", cell: (p) => <Status status={p.status} /> },
];

export function Payouts({ mode }: { mode: string }) {
  const list = useListQuery();
  const period = periodOf(list.params);
  const [{ data, error }] = useQuery({ query: PayoutsQuery, variables: { ...cursorPage(list.params), ...instants(period) } });
  const payouts = data?.payouts;
  return (
    <>
      <h1>Payouts</h1>
      <Section title="Payouts to your wallet">
        <FilterForm list={list} label="Filter payouts" toQuery={(v) => ({ from: v.from, to: v.to, after: null, before: null })}>
          <PeriodFields period={period} />
        </FilterForm>
        <ExportLinks period={period} mode={mode} />
        <ErrorNote error={error} />
        {payouts && (
          <>
            <ListCount count={payouts.totalCount} noun={["payout", "payouts"]} />
            <DataTable columns={columns(data.chains)} rows={payouts.edges.map((e) => e.node)} rowData={(p) => ({ "data-payout": p.txHash })} />
            {payouts.edges.length === 0 && <p class="muted">No payouts in this period yet: a payout shows here once its transaction is confirmed.</p>}
            <Pager pageInfo={payouts.pageInfo} filters={{ from: period.from, to: period.to }} />
          </>
        )}
      </Section>
    </>
  );
}
