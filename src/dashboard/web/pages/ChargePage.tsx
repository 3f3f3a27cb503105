// A charge: its state (live through chargeUpdated), description and metadata, the invoice it pays or
// the payment link it came from, payments settled with explorer links, its ledger rows, what needs
// review (mark reviewed), other assets at its address (sweep), its timeline of events (with their
// webhook deliveries: resend) and refunds, and cancel. Cancel and refunds ask first, naming what they do.
import { useMutation, useQuery, useSubscription } from "@urql/preact";
import type { ComponentChildren } from "preact";
import { useEffect, useState } from "preact/hooks";
import { ChargeBadges } from "../charge-status.js";
import { graphql, type ResultOf } from "../graphql.js";
import { CustomerLink } from "../list.js";
import { Link } from "../router.js";
import { Amount, Confirm, ConfirmStep, ErrorNote, Explorer, formValues, Section, Status, Time, units, usdc } from "../ui.js";
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
      metadata
      amount
      amountReceived
      amountOverpaid
      feeAmount
      netAmount
      currency
      status
      displayStatus
      chainId
      cloneAddress
      paymentUrl
      expiresAt
      completedAt
      createdAt
      flushTxHash
      payoutBlockedReason
      needsReview
      reviewReason
      strayAssets {
        chainId
        token
        amount
      }
      balanceTransactions {
        id
        type
        amount
        chainId
        txHash
        reversesId
        createdAt
      }
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
      refundable {
        chainId
        left
      }
      refunds {
        id
        chainId
        fromAddress
        amount
        reason
        status
        address
        claimUrl
        txHash
        createdAt
        completedAt
        cancelledAt
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
      displayStatus
      amountReceived
      amountOverpaid
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

const MarkChargeReviewed = graphql(`
  mutation MarkChargeReviewed($id: ID!) {
    markChargeReviewed(id: $id) {
      id
      needsReview
      reviewReason
    }
  }
`);

const SweepCharge = graphql(`
  mutation SweepCharge($id: ID!, $token: String!, $chainId: Int) {
    sweepCharge(id: $id, token: $token, chainId: $chainId) {
      id
      status
      txHash
      error
    }
  }
`);

const SweepQuery = graphql(`
  query Sweep($id: ID!) {
    sweep(id: $id) {
      id
      status
      txHash
      error
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
        {charge.orderId}{" "}
        <ChargeBadges
          displayStatus={live?.chargeUpdated.displayStatus ?? charge.displayStatus}
          needsReview={charge.needsReview}
          overpaid={live?.chargeUpdated.amountOverpaid ?? charge.amountOverpaid}
        />
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
      <ReviewSection charge={charge} onReviewed={() => refetch({ requestPolicy: "network-only" })} />
      <Section
        title="Charge"
        actions={
          status === "PENDING" && (
            <Confirm
              label="Cancel charge"
              question={cancelQuestion(charge.orderId, charge.amount, live?.chargeUpdated.amountReceived ?? charge.amountReceived)}
              confirm="Yes, cancel it"
              disabled={cancel.fetching}
              onConfirm={() => void runCancel({ id })}
            />
          )
        }
      >
        <ChargeFacts charge={charge} chain={chain} received={live?.chargeUpdated.amountReceived ?? charge.amountReceived} />
        <Metadata value={charge.metadata} />
      </Section>
      <Payments charge={charge} chain={chain} />
      <Refunds charge={charge} chains={data.chains} onChange={() => refetch({ requestPolicy: "network-only" })} />
      <Settlements charge={charge} chain={chain} />
      <Ledger rows={charge.balanceTransactions} chains={data.chains} />
      <StrayAssets charge={charge} chains={data.chains} />
      <Timeline
        charge={charge}
        chain={chain}
        resending={resend.fetching}
        onResend={(eventId) => runResend({ id: eventId }).then(() => refetch({ requestPolicy: "network-only" }))}
      />
    </>
  );
}

type ChargeWithRefunds = NonNullable<ResultOf<typeof ChargeQuery>["charge"]>;
type ChainInfo = ResultOf<typeof ChargeQuery>["chains"][number];

/** A charge the ledger and chain disagree about: why, what to do, and Mark reviewed (then: "Marked reviewed."). */
function ReviewSection({ charge, onReviewed }: { charge: ChargeWithRefunds; onReviewed: () => void }) {
  const [reviewed, runReviewed] = useMutation(MarkChargeReviewed);
  return charge.needsReview ? (
    <Section
      title="Needs review"
      class="review"
      actions={
        <Confirm
          plain
          label="Mark reviewed"
          question="Mark this charge reviewed? It leaves the list of charges to review; its amounts stay as they are."
          confirm="Yes, mark it reviewed"
          disabled={reviewed.fetching}
          onConfirm={() => void runReviewed({ id: charge.id }).then((r) => !r.error && onReviewed())}
        />
      }
    >
      <p data-review-reason>{charge.reviewReason}</p>
      <p>
        The ledger and the chain disagree about this charge, so its amounts may not be final; nothing is corrected by itself. Compare its ledger rows below with
        its address and transactions in the explorer, settle any difference with your buyer (a refund, or asking for the rest), then mark it reviewed. A
        difference still there at a later check flags it again.
      </p>
      <ErrorNote error={reviewed.error} />
    </Section>
  ) : reviewed.data ? (
    <p role="status">Marked reviewed.</p>
  ) : null;
}

/** The charge's facts: id, amounts (`received` as the live state says), chain, clone address, customer, page, times, payout. */
function ChargeFacts({ charge, chain, received }: { charge: ChargeWithRefunds; chain: ChainInfo | undefined; received: string | null }) {
  return (
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
        <Amount value={received} />
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
  );
}

/** The payments seen to the charge's address. */
function Payments({ charge, chain }: { charge: ChargeWithRefunds; chain: ChainInfo | undefined }) {
  return (
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
  );
}

/** What was paid out of the charge, net and fee. */
function Settlements({ charge, chain }: { charge: ChargeWithRefunds; chain: ChainInfo | undefined }) {
  return (
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

type TimelineEntry = { at: string; key: string; body: ComponentChildren };

/**
 * The charge's events (with their webhook deliveries and a way to resend) and its refunds (made,
 * then completed or cancelled), oldest first.
 */
function Timeline(props: { charge: ChargeWithRefunds; chain: ChainInfo | undefined; resending: boolean; onResend: (eventId: string) => void }) {
  const { charge, chain } = props;
  const entries: TimelineEntry[] = charge.events.map((e) => ({
    at: e.timestamp,
    key: e.id,
    body: (
      <>
        <strong>{e.type}</strong> <Time iso={e.timestamp} />
        {e.deliveries.length > 0 && (
          <ul class="deliveries">
            {e.deliveries.map((d) => (
              <li key={d.endpointId}>
                {d.url}: {d.status.toLowerCase()}
                {d.attempts.length > 0 &&
                  ` (${d.attempts.length} attempt${d.attempts.length === 1 ? "" : "s"}, last ${d.attempts.at(-1)?.statusCode ?? d.attempts.at(-1)?.error})`}
              </li>
            ))}
          </ul>
        )}
        <button type="button" class="link" disabled={props.resending} onClick={() => props.onResend(e.id)}>
          Resend webhook
        </button>
      </>
    ),
  }));
  for (const r of charge.refunds) {
    const to = r.address ? <Explorer base={chain?.explorerUrl} kind="address" value={r.address} /> : "a claim link";
    entries.push({
      at: r.createdAt,
      key: `${r.id}:created`,
      body: (
        <span data-timeline-refund={r.id}>
          <strong>Refund</strong> <Amount value={r.amount} /> to {to} <Status status={r.status} /> <Time iso={r.createdAt} />
          {r.txHash && (
            <>
              {" "}
              · <Explorer base={chain?.explorerUrl} kind="tx" value={r.txHash} />
            </>
          )}
        </span>
      ),
    });
    const ended = r.completedAt ?? r.cancelledAt;
    if (ended) {
      entries.push({
        at: ended,
        key: `${r.id}:ended`,
        body: (
          <>
            <strong>Refund {r.completedAt ? "completed" : "cancelled"}</strong> <Amount value={r.amount} /> <Time iso={ended} />
          </>
        ),
      });
    }
  }
  // ISO 8601 UTC times sort as text.
  entries.sort((a, b) => (a.at < b.at ? -1 : a.at > b.at ? 1 : 0));
  return (
    <Section title="Timeline">
      <ol class="timeline">
        {entries.map((e) => (
          <li key={e.key}>{e.body}</li>
        ))}
      </ol>
    </Section>
  );
}

/** The charge's ledger rows, oldest first: every confirmed movement of its money, signed. */
function Ledger({ rows, chains }: { rows: ChargeWithRefunds["balanceTransactions"]; chains: ChainInfo[] }) {
  return (
    <Section title="Ledger">
      {rows.length === 0 ? (
        <p class="muted">No confirmed money movement yet.</p>
      ) : (
        <ul class="rows">
          {rows.map((b) => {
            const on = chains.find((c) => c.chainId === b.chainId);
            return (
              <li key={b.id} data-ledger={b.type}>
                <strong>{b.type}</strong> <Amount value={b.amount.startsWith("-") ? b.amount : `+${b.amount}`} /> · {on?.name ?? `chain ${b.chainId}`} ·{" "}
                <Explorer base={on?.explorerUrl} kind="tx" value={b.txHash} /> · <Time iso={b.createdAt} />
                {b.reversesId && <span class="muted"> · undoes {b.reversesId}</span>}
              </li>
            );
          })}
        </ul>
      )}
    </Section>
  );
}

/** How often a sweep under way is read again. */
const SWEEP_POLL_MS = 3000;

/** Other tokens, or the native coin, found at the charge's address, each with a way to sweep it to the merchant's wallet. */
function StrayAssets({ charge, chains }: { charge: ChargeWithRefunds; chains: ChainInfo[] }) {
  if (charge.strayAssets.length === 0) return null;
  return (
    <Section title="Other assets at this address">
      <p class="muted">
        Found at this charge's address besides USDC: not part of the charge. A sweep pays them to your wallet, less the fee, once the service sends it.
      </p>
      <ul class="rows">
        {charge.strayAssets.map((a) => (
          <StrayAsset key={`${a.chainId}:${a.token}`} chargeId={charge.id} asset={a} chain={chains.find((c) => c.chainId === a.chainId)} />
        ))}
      </ul>
    </Section>
  );
}

function StrayAsset({ chargeId, asset, chain }: { chargeId: string; asset: ChargeWithRefunds["strayAssets"][number]; chain: ChainInfo | undefined }) {
  const [swept, sweep] = useMutation(SweepCharge);
  const id = swept.data?.sweepCharge.id;
  const [{ data, error }, refetch] = useQuery({ query: SweepQuery, variables: { id: id ?? "" }, pause: !id });
  const state = data?.sweep.id === id ? data?.sweep : swept.data?.sweepCharge;
  const over = state?.status === "DONE" || state?.status === "FAILED";
  // A sweep under way is read again until it is done or has failed.
  useEffect(() => {
    if (!id || over) return;
    const timer = setInterval(() => refetch({ requestPolicy: "network-only" }), SWEEP_POLL_MS);
    return () => clearInterval(timer);
  }, [id, over]);
  const native = asset.token === "native";
  return (
    <li data-stray={asset.token}>
      {native ? "Native coin" : <Explorer base={chain?.explorerUrl} kind="address" value={asset.token} />} ·{" "}
      {native ? decimal(asset.amount, 18) : `${asset.amount} base units`} · {chain?.name ?? `chain ${asset.chainId}`}{" "}
      {state && (
        <span role="status" data-sweep={state.id}>
          Sweep <Status status={state.status} />
          {state.txHash && (
            <>
              {" "}
              · <Explorer base={chain?.explorerUrl} kind="tx" value={state.txHash} />
            </>
          )}
          {state.error && <span class="error"> {state.error}</span>}
        </span>
      )}
      {(!state || state.status === "FAILED") && (
        <Confirm
          plain
          label={state ? "Sweep again" : "Sweep to wallet"}
          question={`Pay ${native ? "this coin" : "this token"} out of the charge's address to your settlement wallet, less the fee? A transaction is sent on ${chain?.name ?? `chain ${asset.chainId}`}: it cannot be called back.`}
          confirm="Yes, sweep it"
          disabled={swept.fetching}
          onConfirm={() => void sweep({ id: chargeId, token: asset.token, chainId: asset.chainId })}
        />
      )}
      <ErrorNote error={swept.error ?? error} />
    </li>
  );
}

