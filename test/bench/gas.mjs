// `npm run bench` (part 2): gas of the charge contracts on anvil, as whole transactions. Prints one
// JSON line. Anchors from the issue: OpenZeppelin CREATE2 clone 64.6k, BitGo forwarder 88k (70k batched).
import { Contract, ContractFactory, id, JsonRpcProvider, Wallet } from "ethers";
import { startAnvil } from "../../dist/chain/anvil.js";
import { ChargeCloneArtifact, ChargeFactoryArtifact, MockUSDCArtifact } from "../../dist/chain/artifacts.js";

const anvil = await startAnvil();
try {
  const provider = new JsonRpcProvider(anvil.url, anvil.chainId, { staticNetwork: true, cacheTimeout: -1 });
  provider.pollingInterval = 20;
  const deployer = new Wallet("0xac0974bec39a17e36ba4a6b4d238ff944bacb478cbed5efcae784d7bf4f2ff80", provider);
  const feeRecipient = Wallet.createRandom().address;
  const deploy = async (a, ...args) => {
    const c = await new ContractFactory(a.abi, a.bytecode, deployer).deploy(...args);
    await c.waitForDeployment();
    return c;
  };
  const usdc = await deploy(MockUSDCArtifact);
  const factory = await deploy(ChargeFactoryArtifact, feeRecipient);
  const token = await usdc.getAddress();
  const gas = async (tx) => Number((await (await tx).wait()).gasUsed);
  let n = 0;
  const salt = () => id(`chrg_gas_${n++}`);

  // A merchant and fee recipient that already hold USDC (the steady state), and fresh ones.
  const merchant = Wallet.createRandom().address;
  await gas(usdc.mint(merchant, 1n));
  await gas(usdc.mint(feeRecipient, 1n));

  const deployClone = async (wallet = merchant) => {
    const s = salt();
    const address = await factory.predict(s, wallet, 100);
    return { address, gas: await gas(factory.deploy(s, wallet, 100)), salt: s };
  };
  const transfer = await gas(usdc.mint(deployer.address, 10n ** 12n)).then(() => gas(usdc.transfer(merchant, 1_000_000n)));

  const a = await deployClone();
  await gas(usdc.mint(a.address, 25_000_000n));
  const flush = await gas(new Contract(a.address, ChargeCloneArtifact.abi, deployer).flush(token));

  const fresh = await deployClone(Wallet.createRandom().address);
  await gas(usdc.mint(fresh.address, 25_000_000n));
  const flushFirstPayout = await gas(new Contract(fresh.address, ChargeCloneArtifact.abi, deployer).flush(token));

  const s = salt();
  await gas(usdc.mint(await factory.predict(s, merchant, 100), 25_000_000n));
  const deployAndFlush = await gas(factory.deployAndFlush(s, merchant, 100, token));

  const flushMany = {};
  for (const count of [1, 10, 50]) {
    const clones = [];
    for (let i = 0; i < count; i++) {
      const c = await deployClone();
      await gas(usdc.mint(c.address, 25_000_000n));
      clones.push(c.address);
    }
    flushMany[count] = Math.round((await gas(factory.flushMany(token, clones))) / count);
  }

  console.log(
    JSON.stringify({
      bench: "gas",
      deploy: a.gas,
      flush,
      flushFirstPayout,
      deployAndFlush,
      flushManyPerClone: flushMany,
      baseline: { usdcTransfer: transfer },
      goals: { deploy: 70_000, flush: 70_000, flushManyPerCloneAt50: 45_000 },
    }),
  );
  provider.destroy();
} finally {
  await anvil.stop();
}
