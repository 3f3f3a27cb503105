// Balance: the merchant's money in this mode from the ledger, per chain and in total (held in the
// charges' addresses, on its way, paid out, fees, refunds), and the ledger's rows filtered by type and
// period, paged by cursor; filters and page live in the URL, and the period's CSV exports are a click away.
import { useQuery } from "@urql/preact";
import { graphql, type ResultOf } from "../graphql.js";
import { Link, useQueryState } from "../router.js";
import { ErrorNote, Explorer, formValues, Money, Section, Time, formatUnits, units } from "../ui.js";
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
        }
      }
    }
  }
`);

const PAGE_SIZE = 25;
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
  const total = (key: (typeof COLUMNS)[number][0]) => formatUnits(balance[key].reduce((sum, a) => sum + units(a.amount), 0n));
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

function Ledger({ mode }: { mode: string }) {
  const [search, change] = useQueryState();
  const period = periodOf(search);
  const type = TYPES.find((t) => t === search.get("type")) ?? null;
  const after = search.get("after");
  const before = search.get("before");
  const variables = {
    ...(before ? { last: PAGE_SIZE, before } : { first: PAGE_SIZE, ...(after && { after }) }),
    ...(type && { type }),
    ...instants(period),
  };
  const [{ data, error }] = useQuery({ query: LedgerQuery, variables });
  const rows = data?.balanceTransactions;
  const filters = { type, from: period.from, to: period.to };
  return (
    <Section title="Balance transactions">
      <form
        key={search.toString()}
        class="filters"
        role="search"
        aria-label="Filter balance transactions"
        onSubmit={(e) => {
          e.preventDefault();
          const form = formValues(e.currentTarget);
          change({ type: form.type, from: form.from, to: form.to, after: null, before: null });
        }}
      >
        <label>
          Type
          <select name="type">
            <option value="">Any</option>
            {TYPES.map((t) => (
              <option key={t} value={t} selected={t === type}>
                {t.toLowerCase()}
              </option>
            ))}
          </select>
        </label>
        <PeriodFields period={period} />
        <button type="submit">Filter</button>
      </form>
      <ExportLinks period={period} mode={mode} />
      <ErrorNote error={error} />
      {rows && (
        <>
          <p class="muted" aria-live="polite">
            {rows.totalCount} {rows.totalCount === 1 ? "row" : "rows"}
          </p>
          <div class="table-wrap">
            <table>
              <thead>
                <tr>
                  <th scope="col">Type</th>
                  <th scope="col" class="num">
                    Amount
                  </th>
                  <th scope="col">Charge</th>
                  <th scope="col">Transaction</th>
                  <th scope="col">Time</th>
                </tr>
              </thead>
              <tbody>
                {rows.edges.map(({ node: b }) => {
                  const chain = data.chains.find((c) => c.chainId === b.chainId);
                  return (
                    <tr key={b.id} data-btx={b.id} data-type={b.type}>
                      <td>{b.type.toLowerCase()}</td>
                      <td class="num">
                        <Money value={b.amount} />
                      </td>
                      <td>
                        <Link href={`/charges/${b.chargeId}`}>{b.chargeId}</Link>
                      </td>
                      <td>
                        <Explorer base={chain?.explorerUrl} kind="tx" value={b.txHash} />
                        <div class="muted small">{chain?.name ?? `Chain ${b.chainId}`}</div>
                      </td>
                      <td>
                        <Time iso={b.createdAt} />
                      </td>
                    </tr>
                  );
                })}
              </tbody>
            </table>
          </div>
          {rows.edges.length === 0 && <p class="muted">No balance transactions match.</p>}
          <Pager pageInfo={rows.pageInfo} filters={filters} />
        </>
      )}
    </Section>
  );
}
