// What the money views (Home, Balance, Payouts) share, their state living in the URL's query string
// (router.tsx `useQueryState`: a filter or a page is a new history entry, so Back returns to the one
// before): a period of whole UTC days given as From and To dates, the CSV export links that carry
// that period (downloaded with the session through /dashboard/exports), and paging by cursor with links.
import { BASE, Link } from "./router.js";

const DAY_MS = 24 * 60 * 60 * 1000;
const DATE = /^\d{4}-\d{2}-\d{2}$/;

/** The page's path below /dashboard, for links that only change its query string. */
function currentPath(): string {
  return location.pathname.slice(BASE.length) || "/";
}

/** A period of whole UTC days, From and To included (YYYY-MM-DD), either end open when absent. */
export interface Period {
  from: string | null;
  to: string | null;
}

/** The period the query string names (`from`, `to`); a malformed date counts as absent. */
export function periodOf(search: URLSearchParams): Period {
  const day = (name: string) => {
    const value = search.get(name);
    return value && DATE.test(value) && !Number.isNaN(Date.parse(value)) ? value : null;
  };
  return { from: day("from"), to: day("to") };
}

/** The API's instants for a period: createdGte at From's start, createdLt at the end of To (UTC). */
export function instants(period: Period): { createdGte?: string; createdLt?: string } {
  return {
    ...(period.from && { createdGte: `${period.from}T00:00:00.000Z` }),
    ...(period.to && { createdLt: new Date(Date.parse(`${period.to}T00:00:00.000Z`) + DAY_MS).toISOString() }),
  };
}

/** The last `days` UTC days, today included. */
export function lastDays(days: number, now = new Date()): Period {
  const today = Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), now.getUTCDate());
  const iso = (ms: number) => new Date(ms).toISOString().slice(0, 10);
  return { from: iso(today - (days - 1) * DAY_MS), to: iso(today) };
}

/** The From and To date inputs of a filter form, named `from` and `to` (key the form by the query string: they show the URL's period). */
export function PeriodFields({ period }: { period: Period }) {
  return (
    <>
      <label>
        From (UTC)
        <input name="from" type="date" defaultValue={period.from ?? ""} />
      </label>
      <label>
        To (UTC, included)
        <input name="to" type="date" defaultValue={period.to ?? ""} />
      </label>
    </>
  );
}

/** Links that download the period's balance transactions and charges as CSV, in the mode this page shows. */
export function ExportLinks({ period, mode }: { period: Period; mode: string }) {
  const query = new URLSearchParams({ ...instants(period), mode }).toString();
  const span = period.from || period.to ? `${period.from ?? "the start"} to ${period.to ?? "today"}` : "all time";
  return (
    <p class="exports">
      <span class="muted">Export {span}:</span>{" "}
      <a href={`/dashboard/exports/balance_transactions.csv?${query}`} download>
        Balance transactions (CSV)
      </a>{" "}
      ·{" "}
      <a href={`/dashboard/exports/charges.csv?${query}`} download>
        Charges (CSV)
      </a>
    </p>
  );
}

/** A connection's page as the pager reads it. */
interface PageInfo {
  hasNextPage: boolean;
  hasPreviousPage: boolean;
  startCursor?: string | null;
  endCursor?: string | null;
}

/** Newer and Older pages as links carrying `filters`: each page is a URL, so Back returns to the page before. */
export function Pager({ pageInfo, filters }: { pageInfo: PageInfo; filters: Record<string, string | null> }) {
  const link = (cursor: Record<string, string>) => {
    const query = new URLSearchParams(Object.entries({ ...filters, ...cursor }).filter((e): e is [string, string] => !!e[1])).toString();
    return `${currentPath()}?${query}`;
  };
  return (
    <nav class="pager" aria-label="Pages">
      {pageInfo.hasPreviousPage && pageInfo.startCursor && <Link href={link({ before: pageInfo.startCursor })}>← Newer</Link>}
      {pageInfo.hasNextPage && pageInfo.endCursor && <Link href={link({ after: pageInfo.endCursor })}>Older →</Link>}
    </nav>
  );
}
