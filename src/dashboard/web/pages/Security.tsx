// The security history (Settings → Security history; owners and admins): who signed in (or failed to)
// from where, and who changed keys, wallets, the team or webhook endpoints, newest first. Filters (type,
// user, period) and how many rows are shown live in the URL; "Download CSV" carries the same filters.
import { useQuery } from "@urql/preact";
import { graphql, type ResultOf } from "../graphql.js";
import { type Column, DataTable, FilterForm, ListPage, useListQuery } from "../list.js";
import { instants, PeriodFields, periodOf } from "../period.js";
import { Time } from "../ui.js";

const SecurityQuery = graphql(`
  query SecurityEvents($first: Int!, $type: SecurityEventType, $userId: ID, $createdGte: String, $createdLt: String) {
    users {
      id
      email
    }
    securityEvents(first: $first, type: $type, userId: $userId, createdGte: $createdGte, createdLt: $createdLt) {
      totalCount
      pageInfo {
        hasNextPage
      }
      edges {
        node {
          id
          type
          userId
          email
          ip
          userAgent
          detail
          createdAt
        }
      }
    }
  }
`);

type SecurityEvent = ResultOf<typeof SecurityQuery>["securityEvents"]["edges"][number]["node"];
type EventType = SecurityEvent["type"];

/** Each type in words, in the order the filter lists them. */
const TYPES: Record<EventType, string> = {
  SIGN_IN: "Signed in",
  SIGN_IN_FAILED: "Sign-in failed",
  SIGN_OUT: "Signed out",
  SESSION_EXPIRED: "Session expired",
  PASSWORD_CHANGED: "Password changed",
  PASSWORD_RESET: "Password reset by email",
  TWO_FACTOR_ENABLED: "Two-factor turned on",
  TWO_FACTOR_DISABLED: "Two-factor turned off",
  API_KEY_CREATED: "API key created",
  API_KEY_ROLLED: "API key rolled",
  API_KEY_REVOKED: "API key revoked",
  WALLET_CHANGED: "Settlement wallet changed",
  WEBHOOK_ENDPOINT_CHANGED: "Webhook endpoint changed",
  USER_INVITED: "Person invited",
  USER_JOINED: "Invitation accepted",
  USER_REMOVED: "User removed",
  ROLE_CHANGED: "Role changed",
};

/** What a failed sign-in's reason means. */
const FAILURES: Record<string, string> = {
  wrong_password: "wrong password",
  two_factor_code_missing: "right password, no two-factor code yet",
  wrong_two_factor_code: "wrong two-factor code",
  locked: "too many attempts",
};

