// Every chain Stablegate knows: ids, names, native USDC (never bridged USDC.e), explorers, the
// confirmations a payment needs by default, the gas money a relayer should keep and the least USDC
// worth a payout's gas (.docs/configuration.md "Payout minimums" has the figures). A chain is
// *enabled* only once it has an RPC URL and deployed contracts (see ./config.ts); this table never
// changes at run time.
import { parseEther } from "ethers";
import { parseUnits, USDC_DECIMALS } from "../lib/money.js";

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
   * payouts at busy gas prices on that chain.
   */
  minRelayerBalance: bigint;
  /** The most a fee bump may raise maxFeePerGas to (wei): a stuck transaction waits rather than pay more. */
  maxFeePerGas: bigint;
  /** A relayer transaction unmined this long (seconds) is stuck: /readyz says degraded. */
  stuckAfterSeconds: number;
  /** Whether Multicall3 is deployed (balances are then read 500 at a time in one call). */
  multicall3: boolean;
  /** Other ERC-20s that people send by mistake: the reconciliation reports them on a charge (they can be swept). */
  watchTokens: string[];
  /**
   * USDC base units a clone must hold before money that completes no charge (late money, an expired
   * or cancelled charge's part) is paid out: a payout costs 57k gas (99k deploying the clone), which on
   * Ethereum is dollars and on a rollup a cent or two.
   */
  payoutMinAmount: bigint;
}

const gwei = (n: string) => parseUnits(n, 9);
const usdc = (n: string) => parseUnits(n, USDC_DECIMALS);

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
    maxFeePerGas: gwei("300"),
    stuckAfterSeconds: 900,
    multicall3: true,
    payoutMinAmount: usdc("5.00"),
    watchTokens: ["0xdAC17F958D2ee523a2206206994597C13D831ec7", "0x6B175474E89094C44Da98b954EedeAC495271d0F", "0xC02aaA39b223FE8D0A0e5C4F27eAD9083C756Cc2"],
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
    maxFeePerGas: gwei("10"),
    stuckAfterSeconds: 300,
    multicall3: true,
    payoutMinAmount: usdc("0.10"),
    watchTokens: ["0x4200000000000000000000000000000000000006", "0x50c5725949A6F0c72E6C4a641F24049A917DB0Cb"],
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
    maxFeePerGas: gwei("10"),
    stuckAfterSeconds: 300,
    multicall3: true,
    payoutMinAmount: usdc("0.10"),
    watchTokens: ["0x94b008aA00579c1307B0EF2c499aD98a8ce58e58", "0x4200000000000000000000000000000000000006", "0x7F5c764cBc14f9669B88837ca1490cCa17c31607"],
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
    maxFeePerGas: gwei("10"),
    stuckAfterSeconds: 300,
    multicall3: true,
    payoutMinAmount: usdc("0.10"),
    watchTokens: ["0xFd086bC7CD5C481DCC9C85ebE478A1C0b69FCbb9", "0x82aF49447D8a07e3bd95BD0d56f35241523fBab1", "0xFF970A61A04b1cA14834A43f5dE4533eBDDB5CC8"],
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
    maxFeePerGas: gwei("3000"),
    stuckAfterSeconds: 300,
    multicall3: true,
    payoutMinAmount: usdc("0.10"),
    watchTokens: ["0xc2132D05D31c914a87C6611C10748AEb04B58e8F", "0x2791Bca1f2de4661ED88A30C99A7a9449Aa84174", "0x7ceB23fD6bC0adD59E62ac25578270cFf1b9f619"],
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
    maxFeePerGas: gwei("500"),
    stuckAfterSeconds: 300,
    multicall3: true,
    payoutMinAmount: usdc("0.25"),
    watchTokens: ["0x9702230A8Ea53601f5cD2dc00fDBc13d4dF4A8c7", "0xA7D7079b0FEaD91F3e65f86E8915Cb59c1a4C664"],
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
    maxFeePerGas: gwei("500"),
    stuckAfterSeconds: 900,
    multicall3: true,
    payoutMinAmount: usdc("0.01"),
    watchTokens: [],
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
    maxFeePerGas: gwei("50"),
    stuckAfterSeconds: 600,
    multicall3: true,
    payoutMinAmount: usdc("0.01"),
    watchTokens: [],
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
    maxFeePerGas: gwei("50"),
    stuckAfterSeconds: 600,
    multicall3: true,
    payoutMinAmount: usdc("0.01"),
    watchTokens: [],
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
    maxFeePerGas: gwei("50"),
    stuckAfterSeconds: 600,
    multicall3: true,
    payoutMinAmount: usdc("0.01"),
    watchTokens: [],
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
    maxFeePerGas: gwei("3000"),
    stuckAfterSeconds: 600,
    multicall3: true,
    payoutMinAmount: usdc("0.01"),
    watchTokens: [],
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
    maxFeePerGas: gwei("500"),
    stuckAfterSeconds: 600,
    multicall3: true,
    payoutMinAmount: usdc("0.01"),
    watchTokens: [],
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
    maxFeePerGas: gwei("100"),
    stuckAfterSeconds: 120,
    multicall3: true,
    payoutMinAmount: usdc("0.01"),
    watchTokens: [],
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

/** The explorer page of a transaction on `chainId`, or null when the chain has no explorer. */
export function explorerTxUrl(chainId: number, txHash: string): string | null {
  const explorer = byId.get(chainId)?.explorer;
  return explorer ? `${explorer}/tx/${txHash}` : null;
}
