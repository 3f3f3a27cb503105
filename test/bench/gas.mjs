// `npm run bench` (part 2): gas of the charge contracts on anvil with Circle's USDC (FiatToken v2.2
// behind its proxy, as on every real chain), as whole transactions. Prints one JSON line.
//
// ChargeFactoryV2, as the service uses it: a pick sends nothing, and the payout that first pays a
// charge out deploys its clone in the same transaction, batched. Each payout is signed and sent by
// the service's own Relayer (with the access list it adds). `paidChargePerClone` is the gas per paid
// charge including its deployment, alone and in batches of 10 and 50; `abandonedCharge` is what the
// relayer spent on a charge that was picked and never paid. Version 1's contracts (deployAndFlush,
// deployMany + flushMany) run in the same process as the baseline. Anchors: OpenZeppelin CREATE2 clone
// 64.6k, BitGo forwarder 88k (70k batched), a plain USDC transfer. A buyer's payment to a clone both
// ways: a transfer the buyer sends, and a payment without gas (EIP-3009, sent by the relayer).
// `frontRunningStranger`: a batch of 50 paid out as the service sends it (gas for every creation to
// collide, plus the relayer's headroom), with automine off, once alone and once with a stranger who
// deploys K=2 of its clones into the same block ahead of it (a higher tip) after our estimate: relayer
// gas per paid charge both ways, in the same run; `bareEstimate` is the same attack on a batch sent at
// exactly its estimate (what the service did before issue 41): it reverts, and the relayer pays.
// `subscription`: SubscriptionsV1 on the same token: the checkout's subscribe() (permit, permission
// and first pull in one transaction), a renewal pull (merchant and fee recipient already holding
// USDC: the steady state; goal 70k, which two FiatToken transfers alone nearly use up) and a revoke.
import { Contract, ContractFactory, hexlify, id, JsonRpcProvider, parseEther, randomBytes, Wallet } from "ethers";
import { startAnvil } from "../../dist/chain/anvil.js";
import { ChargeCloneV1Artifact, ChargeFactoryV1Artifact, ChargeFactoryV2Artifact } from "../../dist/chain/artifacts.js";
import { chargeKey, payoutWords, predictCloneV2 } from "../../dist/chain/clones.js";
import { deployFactoryV2, deploySubscriptionsV1 } from "../../dist/chain/devnet.js";
import { SubscriptionsV1Artifact } from "../../dist/chain/artifacts.js";
import { permissionTuple, permissionTypedData, subscriptionSalt, UNTIL_REVOKED } from "../../dist/chain/subscriptions.js";
import { Relayer } from "../../dist/chain/relayer.js";
import { payoutGasNeeded } from "../../dist/jobs/payouts.js";
import { circleUsdc, deployCircleUsdc } from "../../dist/chain/usdc.js";
import { benchChain } from "./kit.mjs";

const KEYS = {
  relayer: "0xac0974bec39a17e36ba4a6b4d238ff944bacb478cbed5efcae784d7bf4f2ff80",
  issuer: "0xdbda1821b80551c9d65939329250298aa3472ba22feea921c0cf5d620ea67b97",
  admin: "0x2a871d0798f97d79848a013d4936a73bf4cc922c825d33c1cf7073dff6d409c6",
  v1: "0x4bbbf85ce3377467afe5d46f804f221813b2bb87f24d81f60f1fcdbf7cbf4356",
};
const FEE_BPS = 100;
const PAID = 25_000_000n;

