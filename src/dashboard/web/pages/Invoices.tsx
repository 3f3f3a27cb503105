// Invoices: a list, newest first, with a status filter, and the way to a new one. The filter and how
// many rows are shown live in the URL (a reload and Back keep them).
import { useQuery } from "@urql/preact";
import { graphql } from "../graphql.js";
import { Link, shownRows, useQueryState } from "../router.js";
import { Amount, Day, ErrorNote, Status, Time } from "../ui.js";

const InvoicesQuery = graphql(`
  query Invoices($first: Int!, $status: InvoiceStatus) {
    invoices(first: $first, status: $status) {
      totalCount
      pageInfo {
        hasNextPage
        endCursor
      }
      edges {
        node {
          id
          number
          status
          currency
          total
          amountDue
          dueDate
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

export const INVOICE_STATUSES = ["DRAFT", "OPEN", "PAID", "UNCOLLECTIBLE", "VOID"] as const;
/** Rows per "Show more", and the most the list shows. */
const STEP = 25;
const MAX = 100;

export function Invoices() {
  const [query, setQuery] = useQueryState();
  const status = INVOICE_STATUSES.find((s) => s === query.get("status"));
  const first = shownRows(query, STEP, MAX);
  const [{ data, error, fetching }] = useQuery({ query: InvoicesQuery, variables: { first, ...(status && { status }) } });
  const invoices = data?.invoices;
  return (
    <>
      <div class="page-head">
        <h1>Invoices</h1>
        <Link href="/invoices/new" class="button">
          New invoice
        </Link>
      </div>
      <form
        // Read again from the URL when Back changes it.
        key={status}
        class="filters"
        role="search"
        onSubmit={(e) => {
          e.preventDefault();
          setQuery({ status: String(new FormData(e.currentTarget).get("status") ?? ""), shown: null });
        }}
      >
        <label>
          Status
          <select name="status">
            <option value="">Any</option>
            {INVOICE_STATUSES.map((s) => (
              <option key={s} value={s} selected={s === status}>
                {s}
              </option>
            ))}
          </select>
        </label>
        <button type="submit">Filter</button>
      </form>
      <ErrorNote error={error} />
      {invoices && (
        <>
          <p class="muted" aria-live="polite">
            {invoices.totalCount} {invoices.totalCount === 1 ? "invoice" : "invoices"}
          </p>
          <div class="table-wrap">
            <table>
              <thead>
                <tr>
                  <th scope="col">Number</th>
                  <th scope="col">Customer</th>
                  <th scope="col">Total</th>
                  <th scope="col">Amount due</th>
                  <th scope="col">Status</th>
                  <th scope="col">Due</th>
                  <th scope="col">Created</th>
                </tr>
              </thead>
              <tbody>
                {invoices.edges.map(({ node: i }) => (
                  <tr key={i.id} data-invoice={i.id}>
                    <td>
                      <Link href={`/invoices/${i.id}`}>{i.number ?? "Draft"}</Link>
                      <div class="muted small">{i.id}</div>
                    </td>
                    <td>{i.customer ? <Link href={`/customers/${i.customer.id}`}>{i.customer.email}</Link> : <span class="muted">—</span>}</td>
                    <td>
                      <Amount value={i.total} currency={i.currency} />
                    </td>
                    <td>
                      <Amount value={i.amountDue} currency={i.currency} />
                    </td>
                    <td>
                      <Status status={i.status} />
                    </td>
                    <td>
                      <Day iso={i.dueDate} />
                    </td>
                    <td>
                      <Time iso={i.createdAt} />
                    </td>
                  </tr>
                ))}
              </tbody>
            </table>
          </div>
          {invoices.pageInfo.hasNextPage && first < MAX && (
            <button type="button" disabled={fetching} onClick={() => setQuery({ shown: first + STEP }, "replace")}>
              Show more
            </button>
          )}
        </>
      )}
    </>
  );
}
