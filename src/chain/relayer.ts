// The relayer: the one account per chain that pays gas for our transactions (it never holds
// merchants' money and no contract lets it move any). Transactions are signed here and handed back
// before they are broadcast, so the caller can store them first and, after a crash, send the very
// same transaction again instead of a second one.
//
// Invariants: nonces are handed out one at a time, in order, from the node's count of the relayer's
// transactions (re-read whenever one was thrown away, refused as used, or a reorg happened); no
// transaction, first or bump, offers more than the chain's maxFeePerGas ceiling.
import { type AccessList, type FeeData, Transaction, type TransactionReceipt, type TransactionRequest, Wallet } from "ethers";
import type { EnabledChain } from "./chains.js";
import { ChainRpc, type ChainRpcOptions, withRpcRetry } from "./rpc.js";

/** A signed transaction, ready to broadcast. */
export interface SignedTx {
  raw: string;
  hash: string;
  nonce: number;
}

/**
 * How long one fee quote serves new transactions. A quote offers twice the base fee (ethers'
 * getFeeData), which a base fee cannot outgrow in a second; a batch of transactions then costs one
 * quote, not three calls each. Replacements always ask afresh.
 */
const FEE_QUOTE_MS = 1_000;

/** A replacement transaction pays at least this percentage of the fees of the one it replaces. */
const FEE_BUMP_PERCENT = 125n;

/**
 * The gas limit a transaction is sent with, from what its simulation needed: a quarter more and 30k.
 * An estimate is the least gas with which the call does not revert as the chain is now; between the
 * estimate and inclusion anyone may change what the call touches (deploy a clone it would create,
 * move a balance it reads), and a limit cut to the estimate turns that into a revert the relayer
 * pays for. Unused gas costs nothing, so the headroom is free unless it is needed.
 */
export function gasWithHeadroom(needed: bigint): bigint {
  return needed + needed / 4n + 30_000n;
}

const max = (a: bigint, b: bigint) => (a > b ? a : b);
const min = (a: bigint, b: bigint) => (a < b ? a : b);

/** Signs and sends transactions from a chain's relayer key, assigning nonces in order. */
export class Relayer {
  readonly provider: ChainRpc;
  private readonly wallet: Wallet;
  private nextNonce: number | null = null;
  private queue: Promise<unknown> = Promise.resolve();
  private feeQuote: { at: number; fees: Promise<FeeData> } | null = null;

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

  /**
   * Signs `tx` with the next nonce, current fees (capped at the chain's ceiling) and the gas it needs
   * (`gasNeeded`, or the node's estimate) plus headroom (gasWithHeadroom); nothing is sent.
   * An access list pre-warms what the call touches (a payout saves about 800 gas with one).
   */
  sign(tx: Pick<TransactionRequest, "to" | "data" | "accessList">, options: { gasNeeded?: bigint } = {}): Promise<SignedTx> {
    // One signature at a time: two concurrent calls must never get the same nonce.
    const signed = this.queue.then(async () => {
      this.nextNonce ??= await withRpcRetry(() => this.provider.getTransactionCount(this.wallet.address, "pending"));
      const needed = options.gasNeeded ?? (await withRpcRetry(() => this.wallet.estimateGas({ ...tx, chainId: this.chain.chainId })));
      const fees = feeFields(await this.fees());
      const request = { ...tx, ...fees, nonce: this.nextNonce!, chainId: this.chain.chainId, gasLimit: gasWithHeadroom(needed) };
      const populated = await withRpcRetry(() => this.wallet.populateTransaction(request));
      const raw = await this.wallet.signTransaction(this.capped(populated));
      const nonce = this.nextNonce!;
      this.nextNonce = nonce + 1;
      return { raw, hash: Transaction.from(raw).hash!, nonce };
    });
    this.queue = signed.catch(() => {});
    return signed;
  }

  /**
   * Signs a transaction that does nothing (no value, to the relayer itself) at `nonce`: it fills a
   * gap below our open transactions, which the chain would otherwise never mine.
   */
  async fill(nonce: number): Promise<SignedTx> {
    const populated = await withRpcRetry(() => this.wallet.populateTransaction({ to: this.wallet.address, value: 0n, nonce, chainId: this.chain.chainId }));
    const raw = await this.wallet.signTransaction(this.capped(populated));
    return { raw, hash: Transaction.from(raw).hash!, nonce };
  }