const anvil = await startAnvil();
let relayer;
try {
  const provider = new JsonRpcProvider(anvil.url, anvil.chainId, { staticNetwork: true, cacheTimeout: -1 });
  provider.pollingInterval = 20;
  const deployer = new Wallet(KEYS.relayer, provider);
  const issuer = new Wallet(KEYS.issuer, provider);
  const feeRecipient = Wallet.createRandom().address;
  const usdc = circleUsdc(await deployCircleUsdc({ admin: new Wallet(KEYS.admin, provider), issuer }), issuer);
  const token = await usdc.getAddress();
  const factory = new Contract(await deployFactoryV2(deployer, feeRecipient), ChargeFactoryV2Artifact.abi, deployer);
  const chain = benchChain({
    chainId: anvil.chainId,
    rpcUrl: anvil.url,
    factory: await factory.getAddress(),
    feeRecipient,
    relayerKey: KEYS.relayer,
    usdc: token,
  });
  relayer = new Relayer(chain);
  const gas = async (tx) => Number((await (await tx).wait()).gasUsed);
  let n = 0;
  const chargeId = () => `chrg_gas_${n++}`;

  // A merchant and fee recipient that already hold USDC (the steady state).
  const merchant = Wallet.createRandom().address;
  await gas(usdc.mint(merchant, 1n));
  await gas(usdc.mint(feeRecipient, 1n));
  await gas(usdc.mint(deployer.address, 10n ** 12n));
  const transfer = await gas(usdc.connect(deployer).transfer(merchant, 1_000_000n));

  /** A picked charge: only its address is computed, nothing is sent. */
  const pick = (wallet = merchant) => {
    const id = chargeId();
    return { id, wallet, address: predictCloneV2({ factory: chain.factory, chargeId: id, wallet, feeBps: FEE_BPS }) };
  };
  /** The relayer's payout of `charges` (each holding PAID), as the service sends it; gas per charge. */
  const payout = async (charges, deployed = false) => {
    const entries = charges.flatMap((c) => payoutWords({ chargeId: c.id, wallet: c.wallet, feeBps: FEE_BPS, amount: PAID, deployed }));
    const call = { to: chain.factory, data: factory.interface.encodeFunctionData("payout", [token, entries]) };
    const accessList = await relayer.accessList(
      call,
      charges.map((c) => c.address),
    );
    const signed = await relayer.sign({ ...call, ...(accessList && { accessList }) });
    await relayer.broadcast(signed.raw);
    const receipt = await provider.waitForTransaction(signed.hash);
    if (receipt.status !== 1) throw new Error("payout reverted");
    for (const c of charges) if ((await usdc.balanceOf(c.address)) !== 0n) throw new Error(`${c.address} was not paid out`);
    return Math.round(Number(receipt.gasUsed) / charges.length);
  };
  const paidCharges = async (count, wallet) => {
    const charges = Array.from({ length: count }, () => pick(wallet));
    for (const c of charges) await gas(usdc.mint(c.address, PAID));
    return charges;
  };

  /**
   * Our payout of `charges` (none deployed) with automine off; after our estimate and before the block,
   * a stranger deploys `k` of them with a higher tip. `bare`: sent at exactly the estimate.
   */
  const stranger = new Wallet(hexlify(randomBytes(32)), provider);
  await gas(deployer.sendTransaction({ to: stranger.address, value: parseEther("10") }));
  const frontRun = async (charges, k, bare = false) => {
    const entries = charges.flatMap((c) => payoutWords({ chargeId: c.id, wallet: c.wallet, feeBps: FEE_BPS, amount: PAID, deployed: false }));
    const call = { to: chain.factory, data: factory.interface.encodeFunctionData("payout", [token, entries]) };
    const accessList = await relayer.accessList(
      call,
      charges.map((c) => c.address),
    );
    const request = { ...call, ...(accessList && { accessList }) };
    const estimate = await provider.estimateGas({ ...request, from: deployer.address });
    await provider.send("evm_setAutomine", [false]);
    let hash;
    try {
      if (bare) {
        relayer.resetNonce();
        hash = (await deployer.sendTransaction({ ...request, gasLimit: estimate })).hash;
      } else {
        const signed = await relayer.sign(request, { gasNeeded: payoutGasNeeded(estimate, charges.length) });
        await relayer.broadcast(signed.raw);
        hash = signed.hash;
      }
      const theirs = [];
      for (const c of charges.slice(0, k)) {
        const tx = await factory.connect(stranger).deploy(chargeKey(c.id), c.wallet, FEE_BPS, {
          maxPriorityFeePerGas: parseEther("0.00000005"),
          maxFeePerGas: parseEther("0.0000002"),
          gasLimit: 200_000,
        });
        theirs.push(tx.hash);
      }
      await provider.send("evm_mine", []);
      const receipt = await provider.getTransactionReceipt(hash);
      const strangerReceipts = await Promise.all(theirs.map((h) => provider.getTransactionReceipt(h)));
      if (strangerReceipts.some((r) => r.blockNumber !== receipt.blockNumber || r.index > receipt.index)) throw new Error("the stranger did not get ahead");
      if (!bare && receipt.status !== 1) throw new Error("payout reverted");
      return { receipt, strangerGas: strangerReceipts.reduce((s, r) => s + Number(r.gasUsed), 0) };
    } finally {
      await provider.send("evm_setAutomine", [true]);
      relayer.resetNonce();
    }
  };
  const frontRunningStranger = await (async () => {
    const alone = (await frontRun(await paidCharges(50), 0)).receipt;
    const attacked = await frontRun(await paidCharges(50), 2);
    const bare = await frontRun(await paidCharges(50), 2, true);
    return {
      batch: 50,
      k: 2,
      perPaidCharge: { alone: Math.round(Number(alone.gasUsed) / 50), withStranger: Math.round(Number(attacked.receipt.gasUsed) / 50) },
      strangerGas: attacked.strangerGas,
      bareEstimate: { reverted: bare.receipt.status !== 1, relayerGas: Number(bare.receipt.gasUsed), strangerGas: bare.strangerGas },
    };
  })();

  // Abandoned: picked (its address handed to a buyer) and never paid. The relayer sends nothing.
  const relayerBefore = await provider.getBalance(deployer.address);
  const nonceBefore = await provider.getTransactionCount(deployer.address);
  for (let i = 0; i < 10; i++) pick();
  const abandonedCharge = Number(relayerBefore - (await provider.getBalance(deployer.address)));
  if ((await provider.getTransactionCount(deployer.address)) !== nonceBefore) throw new Error("a pick sent a transaction");

  const paidChargePerClone = {};
  for (const count of [1, 10, 50]) paidChargePerClone[count] = await payout(await paidCharges(count));
  const freshMerchant = await payout(await paidCharges(1, Wallet.createRandom().address));

  // Steady state: more money into clones already deployed (a late payment, a second chain's top-up).
  const deployedPayout = {};
  for (const count of [1, 10, 50]) {
    const charges = await paidCharges(count);
    await payout(charges);
    for (const c of charges) await gas(usdc.mint(c.address, PAID));
    deployedPayout[count] = await payout(charges, true);
  }
  // A deployed clone's own flush (anyone may call it), and a deployment alone.
  const [flushed] = await paidCharges(1);
  await payout([flushed]);
  await gas(usdc.mint(flushed.address, PAID));
  const clone = new Contract(flushed.address, ChargeFactoryV2Artifact.abi, deployer);
  const flush = await gas(clone.flush(token, chargeKey(flushed.id), flushed.wallet, FEE_BPS));
  const lone = pick();
  const deploy = await gas(factory.deploy(chargeKey(lone.id), lone.wallet, FEE_BPS));

  // Version 1, the baseline (clones made before version 2 still settle this way).
  const v1 = await new ContractFactory(ChargeFactoryV1Artifact.abi, ChargeFactoryV1Artifact.bytecode, new Wallet(KEYS.v1, provider)).deploy(feeRecipient);
  await v1.waitForDeployment();
  const v1Factory = v1.connect(deployer);
  const salt = () => id(chargeId());
  const v1Clone = async () => {
    const s = salt();
    const address = await v1Factory.predict(s, merchant, FEE_BPS);
    await gas(v1Factory.deploy(s, merchant, FEE_BPS));
    return address;
  };
  const s1 = salt();
  await gas(usdc.mint(await v1Factory.predict(s1, merchant, FEE_BPS), PAID));
  const v1DeployAndFlush = await gas(v1Factory.deployAndFlush(s1, merchant, FEE_BPS, token));
  const v1Flush = await (async () => {
    const address = await v1Clone();
    await gas(usdc.mint(address, PAID));
    return gas(new Contract(address, ChargeCloneV1Artifact.abi, deployer).flush(token));
  })();
  const v1PerPaidChargeAt50 = await (async () => {
    const salts = Array.from({ length: 50 }, salt);
    const addresses = await Promise.all(salts.map((s) => v1Factory.predict(s, merchant, FEE_BPS)));
    const deployed = await gas(v1Factory.deployMany(salts, Array(50).fill(merchant), Array(50).fill(FEE_BPS)));
    for (const a of addresses) await gas(usdc.mint(a, PAID));
    const flushed = await gas(v1Factory.flushMany(token, addresses));
    return Math.round((deployed + flushed) / 50);
  })();

  // A buyer's payment of 25 USDC to a charge's address: sent by the buyer, or relayed without gas.
  const buyer = new Wallet(hexlify(randomBytes(32)), provider);
  await gas(deployer.sendTransaction({ to: buyer.address, value: parseEther("1") }));
  await gas(usdc.mint(buyer.address, 100_000_000n));
  const buyerTransfer = await gas(usdc.connect(buyer).transfer(pick().address, PAID));
  const eip712 = new Contract(token, ["function name() view returns (string)", "function version() view returns (string)"], provider);
  const domain = { name: await eip712.name(), version: await eip712.version(), chainId: anvil.chainId, verifyingContract: token };
  const types = {
    TransferWithAuthorization: ["from:address", "to:address", "value:uint256", "validAfter:uint256", "validBefore:uint256", "nonce:bytes32"].map((f) => {
      const [name, type] = f.split(":");
      return { name, type };
    }),
  };
  const message = {
    from: buyer.address,
    to: pick().address,
    value: PAID,
    validAfter: 0n,
    validBefore: BigInt(Math.floor(Date.now() / 1000) + 3600),
    nonce: hexlify(randomBytes(32)),
  };
  const signature = await buyer.signTypedData(domain, types, message);
  const withAuthorization = new Contract(token, ["function transferWithAuthorization(address,address,uint256,uint256,uint256,bytes32,bytes)"], deployer);
  const gasless = await gas(
    withAuthorization.transferWithAuthorization(message.from, message.to, message.value, message.validAfter, message.validBefore, message.nonce, signature),
  );

  // A subscription: the buyer signs a permit and a permission once; the relayer subscribes, then renews.
  const subscription = await (async () => {
    const contract = new Contract(await deploySubscriptionsV1(deployer, feeRecipient), SubscriptionsV1Artifact.abi, deployer);
    const payer = new Wallet(hexlify(randomBytes(32)), provider);
    await gas(usdc.mint(payer.address, 10n * PAID));
    const period = 30n * 86_400n;
    const now = BigInt((await provider.getBlock("latest")).timestamp);
    const p = {
      payer: payer.address,
      merchant,
      token,
      spender: deployer.address,
      amount: PAID,
      feeBps: FEE_BPS,
      period,
      start: now,
      end: UNTIL_REVOKED,
      salt: subscriptionSalt("sub_gas"),
    };
    const typed = permissionTypedData(anvil.chainId, await contract.getAddress(), p);
    const permission = await payer.signTypedData(typed.domain, typed.types, typed.message);
    const deadline = now + 3600n;
    const permitTypes = {
      Permit: ["owner:address", "spender:address", "value:uint256", "nonce:uint256", "deadline:uint256"].map((f) => {
        const [name, type] = f.split(":");
        return { name, type };
      }),
    };
    const value = 12n * PAID;
    const permit = await payer.signTypedData(domain, permitTypes, { owner: payer.address, spender: await contract.getAddress(), value, nonce: 0n, deadline });
    const subscribe = await gas(contract.subscribe(permissionTuple(p), permission, value, deadline, permit, PAID));
    await provider.send("evm_increaseTime", [Number(period)]);
    await provider.send("evm_mine", []);
    const renewal = await gas(contract.pull(permissionTuple(p), PAID));
    const revoke = await gas(contract.revoke(permissionTuple(p)));
    if ((await usdc.balanceOf(payer.address)) !== 8n * PAID) throw new Error("the subscription did not pull twice");
    return { subscribeWithPermitAndFirstPull: subscribe, renewalPull: renewal, revoke };
  })();

  console.log(
    JSON.stringify({
      bench: "gas",
      paidChargePerClone,
      abandonedCharge,
      paidChargeFreshMerchant: freshMerchant,
      payoutDeployedPerClone: deployedPayout,
      deploy,
      flush,
      deployAndFlush: paidChargePerClone[1],
      frontRunningStranger,
      payment: { buyerTransfer, gasless, gaslessOverTransfer: Number((gasless / buyerTransfer).toFixed(2)) },
      subscription,
      token: "Circle FiatToken v2.2 (proxy)",
      baseline: {
        usdcTransfer: transfer,
        v1: { deployAndFlush: v1DeployAndFlush, flush: v1Flush, perPaidChargeAt50: v1PerPaidChargeAt50 },
        ratios: {
          aloneOverV1: Number((paidChargePerClone[1] / v1DeployAndFlush).toFixed(3)),
          at50OverV1: Number((paidChargePerClone[50] / v1PerPaidChargeAt50).toFixed(3)),
        },
      },
      goals: { paidChargePerCloneAt50: 65_000, paidChargeAlone: 100_000, abandonedCharge: 0, subscriptionRenewalPull: 70_000 },
    }),
  );
  provider.destroy();
} finally {
  relayer?.provider.destroy();
  await anvil.stop();
}
