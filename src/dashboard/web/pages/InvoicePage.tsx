// An invoice: its lines and totals, its status and the steps that status allows (edit, finalize or
// delete a DRAFT; mark an OPEN one uncollectible; void an OPEN or UNCOLLECTIBLE one), from
// finalization on the hosted link to send and the PDF, and the charges made to pay it.
import { useMutation, useQuery } from "@urql/preact";
import { Fragment } from "preact";
import { useState } from "preact/hooks";
import { type Action, useAction } from "../action.js";
import { graphql, type ResultOf } from "../graphql.js";
import { ChargeItems } from "../list.js";
import { Link, navigate } from "../router.js";
import { Amount, Confirm, CopyButton, Day, ErrorNote, Section, Status, Time, units, usdc } from "../ui.js";
import { InvoiceForm } from "./InvoiceForm.js";

const InvoiceQuery = graphql(`
  query Invoice($id: ID!) {
    invoice(id: $id) {
      id
      number
      status
      currency
      customer {
        id
        email
        name
      }
      lineItems {
        description
        quantity
        unitAmount
        amount
      }
      subtotal
      total
      amountPaid
      amountDue
      dueDate
      memo
      hostedInvoiceUrl
      pdfUrl
      createdAt
      finalizedAt
      paidAt
      voidedAt
      markedUncollectibleAt
      charges {
        id
        orderId
        amount
        amountReceived
        status
        createdAt
      }
    }
  }
`);

const UpdateInvoice = graphql(`
  mutation UpdateInvoice($id: ID!, $input: UpdateInvoiceInput!) {
    updateInvoice(id: $id, input: $input) {
      id
      status
    }
  }
`);
const DeleteInvoice = graphql(`
  mutation DeleteInvoice($id: ID!) {
    deleteInvoice(id: $id) {
      id
      deleted
    }
  }
`);
const FinalizeInvoice = graphql(`
  mutation FinalizeInvoice($id: ID!) {
    finalizeInvoice(id: $id) {
      id
      status
    }
  }
`);
const VoidInvoice = graphql(`
  mutation VoidInvoice($id: ID!) {
    voidInvoice(id: $id) {
      id
      status
    }
  }
`);
const MarkUncollectible = graphql(`
  mutation MarkInvoiceUncollectible($id: ID!) {
    markInvoiceUncollectible(id: $id) {
      id
      status
    }
  }
`);

type Invoice = NonNullable<ResultOf<typeof InvoiceQuery>["invoice"]>;

export function InvoicePage({ id }: { id: string }) {
  const [{ data, error }, refetch] = useQuery({ query: InvoiceQuery, variables: { id } });
  const reload = () => refetch({ requestPolicy: "network-only" });
  const [editing, setEditing] = useState(false);
  const [updated, update] = useMutation(UpdateInvoice);
  const action = useAction();
  const invoice = data?.invoice;
  if (!invoice) return <ErrorNote error={error} />;
  return (
    <>
      <p>
        <Link href="/invoices">← Invoices</Link>
      </p>
      <h1>
        {invoice.number ?? "Draft invoice"} <Status status={invoice.status} />
      </h1>
      <ErrorNote error={action.error} />
      {editing ? (
        <InvoiceForm
          customer={invoice.customer}
          lineItems={invoice.lineItems}
          dueDate={invoice.dueDate}
          memo={invoice.memo}
          submit="Save draft"
          busy={updated.fetching}
          error={updated.error}
          onCancel={() => setEditing(false)}
          onSubmit={async (fields) => {
            // Only what changed: an unchanged due date given with a time of day keeps its time.
            const dueDate = fields.dueDate === (invoice.dueDate?.slice(0, 10) ?? null) ? {} : { dueDate: fields.dueDate };
            const memo = fields.memo === invoice.memo ? {} : { memo: fields.memo };
            const customerId = fields.customerId === invoice.customer?.id ? {} : { customerId: fields.customerId };
            const result = await update({ id, input: { lineItems: fields.lineItems, ...dueDate, ...memo, ...customerId } });
            if (!result.error) {
              setEditing(false);
              reload();
            }
          }}
        />
      ) : (
        <>
          <Section
            title="Invoice"
            actions={<InvoiceActions invoice={invoice} action={action} busy={updated.fetching} onEdit={() => setEditing(true)} onChange={reload} />}
          >
            <InvoiceFacts invoice={invoice} />
          </Section>
          {invoice.hostedInvoiceUrl && <HostedInvoice invoice={invoice} url={invoice.hostedInvoiceUrl} />}
          <InvoiceLines invoice={invoice} />
          <Section title="Charges">
            {invoice.charges.length === 0 ? (
              <p class="muted">No charge yet: the customer's Pay on the hosted page makes one.</p>
            ) : (
              <ChargeItems charges={invoice.charges} />
            )}
          </Section>
        </>
      )}
    </>
  );
}

