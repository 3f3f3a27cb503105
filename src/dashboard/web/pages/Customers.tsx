// Customers: a list searchable by email, name or company, and the form for a new one (NewCustomer).
// The search and how many rows are shown live in the URL (a reload and Back keep them).
import { useQuery } from "@urql/preact";
import { graphql, type ResultOf } from "../graphql.js";
import { type Column, DataTable, FilterForm, ListPage, useListQuery } from "../list.js";
import { Link } from "../router.js";
import { Time } from "../ui.js";
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

type CustomerRow = ResultOf<typeof CustomersQuery>["customers"]["edges"][number]["node"];

const COLUMNS: Column<CustomerRow>[] = [
  { header: "Email", cell: (c) => <Link href={`/customers/${c.id}`}>{c.email}</Link> },
  { header: "Name", cell: (c) => c.name },
  { header: "Company", cell: (c) => c.companyName ?? <span class="muted">—</span> },
  { header: "Created", cell: (c) => <Time iso={new Date(c.created * 1000).toISOString()} /> },
];

export function Customers() {
  const list = useListQuery();
  const query = list.params.get("q")?.trim() || undefined;
  const [result] = useQuery({ query: CustomersQuery, variables: { first: list.first, query } });
  return (
    <ListPage
      title="Customers"
      intro={<NewCustomer />}
      filters={
        <FilterForm list={list} toQuery={(v) => ({ q: v.query })} submit="Search">
          <label class="grow">
            Search
            <input name="query" type="search" defaultValue={query ?? ""} placeholder="Email, name or company" />
          </label>
        </FilterForm>
      }
      list={list}
      result={result}
      connection={result.data?.customers}
      noun={["customer", "customers"]}
    >
      {(customers) => <DataTable columns={COLUMNS} rows={customers.edges.map((e) => e.node)} />}
    </ListPage>
  );
}
