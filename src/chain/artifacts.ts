// The compiled contracts (committed; `npm run contracts` rebuilds them from the .sol sources).
import artifacts from "./contracts/artifacts.json" with { type: "json" };

/** The current charge contracts: the factory is also the code of every counterfactual clone. */
export const ChargeFactoryV2Artifact = artifacts.ChargeFactoryV2;
/** The first charge contracts, kept so that clones made with them still settle. */
export const ChargeCloneV1Artifact = artifacts.ChargeCloneV1;
export const ChargeFactoryV1Artifact = artifacts.ChargeFactoryV1;
export const MockUSDCArtifact = artifacts.MockUSDC;
/** The devnet's stand-in for Multicall3 (the same ABI; real chains have the original). */
export const Multicall3Artifact = artifacts.Multicall3;
/** Recurring pulls under spend permissions the payers signed (subscriptions). */
export const SubscriptionsV1Artifact = artifacts.SubscriptionsV1;
