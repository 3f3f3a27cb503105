// Customers: a list searchable by email, name or company.
import { useQuery } from "@urql/preact";
import { useState } from "preact/hooks";
import { graphql } from "../graphql.js";
import { Link } from "../router.js";
import { ErrorNote, Time } from "../ui.js";

const CustomersQuery = graphql(`
  query Customers($query: String) {
    customers(first: 100, query: $query) {
      totalCount
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

export function Customers() {
  const [query, setQuery] = useState<string | undefined>(undefined);
  const [{ data, error }] = useQuery({ query: CustomersQuery, variables: { query } });
  return (
    <>
      <h1>Customers</h1>
      <form
        class="filters"
        role="search"
        onSubmit={(e) => {
          e.preventDefault();
          setQuery(String(new FormData(e.currentTarget).get("query") ?? "").trim() || undefined);
        }}
      >
        <label class="grow">
          Search
          <input name="query" type="search" placeholder="Email, name or company" />
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
        </div>
      )}
    </>
  );
}
