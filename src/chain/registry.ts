// Every chain Stablegate knows: ids, names, native USDC (never bridged USDC.e), explorers, the
// confirmations a payment needs by default and the gas money a relayer should keep. A chain is
// *enabled* only once it has an RPC URL and deployed contracts (see ./config.ts); this table never
// changes at run time.
import { parseEther } from "ethers";

/** A chain in the registry. */
export interface ChainInfo {
  chainId: number;
  name: string;
  /** Mainnets serve live mode; testnets and the devnet serve test mode. */
  testnet: boolean;
  /** Circle's native USDC (6 decimals); on the devnet, Circle's contracts are deployed at start instead. */
  usdc: string | null;
  /** Block explorer base URL (no trailing slash); null when there is none (devnet). */
  explorer: string | null;
  /** Blocks on top of a payment's block before it counts. */
  confirmations: number;
  /** The native token that pays gas. */
  nativeSymbol: string;
  /**
   * Below this relayer balance (wei) the service says it needs funds: enough for a day or so of
   * deployments and payouts at busy gas prices on that chain.
   */
  minRelayerBalance: bigint;
}

const chains: ChainInfo[] = [
  {
    chainId: 1,
    name: "Ethereum",
    testnet: false,
    usdc: "0xA0b86991c6218b36c1d19D4a2e9Eb0cE3606eB48",
    explorer: "https://etherscan.io",
    confirmations: 12,
    nativeSymbol: "ETH",
    minRelayerBalance: parseEther("0.05"),
  },
  {
    chainId: 8453,
    name: "Base",
    testnet: false,
    usdc: "0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913",
    explorer: "https://basescan.org",
    confirmations: 20,
    nativeSymbol: "ETH",
    minRelayerBalance: parseEther("0.005"),
  },
  {
    chainId: 10,
    name: "OP Mainnet",
    testnet: false,
    usdc: "0x0b2C639c533813f4Aa9D7837CAf62653d097Ff85",
    explorer: "https://optimistic.etherscan.io",
    confirmations: 20,
    nativeSymbol: "ETH",
    minRelayerBalance: parseEther("0.005"),
  },
  {
    chainId: 42161,
    name: "Arbitrum One",
    testnet: false,
    usdc: "0xaf88d065e77c8cC2239327C5EDb3A432268e5831",
    explorer: "https://arbiscan.io",
    confirmations: 20,
    nativeSymbol: "ETH",
    minRelayerBalance: parseEther("0.005"),
  },
  {
    chainId: 137,
    name: "Polygon",
    testnet: false,
    usdc: "0x3c499c542cEF5E3811e1192ce70d8cC03d5c3359",
    explorer: "https://polygonscan.com",
    confirmations: 64,
    nativeSymbol: "POL",
    minRelayerBalance: parseEther("10"),
  },
  {
    chainId: 43114,
    name: "Avalanche C-Chain",
    testnet: false,
    usdc: "0xB97EF9Ef8734C71904D8002F8b6Bc66Dd9c48a6E",
    explorer: "https://snowtrace.io",
    confirmations: 12,
    nativeSymbol: "AVAX",
    minRelayerBalance: parseEther("0.5"),
  },
  {
    chainId: 11155111,
    name: "Sepolia",
    testnet: true,
    usdc: "0x1c7D4B196Cb0C7B01d743Fbc6116a902379C7238",
    explorer: "https://sepolia.etherscan.io",
    confirmations: 3,
    nativeSymbol: "ETH",
    minRelayerBalance: parseEther("0.05"),
  },
  {
    chainId: 84532,
    name: "Base Sepolia",
    testnet: true,
    usdc: "0x036CbD53842c5426634e7929541eC2318f3dCF7e",
    explorer: "https://sepolia.basescan.org",
    confirmations: 3,
    nativeSymbol: "ETH",
    minRelayerBalance: parseEther("0.005"),
  },
  {
    chainId: 11155420,
    name: "OP Sepolia",
    testnet: true,
    usdc: "0x5fd84259d66Cd46123540766Be93DFE6D43130D7",
    explorer: "https://sepolia-optimism.etherscan.io",
    confirmations: 3,
    nativeSymbol: "ETH",
    minRelayerBalance: parseEther("0.005"),
  },
  {
    chainId: 421614,
    name: "Arbitrum Sepolia",
    testnet: true,
    usdc: "0x75faf114eafb1BDbe2F0316DF893fd58CE46AA4d",
    explorer: "https://sepolia.arbiscan.io",
    confirmations: 3,
    nativeSymbol: "ETH",
    minRelayerBalance: parseEther("0.005"),
  },
  {
    chainId: 80002,
    name: "Polygon Amoy",
    testnet: true,
    usdc: "0x41E94Eb019C0762f9Bfcf9Fb1E58725BfB0e7582",
    explorer: "https://amoy.polygonscan.com",
    confirmations: 5,
    nativeSymbol: "POL",
    minRelayerBalance: parseEther("1"),
  },
  {
    chainId: 43113,
    name: "Avalanche Fuji",
    testnet: true,
    usdc: "0x5425890298aed601595a70AB815c96711a31Bc65",
    explorer: "https://testnet.snowtrace.io",
    confirmations: 3,
    nativeSymbol: "AVAX",
    minRelayerBalance: parseEther("0.5"),
  },
  {
    chainId: 31337,
    name: "Local devnet",
    testnet: true,
    usdc: null,
    explorer: null,
    confirmations: 1,
    nativeSymbol: "ETH",
    minRelayerBalance: parseEther("1"),
  },
];

const byId = new Map(chains.map((c) => [c.chainId, c]));

/** The registry entry of `chainId`, or undefined for a chain Stablegate does not know. */
export function knownChain(chainId: number): ChainInfo | undefined {
  return byId.get(chainId);
}

/** Every known chain, mainnets first. */
export function knownChains(): readonly ChainInfo[] {
  return chains;
}

/** The explorer page of an address on `chainId`, or null when the chain has no explorer. */
export function explorerAddressUrl(chainId: number, address: string): string | null {
  const explorer = byId.get(chainId)?.explorer;
  return explorer ? `${explorer}/address/${address}` : null;
}
