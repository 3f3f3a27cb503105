// Where the charge's money went: the payments seen to its address, what was paid out of it, and its
// ledger rows.
import { type FragmentOf, graphql, readFragment } from "../../graphql.js";
import { Amount, Explorer, Section, Time } from "../../ui.js";
import { type ChainInfo, chainOf } from "./live.js";

export const ChargePayments = graphql(`
  fragment ChargePayments on Charge {
    id
    chainId
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
    balanceTransactions {
      id
      type
      amount
      chainId
      txHash
      reversesId
      createdAt
    }
  }
`);

type Money = FragmentOf<typeof ChargePayments>;

/** The payments seen to the charge's address. */
export function PaymentsSection(props: { charge: Money; chains: readonly ChainInfo[] }) {
  const charge = readFragment(ChargePayments, props.charge);
  const chain = chainOf(props.chains, charge.chainId);
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
export function SettlementsSection(props: { charge: Money; chains: readonly ChainInfo[] }) {
  const charge = readFragment(ChargePayments, props.charge);
  const chain = chainOf(props.chains, charge.chainId);
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

/** The charge's ledger rows, oldest first: every confirmed movement of its money, signed. */
export function LedgerSection(props: { charge: Money; chains: readonly ChainInfo[] }) {
  const rows = readFragment(ChargePayments, props.charge).balanceTransactions;
  return (
    <Section title="Ledger">
      {rows.length === 0 ? (
        <p class="muted">No confirmed money movement yet.</p>
      ) : (
        <ul class="rows">
          {rows.map((b) => {
            const on = chainOf(props.chains, b.chainId);
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
