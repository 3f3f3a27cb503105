// The scaffolding every list page shares: its state in the URL (filters, search, how many rows are
// shown), the filter form, the count (which says when there is nothing), the table and "Show more", with the loading and error states.
import type { CombinedError } from "@urql/core";
import type { ComponentChildren } from "preact";
import { Link, type QueryChange, shownRows, useQueryState } from "./router.js";
import { Amount, ErrorNote, Explorer, Status, Time } from "./ui.js";

/** Rows per "Show more" (and per page of a paged list). */
const PAGE_SIZE = 25;
/** The most rows a "Show more" list shows. */
const MAX_ROWS = 100;

/** A page of a list paged by cursors (`after`, `before` in the URL): the query's variables. */
export function cursorPage(params: URLSearchParams): { first: number; after?: string } | { last: number; before: string } {
  const after = params.get("after");
  const before = params.get("before");
  return before ? { last: PAGE_SIZE, before } : { first: PAGE_SIZE, ...(after && { after }) };
}

/** A list's state in the URL: its parameters, how many rows it shows, and the way to change them. */
export interface ListQuery {
  params: URLSearchParams;
  first: number;
  change: (change: QueryChange, how?: "push" | "replace") => void;
}

/** The URL's list state: a reload and Back keep the filters and the rows shown. */
export function useListQuery(): ListQuery {
  const [params, change] = useQueryState();
  return { params, first: shownRows(params, PAGE_SIZE, MAX_ROWS), change };
}

/** What a list query returns: the count and whether there are more rows. */
export interface Connection {
  totalCount: number;
  pageInfo: { hasNextPage: boolean };
}

/**
 * A form of filters whose submit writes the URL (a new history entry: Back undoes it) and starts again
 * from the first rows; its fields read the URL again when Back changes it.
 */
export function FilterForm(props: {
  list: ListQuery;
  /** The form's fields (trimmed) as URL parameters. */
  toQuery: (values: Record<string, string>) => QueryChange;
  submit?: string;
  /** The form's accessible name, when the page has more than one. */
  label?: string;
  children: ComponentChildren;
}) {
  const filters = new URLSearchParams(props.list.params);
  filters.delete("shown");
  return (
    <form
      key={filters.toString()}
      class="filters"
      role="search"
      aria-label={props.label}
      onSubmit={(e) => {
        e.preventDefault();
        const values = Object.fromEntries([...new FormData(e.currentTarget).entries()].map(([k, v]) => [k, String(v).trim()]));
        props.list.change({ ...props.toQuery(values), shown: null });
      }}
    >
      {props.children}
      <button type="submit">{props.submit ?? "Filter"}</button>
    </form>
  );
}

/** A filter's choice among `options` (values, or [value, label] pairs), or Any. */
export function AnyOf(props: { label: string; name: string; options: readonly (string | readonly [string, string])[]; selected: string | undefined }) {
  return (
    <label>
      {props.label}
      <select name={props.name}>
        <option value="">Any</option>
        {props.options.map((option) => {
          const [value, label] = typeof option === "string" ? [option, option] : option;
          return (
            <option key={value} value={value} selected={value === props.selected}>
              {label}
            </option>
          );
        })}
      </select>
    </label>
  );
}

/** "1 charge", "3 charges": a list's count, announced when it changes. */
export function ListCount({ count, noun }: { count: number; noun: readonly [one: string, many: string] }) {
  return (
    <p class="muted" aria-live="polite">
      {count} {count === 1 ? noun[0] : noun[1]}
    </p>
  );
}

/**
 * A list page: its title (and `actions` beside it), what comes before the filters (`intro`), the
 * filters, then the query's error, a loading note, the count, the rows (`children`), and
 * "Show more" (which replaces the history entry: Back leaves the page as it was left).
 */
