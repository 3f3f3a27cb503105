// The charge itself: its heading (order, badges, the invoice or payment link it came from) and its
// facts (amounts, chain, address, customer, page, times, payout, metadata), with Cancel charge.
import { useMutation } from "@urql/preact";
import { ChargeBadges } from "../../charge-status.js";
import { type FragmentOf, graphql, readFragment } from "../../graphql.js";
import { CustomerLink } from "../../list.js";
import { Link } from "../../router.js";
import { Amount, Confirm, ErrorNote, Explorer, Section, Time, units } from "../../ui.js";
import { type ChainInfo, chainOf, useNewest } from "./live.js";

export const ChargeSummary = graphql(`
  fragment ChargeSummary on Charge {
    id
    orderId
    description
    metadata
    amount
    amountReceived
    amountOverpaid
    feeAmount
    netAmount
    currency
    status
    displayStatus
    needsReview
    chainId
    cloneAddress
    paymentUrl
    expiresAt
    completedAt
    createdAt
    payoutBlockedReason
    customer {
      id
      email
    }
    invoice {
      id
      number
    }
    paymentLink {
      id
      name
    }
  }
`);

const CancelCharge = graphql(
  `
    mutation CancelCharge($id: ID!) {
      cancelCharge(id: $id) {
        id
        ...ChargeSummary
      }
    }
  `,
  [ChargeSummary],
);

type Summary = FragmentOf<typeof ChargeSummary>;

/** The charge's heading: its order, status badges, and the invoice it pays or the payment link it came from. */
export function ChargeHeading(props: { charge: Summary }) {
  const charge = readFragment(ChargeSummary, props.charge);
  return (
    <>
      <h1>
        {charge.orderId} <ChargeBadges displayStatus={charge.displayStatus} needsReview={charge.needsReview} overpaid={charge.amountOverpaid} />
      </h1>
      {charge.invoice && (
        <p data-pays>
          Pays invoice <Link href={`/invoices/${charge.invoice.id}`}>{charge.invoice.number ?? charge.invoice.id}</Link>
        </p>
      )}
      {charge.paymentLink && (
        <p data-pays>
          From payment link <Link href={`/payment-links/${charge.paymentLink.id}`}>{charge.paymentLink.name}</Link>
        </p>
      )}
    </>
  );
}

/** The Charge section: its facts and metadata, and Cancel charge while it is PENDING (asked first). */
export function ChargeFacts(props: { charge: Summary; chains: readonly ChainInfo[] }) {
  const [cancel, runCancel] = useMutation(CancelCharge);
  const charge = readFragment(ChargeSummary, useNewest<Summary>(props.charge, cancel.data?.cancelCharge)!);
  const chain = chainOf(props.chains, charge.chainId);
  return (
    <Section
      title="Charge"
      actions={
        charge.status === "PENDING" && (
          <Confirm
            label="Cancel charge"
            question={cancelQuestion(charge.orderId, charge.amount, charge.amountReceived)}
            confirm="Yes, cancel it"
            disabled={cancel.fetching}
            onConfirm={() => void runCancel({ id: charge.id })}
          />
        )
      }
    >
      <ErrorNote error={cancel.error} />
      <dl class="facts">
        <dt>Id</dt>
        <dd>
          <code>{charge.id}</code>
        </dd>
        <dt>Description</dt>
        <dd data-description>{charge.description ?? <span class="muted">—</span>}</dd>
        <dt>Amount</dt>
        <dd>
          <Amount value={charge.amount} currency={charge.currency} />
        </dd>
        <dt>Received</dt>
        <dd>
          <Amount value={charge.amountReceived} />
        </dd>
        <dt>Fee / net</dt>
        <dd>
          <Amount value={charge.feeAmount} /> / <Amount value={charge.netAmount} />
        </dd>
        <dt>Chain</dt>
        <dd>{chain?.name ?? <span class="muted">not chosen yet</span>}</dd>
        <dt>Clone address</dt>
        <dd>{charge.cloneAddress ? <Explorer base={chain?.explorerUrl} kind="address" value={charge.cloneAddress} /> : <span class="muted">—</span>}</dd>
        <dt>Customer</dt>
        <dd>
          <CustomerLink customer={charge.customer} />
        </dd>
        <dt>Payment page</dt>
        <dd>
          <a href={charge.paymentUrl} target="_blank" rel="noreferrer noopener">
            {charge.paymentUrl}
          </a>
        </dd>
        <dt>Created / expires / completed</dt>
        <dd>
          <Time iso={charge.createdAt} /> · <Time iso={charge.expiresAt} /> · <Time iso={charge.completedAt} />
        </dd>
        {charge.payoutBlockedReason && (
          <>
            <dt>Payout</dt>
            <dd class="error">blocked: {charge.payoutBlockedReason}</dd>
          </>
        )}
      </dl>
      <Metadata value={charge.metadata} />
    </Section>
  );
}

/** What Cancel charge asks: the order and amount it gives up, and where money already received goes. */
function cancelQuestion(orderId: string, amount: string, received: string | null): string {
  const paid = received !== null && units(received) > 0n ? ` The ${received} USDC already received is paid out to your wallet.` : "";
  return `Cancel the charge for order ${orderId} (${amount} USDC)? The buyer can no longer pay it.${paid}`;
}

/** The charge's metadata as a key/value table, by key. */
function Metadata({ value }: { value: Record<string, string> | null }) {
  const entries = Object.entries(value ?? {}).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
  return (
    <>
      <h3 class="subhead">Metadata</h3>
      {entries.length === 0 ? (
        <p class="muted">None.</p>
      ) : (
        <div class="table-wrap">
          <table class="metadata">
            <thead>
              <tr>
                <th scope="col">Key</th>
                <th scope="col">Value</th>
              </tr>
            </thead>
            <tbody>
              {entries.map(([k, v]) => (
                <tr key={k} data-metadata={k}>
                  <td>
                    <code>{k}</code>
                  </td>
                  <td>{v}</td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
    </>
  );
}
