// Charges: a list with a status filter and search (id, order id, clone address, transaction hash),
// kept current by the chargeEvents subscription: a new charge appears and a status changes without reload.
import { useQuery, useSubscription } from "@urql/preact";
import { useEffect, useRef, useState } from "preact/hooks";
import { graphql, type VariablesOf } from "../graphql.js";
import { Link } from "../router.js";
import { Amount, ErrorNote, Status, Time } from "../ui.js";

const ChargesQuery = graphql(`
  query Charges($first: Int!, $after: String, $status: ChargeStatus, $search: String) {
    charges(first: $first, after: $after, status: $status, search: $search) {
      totalCount
      pageInfo {
        hasNextPage
        endCursor
      }
      edges {
        node {
          id
          orderId
          amount
          amountReceived
          currency
          status
          chainId
          createdAt
          customer {
            id
            email
          }
        }
      }
    }
  }
`);

const ChargeEvents = graphql(`
  subscription ChargeEvents {
    chargeEvents {
      id
      type
    }
  }
`);

/** The longest a change waits before the list shows it. */
const REFRESH_MS = 2000;
const STATUSES = ["PENDING", "RECEIVED", "COMPLETED", "EXPIRED", "CANCELLED"] as const;
type Filters = VariablesOf<typeof ChargesQuery>;

export function Charges() {
  const [filters, setFilters] = useState<Filters>({ first: 25 });
  const [{ data, error, fetching }, refetch] = useQuery({ query: ChargesQuery, variables: filters });
  // Every committed change to a charge of this mode reads the list again, at most every 2 s: a
  // busy shop's stream of events must not spend the session's list budget (60 a minute).
  const [{ data: event }] = useSubscription({ query: ChargeEvents });
  const pending = useRef<ReturnType<typeof setTimeout> | null>(null);
  useEffect(() => {
    if (!event || pending.current) return;
    pending.current = setTimeout(() => {
      pending.current = null;
      refetch({ requestPolicy: "network-only" });
    }, REFRESH_MS);
  }, [event?.chargeEvents.id]);
  useEffect(() => () => void (pending.current && clearTimeout(pending.current)), []);
  const charges = data?.charges;
  return (
    <>
      <h1>Charges</h1>
      <form
        class="filters"
        role="search"
        onSubmit={(e) => {
          e.preventDefault();
          const form = new FormData(e.currentTarget);
          const status = String(form.get("status") ?? "");
          const search = String(form.get("search") ?? "").trim();
          setFilters({ first: 25, ...(status && { status: status as (typeof STATUSES)[number] }), ...(search && { search }) });
        }}
      >
        <label>
          Status
          <select name="status">
            <option value="">Any</option>
            {STATUSES.map((s) => (
              <option key={s} value={s}>
                {s}
              </option>
            ))}
          </select>
        </label>
        <label class="grow">
          Search
          <input name="search" type="search" placeholder="Charge id, order id, clone address or transaction hash" />
        </label>
        <button type="submit">Filter</button>
      </form>
      <ErrorNote error={error} />
      {charges && (
        <>
          <p class="muted" aria-live="polite">
            {charges.totalCount} {charges.totalCount === 1 ? "charge" : "charges"}
          </p>
          <div class="table-wrap">
            <table>
              <thead>
                <tr>
                  <th scope="col">Order</th>
                  <th scope="col">Amount</th>
                  <th scope="col">Status</th>
                  <th scope="col">Customer</th>
                  <th scope="col">Created</th>
                </tr>
              </thead>
              <tbody>
                {charges.edges.map(({ node: c }) => (
                  <tr key={c.id} data-charge={c.id}>
                    <td>
                      <Link href={`/charges/${c.id}`}>{c.orderId}</Link>
                      <div class="muted small">{c.id}</div>
                    </td>
                    <td>
                      <Amount value={c.amount} currency={c.currency} />
                    </td>
                    <td>
                      <Status status={c.status} />
                    </td>
                    <td>{c.customer ? <Link href={`/customers/${c.customer.id}`}>{c.customer.email}</Link> : <span class="muted">—</span>}</td>
                    <td>
                      <Time iso={c.createdAt} />
                    </td>
                  </tr>
                ))}
              </tbody>
            </table>
          </div>
          {charges.pageInfo.hasNextPage && filters.first < 100 && (
            <button type="button" disabled={fetching} onClick={() => setFilters({ ...filters, first: Math.min(100, filters.first + 25) })}>
              Show more
            </button>
          )}
        </>
      )}
    </>
  );
}
