// Developers → Emails: every email the service wrote in this mode, newest first, filtered by recipient,
// type and status (the filters and how many rows are shown live in the URL); and one email's page: its
// subject, recipient, status and attempts, its HTML part drawn in a sandboxed frame (no script, no
// origin of its own: dashboard/email-preview.ts serves it under a policy of its own, as the dashboard's
// CSP refuses the inline styles emails are made of) and its text part. Without SMTP_URL both say that
// emails are kept, not sent.
import { useQuery } from "@urql/preact";
import { graphql, type ResultOf, type VariablesOf } from "../graphql.js";
import { AnyOf, type Column, DataTable, FilterForm, ListPage, RowLink, useListQuery } from "../list.js";
import { BASE, Link } from "../router.js";
import { ErrorNote, Section, Status, Time } from "../ui.js";

const EmailsQuery = graphql(`
  query Emails($first: Int!, $to: String, $type: EmailType, $status: EmailStatus) {
    emailSending {
      configured
    }
    emails(first: $first, to: $to, type: $type, status: $status) {
      totalCount
      pageInfo {
        hasNextPage
      }
      edges {
        node {
          id
          type
          to
          subject
          status
          createdAt
        }
      }
    }
  }
`);

const EmailQuery = graphql(`
  query Email($id: ID!) {
    emailSending {
      configured
    }
    email(id: $id) {
      id
      type
      to
      subject
      status
      relatedId
      attempts
      lastError
      text
      createdAt
      sentAt
    }
  }
`);

type Filters = VariablesOf<typeof EmailsQuery>;

/** Every email type, as the API's EmailType names it, with the words the page shows. */
const TYPES: [NonNullable<Filters["type"]>, string][] = [
  ["INVOICE", "Invoice"],
  ["RECEIPT", "Receipt"],
  ["REFUND_CLAIM", "Refund claim"],
  ["PASSWORD_RESET", "Password reset"],
  ["INVITATION", "Invitation"],
  ["SECURITY_NOTICE", "Security notice"],
  ["ALERT", "Alert"],
  ["SUBSCRIPTION_CHECKOUT", "Subscription checkout"],
  ["INVOICE_UPCOMING", "Upcoming invoice"],
  ["INVOICE_PAYMENT_FAILED", "Invoice payment failed"],
  ["SUBSCRIPTION_CANCELED", "Subscription canceled"],
];

const STATUSES: [NonNullable<Filters["status"]>, string][] = [
  ["QUEUED", "Queued"],
  ["SENT", "Sent"],
  ["FAILED", "Failed"],
  ["HELD", "Held (not sent)"],
];

type EmailRow = ResultOf<typeof EmailsQuery>["emails"]["edges"][number]["node"];

const typeName = (type: string) => TYPES.find(([value]) => value === type)?.[1] ?? type;

const COLUMNS: Column<EmailRow>[] = [
  {
    header: "Subject",
    cell: (e) => (
      <RowLink href={`/developers/emails/${e.id}`} id={e.id}>
        {e.subject}
      </RowLink>
    ),
  },
  { header: "To", cell: (e) => e.to },
  { header: "Type", cell: (e) => typeName(e.type) },
  { header: "Status", cell: (e) => <Status status={e.status} /> },
  { header: "Created", cell: (e) => <Time iso={e.createdAt} /> },
];

/** Says that emails are kept here and not sent, when the service has no SMTP server. */
function NotSent({ sending }: { sending: { configured: boolean } | undefined }) {
  if (!sending || sending.configured) return null;
  return (
    <p class="email-not-sent" role="note">
      Emails are kept here and not sent: SMTP_URL is not set.
    </p>
  );
}

export function Emails() {
  // The URL holds the filters, as the API names them (`to`, `type=password_reset`, `status=held`), and `shown`.
  const list = useListQuery();
  const to = list.params.get("to")?.trim() || undefined;
  const type = TYPES.find(([value]) => value === list.params.get("type")?.toUpperCase())?.[0];
  const status = STATUSES.find(([value]) => value === list.params.get("status")?.toUpperCase())?.[0];
  const [result] = useQuery({ query: EmailsQuery, variables: { first: list.first, to, type, status } });
  return (
    <ListPage
      title="Emails"
      intro={
        <>
          <p>
            <Link href="/developers">← Developers</Link>
          </p>
          <NotSent sending={result.data?.emailSending} />
        </>
      }
      filters={
        <FilterForm list={list} toQuery={(v) => ({ to: v.to, type: v.type?.toLowerCase(), status: v.status?.toLowerCase() })}>
          <label class="grow">
            To
            <input name="to" type="email" defaultValue={to ?? ""} placeholder="buyer@example.com" spellcheck={false} />
          </label>
          <AnyOf label="Type" name="type" options={TYPES} selected={type} />
          <AnyOf label="Status" name="status" options={STATUSES} selected={status} />
        </FilterForm>
      }
      list={list}
      result={result}
      connection={result.data?.emails}
      noun={["email", "emails"]}
    >
      {(emails) => <DataTable columns={COLUMNS} rows={emails.edges.map((e) => e.node)} rowData={(e) => ({ "data-email": e.id })} />}
    </ListPage>
  );
}

/** One email: who it went to and how sending it went, then both its parts as they arrived. */
export function EmailPage({ id }: { id: string }) {
  const [{ data, error }] = useQuery({ query: EmailQuery, variables: { id } });
  const email = data?.email;
  if (!email) return <ErrorNote error={error} />;
  return (
    <>
      <p>
        <Link href="/developers/emails">← Emails</Link>
      </p>
      <h1>{email.subject}</h1>
      <NotSent sending={data.emailSending} />
      <Section title="Email">
        <dl class="facts">
          <dt>Id</dt>
          <dd>
            <code>{email.id}</code>
          </dd>
          <dt>To</dt>
          <dd>{email.to}</dd>
          <dt>Type</dt>
          <dd>{typeName(email.type)}</dd>
          <dt>Status</dt>
          <dd>
            <Status status={email.status} />
          </dd>
          <dt>Attempts</dt>
          <dd>{email.attempts}</dd>
          <dt>Last error</dt>
          <dd>{email.lastError ? <code data-last-error>{email.lastError}</code> : <span class="muted">—</span>}</dd>
          <dt>About</dt>
          <dd>{email.relatedId ? <code>{email.relatedId}</code> : <span class="muted">—</span>}</dd>
          <dt>Created</dt>
          <dd>
            <Time iso={email.createdAt} />
          </dd>
          <dt>Sent</dt>
          <dd>
            <Time iso={email.sentAt} />
          </dd>
        </dl>
      </Section>
      <Section title="HTML">
        {/* An empty sandbox (and the answer's own CSP sandbox): the email's markup runs no script and has no origin of its own (no cookies, no API). */}
        <iframe class="email-html" sandbox="" src={`${BASE}/emails/${encodeURIComponent(email.id)}/html`} title={`The email "${email.subject}" as HTML`} />
      </Section>
      <Section title="Text">
        {/* Focusable, so its content can be scrolled with the keyboard. */}
        <pre class="payload email-text" tabIndex={0} aria-label="The email as plain text" data-text>
          {email.text}
        </pre>
      </Section>
    </>
  );
}
