// `npm run contracts`: compile the Solidity sources into the committed artifacts.
// `npm run contracts:deploy -- --chain <id>`: deploy ChargeFactoryV2 and SubscriptionsV1 for
// FEE_RECIPIENT through the deterministic deployment proxy, so that each has the same address on
// every chain, and print the setting to add. Deploying again, or on another chain, gives the same
// addresses; a contract already there is left alone (an older deployment gains SubscriptionsV1).
import { parseArgs } from "node:util";
import { Wallet } from "ethers";
import { DETERMINISTIC_DEPLOYER, factoryV2Address, factoryV2Deployment } from "../chain/clones.js";
import { knownChain } from "../chain/registry.js";
import { ChainRpc } from "../chain/rpc.js";
import { subscriptionsAddress, subscriptionsDeployment } from "../chain/subscriptions.js";
import { ConfigError, loadDeploySettings } from "../config.js";

async function deploy(chainId: number): Promise<void> {
  const info = knownChain(chainId);
  if (!info) throw new ConfigError(`Chain ${chainId} is not in the registry.`);
  const { rpcUrls, relayerKey, feeRecipient } = loadDeploySettings(chainId);
  const provider = new ChainRpc(chainId, rpcUrls);
  try {
    if ((await provider.getCode(DETERMINISTIC_DEPLOYER)) === "0x") {
      throw new ConfigError(
        `${info.name} has no deterministic deployment proxy at ${DETERMINISTIC_DEPLOYER}; it must be deployed there first (see its repository).`,
      );
    }
    const wallet = new Wallet(relayerKey, provider);
    const where = `${info.name} (${chainId})`;
    const contracts = [
      { name: "ChargeFactoryV2", address: factoryV2Address(feeRecipient), deployment: factoryV2Deployment(feeRecipient) },
      { name: "SubscriptionsV1", address: subscriptionsAddress(feeRecipient), deployment: subscriptionsDeployment(feeRecipient) },
    ];
    for (const c of contracts) {
      if ((await provider.getCode(c.address)) !== "0x") {
        process.stdout.write(`${c.name} for fee recipient ${feeRecipient} is already on ${where} at ${c.address}.\n`);
        continue;
      }
      process.stdout.write(`Deploying ${c.name} on ${where} from ${wallet.address}; fee recipient ${feeRecipient} (fixed forever)…\n`);
      const tx = await wallet.sendTransaction(c.deployment);
      await tx.wait();
      if ((await provider.getCode(c.address)) === "0x") throw new Error(`the deployment ${tx.hash} left no code at ${c.address}`);
      process.stdout.write(`Deployed ${c.name} at ${c.address} in ${tx.hash}.\n`);
    }
    // SubscriptionsV1 needs no setting: its address follows from FEE_RECIPIENT, and the worker checks it has code.
    process.stdout.write(`Add to the service's environment (the same address on every chain):\n  CHAIN_${chainId}_FACTORY=${contracts[0]!.address}\n`);
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