/** Base units of a token with `decimals` decimals as a decimal string: ("1500000000000000000", 18) → "1.5". */
function decimal(amount: string, decimals: number): string {
  const digits = amount.padStart(decimals + 1, "0");
  const frac = digits.slice(-decimals).replace(/0+$/, "");
  return frac ? `${digits.slice(0, -decimals)}.${frac}` : digits.slice(0, -decimals);
}

/**
 * The charge's refunds and a form for a new one. The service never sends money: the merchant's
 * settlement wallet pays each refund, on the refund's chain, and it completes when that chain shows
 * the transfer.
 */
function Refunds({ charge, chains, onChange }: { charge: ChargeWithRefunds; chains: ChainInfo[]; onChange: () => void }) {
  const [cancelled, cancel] = useMutation(CancelRefund);
  const [sent, setSent] = useState<{ id: string; hash?: string; error?: Error } | null>(null);
  const chainOf = (chainId: number) => chains.find((c) => c.chainId === chainId);
  const pay = async (r: ChargeWithRefunds["refunds"][number]) => {
    const chain = chainOf(r.chainId);
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
        Refunded: <Amount value={charge.amountRefunded} />. Your settlement wallet pays each refund (send exactly the amount to the address, on the refund's
        chain: where the money arrived); it completes once the chain confirms the transfer.
      </p>
      <ul class="rows">
        {charge.refunds.map((r) => {
          const chain = chainOf(r.chainId);
          return (
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
              )}{" "}
              <span class="muted" data-refund-chain={r.chainId}>
                on {chain?.name ?? `chain ${r.chainId}`}
              </span>
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
                <Confirm
                  label="Cancel refund"
                  question={`Cancel the refund of ${r.amount} USDC to ${r.address ?? "the buyer's claim link"}? The buyer will not be paid back by it.`}
                  confirm="Yes, cancel the refund"
                  disabled={cancelled.fetching}
                  onConfirm={() => void cancel({ id: r.id }).then(onChange)}
                />
              )}
            </li>
          );
        })}
      </ul>
      <ErrorNote error={cancelled.error} />
      <OverpaidRefund charge={charge} />
      <NewRefund charge={charge} chains={chains} onChange={onChange} />
    </Section>
  );
}

