// The event log: every event of this mode, newest first, filtered by type, by kind of object or by one
// object's id (filters and how many rows are shown live in the URL); and an event's own page with its
// payload (the exact `data` its webhooks carry, pretty-printed, to copy) and its webhook deliveries.
import { useMutation, useQuery } from "@urql/preact";
import { graphql, type ResultOf } from "../graphql.js";
import { AnyOf, type Column, DataTable, FilterForm, ListPage, RowLink, useListQuery } from "../list.js";
import { Link } from "../router.js";
import { CopyButton, ErrorNote, Section, Status, Time } from "../ui.js";

const EventsQuery = graphql(`
  query Events($first: Int!, $type: String, $objectType: EventObjectType, $objectId: ID) {
    events(first: $first, type: $type, objectType: $objectType, objectId: $objectId) {
      totalCount
      pageInfo {
        hasNextPage
      }
      edges {
        node {
          id
          type
          timestamp
          data
        }
      }
    }
  }
`);

const EventQuery = graphql(`
  query Event($id: ID!) {
    event(id: $id) {
      id
      type
      timestamp
      livemode
      data
      deliveries {
        endpointId
        url
        status
        nextAttemptAt
        attempts {
          attemptedAt
          statusCode
          latencyMs
          error
          succeeded
        }
      }
    }
  }
`);

const StoredObjects = graphql(`
  query StoredObjects($ids: [ID!]!) {
    nodes(ids: $ids) {
      id
    }
  }
`);

const ResendEvent = graphql(`
  mutation ResendLoggedEvent($id: ID!) {
    resendEvent(id: $id) {
      id
    }
  }
`);

/** The kinds of object events are about, as the API's EventObjectType names them. */
const OBJECT_TYPES = [
  ["CHARGE", "Charges"],
  ["REFUND", "Refunds"],
  ["INVOICE", "Invoices"],
  ["CUSTOMER", "Customers"],
] as const;
type EventRow = ResultOf<typeof EventsQuery>["events"]["edges"][number]["node"];

const columns = (stored: ReadonlySet<string> | undefined): Column<EventRow>[] => [
  {
    header: "Event",
    cell: (e) => (
      <RowLink href={`/events/${e.id}`} id={e.id}>
        {e.type}
      </RowLink>
    ),
  },
  { header: "Object", cell: (e) => <ObjectLink data={e.data} stored={stored} /> },
  { header: "Time", cell: (e) => <Time iso={e.timestamp} /> },
];

export function Events() {
  // The URL holds the filters: `type` (e.g. charge.completed), `object` (a kind), `objectId`, and `shown`.
  const list = useListQuery();
  const type = list.params.get("type")?.trim() || undefined;
  const objectType = OBJECT_TYPES.find(([value]) => value === list.params.get("object"))?.[0];
  const objectId = list.params.get("objectId")?.trim() || undefined;
  const [result] = useQuery({ query: EventsQuery, variables: { first: list.first, type, objectType, objectId } });
  return (
    <ListPage
      title="Events"
      filters={
        <FilterForm list={list} toQuery={(v) => ({ type: v.type, object: v.object, objectId: v.objectId })}>
          <AnyOf label="Kind of object" name="object" options={OBJECT_TYPES} selected={objectType} />
          <label>
            Type
            <input name="type" defaultValue={type ?? ""} placeholder="charge.completed" spellcheck={false} />
          </label>
          <label class="grow">
            Object id
            <input name="objectId" defaultValue={objectId ?? ""} placeholder="chrg_…, ref_…, inv_…, cus_…" spellcheck={false} />
          </label>
        </FilterForm>
      }
      list={list}
      result={result}
      connection={result.data?.events}
      noun={["event", "events"]}
    >
      {(events) => <EventRows events={events.edges.map((e) => e.node)} />}
    </ListPage>
  );
}

/** The list's rows, each linking to its record while it is stored. */
function EventRows({ events }: { events: EventRow[] }) {
  const stored = useStored(events);
  return <DataTable columns={columns(stored)} rows={events} rowData={(e) => ({ "data-event": e.id })} />;
}

/** The page of the record an event is about (a refund's is its charge's), and the id that page shows; null for none. */
function objectPage(data: Record<string, unknown>): { path: string; id: string } | null {
  const id = typeof data.id === "string" ? data.id : null;
  if (!id || data.deleted === true) return null;
  if (data.object === "refund") return typeof data.chargeId === "string" ? { path: `/charges/${data.chargeId}`, id: data.chargeId } : null;
  const section = { charge: "charges", customer: "customers", invoice: "invoices", subscription: "subscriptions", payment_link: "payment-links" }[
    String(data.object)
  ];
  return section ? { path: `/${section}/${id}`, id } : null;
}

