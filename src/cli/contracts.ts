// `npm run contracts`: compile the Solidity sources into the committed artifacts.
// `npm run contracts:deploy -- --chain <id>`: deploy the ChargeFactory (and with it the ChargeClone
// implementation) to a real network and print the setting to add.
import { parseArgs } from "node:util";
import { ContractFactory, Wallet } from "ethers";
import { ChargeFactoryArtifact } from "../chain/artifacts.js";
import { knownChain } from "../chain/registry.js";
import { ChainRpc } from "../chain/rpc.js";
import { ConfigError, loadDeploySettings } from "../config.js";

async function deploy(chainId: number): Promise<void> {
  const info = knownChain(chainId);
  if (!info) throw new ConfigError(`Chain ${chainId} is not in the registry.`);
  const { rpcUrls, relayerKey, feeRecipient } = loadDeploySettings(chainId);
  const provider = new ChainRpc(chainId, rpcUrls);
  try {
    const wallet = new Wallet(relayerKey, provider);
    process.stdout.write(`Deploying ChargeFactory on ${info.name} (${chainId}) from ${wallet.address}; fee recipient ${feeRecipient} (fixed forever)…\n`);
    const factory = await new ContractFactory(ChargeFactoryArtifact.abi, ChargeFactoryArtifact.bytecode, wallet).deploy(feeRecipient);
    await factory.waitForDeployment();
    const address = await factory.getAddress();
    process.stdout.write(`Deployed in ${factory.deploymentTransaction()?.hash}.\nAdd to the service's environment:\n  CHAIN_${chainId}_FACTORY=${address}\n`);
  } finally {
    provider.destroy();
  }
}

async function main(argv: string[]): Promise<void> {
  const { positionals, values } = parseArgs({ args: argv, options: { chain: { type: "string" } }, allowPositionals: true });
  if (positionals[0] === "deploy") {
    const chainId = Number(values.chain);
    if (!Number.isInteger(chainId) || chainId <= 0) throw new ConfigError("Usage: npm run contracts:deploy -- --chain <chainId>");
    return deploy(chainId);
  }
  // Compiling needs the solc development dependency, so it is loaded only here.
  const { ARTIFACTS_FILE, writeArtifacts } = await import("../chain/contracts/compile.js");
  process.stdout.write(`Compiled ${writeArtifacts().join(", ")} into ${ARTIFACTS_FILE}\n`);
}

main(process.argv.slice(2)).catch((e: unknown) => {
  console.error(e instanceof ConfigError ? `Error: ${e.message}` : e);
  process.exitCode = 1;
});