export function ListPage<C extends Connection>(props: {
  title: string;
  actions?: ComponentChildren;
  intro?: ComponentChildren;
  filters?: ComponentChildren;
  list: ListQuery;
  /** The query's state, and the list it returned. */
  result: { error?: CombinedError; fetching: boolean };
  connection: C | undefined;
  noun: readonly [one: string, many: string];
  children: (connection: C) => ComponentChildren;
}) {
  const { list, result, connection } = props;
  return (
    <>
      {props.actions ? (
        <div class="page-head">
          <h1>{props.title}</h1>
          {props.actions}
        </div>
      ) : (
        <h1>{props.title}</h1>
      )}
      {props.intro}
      {props.filters}
      <ErrorNote error={result.error} />
      {!connection && !result.error && result.fetching && <p class="muted">Loading…</p>}
      {connection && (
        <>
          <ListCount count={connection.totalCount} noun={props.noun} />
          {props.children(connection)}
          {connection.pageInfo.hasNextPage && list.first < MAX_ROWS && (
            <button type="button" disabled={result.fetching} onClick={() => list.change({ shown: list.first + PAGE_SIZE }, "replace")}>
              Show more
            </button>
          )}
        </>
      )}
    </>
  );
}

/** A column of a DataTable: its header, its cell for a row, and how that cell is marked. */
export interface Column<R> {
  header: string;
  cell: (row: R) => ComponentChildren;
  /** A number column: aligned right. */
  num?: boolean;
  /** The cell's `data-column`, for whoever reads the page's markup. */
  name?: string;
}

/**
 * Rows as an accessible table (column headers scoped). On a narrow screen each row is a card of its
 * cells, each under its column's name (`data-label`, drawn by app.css), first column first: nothing
 * scrolls sideways.
 */
export function DataTable<R extends { id: string }>(props: { columns: Column<R>[]; rows: readonly R[]; rowData?: (row: R) => Record<string, string> }) {
  return (
    <div class="table-wrap stack">
      <table>
        <thead>
          <tr>
            {props.columns.map((c) => (
              <th key={c.header} scope="col" class={c.num ? "num" : undefined}>
                {c.header}
              </th>
            ))}
          </tr>
        </thead>
        <tbody>
          {props.rows.map((row) => (
            <tr key={row.id} {...props.rowData?.(row)}>
              {props.columns.map((c) => (
                <td key={c.header} class={c.num ? "num" : undefined} data-column={c.name} data-label={c.header}>
                  {c.cell(row)}
                </td>
              ))}
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}

/** A row's link to its own page, with its id below. */
export function RowLink({ href, id, children }: { href: string; id: string; children: ComponentChildren }) {
  return (
    <>
      <Link href={href}>{children}</Link>
      <div class="muted small">{id}</div>
    </>
  );
}

/** A link to a customer's page by their email, or a dash without one. */
export function CustomerLink({ customer }: { customer: { id: string; email: string } | null | undefined }) {
  return customer ? <Link href={`/customers/${customer.id}`}>{customer.email}</Link> : <span class="muted">—</span>;
}

/**
 * A link to a charge's page by its id; the row that carries the merchant's x402 address (id x402_…,
 * never shown as a charge) links to the x402 page instead.
 */
export function ChargeRef({ id }: { id: string }) {
  return id.startsWith("x402_") ? <Link href="/x402">x402 address</Link> : <Link href={`/charges/${id}`}>{id}</Link>;
}

/** Charges as a short list (an invoice's, a payment link's): order id, amount, status, time. */
export function ChargeItems({ charges }: { charges: readonly { id: string; orderId: string; amount: string; status: string; createdAt: string }[] }) {
  return (
    <ul class="rows">
      {charges.map((c) => (
        <li key={c.id}>
          <Link href={`/charges/${c.id}`}>{c.orderId}</Link> <Amount value={c.amount} /> <Status status={c.status} /> <Time iso={c.createdAt} />
        </li>
      ))}
    </ul>
  );
}

/** A transaction in the chain's explorer, with the chain's name below. */
export function TxCell({ chains, chainId, txHash }: { chains: readonly Chain[]; chainId: number; txHash: string }) {
  const chain = chains.find((c) => c.chainId === chainId);
  return (
    <>
      <Explorer base={chain?.explorerUrl} kind="tx" value={txHash} />
      <div class="muted small">{chain?.name ?? `Chain ${chainId}`}</div>
    </>
  );
}

/** A chain as the lists read it: its id, name and explorer. */
interface Chain {
  chainId: number;
  name: string;
  explorerUrl: string | null;
}
