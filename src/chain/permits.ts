// What a subscription checkout reads from a chain: the chain's clock, the USDC EIP-2612 permit's
// typed data (the token's own EIP-712 domain and the owner's nonce), and whether a signature is a
// wallet's own, for an EOA (recovered off chain) or a contract wallet (ERC-1271, asked over RPC).
import { getAddress, Interface, type Provider, Signature, type TypedDataDomain, type TypedDataField, TypedDataEncoder, verifyTypedData } from "ethers";
import type { ChainSet } from "./chains.js";
import { ChainRpc } from "./rpc.js";

/** The EIP-712 type of a USDC permit (EIP-2612). */
export const PERMIT_TYPES: Record<string, TypedDataField[]> = {
  Permit: [
    { name: "owner", type: "address" },
    { name: "spender", type: "address" },
    { name: "value", type: "uint256" },
    { name: "nonce", type: "uint256" },
    { name: "deadline", type: "uint256" },
  ],
};

/** A permit's fields. */
export interface PermitMessage {
  owner: string;
  spender: string;
  value: bigint;
  nonce: bigint;
  deadline: bigint;
}

// ERC-1271's answer for a valid signature: the selector of isValidSignature(bytes32,bytes).
const ERC1271_MAGIC = "0x1626ba7e";

const abi = new Interface([
  "function name() view returns (string)",
  "function version() view returns (string)",
  "function nonces(address owner) view returns (uint256)",
  "function isValidSignature(bytes32 hash, bytes signature) view returns (bytes4)",
]);

/** One chain's reads for a subscription checkout. */
export class CheckoutReads {
  private domainRead: Promise<TypedDataDomain> | null = null;

  constructor(
    private readonly provider: Provider,
    readonly usdc: string,
    readonly chainId: number,
  ) {}

  /** The latest block's timestamp (Unix seconds): the clock the permission's windows run on. */
  async chainTime(): Promise<bigint> {
    const block = await this.provider.getBlock("latest");
    if (!block) throw new Error(`chain ${this.chainId} returned no latest block`);
    return BigInt(block.timestamp);
  }

  /** The token's EIP-712 domain (read once: name and version differ between chains). */
  tokenDomain(): Promise<TypedDataDomain> {
    this.domainRead ??= Promise.all([this.read(this.usdc, "name", []), this.read(this.usdc, "version", [])]).then(
      ([name, version]) => ({ name: String(name), version: String(version), chainId: this.chainId, verifyingContract: getAddress(this.usdc) }),
      (e: unknown) => {
        this.domainRead = null;
        throw e;
      },
    );
    return this.domainRead;
  }

  /** `owner`'s next permit nonce on the token. */
  async permitNonce(owner: string): Promise<bigint> {
    return BigInt((await this.read(this.usdc, "nonces", [owner])) as bigint);
  }

  /**
   * `signature` as the contract and the token will check it when it is `signer`'s over the typed data,
   * else null: a key's (tried first, as SubscriptionsV1 does, so an EIP-7702 account signs as itself)
   * in its canonical 65-byte form (v 27 or 28, also from a 64-byte compact one), which is all the
   * contract takes; a contract wallet's (ERC-1271) exactly as given.
   */
  async signedBy(
    signer: string,
    domain: TypedDataDomain,
    types: Record<string, TypedDataField[]>,
    message: Record<string, unknown>,
    signature: string,
  ): Promise<string | null> {
    try {
      if (verifyTypedData(domain, types, message, signature) === getAddress(signer)) return Signature.from(signature).serialized;
    } catch {
      // Not a key's signature: perhaps a wallet's.
    }
    if ((await this.provider.getCode(signer)) === "0x") return null;
    try {
      const answer = await this.read(signer, "isValidSignature", [TypedDataEncoder.hash(domain, types, message), signature]);
      return String(answer).toLowerCase() === ERC1271_MAGIC ? signature : null;
    } catch {
      return null;
    }
  }

  private async read(to: string, name: string, args: unknown[]): Promise<unknown> {
    const data = await this.provider.call({ to, data: abi.encodeFunctionData(name, args) });
    return abi.decodeFunctionResult(name, data)[0];
  }
}

/** Each enabled chain's CheckoutReads, made on first use; null for a chain not enabled. */
export function checkoutReaders(chains: ChainSet): (chainId: number) => CheckoutReads | null {
  const readers = new Map<number, CheckoutReads>();
  return (chainId) => {
    const chain = chains.get(chainId);
    if (!chain) return null;
    if (!readers.has(chainId)) readers.set(chainId, new CheckoutReads(new ChainRpc(chainId, chain.rpcUrls), chain.usdc, chainId));
    return readers.get(chainId)!;
  };
}