/** Browsers and systems by a mark of their User-Agent, the first that matches naming it (Edge and Opera say Chrome too). */
const BROWSERS: [RegExp, string][] = [
  [/Edg\//, "Edge"],
  [/OPR\//, "Opera"],
  [/Firefox\//, "Firefox"],
  [/Chrom(e|ium)\//, "Chrome"],
  [/Safari\//, "Safari"],
];
const SYSTEMS: [RegExp, string][] = [
  [/Windows/, "Windows"],
  [/Android/, "Android"],
  [/iPhone|iPad/, "iOS"],
  [/Mac OS X/, "macOS"],
  [/Linux/, "Linux"],
];

/** A User-Agent shortened to its browser and system, e.g. "Firefox on Windows"; another client's, cut short. */
function browserName(agent: string | null): string {
  if (!agent) return "—";
  const browser = BROWSERS.find(([mark]) => mark.test(agent))?.[1];
  const system = SYSTEMS.find(([mark]) => mark.test(agent))?.[1];
  if (!browser) return agent.length > 30 ? `${agent.slice(0, 29)}…` : agent;
  return system ? `${browser} on ${system}` : browser;
}

/** A wallet address shortened for a narrow table: 0x1234…abcd. */
function shortAddress(address: unknown): string {
  return typeof address === "string" ? (address.length > 14 ? `${address.slice(0, 6)}…${address.slice(-4)}` : address) : "none";
}

/** The one line of detail a type's row shows beside its name. */
function detailText(e: SecurityEvent): string | null {
  const d = (e.detail ?? {}) as Record<string, unknown>;
  const text = (v: unknown) => (typeof v === "string" ? v : null);
  switch (e.type) {
    case "SIGN_IN":
      return [text(d.mode) && `${d.mode} mode`, d.newDevice ? "new browser" : null].filter(Boolean).join(", ") || null;
    case "SIGN_IN_FAILED":
      return FAILURES[text(d.reason) ?? ""] ?? null;
    case "SIGN_OUT":
      return d.everywhere ? "everywhere" : null;
    case "API_KEY_CREATED":
    case "API_KEY_ROLLED":
    case "API_KEY_REVOKED":
      return `${text(d.mode) ?? ""} key …${text(d.last4) ?? ""}`;
    case "WALLET_CHANGED":
      return `${text(d.mode) ?? ""}: ${shortAddress(d.from)} → ${shortAddress(d.to)}`;
    case "WEBHOOK_ENDPOINT_CHANGED":
      return [text(d.action)?.replace(/_/g, " "), text(d.url)].filter(Boolean).join(": ");
    default:
      return null;
  }
}

const COLUMNS: Column<SecurityEvent>[] = [
  { header: "Time", cell: (e) => <Time iso={e.createdAt} /> },
  {
    header: "What",
    name: "type",
    cell: (e) => (
      <>
        {TYPES[e.type] ?? e.type}
        {detailText(e) && <div class="muted small">{detailText(e)}</div>}
      </>
    ),
  },
  { header: "Who", name: "who", cell: (e) => e.email ?? <span class="muted">{e.userId ? e.userId : "Operator or service"}</span> },
  { header: "IP address", name: "ip", cell: (e) => e.ip ?? <span class="muted">—</span> },
  { header: "Browser", name: "browser", cell: (e) => <span title={e.userAgent ?? undefined}>{browserName(e.userAgent)}</span> },
];

export function Security() {
  // The URL holds the filters: `type` (SIGN_IN, …), `user` (an id), `from` and `to` (days), and `shown`.
  const list = useListQuery();
  const type = (Object.keys(TYPES) as EventType[]).find((t) => t === list.params.get("type"));
  const userId = list.params.get("user") || undefined;
  const period = periodOf(list.params);
  const filters = { ...(type && { type: type.toLowerCase() }), ...(userId && { userId }), ...instants(period) };
  const [result] = useQuery({ query: SecurityQuery, variables: { first: list.first, type, userId, ...instants(period) } });
  const users = result.data?.users ?? [];
  return (
    <ListPage
      title="Security history"
      intro={
        <p class="muted">
          Sign-ins and changes to API keys, wallets, the team and webhook endpoints, with who did them and from where. Kept for one year.{" "}
          <a href={`/dashboard/security-events.csv?${new URLSearchParams(filters).toString()}`} download>
            Download CSV
          </a>
        </p>
      }
      filters={
        <FilterForm list={list} label="Filter the security history" toQuery={(v) => ({ type: v.type, user: v.user, from: v.from, to: v.to })}>
          <label>
            What
            <select name="type">
              <option value="">Anything</option>
              {Object.entries(TYPES).map(([value, label]) => (
                <option key={value} value={value} selected={value === type}>
                  {label}
                </option>
              ))}
            </select>
          </label>
          <label>
            Who
            <select name="user">
              <option value="">Anyone</option>
              {users.map((u) => (
                <option key={u.id} value={u.id} selected={u.id === userId}>
                  {u.email}
                </option>
              ))}
            </select>
          </label>
          <PeriodFields period={period} />
        </FilterForm>
      }
      list={list}
      result={result}
      connection={result.data?.securityEvents}
      noun={["event", "events"]}
    >
      {(events) => <DataTable columns={COLUMNS} rows={events.edges.map((e) => e.node)} rowData={(e) => ({ "data-event": e.type })} />}
    </ListPage>
  );
}
