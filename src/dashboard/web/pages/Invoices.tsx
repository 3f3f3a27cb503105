// Invoices: a list, newest first, with a status filter, and the way to a new one. The filter and how
// many rows are shown live in the URL (a reload and Back keep them).
import { useQuery } from "@urql/preact";
import { graphql, type ResultOf } from "../graphql.js";
import { AnyOf, type Column, CustomerLink, DataTable, FilterForm, ListPage, RowLink, useListQuery } from "../list.js";
import { Link } from "../router.js";
import { Amount, Day, Status, Time } from "../ui.js";

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
type InvoiceRow = ResultOf<typeof InvoicesQuery>["invoices"]["edges"][number]["node"];

const COLUMNS: Column<InvoiceRow>[] = [
  {
    header: "Number",
    cell: (i) => (
      <RowLink href={`/invoices/${i.id}`} id={i.id}>
        {i.number ?? "Draft"}
      </RowLink>
    ),
  },
  { header: "Customer", cell: (i) => <CustomerLink customer={i.customer} /> },
  { header: "Total", cell: (i) => <Amount value={i.total} currency={i.currency} /> },
  { header: "Amount due", cell: (i) => <Amount value={i.amountDue} currency={i.currency} /> },
  { header: "Status", cell: (i) => <Status status={i.status} /> },
  { header: "Due", cell: (i) => <Day iso={i.dueDate} /> },
  { header: "Created", cell: (i) => <Time iso={i.createdAt} /> },
];

export function Invoices() {
  const list = useListQuery();
  const status = INVOICE_STATUSES.find((s) => s === list.params.get("status"));
  const [result] = useQuery({ query: InvoicesQuery, variables: { first: list.first, ...(status && { status }) } });
  return (
    <ListPage
      title="Invoices"
      actions={
        <Link href="/invoices/new" class="button">
          New invoice
        </Link>
      }
      filters={
        <FilterForm list={list} toQuery={(v) => ({ status: v.status })}>
          <AnyOf label="Status" name="status" options={INVOICE_STATUSES} selected={status} />
        </FilterForm>
      }
      list={list}
      result={result}
      connection={result.data?.invoices}
      noun={["invoice", "invoices"]}
    >
      {(invoices) => <DataTable columns={COLUMNS} rows={invoices.edges.map((e) => e.node)} rowData={(i) => ({ "data-invoice": i.id })} />}
    </ListPage>
  );
}
