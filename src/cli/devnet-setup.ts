// `stablegate devnet setup --rpc URL --out FILE`: makes an anvil that runs elsewhere (the devnet
// profile of docker-compose.yml) a devnet, and writes the chain settings the API and worker
// processes load from FILE. With --if-present, an RPC host that does not exist means this deployment
// has no devnet: nothing to do.
import { writeFileSync } from "node:fs";
import { Wallet } from "ethers";
import { DEVNET_CHAIN_ID } from "../chain/anvil.js";
import { DEVNET_KEYS, setUpDevnet, writeDevnetInfo } from "../chain/devnet.js";
import type { Config } from "../config.js";

/** Sets up the devnet at `rpcUrl` and writes its settings to `out`; returns what to print. */
export async function setUpDevnetAt(config: Config, rpcUrl: string, out: string, options: { waitSeconds: number; ifPresent: boolean }): Promise<string> {
  const reachable = await waitForRpc(rpcUrl, options.waitSeconds * 1000);
  if (reachable === "no such host") {
    if (options.ifPresent) return `No devnet in this deployment (${new URL(rpcUrl).hostname} does not resolve); nothing to set up.`;
    throw new Error(`${rpcUrl}: no such host`);
  }
  if (reachable !== "up") throw new Error(`${rpcUrl} did not answer within ${options.waitSeconds} s (${reachable})`);
  const feeRecipient = config.feeRecipient ?? new Wallet(DEVNET_KEYS.feeRecipient).address;
  const info = await setUpDevnet(rpcUrl, feeRecipient);
  writeDevnetInfo(config.dataDir, info);
  const settings = {
    [`CHAIN_${DEVNET_CHAIN_ID}_RPC_URL`]: rpcUrl,
    [`CHAIN_${DEVNET_CHAIN_ID}_FACTORY`]: info.factory,
    ...(info.factoryV1 && { [`CHAIN_${DEVNET_CHAIN_ID}_FACTORY_V1`]: info.factoryV1 }),
    [`CHAIN_${DEVNET_CHAIN_ID}_USDC`]: info.usdc,
    [`CHAIN_${DEVNET_CHAIN_ID}_CONFIRMATIONS`]: "1",
    // Anvil's public development key: worthless anywhere but this devnet.
    [`CHAIN_${DEVNET_CHAIN_ID}_RELAYER_KEY`]: DEVNET_KEYS.relayer,
    FEE_RECIPIENT: feeRecipient,
  };
  writeFileSync(
    out,
    `${Object.entries(settings)
      .map(([k, v]) => `${k}=${v}`)
      .join("\n")}\n`,
  );
  return `Devnet ready at ${rpcUrl}: USDC ${info.usdc}, factory ${info.factory}; settings written to ${out}.`;
}

/** Polls `eth_chainId` until it answers: "up", "no such host", or the last failure when time ran out. */
async function waitForRpc(rpcUrl: string, waitMs: number): Promise<string> {
  const deadline = Date.now() + waitMs;
  let last = "no answer";
  for (;;) {
    try {
      const res = await fetch(rpcUrl, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "eth_chainId", params: [] }),
        signal: AbortSignal.timeout(2_000),
      });
      if (res.ok) return "up";
      last = `HTTP ${res.status}`;
    } catch (e) {
      const code = (e as { cause?: { code?: string } }).cause?.code;
      if (code === "ENOTFOUND") return "no such host";
      last = code ?? String(e);
    }
    if (Date.now() > deadline) return last;
    await new Promise((r) => setTimeout(r, 500));
  }
}
