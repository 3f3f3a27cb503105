// Other tokens, or the native coin, found at the charge's address, each with a way to sweep it to the
// merchant's wallet.
import { useMutation, useQuery } from "@urql/preact";
import { useEffect } from "preact/hooks";
import { formatUnits } from "../../../../lib/money.js";
import { type FragmentOf, graphql, readFragment, type ResultOf } from "../../graphql.js";
import { Confirm, ErrorNote, Explorer, Section, Status } from "../../ui.js";
import { type ChainInfo, chainOf } from "./live.js";

export const ChargeStrayAssets = graphql(`
  fragment ChargeStrayAssets on Charge {
    id
    strayAssets {
      chainId
      token
      amount
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

/** Decimals of a chain's native coin (ether and the like). */
const NATIVE_DECIMALS = 18;

/**
 * How often a sweep under way is read again. Nothing announces a sweep's progress (it records no
 * event and changes no charge), so this is the one thing on the page still read on a timer.
 */
const SWEEP_POLL_MS = 3000;

type StrayAsset = ResultOf<typeof ChargeStrayAssets>["strayAssets"][number];

/** The assets besides USDC at the charge's address, or nothing when there are none. */
export function StrayAssetsSection(props: { charge: FragmentOf<typeof ChargeStrayAssets>; chains: readonly ChainInfo[] }) {
  const charge = readFragment(ChargeStrayAssets, props.charge);
  if (charge.strayAssets.length === 0) return null;
  return (
    <Section title="Other assets at this address">
      <p class="muted">
        Found at this charge's address besides USDC: not part of the charge. A sweep pays them to your wallet, less the fee, once the service sends it.
      </p>
      <ul class="rows">
        {charge.strayAssets.map((a) => (
          <StrayAssetRow key={`${a.chainId}:${a.token}`} chargeId={charge.id} asset={a} chain={chainOf(props.chains, a.chainId)} />
        ))}
      </ul>
    </Section>
  );
}

/** One asset, its sweep's state once asked for, and Sweep to wallet (again, after a failure). */
function StrayAssetRow({ chargeId, asset, chain }: { chargeId: string; asset: StrayAsset; chain: ChainInfo | undefined }) {
  const [swept, sweep] = useMutation(SweepCharge);
  const id = swept.data?.sweepCharge.id;
  const [{ data, error }, refetch] = useQuery({ query: SweepQuery, variables: { id: id ?? "" }, pause: !id });
  const state = data?.sweep.id === id ? data?.sweep : swept.data?.sweepCharge;
  const over = state?.status === "DONE" || state?.status === "FAILED";
  useEffect(() => {
    if (!id || over) return;
    const timer = setInterval(() => refetch({ requestPolicy: "network-only" }), SWEEP_POLL_MS);
    return () => clearInterval(timer);
  }, [id, over]);
  const native = asset.token === "native";
  return (
    <li data-stray={asset.token}>
      {native ? "Native coin" : <Explorer base={chain?.explorerUrl} kind="address" value={asset.token} />} ·{" "}
      {native ? formatUnits(BigInt(asset.amount), NATIVE_DECIMALS) : `${asset.amount} base units`} · {chain?.name ?? `chain ${asset.chainId}`}{" "}
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
