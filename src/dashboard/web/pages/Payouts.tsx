// Payouts: each transaction that paid the charges' money out to the merchant's wallet, from the
// ledger: its transaction in the explorer, chain, what reached the wallet, the fee, the charges it
// paid, when and whether it stands; filtered by period and paged, both in the URL, with the period's
// CSV exports.
import { useQuery } from "@urql/preact";
import { graphql } from "../graphql.js";
import { Link, useQueryState } from "../router.js";
import { ErrorNote, Explorer, formValues, Money, Section, Status, Time } from "../ui.js";
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

const PAGE_SIZE = 25;

export function Payouts({ mode }: { mode: string }) {
  const [search, change] = useQueryState();
  const period = periodOf(search);
  const after = search.get("after");
  const before = search.get("before");
  const variables = {
    ...(before ? { last: PAGE_SIZE, before } : { first: PAGE_SIZE, ...(after && { after }) }),
    ...instants(period),
  };
  const [{ data, error }] = useQuery({ query: PayoutsQuery, variables });
  const payouts = data?.payouts;
  return (
    <>
      <h1>Payouts</h1>
      <Section title="Payouts to your wallet">
        <form
          key={search.toString()}
          class="filters"
          role="search"
          aria-label="Filter payouts"
          onSubmit={(e) => {
            e.preventDefault();
            const form = formValues(e.currentTarget);
            change({ from: form.from, to: form.to, after: null, before: null });
          }}
        >
          <PeriodFields period={period} />
          <button type="submit">Filter</button>
        </form>
        <ExportLinks period={period} mode={mode} />
        <ErrorNote error={error} />
        {payouts && (
          <>
            <p class="muted" aria-live="polite">
              {payouts.totalCount} {payouts.totalCount === 1 ? "payout" : "payouts"}
            </p>
            <div class="table-wrap">
              <table>
                <thead>
                  <tr>
                    <th scope="col">Time</th>
                    <th scope="col">Transaction</th>
                    <th scope="col" class="num">
                      Paid to you
                    </th>
                    <th scope="col" class="num">
                      Fee
                    </th>
                    <th scope="col">Charges</th>
                    <th scope="col">Status</th>
                  </tr>
                </thead>
                <tbody>
                  {payouts.edges.map(({ node: p }) => {
                    const chain = data.chains.find((c) => c.chainId === p.chainId);
                    return (
                      <tr key={p.id} data-payout={p.txHash}>
                        <td>
                          <Time iso={p.createdAt} />
                        </td>
                        <td>
                          <Explorer base={chain?.explorerUrl} kind="tx" value={p.txHash} />
                          <div class="muted small">{chain?.name ?? `Chain ${p.chainId}`}</div>
                        </td>
                        <td class="num" data-column="amount">
                          <Money value={p.amount} />
                        </td>
                        <td class="num" data-column="fee">
                          <Money value={p.feeAmount} />
                        </td>
                        <td>
                          <ul class="plain">
                            {p.chargeIds.map((id) => (
                              <li key={id}>
                                <Link href={`/charges/${id}`}>{id}</Link>
                              </li>
                            ))}
                          </ul>
                        </td>
                        <td>
                          <Status status={p.status} />
                        </td>
                      </tr>
                    );
                  })}
                </tbody>
              </table>
            </div>
            {payouts.edges.length === 0 && <p class="muted">No payouts in this period yet: a payout shows here once its transaction is confirmed.</p>}
            <Pager pageInfo={payouts.pageInfo} filters={{ from: period.from, to: period.to }} />
          </>
        )}
      </Section>
    </>
  );
}
