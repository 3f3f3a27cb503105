// A charge: its state (live through chargeUpdated), payments settled with explorer links, its timeline
// of events with their webhook deliveries (resend), and cancel.
import { useMutation, useQuery, useSubscription } from "@urql/preact";
import { graphql } from "../graphql.js";
import { Link } from "../router.js";
import { Amount, ErrorNote, Explorer, Section, Status, Time } from "../ui.js";

const ChargeQuery = graphql(`
  query Charge($id: ID!) {
    chains {
      chainId
      name
      explorerUrl
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