/** What can be done to the invoice in its status: edit, finalize or delete a draft; mark uncollectible or void an open one. */
function InvoiceActions(props: { invoice: Invoice; action: Action; busy: boolean; onEdit: () => void; onChange: () => void }) {
  const { invoice, action, onChange } = props;
  const { id, status } = invoice;
  const name = invoice.number ?? "this draft";
  const busy = props.busy || action.running;
  const [, remove] = useMutation(DeleteInvoice);
  const [, finalize] = useMutation(FinalizeInvoice);
  const [, voidInvoice] = useMutation(VoidInvoice);
  const [, mark] = useMutation(MarkUncollectible);
  return (
    <div class="actions">
      {status === "DRAFT" && (
        <>
          <button type="button" onClick={props.onEdit}>
            Edit
          </button>
          <Confirm
            plain
            label="Finalize"
            question={finalizeQuestion(invoice)}
            confirm="Yes, finalize it"
            disabled={busy}
            onConfirm={() => action.run(() => finalize({ id }), onChange)}
          />
          <Confirm
            label="Delete"
            question="Delete this draft for good?"
            confirm="Yes, delete it"
            disabled={busy}
            onConfirm={() =>
              void action.run(
                () => remove({ id }),
                () => navigate("/invoices"),
              )
            }
          />
        </>
      )}
      {status === "OPEN" && (
        <Confirm
          label="Mark uncollectible"
          question={`Mark ${name} uncollectible? It can still be paid or voided later.`}
          confirm="Yes, mark uncollectible"
          disabled={busy}
          onConfirm={() => action.run(() => mark({ id }), onChange)}
        />
      )}
      {(status === "OPEN" || status === "UNCOLLECTIBLE") &&
        (units(invoice.amountPaid) > 0n ? (
          <p class="muted small" data-no-void>
            {invoice.amountPaid} {invoice.currency} was paid on it, so it cannot be voided (voiding would not give that money back): mark it uncollectible, or
            refund the buyer from the charge's page.
          </p>
        ) : (
          <Confirm
            label="Void"
            question={voidQuestion(invoice, name)}
            confirm="Yes, void it"
            disabled={busy}
            onConfirm={() => action.run(() => voidInvoice({ id }), onChange)}
          />
        ))}
    </div>
  );
}

/** What finalizing does, asked before it is done: it cannot be undone. */
function finalizeQuestion(invoice: Invoice): string {
  const who = invoice.customer ? `${invoice.customer.name} (${invoice.customer.email})` : "the customer";
  const late = invoice.dueDate !== null && new Date(invoice.dueDate).getTime() < Date.now();
  return (
    `Finalize this draft of ${invoice.total} ${invoice.currency}? You can no longer edit or delete it: it gets the next invoice number and a page where ${who} ` +
    `can pay it (emailed to them when invoice emails are on).${late ? " Its due date has passed: edit it first, or finalizing is refused." : ""}`
  );
}

/** What voiding does, asked before it is done; says what money already reached the invoice's charges, which voiding does not refund. */
function voidQuestion(invoice: Invoice, name: string): string {
  const received = invoice.charges.reduce((sum, c) => sum + (c.amountReceived ? units(c.amountReceived) : 0n), 0n);
  const money =
    received > 0n
      ? ` ${usdc(received)} ${invoice.currency} already reached its charges: voiding does not refund it (refund the buyer from the charge's page).`
      : " No money was received on it.";
  return `Void ${name}? This cannot be undone: it can no longer be paid, and a charge waiting for payment is cancelled.${money}`;
}

