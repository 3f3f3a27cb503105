// Customers: a list searchable by email, name or company, and the form for a new one (NewCustomer).
// The search and how many rows are shown live in the URL (a reload and Back keep them).
import { useQuery } from "@urql/preact";
import { graphql } from "../graphql.js";
import { Link, shownRows, useQueryState } from "../router.js";
import { ErrorNote, Time } from "../ui.js";
import { NewCustomer } from "./NewCustomer.js";

const CustomersQuery = graphql(`
  query Customers($first: Int!, $query: String) {
    customers(first: $first, query: $query) {
      totalCount
      pageInfo {
        hasNextPage
      }
      edges {
        node {
          id
          email
          name
          companyName
          created
        }
      }
    }
  }
`);

/** Rows per "Show more", and the most the list shows. */
const STEP = 25;
const MAX = 100;

export function Customers() {
  const [params, setParams] = useQueryState();
  const query = params.get("q")?.trim() || undefined;
  const first = shownRows(params, STEP, MAX);
  const [{ data, error, fetching }] = useQuery({ query: CustomersQuery, variables: { first, query } });
  return (
    <>
      <h1>Customers</h1>
      <NewCustomer />
      <form
        // Read again from the URL when Back changes it.
        key={query}
        class="filters"
        role="search"
        onSubmit={(e) => {
          e.preventDefault();
          setParams({ q: String(new FormData(e.currentTarget).get("query") ?? "").trim(), shown: null });
        }}
      >
        <label class="grow">
          Search
          <input name="query" type="search" defaultValue={query ?? ""} placeholder="Email, name or company" />
        </label>
        <button type="submit">Search</button>
      </form>
      <ErrorNote error={error} />
      {data && (
        <div class="table-wrap">
          <table>
            <thead>
              <tr>
                <th scope="col">Email</th>
                <th scope="col">Name</th>
                <th scope="col">Company</th>
                <th scope="col">Created</th>
              </tr>
            </thead>
            <tbody>
              {data.customers.edges.map(({ node: c }) => (
                <tr key={c.id}>
                  <td>
                    <Link href={`/customers/${c.id}`}>{c.email}</Link>
                  </td>
                  <td>{c.name}</td>
                  <td>{c.companyName ?? <span class="muted">—</span>}</td>
                  <td>
                    <Time iso={new Date(c.created * 1000).toISOString()} />
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
          <p class="muted">{data.customers.totalCount} customers</p>
          {data.customers.pageInfo.hasNextPage && first < MAX && (
            <button type="button" disabled={fetching} onClick={() => setParams({ shown: first + STEP }, "replace")}>
              Show more
            </button>
          )}
        </div>
      )}
    </>
  );
}
