// Whether a merchant can take real money, as a checklist (the dashboard's Home shows it; GraphQL
// `liveReadiness`): a live settlement wallet, a mainnet this service runs with its factory and a funded
// relayer, and an enabled live webhook endpoint. Each item says what is missing and who fixes it, so a
// merchant learns that live mode is not ready before a buyer does.
import { formatEther } from "ethers";
import type { EnabledChain } from "../chain/chains.js";
import type { Prisma } from "../db/client.js";
import { type RelayerBalance, relayerBalances } from "./chain-status.js";
import { LIVE_CHAIN_SETTING } from "./live-chains.js";

/** The checks, in the order a merchant works through them. */
export type LiveReadinessKey = "live_wallet" | "live_chain" | "live_webhook_endpoint";

/** One check: whether it is done, and in words what is there or what to do. */
export interface LiveReadinessItem {
  key: LiveReadinessKey;
  done: boolean;
  detail: string;
}

/** The checklist; `ready` when every item is done. */
export interface LiveReadiness {
  ready: boolean;
  items: LiveReadinessItem[];
}

/** What the chain check needs of each live chain this service runs. */
export type LiveChain = Pick<EnabledChain, "chainId" | "name" | "factory" | "nativeSymbol">;

/** The live-mode checklist of `merchantId`, given the mainnets this service runs (`ChainSet.forMode(true)`). */
export async function liveReadiness(prisma: Prisma, liveChains: readonly LiveChain[], merchantId: string): Promise<LiveReadiness> {
  const [merchant, enabledEndpoints, disabledEndpoints, balances] = await Promise.all([
    prisma.merchant.findUniqueOrThrow({ where: { id: merchantId }, select: { liveWallet: true } }),
    prisma.webhookEndpoint.count({ where: { merchantId, livemode: true, disabledAt: null } }),
    prisma.webhookEndpoint.count({ where: { merchantId, livemode: true, disabledAt: { not: null } } }),
    liveChains.length > 0 ? relayerBalances(prisma) : [],
  ]);
  const items: LiveReadinessItem[] = [
    merchant.liveWallet
      ? { key: "live_wallet", done: true, detail: `Live payments go to ${merchant.liveWallet}.` }
      : {
          key: "live_wallet",
          done: false,
          detail: "Set a live settlement wallet in Settings: until then no live charge, invoice or payment link can be made.",
        },
    chainItem(liveChains, new Map(balances.map((b) => [b.chainId, b]))),
    enabledEndpoints > 0
      ? { key: "live_webhook_endpoint", done: true, detail: `${enabledEndpoints} enabled live webhook endpoint${enabledEndpoints === 1 ? "" : "s"}.` }
      : {
          key: "live_webhook_endpoint",
          done: false,
          detail:
            disabledEndpoints > 0
              ? "Every live webhook endpoint is disabled: enable one in Developers, so your systems hear about live payments."
              : "Add a live webhook endpoint in Developers, so your systems hear about live payments.",
        },
  ];
  return { ready: items.every((i) => i.done), items };
}

/** Done when at least one mainnet has its factory and a relayer whose last checked balance is at its minimum or more. */
function chainItem(chains: readonly LiveChain[], balances: ReadonlyMap<number, RelayerBalance>): LiveReadinessItem {
  if (chains.length === 0) {
    return {
      key: "live_chain",
      done: false,
      detail: `This service runs no mainnet yet: until its operator enables one (${LIVE_CHAIN_SETTING}, and a funded relayer; .docs/going-live.md), no live charge, invoice or payment link can be made.`,
    };
  }
  const states = chains.map((c) => {
    const b = balances.get(c.chainId);
    if (!c.factory) return { ok: false, text: `${c.name}: no payment factory is configured (the operator deploys it).` };
    if (!b) return { ok: false, text: `${c.name}: the relayer's gas balance has not been checked yet (the worker checks it every minute).` };
    const has = `${formatEther(b.balance)} ${c.nativeSymbol}`;
    if (b.balance < b.minBalance) {
      return {
        ok: false,
        text: `${c.name}: the relayer ${b.relayerAddress} has ${has}, below the ${formatEther(b.minBalance)} ${c.nativeSymbol} it needs; the operator funds it.`,
      };
    }
    return { ok: true, text: `${c.name}: ready (relayer funded with ${has}).` };
  });
  return { key: "live_chain", done: states.some((s) => s.ok), detail: states.map((s) => s.text).join(" ") };
}
