// The relayer: the one account per chain that pays gas for our transactions (it never holds
// merchants' money and no contract lets it move any). Transactions are signed here and handed back
// before they are broadcast, so the caller can store them first and, after a crash, send the very
// same transaction again instead of a second one.
import { Contract, Transaction, type TransactionReceipt, type TransactionRequest, Wallet } from "ethers";
import { ChargeCloneArtifact } from "./artifacts.js";
import type { EnabledChain } from "./chains.js";
import { ChainRpc, type ChainRpcOptions, withRpcRetry } from "./rpc.js";

/** A signed transaction, ready to broadcast. */
export interface SignedTx {
  raw: string;
  hash: string;
  nonce: number;
}

/** A replacement transaction pays at least this percentage of the fees of the one it replaces. */
const FEE_BUMP_PERCENT = 125n;

const max = (a: bigint, b: bigint) => (a > b ? a : b);

/** Signs and sends transactions from a chain's relayer key, assigning nonces in order. */
export class Relayer {
  readonly provider: ChainRpc;
  private readonly wallet: Wallet;
  private nextNonce: number | null = null;
  private queue: Promise<unknown> = Promise.resolve();
  private feeRecipientAddress: Promise<string> | null = null;

  constructor(
    readonly chain: EnabledChain,
    rpcOptions: ChainRpcOptions = {},
  ) {
    this.provider = new ChainRpc(chain.chainId, chain.rpcUrls, rpcOptions);
    this.wallet = new Wallet(chain.relayerKey, this.provider);
  }

  /** The relayer's address (it needs native gas money on the chain). */
  get address(): string {
    return this.wallet.address;
  }

  /** Signs `tx` with the next nonce and current fees; nothing is sent. */
  sign(tx: Pick<TransactionRequest, "to" | "data">): Promise<SignedTx> {
    // One signature at a time: two concurrent calls must never get the same nonce.
    const signed = this.queue.then(async () => {
      this.nextNonce ??= await withRpcRetry(() => this.provider.getTransactionCount(this.wallet.address, "pending"));
      const populated = await withRpcRetry(() => this.wallet.populateTransaction({ ...tx, nonce: this.nextNonce!, chainId: this.chain.chainId }));
      const raw = await this.wallet.signTransaction(populated);
      const nonce = this.nextNonce!;
      this.nextNonce = nonce + 1;
      return { raw, hash: Transaction.from(raw).hash!, nonce };
    });
    this.queue = signed.catch(() => {});
    return signed;
  }

  /**
   * Signs a replacement for a stuck transaction: the same nonce, call and gas limit, with fees of
   * at least 125 % of the old ones (nodes refuse a replacement under +10 %) or the current
   * network fees if those are higher. Whichever version is mined, only one can be.
   */
  async replace(raw: string): Promise<SignedTx> {
    const old = Transaction.from(raw);
    const fees = await withRpcRetry(() => this.provider.getFeeData());
    const bump = (was: bigint | null, now: bigint | null) => max(((was ?? 0n) * FEE_BUMP_PERCENT) / 100n, now ?? 0n);
    const replacement: TransactionRequest = { to: old.to, data: old.data, nonce: old.nonce, gasLimit: old.gasLimit, chainId: old.chainId, type: old.type };
    if (old.type === 2) {
      replacement.maxPriorityFeePerGas = bump(old.maxPriorityFeePerGas, fees.maxPriorityFeePerGas);
      replacement.maxFeePerGas = max(bump(old.maxFeePerGas, fees.maxFeePerGas), replacement.maxPriorityFeePerGas);
    } else {
      replacement.gasPrice = bump(old.gasPrice, fees.gasPrice);
    }
    const signed = await this.wallet.signTransaction(replacement);
    return { raw: signed, hash: Transaction.from(signed).hash!, nonce: old.nonce };
  }

  /** How many of the relayer's transactions are mined: every nonce below it is used for good. */
  minedNonce(): Promise<number> {
    return withRpcRetry(() => this.provider.getTransactionCount(this.wallet.address, "latest"));
  }

  /** The receipt of a transaction, or null while it is not mined. */
  receipt(hash: string): Promise<TransactionReceipt | null> {
    return withRpcRetry(() => this.provider.getTransactionReceipt(hash));
  }

  /** The relayer's native balance (wei): what it has left to pay gas with. */
  balance(): Promise<bigint> {
    return withRpcRetry(() => this.provider.getBalance(this.wallet.address));
  }

  /** Where every clone of this chain pays the fee (fixed in the implementation when the factory was deployed). */
  feeRecipient(): Promise<string> {
    this.feeRecipientAddress ??= withRpcRetry(
      () => new Contract(this.chain.implementation, ChargeCloneArtifact.abi, this.provider).getFunction("feeRecipient")() as Promise<string>,
    ).catch((e: unknown) => {
      this.feeRecipientAddress = null;
      throw e;
    });
    return this.feeRecipientAddress;
  }

  /** Forgets the next nonce (after a signature was thrown away unsent), so the next `sign` asks the node. */
  resetNonce(): void {
    this.nextNonce = null;
  }

  /**
   * Broadcasts a signed transaction. "Already known" counts as sent. Returns false when its nonce
   * has been used by another transaction (it can never be mined; sign a new one).
   */
  async broadcast(raw: string): Promise<boolean> {
    try {
      await withRpcRetry(() => this.provider.broadcastTransaction(raw));
      return true;
    } catch (e) {
      const message = `${(e as Error).message}`;
      if (/already known|already imported|known transaction/i.test(message)) return true;
      if (/nonce too low|nonce has already been used|NONCE_EXPIRED/i.test(message)) {
        this.nextNonce = null;
        return false;
      }
      throw e;
    }
  }

  /** Releases the RPC connection. */
  close(): void {
    this.provider.destroy();
  }
}
