// EIP-3009 on Circle's USDC: the typed data a wallet signs for `transferWithAuthorization`, the call
// that carries a signed one, and what the token says about it (its EIP-712 domain, whether a nonce is
// used, the signer's balance, whether the call would succeed). Read from the token itself: name and
// version differ between chains.
import { type Provider, Interface, verifyTypedData } from "ethers";
import { TRANSFER_WITH_AUTHORIZATION_TYPES } from "../lib/eip3009.js";
import type { ChainSet } from "./chains.js";
import { holding } from "./holdings.js";
import { ChainRpc } from "./rpc.js";

/** A signed transferWithAuthorization, as the wallet signed it. */
export interface TransferAuthorization {
  from: string;
  to: string;
  value: bigint;
  validAfter: bigint;
  validBefore: bigint;
  /** 32 bytes, hex. */
  nonce: string;
  /** 65 bytes, hex. */
  signature: string;
}

const token = new Interface([
  "function name() view returns (string)",
  "function version() view returns (string)",
  "function authorizationState(address authorizer, bytes32 nonce) view returns (bool)",
  "function balanceOf(address account) view returns (uint256)",
  "function transferWithAuthorization(address from, address to, uint256 value, uint256 validAfter, uint256 validBefore, bytes32 nonce, bytes signature)",
]);

/** The token's EIP-712 domain. */
export interface TokenDomain {
  name: string;
  version: string;
  chainId: number;
  verifyingContract: string;
}

/** The call that carries `a` to the token (anyone may send it; the relayer pays the gas). */
export function transferWithAuthorizationCall(usdc: string, a: TransferAuthorization): { to: string; data: string } {
  return {
    to: usdc,
    data: token.encodeFunctionData("transferWithAuthorization", [a.from, a.to, a.value, a.validAfter, a.validBefore, a.nonce, a.signature]),
  };
}

/** The address that signed `a` under `domain` (not necessarily `a.from`: compare). */
export function authorizationSigner(domain: TokenDomain, a: TransferAuthorization): string {
  const message = { from: a.from, to: a.to, value: a.value, validAfter: a.validAfter, validBefore: a.validBefore, nonce: a.nonce };
  return verifyTypedData(domain, TRANSFER_WITH_AUTHORIZATION_TYPES, message, a.signature);
}

/** What one chain's USDC says about authorizations, read over `provider`. */
export class UsdcAuthorizations {
  private domainRead: Promise<TokenDomain> | null = null;

  constructor(
    private readonly provider: Provider,
    readonly usdc: string,
    readonly chainId: number,
  ) {}

  /** The token's EIP-712 domain (read once). */
  domain(): Promise<TokenDomain> {
    this.domainRead ??= Promise.all([this.read("name", []), this.read("version", [])]).then(
      ([name, version]) => ({ name: String(name), version: String(version), chainId: this.chainId, verifyingContract: this.usdc }),
      (e: unknown) => {
        this.domainRead = null;
        throw e;
      },
    );
    return this.domainRead;
  }

  /** Whether the token has already used (or cancelled) `nonce` of `from`. */
  async used(from: string, nonce: string): Promise<boolean> {
    return Boolean(await this.read("authorizationState", [from, nonce]));
  }

  /** `from`'s USDC balance in base units. */
  async balance(from: string): Promise<bigint> {
    return BigInt((await this.read("balanceOf", [from])) as bigint);
  }

  /**
   * `holder`'s balance of any `asset` (an ERC-20 address, or "native" for the chain's coin): what a sweep
   * of it would move; UNREADABLE_BALANCE when the token will not tell (chain/holdings.ts).
   */
  holding(asset: string, holder: string): Promise<bigint> {
    return holding(this.provider, asset, holder);
  }

  /** Why sending `a` now would revert, or null when it would succeed. */
  async refusal(a: TransferAuthorization): Promise<string | null> {
    try {
      await this.provider.call(transferWithAuthorizationCall(this.usdc, a));
      return null;
    } catch (e) {
      return whyRefused(e);
    }
  }

  /** The gas sending `a` takes now, or why it would revert: one simulation for both. */
  async simulate(a: TransferAuthorization): Promise<{ gas: bigint } | { refusal: string }> {
    try {
      return { gas: await this.gas(a) };
    } catch (e) {
      return { refusal: whyRefused(e) };
    }
  }

  /** The gas sending `a` takes now (throws when it would revert). */
  async gas(a: TransferAuthorization): Promise<bigint> {
    return this.provider.estimateGas(transferWithAuthorizationCall(this.usdc, a));
  }

  private async read(name: string, args: unknown[]): Promise<unknown> {
    const data = await this.provider.call({ to: this.usdc, data: token.encodeFunctionData(name, args) });
    return token.decodeFunctionResult(name, data)[0];
  }
}

/** The reason a simulation's error gives (the token's revert reason where there is one). */
function whyRefused(e: unknown): string {
  return (e as { shortMessage?: string; reason?: string }).reason ?? (e as { shortMessage?: string }).shortMessage ?? (e as Error).message;
}

/** Each enabled chain's UsdcAuthorizations, made on first use (the token's domain is then read once); null for a chain not enabled. */
export function authorizationReaders(chains: ChainSet): (chainId: number) => UsdcAuthorizations | null {
  const readers = new Map<number, UsdcAuthorizations>();
  return (chainId) => {
    const chain = chains.get(chainId);
    if (!chain) return null;
    if (!readers.has(chainId)) readers.set(chainId, new UsdcAuthorizations(new ChainRpc(chainId, chain.rpcUrls), chain.usdc, chainId));
    return readers.get(chainId)!;
  };
}
