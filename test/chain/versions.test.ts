// Charges keep the contracts they were made with. A charge picked before ChargeFactoryV2 (version 1:
// its clone made by the old factory, deployed at the pick or not yet) still settles through
// CHAIN_<id>_FACTORY_V1, by deployAndFlush or its own flush; without that setting, a version 1 clone
// that never got code cannot be paid out, and the charge says so instead of burning gas.
import { Contract, getCreateAddress, parseUnits } from "ethers";
import { pino } from "pino";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ChargeFactoryV1Artifact } from "../../src/chain/artifacts.js";
import { ChainSet, type EnabledChain } from "../../src/chain/chains.js";
import { chargeKey, predictCloneV1 } from "../../src/chain/clones.js";
import { type ChainRunner, startChainRunner } from "../../src/jobs/chain-runner.js";
import { blockProducer, payoutLookedAgain, runnerPassed, startTestChain, type TestChain, waitFor } from "../helpers/chain.js";
import { POLLING, SETTINGS, startApp, type TestApp, WALLET } from "../helpers/harness.js";

const usdc = (s: string) => parseUnits(s, 6);
const logger = pino({ level: process.env.TEST_LOG ?? "silent" });

let chain: TestChain;
let app: TestApp;
let withV1: EnabledChain;
let runner: ChainRunner | null = null;
let v1Factory: string;
const { start: startProducer, stop: stopProducer } = blockProducer(() => chain.mine());

beforeAll(async () => {
  chain = await startTestChain();
  v1Factory = (await chain.deployV1()).target as string;
  withV1 = await chain.enabled(2, undefined, { factoryV1: v1Factory });
  app = await startApp(POLLING, { chains: new ChainSet([withV1]) });
  startProducer();
}, 60_000);
afterAll(async () => {
  stopProducer();
  await runner?.stop();
  await app?.stop();
  await chain?.stop();
});

function startRunner(enabled: EnabledChain) {
  runner = startChainRunner(app.db, enabled, logger, { intervalMs: 50, settings: { ...SETTINGS, feed: app.live }, bumpAfterMs: 60_000, blockedRecheckMs: 300 });
}

let seq = 0;
/** A charge as the migration leaves one picked before version 2: its clone is the old factory's. */
async function versionOneCharge(amount: string): Promise<{ id: string; clone: string }> {
  const made = (await app.call("POST", "/v1/charges", { body: { orderId: `v1-${++seq}`, amount } })).body;
  const clone = predictCloneV1({
    factory: v1Factory,
    implementation: getCreateAddress({ from: v1Factory, nonce: 1 }),
    chargeId: made.id,
    wallet: WALLET,
    feeBps: 100,
  });
  await app.db.prisma.charge.update({
    where: { id: made.id },
    data: { contractVersion: 1, chainId: withV1.chainId, confirmations: 2, cloneAddress: clone, depositAddress: clone },
  });
  return { id: made.id, clone };
}
const getCharge = async (id: string) => (await app.call("GET", `/v1/charges/${id}`)).body;

describe("version 1 charges", () => {
  it("settle through CHAIN_<id>_FACTORY_V1: deployAndFlush for a clone never deployed, the clone's own flush for one that was", async () => {
    startRunner(withV1);
    const fresh = await versionOneCharge("10");
    const deployed = await versionOneCharge("4");
    // The second was deployed at its pick, as version 1 did.
    const old = new Contract(v1Factory, ChargeFactoryV1Artifact.abi, chain.deployer);
    await (await old.getFunction("deploy")(chargeKey(deployed.id), WALLET, 100)).wait();
    expect(await chain.provider.getCode(deployed.clone)).not.toBe("0x");
    const before = await chain.balance(WALLET);
    await chain.pay(chain.wallet(3), fresh.clone, usdc("10"));
    await chain.pay(chain.wallet(3), deployed.clone, usdc("4"));
    for (const c of [fresh, deployed]) {
      await waitFor(`${c.id} completed`, async () => (await getCharge(c.id)).status === "COMPLETED");
      expect(await chain.balance(c.clone)).toBe(0n);
    }
    expect((await chain.balance(WALLET)) - before).toBe(usdc("13.86"));
    expect(await getCharge(fresh.id)).toMatchObject({ amountReceived: "10.00", netAmount: "9.90", feeAmount: "0.10" });
    expect(await chain.provider.getCode(fresh.clone)).not.toBe("0x");
    // No ChargeFactoryV2 clone was made for them.
    expect(await app.db.prisma.clone.findMany({ where: { chargeId: { in: [fresh.id, deployed.id] } }, select: { version: true } })).toEqual([
      { version: 1 },
      { version: 1 },
    ]);
    await runner!.stop();
    runner = null;
  });

  it("without CHAIN_<id>_FACTORY_V1, a version 1 clone that never got code waits as contract_unavailable, and nothing is sent", async () => {
    const { v1: _v1, ...withoutV1 } = withV1;
    startRunner(withoutV1);
    const c = await versionOneCharge("2");
    const nonce = await chain.provider.getTransactionCount(chain.deployer.address);
    await chain.pay(chain.wallet(3), c.clone, usdc("2"));
    const blocked = await waitFor("the payout blocked", async () => {
      const charge = await getCharge(c.id);
      return charge.payoutBlockedReason === "contract_unavailable" ? charge : undefined;
    });
    expect(blocked.status).toBe("RECEIVED");
    // Looked at again (every 300 ms here), and still nothing sent.
    await payoutLookedAgain(app.db.prisma, c.id, 2);
    await runnerPassed(runner!, chain.provider);
    expect(await chain.provider.getTransactionCount(chain.deployer.address)).toBe(nonce);
    expect(await chain.balance(c.clone)).toBe(usdc("2"));
    await runner!.stop();
    runner = null;
  });
});
