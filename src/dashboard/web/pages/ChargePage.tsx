// A charge: its state (live through chargeUpdated), the invoice it pays or the payment link it came
// from, payments settled with explorer links, its timeline of events with their webhook deliveries
// (resend), and cancel.
import { useMutation, useQuery, useSubscription } from "@urql/preact";
import { useState } from "preact/hooks";
import { graphql, type ResultOf } from "../graphql.js";
import { Link } from "../router.js";
import { Amount, ErrorNote, Explorer, formValues, Section, Status, Time, units } from "../ui.js";
import { browserWallet, sendFromWallet } from "../wallet.js";

const ChargeQuery = graphql(`
  query Charge($id: ID!) {
    chains {
      chainId
      name
      explorerUrl
      usdcAddress
    }
    charge(id: $id) {
      id
      orderId
      description
      amount
      amountReceived
      feeAmount
      netAmount
      currency
      status
      chainId
      cloneAddress
      paymentUrl
      expiresAt
      completedAt
      createdAt
      flushTxHash
      payoutBlockedReason
      customer {
        id
        email
        name
      }
      invoice {
        id
        number
      }
      paymentLink {
        id
        name
      }
      amountRefunded
      refunds {
        id
        fromAddress
        amount
        reason
        status
        address
        claimUrl
        txHash
        createdAt
      }
      payments {
        txHash
        logIndex
        from
        amount
        status
      }
      settlements {
        txHash
        amount
        netAmount
        feeAmount
        confirmedAt
      }
      events {
        id
        type
        timestamp
        deliveries {
          endpointId
          url
          status
          attempts {
            attemptedAt
            statusCode
            succeeded
            error
          }
        }
      }
    }
  }
`);

const ChargeLive = graphql(`
  subscription ChargeLive($id: ID!) {
    chargeUpdated(id: $id) {
      id
      status
      amountReceived
      chainId
      cloneAddress
      completedAt
    }
  }
`);

const CancelCharge = graphql(`
  mutation CancelCharge($id: ID!) {
    cancelCharge(id: $id) {
      id
      status
    }
  }
`);

const CreateRefund = graphql(`
  mutation CreateRefund($chargeId: ID!, $input: CreateRefundInput) {
    createRefund(chargeId: $chargeId, input: $input) {
      id
    }
  }
`);

const CancelRefund = graphql(`
  mutation CancelRefund($id: ID!) {
    cancelRefund(id: $id) {
      id
      status
    }
  }
`);

const ResendEvent = graphql(`
  mutation ResendEvent($id: ID!) {
    resendEvent(id: $id) {
      id
    }
  }
`);

export function ChargePage({ id }: { id: string }) {
  const [{ data, error }, refetch] = useQuery({ query: ChargeQuery, variables: { id } });
  // The live state replaces the read one; the details that follow a change are read again.
  const [{ data: live }] = useSubscription({ query: ChargeLive, variables: { id } }, (_prev, next) => {
    refetch({ requestPolicy: "network-only" });
    return next;
  });
  const [cancel, runCancel] = useMutation(CancelCharge);
  const [resend, runResend] = useMutation(ResendEvent);
  const charge = data?.charge;
  if (!charge) return <ErrorNote error={error} />;
  const status = live?.chargeUpdated.status ?? charge.status;
  const chain = data.chains.find((c) => c.chainId === (live?.chargeUpdated.chainId ?? charge.chainId));
  return (
    <>
      <p>
        <Link href="/charges">← Charges</Link>
      </p>
      <h1>
        {charge.orderId} <Status status={status} />
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
      <ErrorNote error={error ?? cancel.error ?? resend.error} />
      <Section
        title="Charge"
        actions={
          status === "PENDING" && (
            <button type="button" class="danger" disabled={cancel.fetching} onClick={() => runCancel({ id })}>
              Cancel charge
            </button>
          )
        }
      >
        <dl class="facts">
          <dt>Id</dt>
          <dd>
            <code>{charge.id}</code>
          </dd>
          <dt>Amount</dt>
          <dd>
            <Amount value={charge.amount} currency={charge.currency} />
          </dd>
          <dt>Received</dt>
          <dd>
            <Amount value={live?.chargeUpdated.amountReceived ?? charge.amountReceived} />
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
          <dd>{charge.customer ? <Link href={`/customers/${charge.customer.id}`}>{charge.customer.email}</Link> : <span class="muted">—</span>}</dd>
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
      </Section>
      <Section title="Payments">
        {charge.payments.length === 0 ? (
          <p class="muted">No payment seen yet.</p>
        ) : (
          <ul class="rows">
            {charge.payments.map((p) => (
              <li key={`${p.txHash}:${p.logIndex}`}>
                <Amount value={p.amount} /> {p.status} · <Explorer base={chain?.explorerUrl} kind="tx" value={p.txHash} /> · from{" "}
                <Explorer base={chain?.explorerUrl} kind="address" value={p.from} />
              </li>
            ))}
          </ul>
        )}
      </Section>
      <Refunds charge={charge} chain={chain} onChange={() => refetch({ requestPolicy: "network-only" })} />
      <Section title="Settlements">
        {charge.settlements.length === 0 ? (
          <p class="muted">Nothing paid out yet.</p>
        ) : (
          <ul class="rows">
            {charge.settlements.map((s) => (
              <li key={s.txHash}>
                <Amount value={s.amount} /> → net <Amount value={s.netAmount} />, fee <Amount value={s.feeAmount} /> ·{" "}
                <Explorer base={chain?.explorerUrl} kind="tx" value={s.txHash} /> · <Time iso={s.confirmedAt} />
              </li>
            ))}
          </ul>
        )}
      </Section>
      <Section title="Timeline">
        <ol class="timeline">
          {charge.events.map((e) => (
            <li key={e.id}>
              <strong>{e.type}</strong> <Time iso={e.timestamp} />
              {e.deliveries.length > 0 && (
                <ul class="deliveries">
                  {e.deliveries.map((d) => (
                    <li key={d.endpointId}>
                      {d.url}: {d.status}
                      {d.attempts.length > 0 &&
                        ` (${d.attempts.length} attempt${d.attempts.length === 1 ? "" : "s"}, last ${d.attempts.at(-1)?.statusCode ?? d.attempts.at(-1)?.error})`}
                    </li>
                  ))}
                </ul>
              )}
              <button
                type="button"
                class="link"
                disabled={resend.fetching}
                onClick={() => runResend({ id: e.id }).then(() => refetch({ requestPolicy: "network-only" }))}
              >
                Resend webhook
              </button>
            </li>
          ))}
        </ol>
      </Section>
    </>
  );
}