/** The invoice's facts: id, customer, amounts, dates. */
function InvoiceFacts({ invoice }: { invoice: Invoice }) {
  return (
    <>
      {invoice.status === "DRAFT" && (
        <p class="muted small">A draft is not sent: finalizing gives it a number and a page where the customer pays; its lines can then no longer change.</p>
      )}
      <dl class="facts">
        <dt>Id</dt>
        <dd>
          <code>{invoice.id}</code>
        </dd>
        <dt>Customer</dt>
        <dd>
          {invoice.customer ? (
            <Link href={`/customers/${invoice.customer.id}`}>
              {invoice.customer.name} · {invoice.customer.email}
            </Link>
          ) : (
            <span class="muted">—</span>
          )}
        </dd>
        <dt>Total / due</dt>
        <dd>
          <Amount value={invoice.total} currency={invoice.currency} /> / <Amount value={invoice.amountDue} currency={invoice.currency} />
        </dd>
        <dt>Due date</dt>
        <dd>
          <Day iso={invoice.dueDate} />
        </dd>
        {invoice.memo && (
          <>
            <dt>Memo</dt>
            <dd class="memo">{invoice.memo}</dd>
          </>
        )}
        <dt>Created</dt>
        <dd>
          <Time iso={invoice.createdAt} />
        </dd>
        {(
          [
            ["Finalized", invoice.finalizedAt],
            ["Paid", invoice.paidAt],
            ["Marked uncollectible", invoice.markedUncollectibleAt],
            ["Voided", invoice.voidedAt],
          ] as const
        ).map(
          ([label, at]) =>
            at && (
              <Fragment key={label}>
                <dt>{label}</dt>
                <dd>
                  <Time iso={at} />
                </dd>
              </Fragment>
            ),
        )}
      </dl>
    </>
  );
}

/** The customer's page for the invoice, its link to copy, and its PDF. */
function HostedInvoice({ invoice, url }: { invoice: Invoice; url: string }) {
  const { status } = invoice;
  return (
    <Section title="Hosted invoice">
      <p>
        {status === "PAID"
          ? "Paid: the customer's page shows it paid."
          : status === "VOID"
            ? "Void: the customer's page shows it void, with nothing to pay."
            : "Send the customer this link: they see the invoice there and pay it."}
      </p>
      <p class="copy">
        <a href={url} target="_blank" rel="noreferrer noopener" data-hosted-url>
          {url}
        </a>{" "}
        <CopyButton value={url} label="Copy link" />
      </p>
      {invoice.pdfUrl && (
        <p>
          <a href={invoice.pdfUrl} target="_blank" rel="noreferrer noopener" download>
            Download PDF
          </a>
        </p>
      )}
    </Section>
  );
}

/** The invoice's lines and totals. */
function InvoiceLines({ invoice }: { invoice: Invoice }) {
  return (
    <Section title="Lines">
      {/* Focusable: should a long line make the table scroll sideways, the keyboard reaches all of it. */}
      <div class="table-wrap" tabIndex={0} role="region" aria-label="Invoice lines">
        <table class="lines">
          <thead>
            <tr>
              <th scope="col">Description</th>
              <th scope="col" class="num">
                Quantity × unit price
              </th>
              <th scope="col" class="num">
                Amount ({invoice.currency})
              </th>
            </tr>
          </thead>
          <tbody>
            {invoice.lineItems.map((l, i) => (
              <tr key={i}>
                <td>{l.description}</td>
                <td class="num">
                  {l.quantity} × <span class="amount">{l.unitAmount}</span>
                </td>
                <td class="num">
                  <span class="amount">{l.amount}</span>
                </td>
              </tr>
            ))}
          </tbody>
          <tfoot>
            {(
              [
                ["Subtotal", invoice.subtotal],
                ["Total", invoice.total],
                ["Paid", invoice.amountPaid],
                ["Amount due", invoice.amountDue],
              ] as const
            ).map(([label, value]) => (
              <tr key={label}>
                <th scope="row" colSpan={2} class="num">
                  {label}
                </th>
                <td class="num" data-total={label}>
                  <span class="amount">{value}</span>
                </td>
              </tr>
            ))}
          </tfoot>
        </table>
      </div>
    </Section>
  );
}