/**
 * Which of the events' records are still stored, read in one query: a link is offered only to those
 * (a deleted customer's, or the made-up record of a test webhook, has no page). Undefined while loading.
 */
function useStored(events: readonly { data: Record<string, unknown> }[]): ReadonlySet<string> | undefined {
  const ids = [...new Set(events.flatMap((e) => objectPage(e.data)?.id ?? []))];
  const [{ data }] = useQuery({ query: StoredObjects, variables: { ids }, pause: ids.length === 0 });
  if (ids.length === 0) return new Set();
  return data ? new Set(data.nodes.flatMap((n) => (n ? [n.id] : []))) : undefined;
}

/** The event's record: a link to its page while it exists, else its id and why it has no page. */
function ObjectLink({ data, stored }: { data: Record<string, unknown>; stored: ReadonlySet<string> | undefined }) {
  const id = typeof data.id === "string" ? data.id : null;
  if (!id) return <span class="muted">—</span>;
  const page = objectPage(data);
  if (page && stored?.has(page.id)) return <Link href={page.path}>{id}</Link>;
  const why = !page || stored === undefined ? null : isSample(data) ? "a test webhook's sample: not a stored record" : "no longer stored";
  return (
    <>
      <code>{id}</code>
      {why && <span class="muted small"> ({why})</span>}
    </>
  );
}

/** Whether the object is the made-up one of a test webhook (its metadata or description says so). */
function isSample(data: Record<string, unknown>): boolean {
  const metadata = data.metadata as Record<string, unknown> | null | undefined;
  return metadata?.test_webhook === true || /test webhook/.test(String(data.description ?? data.reason ?? ""));
}

/** One event: what it is about, its payload to read and copy, and where it was delivered. */
export function EventPage({ id }: { id: string }) {
  const [{ data, error }, refetch] = useQuery({ query: EventQuery, variables: { id } });
  const [resent, resend] = useMutation(ResendEvent);
  const event = data?.event;
  const stored = useStored(event ? [event] : []);
  if (!event) return <ErrorNote error={error} />;
  const payload = JSON.stringify(event.data, null, 2);
  return (
    <>
      <p>
        <Link href="/events">← Events</Link>
      </p>
      <h1>{event.type}</h1>
      <Section title="Event">
        <dl class="facts">
          <dt>Id</dt>
          <dd>
            <code>{event.id}</code>
          </dd>
          <dt>Time</dt>
          <dd>
            <Time iso={event.timestamp} />
          </dd>
          <dt>Object</dt>
          <dd>
            <ObjectLink data={event.data} stored={stored} />
          </dd>
        </dl>
      </Section>
      <Section title="Payload" actions={<CopyButton value={payload} label="Copy payload" />}>
        <p class="muted small">
          The object as it was right after the change: the <code>data</code> its webhooks carry.
        </p>
        {/* Focusable, so its content can be scrolled with the keyboard. */}
        <pre class="payload" tabIndex={0} aria-label="Event payload" data-payload>
          {payload}
        </pre>
      </Section>
      <Section
        title="Webhook deliveries"
        actions={
          <button
            type="button"
            disabled={resent.fetching}
            onClick={() => void resend({ id: event.id }).then((r) => !r.error && refetch({ requestPolicy: "network-only" }))}
          >
            Resend webhook
          </button>
        }
      >
        <ErrorNote error={resent.error} />
        {event.deliveries.length === 0 ? (
          <p class="muted">Not sent to any endpoint (none wanted it when it happened).</p>
        ) : (
          <ul class="rows">
            {event.deliveries.map((d) => (
              <li key={d.endpointId} data-delivery={d.endpointId}>
                <code>{d.url}</code> <Status status={d.status} />
                {d.nextAttemptAt && (
                  <span class="muted">
                    {" "}
                    · next attempt <Time iso={d.nextAttemptAt} />
                  </span>
                )}
                {d.attempts.length > 0 && (
                  <ol class="deliveries">
                    {d.attempts.map((a) => (
                      <li key={a.attemptedAt}>
                        <Time iso={a.attemptedAt} />: {a.statusCode ?? "no answer"} in {a.latencyMs} ms{a.error && ` (${a.error})`}
                      </li>
                    ))}
                  </ol>
                )}
              </li>
            ))}
          </ul>
        )}
      </Section>
    </>
  );
}