type RefundInput = { amount?: string; reason?: string; address?: string; chainId?: number };

/**
 * The form for a refund (an amount, the buyer's address or a claim link, a reason, and the chain when
 * money is left on several), confirmed before it is made. The service refuses an address the money
 * could not reach the buyer at, and says why.
 */
function NewRefund({ charge, chains, onChange }: { charge: ChargeWithRefunds; chains: ChainInfo[]; onChange: () => void }) {
  const [created, create] = useMutation(CreateRefund);
  // The refund the form asks for, until it is confirmed or kept.
  const [asking, setAsking] = useState<{ input: RefundInput; form: HTMLFormElement } | null>(null);
  const withLeft = charge.refundable.filter((m) => units(m.left) > 0n);
  const nameOf = (chainId: number) => chains.find((c) => c.chainId === chainId)?.name ?? `chain ${chainId}`;
  // The chain the refund is made on (the one chosen, else the only one with money left) and what is left there.
  const chainId = asking?.input.chainId ?? (withLeft.length === 1 ? withLeft[0]!.chainId : undefined);
  const left = units(charge.refundable.find((m) => m.chainId === chainId)?.left ?? "0");
  return (
    <>
      <ErrorNote error={created.error} />
      <form
        id="new-refund"
        class="inline"
        onSubmit={(e) => {
          e.preventDefault();
          const form = e.currentTarget;
          const v = formValues(form);
          const input = {
            ...(v.amount && { amount: v.amount.trim() }),
            ...(v.reason && { reason: v.reason }),
            ...(v.address && { address: v.address.trim() }),
            ...(v.chainId && { chainId: Number(v.chainId) }),
          };
          setAsking({ input, form });
        }}
      >
        {withLeft.length > 1 && (
          <label>
            Chain (where the money arrived)
            <select name="chainId" required data-refund-chains>
              <option value="">Choose…</option>
              {withLeft.map((m) => (
                <option key={m.chainId} value={m.chainId}>
                  {nameOf(m.chainId)}: {m.left} USDC left
                </option>
              ))}
            </select>
          </label>
        )}
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
        <button type="submit" disabled={created.fetching || asking !== null}>
          Refund
        </button>
      </form>
      {withLeft.length === 1 && <p class="muted">Refunded on {nameOf(withLeft[0]!.chainId)}, where the money arrived.</p>}
      {asking && (
        <ConfirmStep
          question={refundQuestion(asking.input, left, chainId === undefined ? undefined : nameOf(chainId))}
          confirm={`Yes, refund ${asking.input.amount ?? usdc(left)} USDC`}
          disabled={created.fetching}
          onCancel={() => setAsking(null)}
          onConfirm={async () => {
            const { input, form } = asking;
            setAsking(null);
            const result = await create({ chargeId: charge.id, input });
            if (!result.error) {
              form.reset();
              onChange();
            }
          }}
        />
      )}
    </>
  );
}