type ChargeWithRefunds = NonNullable<ResultOf<typeof ChargeQuery>["charge"]>;
type ChainInfo = ResultOf<typeof ChargeQuery>["chains"][number];

/**
 * The charge's refunds and a form for a new one. The service never sends money: the merchant's
 * settlement wallet pays each refund, and it completes when the chain shows the transfer.
 */
function Refunds({ charge, chain, onChange }: { charge: ChargeWithRefunds; chain: ChainInfo | undefined; onChange: () => void }) {
  const [created, create] = useMutation(CreateRefund);
  const [cancelled, cancel] = useMutation(CancelRefund);
  const [sent, setSent] = useState<{ id: string; hash?: string; error?: Error } | null>(null);
  const pay = async (r: ChargeWithRefunds["refunds"][number]) => {
    if (!chain || !r.address) return;
    setSent({ id: r.id });
    try {
      const hash = await sendFromWallet({
        chainId: chain.chainId,
        chainName: chain.name,
        usdc: chain.usdcAddress,
        from: r.fromAddress,
        to: r.address,
        units: units(r.amount),
      });
      setSent({ id: r.id, hash });
    } catch (e) {
      setSent({ id: r.id, error: e as Error });
    }
  };
  if (charge.amountReceived === null && charge.refunds.length === 0) return null;
  return (
    <Section title="Refunds">
      <p class="muted">
        Refunded: <Amount value={charge.amountRefunded} />. Your settlement wallet pays each refund (send exactly the amount to the address, on this charge's
        chain); it completes once the chain confirms the transfer.
      </p>
      <ul class="rows">
        {charge.refunds.map((r) => (
          <li key={r.id} data-refund={r.id}>
            <Amount value={r.amount} /> <Status status={r.status} /> {r.reason && <span class="muted">{r.reason}</span>}{" "}
            {r.address ? (
              <>
                to <Explorer base={chain?.explorerUrl} kind="address" value={r.address} />
              </>
            ) : (
              r.claimUrl && (
                <>
                  claim link for the buyer: <code data-claim-url>{r.claimUrl}</code>
                </>
              )
            )}
            {r.txHash && (
              <>
                {" "}
                · <Explorer base={chain?.explorerUrl} kind="tx" value={r.txHash} />
              </>
            )}
            {r.status === "AWAITING_PAYMENT" && r.txHash && <span class="muted"> · its transfer is on chain, waiting for confirmations</span>}
            {/* Once a transfer was sent (or is on chain), neither another payment nor a cancel: either would pay twice. */}
            {r.status === "AWAITING_PAYMENT" && !r.txHash && !(sent?.id === r.id && sent.hash) && r.address && chain && browserWallet() && (
              <button type="button" class="link" disabled={sent?.id === r.id && !sent.error} onClick={() => void pay(r)}>
                Pay with wallet
              </button>
            )}
            {sent?.id === r.id && sent.hash && <span role="status"> Sent: waiting for confirmations ({sent.hash.slice(0, 10)}…)</span>}
            {sent?.id === r.id && sent.error && <ErrorNote error={sent.error} />}
            {(r.status === "AWAITING_ADDRESS" || r.status === "AWAITING_PAYMENT") && !r.txHash && !(sent?.id === r.id && sent.hash) && (
              <button type="button" class="link danger" onClick={() => cancel({ id: r.id }).then(onChange)}>
                Cancel refund
              </button>
            )}
          </li>
        ))}
      </ul>
      <ErrorNote error={created.error ?? cancelled.error} />
      <form
        class="inline"
        onSubmit={async (e) => {
          e.preventDefault();
          const form = e.currentTarget;
          const v = formValues(form);
          const input = { ...(v.amount && { amount: v.amount }), ...(v.reason && { reason: v.reason }), ...(v.address && { address: v.address.trim() }) };
          const result = await create({ chargeId: charge.id, input });
          if (!result.error) {
            form.reset();
            onChange();
          }
        }}
      >
        <label>
          Amount (empty: all that is left)
          <input name="amount" inputMode="decimal" placeholder="5.00" />
        </label>
        <label class="grow">
          Buyer's address (empty: a claim link for the buyer)
          <input name="address" placeholder="0x…" spellcheck={false} />
        </label>
        <label class="grow">
          Reason
          <input name="reason" />
        </label>
        <button type="submit" disabled={created.fetching}>
          Refund
        </button>
      </form>
    </Section>
  );
}
