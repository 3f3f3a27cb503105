// Charges: a list with a status filter and search (the start of an id, an order id, an email, an
// address or a transaction hash, a hash as the dashboard shortens it, an exact amount), and a view of
// the charges that need review (with their count), kept current by the chargeEvents subscription: a
// new charge appears, a status changes and a charge is flagged without reload. The filters, the search
// and how many rows are shown live in the URL, so a reload and Back (from a charge's page) keep them.
import { useQuery, useSubscription } from "@urql/preact";
import { useEffect, useRef } from "preact/hooks";
import { ChargeBadges } from "../charge-status.js";
import { graphql } from "../graphql.js";
import { Link, shownRows, useQueryState } from "../router.js";
import { Amount, ErrorNote, Time } from "../ui.js";

const ChargesQuery = graphql(`
  query Charges($first: Int!, $after: String, $status: ChargeStatus, $search: String, $needsReview: Boolean) {
    charges(first: $first, after: $after, status: $status, search: $search, needsReview: $needsReview) {
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
          displayStatus
          chainId
          needsReview
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

const ReviewCount = graphql(`
  query ChargesToReview {
    charges(first: 1, needsReview: true) {
      totalCount
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
/** The events after which the count of charges to review is read again. */
const REVIEW_EVENTS = new Set(["charge.needs_review", "charge.reviewed"]);
/** Rows per "Show more", and the most the list shows. */
const STEP = 25;
const MAX = 100;

export function Charges() {
  // The URL holds the filters: `status`, `review=1` (the charges to review), `q` (the search), `shown`.
  const [query, setQuery] = useQueryState();
  const status = STATUSES.find((s) => s === query.get("status"));
  const search = query.get("q")?.trim() || undefined;
  const needsReview = query.get("review") === "1";
  const first = shownRows(query, STEP, MAX);
  const filters = { first, ...(status && { status }), ...(search && { search }), ...(needsReview && { needsReview }) };
  const [{ data, error, fetching }, refetch] = useQuery({ query: ChargesQuery, variables: filters });
  // Every committed change to a charge of this mode reads the list again, at most every 2 s: a
  // busy shop's stream of events must not spend the session's list budget (60 a minute).
  const [{ data: event }] = useSubscription({ query: ChargeEvents });
  // The count of charges to review is read once, and again only when a charge is flagged or reviewed.
  const [{ data: toReview }, recount] = useQuery({ query: ReviewCount });
  const pending = useRef<ReturnType<typeof setTimeout> | null>(null);
  const review = useRef(false);
  useEffect(() => {
    if (!event) return;
    review.current ||= REVIEW_EVENTS.has(event.chargeEvents.type);
    if (pending.current) return;
    pending.current = setTimeout(() => {
      pending.current = null;
      refetch({ requestPolicy: "network-only" });
      if (review.current) recount({ requestPolicy: "network-only" });
      review.current = false;
    }, REFRESH_MS);
  }, [event?.chargeEvents.id]);
  useEffect(() => () => void (pending.current && clearTimeout(pending.current)), []);
  const charges = data?.charges;
  const count = toReview?.charges.totalCount;
  // A new filter starts again from the first rows.
  const show = (review: boolean) => setQuery({ review: review ? "1" : null, shown: null });
  return (
    <>
      <h1>Charges</h1>
      <div class="views" role="group" aria-label="Show">
        <button type="button" aria-pressed={!needsReview} onClick={() => show(false)}>
          All charges
        </button>
        <button type="button" aria-pressed={needsReview} onClick={() => show(true)}>
          Needs review{count !== undefined && ` (${count})`}
        </button>
      </div>
      <form
        // Read again from the URL when Back changes it.
        key={`${status}:${search}`}
        class="filters"
        role="search"
        onSubmit={(e) => {
          e.preventDefault();
          const form = new FormData(e.currentTarget);
          setQuery({ status: String(form.get("status") ?? ""), q: String(form.get("search") ?? "").trim(), shown: null });
        }}
      >
        <label>
          Status
          <select name="status">
            <option value="">Any</option>
            {STATUSES.map((s) => (
              <option key={s} value={s} selected={s === status}>
                {s}
              </option>
            ))}
          </select>
        </label>
        <label class="grow">
          Search
          <input
            name="search"
            type="search"
            defaultValue={search ?? ""}
            placeholder="Id, order id, email, amount, address or transaction hash (its start, or 0x1234…abcd)"
          />
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
                      <ChargeBadges displayStatus={c.displayStatus} needsReview={c.needsReview} />
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
          {charges.pageInfo.hasNextPage && first < MAX && (
            <button type="button" disabled={fetching} onClick={() => setQuery({ shown: first + STEP }, "replace")}>
              Show more
            </button>
          )}
        </>
      )}
    </>
  );
}
