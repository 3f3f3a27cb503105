// `npm run bench` (part 2): gas of the charge contracts on anvil with Circle's USDC (FiatToken v2.2
// behind its proxy, as on every real chain), as whole transactions. Prints one JSON line. Anchors:
// OpenZeppelin CREATE2 clone 64.6k, BitGo forwarder 88k (70k batched), a plain USDC transfer. A
// buyer's payment to a clone both ways: a transfer the buyer sends, and a payment without gas (the
// buyer's EIP-3009 transferWithAuthorization, which the relayer sends and pays for).
import { Contract, ContractFactory, hexlify, id, JsonRpcProvider, parseEther, randomBytes, Wallet } from "ethers";
import { startAnvil } from "../../dist/chain/anvil.js";
import { ChargeCloneArtifact, ChargeFactoryArtifact } from "../../dist/chain/artifacts.js";
import { circleUsdc, deployCircleUsdc } from "../../dist/chain/usdc.js";

const KEYS = {
  relayer: "0xac0974bec39a17e36ba4a6b4d238ff944bacb478cbed5efcae784d7bf4f2ff80",
  issuer: "0xdbda1821b80551c9d65939329250298aa3472ba22feea921c0cf5d620ea67b97",
  admin: "0x2a871d0798f97d79848a013d4936a73bf4cc922c825d33c1cf7073dff6d409c6",
};

const anvil = await startAnvil();
try {
  const provider = new JsonRpcProvider(anvil.url, anvil.chainId, { staticNetwork: true, cacheTimeout: -1 });
  provider.pollingInterval = 20;
  const deployer = new Wallet(KEYS.relayer, provider);
  const issuer = new Wallet(KEYS.issuer, provider);
  const feeRecipient = Wallet.createRandom().address;
  const deploy = async (a, ...args) => {
    const c = await new ContractFactory(a.abi, a.bytecode, deployer).deploy(...args);
    await c.waitForDeployment();
    return c;
  };
  const usdc = circleUsdc(await deployCircleUsdc({ admin: new Wallet(KEYS.admin, provider), issuer }), issuer);
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
  await gas(usdc.mint(deployer.address, 10n ** 12n));
  const transfer = await gas(usdc.connect(deployer).transfer(merchant, 1_000_000n));

  const a = await deployClone();
  await gas(usdc.mint(a.address, 25_000_000n));
  const flush = await gas(new Contract(a.address, ChargeCloneArtifact.abi, deployer).flush(token));

  const fresh = await deployClone(Wallet.createRandom().address);
  await gas(usdc.mint(fresh.address, 25_000_000n));
  const flushFirstPayout = await gas(new Contract(fresh.address, ChargeCloneArtifact.abi, deployer).flush(token));

  const s = salt();
  await gas(usdc.mint(await factory.predict(s, merchant, 100), 25_000_000n));
  const deployAndFlush = await gas(factory.deployAndFlush(s, merchant, 100, token));

  const deployMany = {};
  for (const count of [10, 50]) {
    const salts = Array.from({ length: count }, salt);
    deployMany[count] = Math.round((await gas(factory.deployMany(salts, Array(count).fill(merchant), Array(count).fill(100)))) / count);
  }

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

  // A buyer's payment of 25 USDC to a fresh clone address: sent by the buyer, or relayed without gas.
  const buyer = new Wallet(hexlify(randomBytes(32)), provider);
  await gas(deployer.sendTransaction({ to: buyer.address, value: parseEther("1") }));
  await gas(usdc.mint(buyer.address, 100_000_000n));
  const buyerTransfer = await gas(usdc.connect(buyer).transfer((await deployClone()).address, 25_000_000n));
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
    to: (await deployClone()).address,
    value: 25_000_000n,
    validAfter: 0n,
    validBefore: BigInt(Math.floor(Date.now() / 1000) + 3600),
    nonce: hexlify(randomBytes(32)),
  };
  const signature = await buyer.signTypedData(domain, types, message);
  const withAuthorization = new Contract(token, ["function transferWithAuthorization(address,address,uint256,uint256,uint256,bytes32,bytes)"], deployer);
  const gasless = await gas(
    withAuthorization.transferWithAuthorization(message.from, message.to, message.value, message.validAfter, message.validBefore, message.nonce, signature),
  );

  console.log(
    JSON.stringify({
      bench: "gas",
      deploy: a.gas,
      flush,
      flushFirstPayout,
      deployAndFlush,
      flushManyPerClone: flushMany,
      deployManyPerClone: deployMany,
      payment: { buyerTransfer, gasless, gaslessOverTransfer: Number((gasless / buyerTransfer).toFixed(2)) },
      token: "Circle FiatToken v2.2 (proxy)",
      baseline: { usdcTransfer: transfer },
      goals: { deploy: 70_000, flush: 70_000, flushManyPerCloneAt50: 45_000 },
    }),
  );
  provider.destroy();
} finally {
  await anvil.stop();
}
