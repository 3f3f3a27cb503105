// The form for a refund: an amount, the buyer's address or a claim link, a reason, and the chain when
// money is left on several; asked first. What a refund may take back is the server's word
// (amountRefundable, and per chain refundable.left): the page compares what was typed with it and
// does no sums of its own. The service refuses an address the money could not reach the buyer at,
// and says why.
import type { CombinedError } from "@urql/preact";
import { useState } from "preact/hooks";
import { compareUnits } from "../../../../lib/money.js";
import { Amount, ConfirmStep, ErrorNote, formValues, typedUnits, units } from "../../ui.js";
import { type ChainInfo, chainName } from "./live.js";

/** What the form asks createRefund for. */
export type RefundInput = { amount?: string; reason?: string; address?: string; chainId?: number };

/** What the form reads of the charge (its part of the Refunds section's fragment). */
interface RefundsData {
  amountOverpaid: string;
  amountRefundable: string;
  refundable: readonly { chainId: number; left: string }[];
  refunds: readonly { status: string }[];
}

/** Whether a USDC amount the API wrote is above zero. */
const positive = (amount: string) => compareUnits(units(amount), 0n) > 0;

/** The new-refund form and its question; `onCreate` makes the refund and says whether it was made. */
export function NewRefund(props: {
  charge: RefundsData;
  chains: readonly ChainInfo[];
  creating: boolean;
  error: CombinedError | undefined;
  onCreate: (input: RefundInput) => Promise<boolean>;
}) {
  const { charge, chains } = props;
  // The refund the form asks for, until it is confirmed or kept.
  const [asking, setAsking] = useState<{ input: RefundInput; form: HTMLFormElement } | null>(null);
  const [tooMuch, setTooMuch] = useState<string | null>(null);
  const withLeft = charge.refundable.filter((m) => positive(m.left));
  if (!positive(charge.amountRefundable)) return <p class="muted">Nothing is left to refund.</p>;
  // The most a refund may ask: on the chain chosen when money is left on several, else in all.
  const limitOn = (chainId: number | undefined) => (withLeft.length > 1 ? charge.refundable.find((m) => m.chainId === chainId)?.left : charge.amountRefundable);
  const chainId = withLeft.length === 1 ? withLeft[0]!.chainId : asking?.input.chainId;
  const submit = (form: HTMLFormElement) => {
    const v = formValues(form);
    const input: RefundInput = {
      ...(v.amount && { amount: v.amount.trim() }),
      ...(v.reason && { reason: v.reason }),
      ...(v.address && { address: v.address.trim() }),
      ...(v.chainId && { chainId: Number(v.chainId) }),
    };
    const limit = limitOn(input.chainId);
    const typed = input.amount === undefined ? null : typedUnits(input.amount);
    // A malformed amount is left to the service, which names what it wants.
    if (limit !== undefined && typed !== null && compareUnits(typed, units(limit)) > 0) {
      const where = withLeft.length > 1 && input.chainId !== undefined ? ` on ${chainName(chains, input.chainId)}` : "";
      setTooMuch(`Amount: at most ${limit} USDC is left to refund${where}.`);
      return;
    }
    setTooMuch(null);
    setAsking({ input, form });
  };
  const left = limitOn(chainId) ?? charge.amountRefundable;
  return (
    <>
      <ErrorNote error={props.error} />
      <form
        id="new-refund"
        class="inline"
        onSubmit={(e) => {
          e.preventDefault();
          submit(e.currentTarget);
        }}
      >
        {withLeft.length > 1 && (
          <label>
            Chain (where the money arrived)
            <select name="chainId" required data-refund-chains>
              <option value="">Choose…</option>
              {withLeft.map((m) => (
                <option key={m.chainId} value={m.chainId}>
                  {chainName(chains, m.chainId)}: {m.left} USDC left
                </option>
              ))}
            </select>
          </label>
        )}
        <label>
          Amount (empty: all that is left)
          <input
            name="amount"
            inputMode="decimal"
            placeholder="5.00"
            aria-invalid={tooMuch !== null}
            aria-describedby={tooMuch ? "refund-too-much" : undefined}
          />
        </label>
        <label class="grow">
          Buyer's address (empty: a claim link for the buyer)
          <input name="address" placeholder="0x…" spellcheck={false} />
        </label>
        <label class="grow">
          Reason
          <input name="reason" />
        </label>
        <button type="submit" disabled={props.creating || asking !== null}>
          Refund
        </button>
      </form>
      {tooMuch && (
        <p class="error" id="refund-too-much" role="alert">
          {tooMuch}
        </p>
      )}
      {withLeft.length === 1 && <p class="muted">Refunded on {chainName(chains, withLeft[0]!.chainId)}, where the money arrived.</p>}
      <OverpaidRefund charge={charge} />
      {asking && (
        <ConfirmStep
          question={refundQuestion(asking.input, left, chainId === undefined ? undefined : chainName(chains, chainId))}
          confirm={`Yes, refund ${asking.input.amount ?? left} USDC`}
          disabled={props.creating}
          onCancel={() => setAsking(null)}
          onConfirm={async () => {
            const { input, form } = asking;
            setAsking(null);
            if (await props.onCreate(input)) form.reset();
          }}
        />
      )}
    </>
  );
}

/**
 * What the buyer paid beyond the amount, while no refund is made or under way, with a button that
 * fills the refund form with it (never more than is left to refund); the merchant then names the
 * buyer's address, or leaves it to a claim link.
 */
function OverpaidRefund({ charge }: { charge: RefundsData }) {
  if (!positive(charge.amountOverpaid) || charge.refunds.some((r) => r.status !== "CANCELLED")) return null;
  const amount = compareUnits(units(charge.amountOverpaid), units(charge.amountRefundable)) <= 0 ? charge.amountOverpaid : charge.amountRefundable;
  const prefill = () => {
    const form = document.getElementById("new-refund") as HTMLFormElement | null;
    const field = (name: string) => form?.elements.namedItem(name) as HTMLInputElement | null;
    field("amount")!.value = amount;
    field("reason")!.value ||= "Overpaid";
    field("address")?.focus();
  };
  return (
    <p data-overpaid-refund>
      The buyer paid <Amount value={charge.amountOverpaid} /> more than the amount.{" "}
      <button type="button" class="link" onClick={prefill}>
        Refund the excess ({amount} USDC)
      </button>
    </p>
  );
}

/** What Refund asks: how much, to where, on which chain, and that the merchant's wallet pays it. */
function refundQuestion(input: { amount?: string; address?: string }, left: string, chainName: string | undefined): string {
  const amount = input.amount ? `${input.amount} USDC` : `all that is left (${left} USDC)`;
  const to = input.address ? `to ${input.address}` : "through a claim link the buyer gives an address to";
  return `Refund ${amount}${chainName ? ` on ${chainName}` : ""} ${to}? Your settlement wallet pays it.`;
}
