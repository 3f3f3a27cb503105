// The compiled contracts (committed; `npm run contracts` rebuilds them from the .sol sources).
import artifacts from "./contracts/artifacts.json" with { type: "json" };

export const ChargeCloneArtifact = artifacts.ChargeClone;
export const ChargeFactoryArtifact = artifacts.ChargeFactory;
export const MockUSDCArtifact = artifacts.MockUSDC;
