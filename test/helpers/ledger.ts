// Ledger rows without a node: transfers in made-up blocks, matched and recorded by the indexer's own
// code (domain/chain-transfers.ts) and confirmed by confirmChainMoney, so every row is one the real
// posting code wrote.
import { formatUnits, getAddress, parseUnits } from "ethers";
import { expect } from "vitest";
import { matchTransfers, recordSeenTransfers, type SeenTransfer } from "../../src/domain/chain-transfers.js";
import { confirmChainMoney } from "../../src/domain/payments.js";
import { SETTINGS, type TestApp, WALLET } from "./harness.js";

/** A chain's history as the indexer would read it: transactions of USDC transfers, one per new block. */
export class ChainHistory {
  private block: bigint;
  private tx = 0;

  constructor(
    private readonly app: TestApp,
    readonly chainId: number,
    private readonly testnet = true,
    firstBlock = 100n,
  ) {
    this.block = firstBlock;
  }

  /** One transaction of USDC transfers in a new block, matched and recorded SEEN as the indexer does; its hash. */
  async sees(...transfers: { from: string; to: string; amount: string }[]): Promise<string> {
    const blockNumber = ++this.block;
    const txHash = `0x${(this.chainId * 1_000_000 + ++this.tx).toString(16).padStart(64, "0")}`;
    const seen: SeenTransfer[] = transfers.map((t, logIndex) => ({
      txHash,
      logIndex,
      blockNumber,
      blockHash: `0x${blockNumber.toString(16).padStart(64, "a")}`,
      blockTime: null,
      from: t.from,
      to: t.to,
      amount: parseUnits(t.amount, 6),
    }));
    await this.app.db.prisma.$transaction(async (tx) => {
      const observations = await matchTransfers(tx, { chainId: this.chainId, testnet: this.testnet }, seen, []);
      expect(observations).toHaveLength(transfers.length);
      await recordSeenTransfers(tx, this.chainId, observations, []);
    });
    return txHash;
  }

  /** The clone at `address` pays `amount` out in one transaction: 1% to `feeRecipient`, the rest to the merchant's wallet. */
  paysOut(address: string, amount: string, feeRecipient: string): Promise<string> {
    const total = parseUnits(amount, 6);
    const fee = total / 100n;
    return this.sees({ from: address, to: WALLET, amount: formatUnits(total - fee, 6) }, { from: address, to: feeRecipient, amount: formatUnits(fee, 6) });
  }

  /** Confirms everything seen so far on this chain, at `now` (the rows' createdAt). */
  async confirm(now: Date): Promise<void> {
    await confirmChainMoney(this.app.db.prisma, { ...SETTINGS, feed: this.app.live }, { chainId: this.chainId, confirmations: 1 }, this.block, now);
  }
}

let counter = 0;
/** A charge of `key`'s merchant and mode whose buyer picked `chainId`, at an address of its own. */
export async function chargeOn(app: TestApp, key: string, chainId: number, amount: string): Promise<{ id: string; address: string }> {
  const res = await app.call("POST", "/v1/charges", { key, body: { orderId: `ledger-${++counter}-${Date.now()}`, amount } });
  expect(res.status, res.text).toBe(201);
  const address = getAddress(`0x${(0xc0de0000 + counter).toString(16).padStart(40, "0")}`);
  await app.db.prisma.charge.update({ where: { id: res.body.id }, data: { chainId, confirmations: 1, depositAddress: address, cloneAddress: address } });
  return { id: res.body.id, address };
}