/**
 * What the buyer paid beyond the amount and not yet refunded, with a button that fills the refund
 * form with exactly that (the merchant then names the buyer's address, or leaves it to a claim link).
 */
function OverpaidRefund({ charge }: { charge: ChargeWithRefunds }) {
  const refunding = charge.refunds.filter((r) => r.status !== "CANCELLED").reduce((sum, r) => sum + units(r.amount), 0n);
  const excess = units(charge.amountOverpaid) - refunding;
  if (excess <= 0n) return null;
  const amount = usdc(excess);
  const prefill = () => {
    const form = document.getElementById("new-refund") as HTMLFormElement | null;
    const field = (name: string) => form?.elements.namedItem(name) as HTMLInputElement | null;
    field("amount")!.value = amount;
    field("reason")!.value ||= "Overpaid";
    field("address")?.focus();
  };
  return (
    <p data-overpaid-refund>
      The buyer paid <Amount value={amount} /> more than the amount.{" "}
      <button type="button" class="link" onClick={prefill}>
        Refund the excess ({amount} USDC)
      </button>
    </p>
  );
}

/** What Refund asks: how much, to where, on which chain, and that the merchant's wallet pays it. */
function refundQuestion(input: { amount?: string; address?: string }, left: bigint, chainName: string | undefined): string {
  const amount = input.amount ? `${input.amount} USDC` : `all that is left (${usdc(left)} USDC)`;
  const to = input.address ? `to ${input.address}` : "through a claim link the buyer gives an address to";
  return `Refund ${amount}${chainName ? ` on ${chainName}` : ""} ${to}? Your settlement wallet pays it.`;
}
