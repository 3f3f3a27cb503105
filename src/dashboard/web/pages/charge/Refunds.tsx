// The charge's refunds, each with Pay with wallet and Cancel refund, and the form for a new one. The
// service never sends money: the merchant's settlement wallet pays each refund, on the refund's
// chain, and it completes when that chain shows the transfer. A refund made or cancelled here shows
// from the mutation's answer (the charge's refunds as they are after it); one made elsewhere arrives
// with the page's live stream.
import { useMutation } from "@urql/preact";
import { useState } from "preact/hooks";
import { type FragmentOf, graphql, readFragment, type ResultOf } from "../../graphql.js";
import { Amount, Confirm, ErrorNote, Explorer, Section, Status, units } from "../../ui.js";
import { browserWallet, sendFromWallet } from "../../wallet.js";
import { type ChainInfo, chainOf, useNewest } from "./live.js";
import { NewRefund, type RefundInput } from "./RefundForm.js";

export const ChargeRefunds = graphql(`
  fragment ChargeRefunds on Charge {
    id
    amountReceived
    amountOverpaid
    amountRefunded
    amountRefundable
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
  }
`);

const CreateRefund = graphql(
  `
    mutation CreateRefund($chargeId: ID!, $input: CreateRefundInput) {
      createRefund(chargeId: $chargeId, input: $input) {
        id
        charge {
          id
          ...ChargeRefunds
        }
      }
    }
  `,
  [ChargeRefunds],
);

const CancelRefund = graphql(
  `
    mutation CancelRefund($id: ID!) {
      cancelRefund(id: $id) {
        id
        charge {
          id
          ...ChargeRefunds
        }
      }
    }
  `,
  [ChargeRefunds],
);

type Refunds = FragmentOf<typeof ChargeRefunds>;
/** A refund as the section shows it. */
export type RefundItem = ResultOf<typeof ChargeRefunds>["refunds"][number];

/** The Refunds section, once the charge has received money or has refunds. */
export function RefundsSection(props: { charge: Refunds; chains: readonly ChainInfo[] }) {
  const [created, create] = useMutation(CreateRefund);
  const [cancelled, cancel] = useMutation(CancelRefund);
  const charge = readFragment(ChargeRefunds, useNewest<Refunds>(props.charge, created.data?.createRefund.charge, cancelled.data?.cancelRefund.charge)!);
  if (charge.amountReceived === null && charge.refunds.length === 0) return null;
  return (
    <Section title="Refunds">
      <p class="muted">
        Refunded: <Amount value={charge.amountRefunded} />. Left to refund: <span data-amount-refundable>{charge.amountRefundable}</span> USDC. Your settlement
        wallet pays each refund (send exactly the amount to the address, on the refund's chain: where the money arrived); it completes once the chain confirms
        the transfer.
      </p>
      <ul class="rows">
        {charge.refunds.map((r) => (
          <RefundRow
            key={r.id}
            refund={r}
            chain={chainOf(props.chains, r.chainId)}
            cancelling={cancelled.fetching}
            onCancel={() => void cancel({ id: r.id })}
          />
        ))}
      </ul>
      <ErrorNote error={cancelled.error} />
      <NewRefund
        charge={charge}
        chains={props.chains}
        creating={created.fetching}
        error={created.error}
        onCreate={async (input: RefundInput) => !(await create({ chargeId: charge.id, input })).error}
      />
    </Section>
  );
}

/** One refund: amount, status, where it goes (or its claim link), its chain and transfer; Pay with wallet and Cancel refund while they can be. */
function RefundRow({
  refund: r,
  chain,
  cancelling,
  onCancel,
}: {
  refund: RefundItem;
  chain: ChainInfo | undefined;
  cancelling: boolean;
  onCancel: () => void;
}) {
  const [sent, setSent] = useState<{ hash?: string; error?: Error } | null>(null);
  const pay = async () => {
    if (!chain || !r.address) return;
    setSent({});
    try {
      const hash = await sendFromWallet({
        chainId: chain.chainId,
        chainName: chain.name,
        usdc: chain.usdcAddress,
        from: r.fromAddress,
        to: r.address,
        units: units(r.amount),
      });
      setSent({ hash });
    } catch (e) {
      setSent({ error: e as Error });
    }
  };
  // Once a transfer was sent (or is on chain), neither another payment nor a cancel: either would pay twice.
  const open = !r.txHash && !sent?.hash;
  return (
    <li data-refund={r.id}>
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
      {r.status === "AWAITING_PAYMENT" && open && r.address && chain && browserWallet() && (
        <button type="button" class="link" disabled={sent !== null && !sent.error} onClick={() => void pay()}>
          Pay with wallet
        </button>
      )}
      {sent?.hash && <span role="status"> Sent: waiting for confirmations ({sent.hash.slice(0, 10)}…)</span>}
      {sent?.error && <ErrorNote error={sent.error} />}
      {(r.status === "AWAITING_ADDRESS" || r.status === "AWAITING_PAYMENT") && open && (
        <Confirm
          label="Cancel refund"
          question={`Cancel the refund of ${r.amount} USDC to ${r.address ?? "the buyer's claim link"}? The buyer will not be paid back by it.`}
          confirm="Yes, cancel the refund"
          disabled={cancelling}
          onConfirm={onCancel}
        />
      )}
    </li>
  );
}
