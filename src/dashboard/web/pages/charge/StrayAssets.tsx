// Other tokens, or the native coin, found at the charge's address, each with a way to sweep it to the
// merchant's wallet, and the state of its latest sweep: the charge's sweeps are in its fragment, so
// chargeUpdated (sent again with each sweep's change) keeps them live.
import { useMutation } from "@urql/preact";
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
    sweeps {
      id
      chainId
      token
      status
      txHash
      error
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

/** Decimals of a chain's native coin (ether and the like). */
const NATIVE_DECIMALS = 18;

type Charge = ResultOf<typeof ChargeStrayAssets>;
type StrayAsset = Charge["strayAssets"][number];
type SweepState = Pick<Charge["sweeps"][number], "id" | "status" | "txHash" | "error">;

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
          <StrayAssetRow key={`${a.chainId}:${a.token}`} chargeId={charge.id} asset={a} sweeps={charge.sweeps} chain={chainOf(props.chains, a.chainId)} />
        ))}
      </ul>
    </Section>
  );
}

/** One asset, its latest sweep's state, and Sweep to wallet (again, after a failure). */
function StrayAssetRow(props: { chargeId: string; asset: StrayAsset; sweeps: Charge["sweeps"]; chain: ChainInfo | undefined }) {
  const { chargeId, asset, chain } = props;
  const [swept, sweep] = useMutation(SweepCharge);
  const asked = swept.data?.sweepCharge;
  // The charge's sweeps are newest first. The mutation's answer stands in for its sweep until the
  // charge, sent again, lists it: from then on the list has the live state.
  const latest = props.sweeps.find((s) => s.chainId === asset.chainId && s.token === asset.token);
  const state: SweepState | undefined = asked && !props.sweeps.some((s) => s.id === asked.id) ? asked : latest;
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
      <ErrorNote error={swept.error} />
    </li>
  );
}
