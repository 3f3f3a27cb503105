// Charges: a list with a status filter and search (the start of an id, an order id, an email, an
// address or a transaction hash, a hash as the dashboard shortens it, an exact amount), and a view of
// the charges that need review (with their count), kept current by the chargeEvents subscription: a
// new charge appears, a status changes and a charge is flagged without reload. The filters, the search
// and how many rows are shown live in the URL, so a reload and Back (from a charge's page) keep them.
import { useQuery } from "@urql/preact";
import { useChargeEventsRefresh } from "../charge-events.js";
import { ChargeBadges } from "../charge-status.js";
import { graphql, type ResultOf } from "../graphql.js";
import { AnyOf, type Column, CustomerLink, DataTable, FilterForm, ListPage, RowLink, useListQuery } from "../list.js";
import { Link } from "../router.js";
import { Amount, Time } from "../ui.js";

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
          amountOverpaid
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

/** The longest a change waits before the list shows it. */
const REFRESH_MS = 2000;
const STATUSES = ["PENDING", "RECEIVED", "COMPLETED", "EXPIRED", "CANCELLED"] as const;
/** The events after which the count of charges to review is read again. */
const REVIEW_EVENTS = ["charge.needs_review", "charge.reviewed"];

const COLUMNS: Column<ChargeRow>[] = [
  {
    header: "Order",
    cell: (c) => (
      <RowLink href={`/charges/${c.id}`} id={c.id}>
        {c.orderId}
      </RowLink>
    ),
  },
  { header: "Amount", cell: (c) => <Amount value={c.amount} currency={c.currency} /> },
  { header: "Status", cell: (c) => <ChargeBadges displayStatus={c.displayStatus} needsReview={c.needsReview} overpaid={c.amountOverpaid} /> },
  { header: "Customer", cell: (c) => <CustomerLink customer={c.customer} /> },
  { header: "Created", cell: (c) => <Time iso={c.createdAt} /> },
];
type ChargeRow = ResultOf<typeof ChargesQuery>["charges"]["edges"][number]["node"];

export function Charges() {
  // The URL holds the filters: `status`, `review=1` (the charges to review), `q` (the search), `shown`.
  const list = useListQuery();
  const status = STATUSES.find((s) => s === list.params.get("status"));
  const search = list.params.get("q")?.trim() || undefined;
  const needsReview = list.params.get("review") === "1";
  const filters = { first: list.first, ...(status && { status }), ...(search && { search }), ...(needsReview && { needsReview }) };
  const [result, refetch] = useQuery({ query: ChargesQuery, variables: filters });
  // The count of charges to review is read once, and again only when a charge is flagged or reviewed.
  const [{ data: toReview }, recount] = useQuery({ query: ReviewCount });
  // Every committed change to a charge of this mode reads the list again, at most every 2 s: the
  // session's list budget is 60 a minute.
  useChargeEventsRefresh(REFRESH_MS, (types) => {
    refetch({ requestPolicy: "network-only" });
    if (REVIEW_EVENTS.some((t) => types.has(t))) recount({ requestPolicy: "network-only" });
  });
  const count = toReview?.charges.totalCount;
  // A new filter starts again from the first rows.
  const show = (review: boolean) => list.change({ review: review ? "1" : null, shown: null });
  return (
    <ListPage
      title="Charges"
      actions={
        <Link href="/charges/new" class="button">
          Create charge
        </Link>
      }
      intro={
        <div class="views" role="group" aria-label="Show">
          <button type="button" aria-pressed={!needsReview} onClick={() => show(false)}>
            All charges
          </button>
          <button type="button" aria-pressed={needsReview} onClick={() => show(true)}>
            Needs review{count !== undefined && ` (${count})`}
          </button>
        </div>
      }
      filters={
        <FilterForm list={list} toQuery={(v) => ({ status: v.status, q: v.search })}>
          <AnyOf label="Status" name="status" options={STATUSES} selected={status} />
          <label class="grow">
            Search
            <input
              name="search"
              type="search"
              defaultValue={search ?? ""}
              placeholder="Id, order id, email, amount, address or transaction hash (its start, or 0x1234…abcd)"
            />
          </label>
        </FilterForm>
      }
      list={list}
      result={result}
      connection={result.data?.charges}
      noun={["charge", "charges"]}
    >
      {(charges) => <DataTable columns={COLUMNS} rows={charges.edges.map((e) => e.node)} rowData={(c) => ({ "data-charge": c.id })} />}
    </ListPage>
  );
}