  /**
   * The access list of `call` as the node computes it, without what it already makes warm (the
   * called contract, and `created`: addresses the call creates); null when the node cannot say.
   */
  async accessList(call: Pick<TransactionRequest, "to" | "data">, created: readonly string[] = []): Promise<AccessList | null> {
    const skip = new Set([String(call.to), ...created].map((a) => a.toLowerCase()));
    try {
      const result = (await withRpcRetry(() =>
        this.provider.send("eth_createAccessList", [{ from: this.wallet.address, to: call.to, data: call.data }, "latest"]),
      )) as {
        accessList?: AccessList;
        error?: string;
      };
      if (!result?.accessList || result.error) return null;
      return result.accessList.filter((e) => !skip.has(e.address.toLowerCase()));
    } catch {
      return null;
    }
  }

  /**
   * Signs a replacement for a stuck transaction: the same nonce, call, access list and gas limit,
   * with fees of at least 125 % of the old ones (nodes refuse a replacement under +10 %) or the
   * current network fees if those are higher, never above the chain's ceiling. Whichever version is
   * mined, only one can be. Null when the old one already offers the ceiling: it waits as it is.
   */
  async replace(raw: string): Promise<SignedTx | null> {
    const old = Transaction.from(raw);
    const ceiling = this.chain.maxFeePerGas;
    if ((old.type === 2 ? old.maxFeePerGas : old.gasPrice)! >= ceiling) return null;
    const fees = await withRpcRetry(() => this.provider.getFeeData());
    const bump = (was: bigint | null, now: bigint | null) => min(max(((was ?? 0n) * FEE_BUMP_PERCENT) / 100n, now ?? 0n), ceiling);
    const replacement: TransactionRequest = {
      to: old.to,
      data: old.data,
      nonce: old.nonce,
      gasLimit: old.gasLimit,
      chainId: old.chainId,
      type: old.type,
      ...(old.accessList && { accessList: old.accessList }),
    };
    if (old.type === 2) {
      replacement.maxFeePerGas = bump(old.maxFeePerGas, fees.maxFeePerGas);
      replacement.maxPriorityFeePerGas = min(bump(old.maxPriorityFeePerGas, fees.maxPriorityFeePerGas), replacement.maxFeePerGas);
    } else {
      replacement.gasPrice = bump(old.gasPrice, fees.gasPrice);
    }
    const signed = await this.wallet.signTransaction(replacement);
    return { raw: signed, hash: Transaction.from(signed).hash!, nonce: old.nonce };
  }

  /** The network's fees, quoted at most once per FEE_QUOTE_MS (a failed quote is not kept). */
  private fees(): Promise<FeeData> {
    const now = Date.now();
    if (this.feeQuote && now - this.feeQuote.at < FEE_QUOTE_MS) return this.feeQuote.fees;
    const fees = withRpcRetry(() => this.provider.getFeeData());
    const quote = { at: now, fees };
    this.feeQuote = quote;
    fees.catch(() => {
      if (this.feeQuote === quote) this.feeQuote = null;
    });
    return fees;
  }

  /** `tx` with its fees held at the chain's ceiling. */
  private capped(tx: TransactionRequest): TransactionRequest {
    const ceiling = this.chain.maxFeePerGas;
    if (tx.maxFeePerGas != null) {
      const maxFee = min(BigInt(tx.maxFeePerGas), ceiling);
      return { ...tx, maxFeePerGas: maxFee, maxPriorityFeePerGas: min(BigInt(tx.maxPriorityFeePerGas ?? 0n), maxFee) };
    }
    return tx.gasPrice == null ? tx : { ...tx, gasPrice: min(BigInt(tx.gasPrice), ceiling) };
  }

  /** How many of the relayer's transactions are mined: every nonce below it is used (until a reorg). */
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

  /** The next nonce this relayer would sign with, or null when it will ask the node first. */
  get cachedNonce(): number | null {
    return this.nextNonce;
  }

  /** Forgets the next nonce (a signature thrown away unsent, a gap, a reorg), so the next `sign` asks the node. */
  resetNonce(): void {
    this.nextNonce = null;
  }

  /**
   * Broadcasts a signed transaction. "Already known" counts as sent. Returns false when its nonce
   * has been used by another transaction (it can never be mined; sign a new one).
   */
  async broadcast(raw: string): Promise<boolean> {
    try {
      // Sent as is: ethers' broadcastTransaction would also ask for the block number.
      await withRpcRetry(() => this.provider.send("eth_sendRawTransaction", [raw]));
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

/** The fee fields of a transaction from a quote, as ethers would fill them: EIP-1559 where the chain has a base fee. */
function feeFields(fees: FeeData): Pick<TransactionRequest, "gasPrice" | "maxFeePerGas" | "maxPriorityFeePerGas"> {
  if (fees.maxFeePerGas !== null && fees.maxPriorityFeePerGas !== null)
    return { maxFeePerGas: fees.maxFeePerGas, maxPriorityFeePerGas: fees.maxPriorityFeePerGas };
  return { gasPrice: fees.gasPrice };
}
