// The x402 facilitator with the official packages, unchanged, on anvil with Circle's USDC: an express
// resource server (@x402/express, HTTPFacilitatorClient pointed at the service with the merchant's
// key as Bearer) and a paying client (@x402/fetch with a devnet wallet). A route is paid once and the
// money reaches the ledger (x402.payment); the same payment again is refused; a wrong payTo, an
// expired authorization and a price above the client's limit are never paid; a deep reorg of a
// settled payment is reversed in the ledger.
import type { Server } from "node:http";
import { HTTPFacilitatorClient } from "@x402/core/server";
import { ExactEvmScheme as ExactEvmClient } from "@x402/evm/exact/client";
import { ExactEvmScheme as ExactEvmServer } from "@x402/evm/exact/server";
import { paymentMiddleware, x402ResourceServer } from "@x402/express";
import { decodePaymentResponseHeader, wrapFetchWithPayment, x402Client } from "@x402/fetch";
import { type HDNodeWallet, hexlify, parseUnits, randomBytes, Wallet } from "ethers";
import express from "express";
import { pino } from "pino";
import { privateKeyToAccount } from "viem/accounts";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ChainSet, type EnabledChain } from "../../src/chain/chains.js";
import { ChainRpc } from "../../src/chain/rpc.js";
import { startChainRunner } from "../../src/jobs/chain-runner.js";
import { reconcileChain } from "../../src/jobs/reconcile.js";
import type { Periodic } from "../../src/lib/periodic.js";
import { TRANSFER_WITH_AUTHORIZATION_TYPES } from "../../src/lib/eip3009.js";
import { blockProducer, startTestChain, type TestChain, waitFor } from "../helpers/chain.js";
import { POLLING, startApp, type TestApp, WALLET } from "../helpers/harness.js";

const usdc = (s: string) => parseUnits(s, 6);
const NETWORK = "eip155:31337";

let chain: TestChain;
let app: TestApp;
let devnet: EnabledChain;
let runner: Periodic | null = null;
let x402: { payTo: string; facilitatorUrl: string; accepts: { network: string; asset: string; extra: { name: string; version: string } }[] };
const servers: Server[] = [];
let producing = true;
const producer = blockProducer(async () => {
  if (producing) await chain.mine();
});

const startRunner = () => {
  runner = startChainRunner(app.db, devnet, pino({ level: "silent" }), { intervalMs: 50, settings: { ...app.settings, feed: app.live }, bumpAfterMs: 60_000 });
};

beforeAll(async () => {
  chain = await startTestChain();
  // Payouts wait for 1 USDC: the cent-sized payments here stay at the x402 address, where the ledger can be read.
  devnet = { ...(await chain.enabled(1)), payoutMinAmount: usdc("1") };
  app = await startApp(
    { ...POLLING, X402_MIN_AMOUNT: "0.01", RELAYER_GAS_BUDGET_PER_MERCHANT: "100000000", X402_SETTLE_TIMEOUT_MS: "20000" },
    { chains: new ChainSet([devnet]) },
  );
  startRunner();
  producer.start();
  const got = await app.call("GET", "/v1/x402");
  expect(got.status, got.text).toBe(200);
  x402 = got.body;
}, 60_000);
afterAll(async () => {
  producer.stop();
  await runner?.stop();
  for (const s of servers) await new Promise((r) => s.close(r));
  await app?.stop();
  await chain?.stop();
});

/** An express resource server whose `GET /paid` costs `amount` base units, paid to `payTo`, through the service's facilitator. */
async function resourceServer(amount: string, payTo = x402.payTo): Promise<string> {
  const facilitator = new HTTPFacilitatorClient({
    url: `${app.url}/x402`,
    createAuthHeaders: async () => {
      const auth = { Authorization: `Bearer ${app.testKey}` };
      return { verify: auth, settle: auth, supported: auth };
    },
  });
  const accepts = x402.accepts.find((a) => a.network === NETWORK)!;
  const server = new x402ResourceServer(facilitator).register(NETWORK, new ExactEvmServer());
  const api = express();
  api.use(
    paymentMiddleware(
      {
        "GET /paid": {
          accepts: { scheme: "exact", network: NETWORK, payTo, maxTimeoutSeconds: 120, price: { amount, asset: accepts.asset, extra: accepts.extra } },
          description: "a weather report",
          mimeType: "application/json",
        },
      },
      server,
    ),
  );
  api.get("/paid", (_req, res) => {
    res.json({ weather: "sunny" });
  });
  const listening = api.listen(0, "127.0.0.1");
  servers.push(listening);
  await new Promise((r) => listening.once("listening", r));
  return `http://127.0.0.1:${(listening.address() as { port: number }).port}/paid`;
}

/** What a route asks for: `amount` base units of the devnet's USDC to the merchant's x402 address. */
function requirementsOf(amount: string) {
  const accepts = x402.accepts[0]!;
  return { scheme: "exact", network: NETWORK, amount, asset: accepts.asset, payTo: x402.payTo, maxTimeoutSeconds: 60, extra: accepts.extra };
}

type Over = { validBefore?: number; value?: string };
/** A verify or settle body: `payer` signs `over.value` (10000 by default) to the x402 address, valid for a minute. */
async function facilitatorBody(payer: Wallet | HDNodeWallet, over: Over = {}, req: object = requirementsOf("10000")) {
  const accepts = x402.accepts[0]!;
  const message = {
    from: payer.address,
    to: x402.payTo,
    value: over.value ?? "10000",
    validAfter: "0",
    validBefore: String(over.validBefore ?? Math.floor(Date.now() / 1000) + 60),
    nonce: hexlify(randomBytes(32)),
  };
  const domain = { ...accepts.extra, chainId: 31337, verifyingContract: accepts.asset };
  const signature = await payer.signTypedData(domain, TRANSFER_WITH_AUTHORIZATION_TYPES, message);
  return { x402Version: 2, paymentPayload: { x402Version: 2, accepted: req, payload: { signature, authorization: message } }, paymentRequirements: req };
}

/** POSTs `b` to the facilitator's `path` with the merchant's test key. */
async function post(path: "verify" | "settle", b: object) {
  const res = await fetch(`${app.url}/x402/${path}`, {
    method: "POST",
    headers: { authorization: `Bearer ${app.testKey}`, "content-type": "application/json" },
    body: JSON.stringify(b),
  });
  return { status: res.status, body: await res.json() };
}

/** A devnet wallet holding `holds` USDC and no ETH, and an @x402/fetch client paying at most `cap` base units a request. */
async function payingClient(holds = "1", cap = "50000") {
  const key = hexlify(randomBytes(32));
  const account = privateKeyToAccount(key as `0x${string}`);
  await chain.mint(account.address, usdc(holds));
  const asset = x402.accepts[0]!.asset;
  const client = new x402Client()
    .register(NETWORK, new ExactEvmClient(account))
    .setSpendControls({ allowedAssets: [{ network: NETWORK, asset, maxAmountPerPayment: cap }] });
  // The PAYMENT-SIGNATURE headers it sent, to replay one.
  const signatures: string[] = [];
  const recording: typeof fetch = (input, init) => {
    const headers = new Headers(init?.headers ?? (input instanceof Request ? input.headers : undefined));
    const signature = headers.get("payment-signature");
    if (signature) signatures.push(signature);
    return fetch(input, init);
  };
  return { address: account.address, signatures, pay: wrapFetchWithPayment(recording, client) };
}

const stored = () => app.db.prisma.x402Payment.count();
const relayed = () => app.db.prisma.relayerTransaction.count({ where: { kind: "AUTHORIZATION" } });
const anchorLedger = () => app.db.prisma.balanceTransaction.findMany({ where: { charge: { kind: "x402" } }, orderBy: { createdAt: "asc" } });

describe("x402 with the official packages", () => {
  it("GET /v1/x402 gives the mode's address, the facilitator and USDC's domain; /supported lists the devnet", async () => {
    expect(x402).toMatchObject({ object: "x402", livemode: false, facilitatorUrl: expect.stringMatching(/\/x402$/) });
    expect(x402.accepts).toEqual([
      { scheme: "exact", network: NETWORK, asset: devnet.usdc, extra: expect.objectContaining({ version: "2" }), minAmount: "0.01" },
    ]);
    expect((await app.call("GET", "/v1/x402")).body.payTo).toBe(x402.payTo);
    const supported = await fetch(`${app.url}/x402/supported`, { headers: { authorization: `Bearer ${app.testKey}` } });
    expect(await supported.json()).toMatchObject({ kinds: [{ x402Version: 2, scheme: "exact", network: NETWORK }] });
    expect((await fetch(`${app.url}/x402/supported`)).status).toBe(401);
    // Not a charge: no list, page or lookup shows it.
    expect((await app.call("GET", "/v1/charges")).body.data).toEqual([]);
  });

  it("pays a route once; the money is a ledger payment with x402.payment; the same payment again is refused before any gas", async () => {
    const url = await resourceServer("10000");
    const buyer = await payingClient("1");
    const paid = await buyer.pay(url);
    expect(paid.status, await paid.clone().text()).toBe(200);
    expect(await paid.json()).toEqual({ weather: "sunny" });
    const receipt = decodePaymentResponseHeader(paid.headers.get("payment-response")!);
    expect(receipt).toMatchObject({ success: true, network: NETWORK, payer: buyer.address });
    expect(receipt.transaction).toMatch(/^0x[0-9a-f]{64}$/);
    expect(await chain.balance(x402.payTo)).toBe(10_000n);
    expect(await chain.provider.getBalance(buyer.address)).toBe(0n);

    const event = await waitFor("the x402.payment event", async () => (await app.db.prisma.event.findFirst({ where: { type: "x402.payment" } })) ?? undefined);
    expect(event.data).toMatchObject({
      object: "x402_payment",
      status: "CONFIRMED",
      amount: "0.01",
      payer: buyer.address,
      payTo: x402.payTo,
      network: NETWORK,
      txHash: receipt.transaction,
      resource: url,
      description: "a weather report",
    });
    expect((await anchorLedger()).map((b) => [b.type, b.amount.toString(), b.txHash])).toEqual([["payment", "10000", receipt.transaction]]);
    const list = (await app.call("GET", "/v1/x402/payments")).body;
    expect(list.data).toMatchObject([{ status: "SETTLED", amount: "0.01", payer: buyer.address, txHash: receipt.transaction, resource: url }]);
    // The ledger's payment row says who paid and for what (REST, CSV and GraphQL alike).
    const ledger = (await app.call("GET", "/v1/balance_transactions")).body.data;
    expect(ledger).toMatchObject([
      { type: "payment", amount: "0.01", txHash: receipt.transaction, x402: { payer: buyer.address, resource: url, description: "a weather report" } },
    ]);
    const csv = await (await app.call("GET", "/v1/balance_transactions/export.csv")).text;
    expect(csv.split("\r\n")[1]).toContain(`,${buyer.address},${url}`);
    const gql = await app.gql(
      "{ x402 { payTo accepts { network } } x402Payments(first: 5) { totalCount edges { node { id status payer resource } } } balanceTransactions(first: 1) { edges { node { x402 { payer resource } } } } }",
    );
    expect(gql.errors).toBeUndefined();
    expect(gql.data.x402).toEqual({ payTo: x402.payTo, accepts: [{ network: NETWORK }] });
    expect(gql.data.x402Payments).toMatchObject({ totalCount: 1, edges: [{ node: { status: "SETTLED", payer: buyer.address, resource: url } }] });
    expect(gql.data.balanceTransactions.edges[0].node.x402).toEqual({ payer: buyer.address, resource: url });
    const row = await app.db.prisma.x402Payment.findFirstOrThrow();
    expect(row.gasUsed).toBeGreaterThan(30_000n);

    // The same PAYMENT-SIGNATURE again: verify says the nonce is settled; nothing is stored or sent.
    const before = { stored: await stored(), relayed: await relayed() };
    expect(buyer.signatures).toHaveLength(1);
    const replay = await fetch(url, { headers: { "PAYMENT-SIGNATURE": buyer.signatures[0]! } });
    expect(replay.status).toBe(402);
    expect({ stored: await stored(), relayed: await relayed() }).toEqual(before);
    expect(await chain.balance(x402.payTo)).toBe(10_000n);
  });

  it("a route paying another address, and a price above the client's limit, are never paid", async () => {
    const before = { stored: await stored(), relayed: await relayed() };
    const stranger = Wallet.createRandom().address;
    const buyer = await payingClient("1");
    const wrong = await buyer.pay(await resourceServer("10000", stranger));
    expect(wrong.status).toBe(402);
    const required = JSON.parse(Buffer.from(wrong.headers.get("payment-required")!, "base64").toString());
    expect(JSON.stringify(required)).toContain("recipient_mismatch");
    const dear = await resourceServer("60000");
    await expect(buyer.pay(dear)).rejects.toThrow(/spendControls|maxAmountPerPayment/);
    expect({ stored: await stored(), relayed: await relayed() }).toEqual(before);
    expect(await chain.balance(stranger)).toBe(0n);
  });

  it("verify and settle refuse an expired authorization, a forged signature, a payer short of funds, dust, a wrong amount, another network and a bad version, each with the specification's reason", async () => {
    const payer = Wallet.createRandom();
    await chain.mint(payer.address, usdc("1"));
    const accepts = x402.accepts[0]!;
    const requirements = requirementsOf("10000");
    const now = Math.floor(Date.now() / 1000);
    const body = (over: Over = {}, req: object = requirements) => facilitatorBody(payer, over, req);
    const before = { stored: await stored(), relayed: await relayed() };
    expect(await post("verify", await body())).toEqual({ status: 200, body: { isValid: true, payer: payer.address } });
    const expired = await post("verify", await body({ validBefore: now - 1 }));
    expect(expired.body).toMatchObject({ isValid: false, invalidReason: "invalid_exact_evm_payload_authorization_valid_before", payer: payer.address });
    const settled = await post("settle", await body({ validBefore: now - 1 }));
    expect(settled.body).toMatchObject({
      success: false,
      errorReason: "invalid_exact_evm_payload_authorization_valid_before",
      transaction: "",
      network: NETWORK,
    });
    const forged = await body();
    forged.paymentPayload.payload.signature = await Wallet.createRandom().signTypedData(
      { ...accepts.extra, chainId: 31337, verifyingContract: accepts.asset },
      TRANSFER_WITH_AUTHORIZATION_TYPES,
      forged.paymentPayload.payload.authorization,
    );
    expect((await post("settle", forged)).body).toMatchObject({ success: false, errorReason: "invalid_exact_evm_payload_signature" });
    const dear = { ...requirements, amount: "2000000" };
    expect((await post("settle", await body({ value: "2000000" }, dear))).body).toMatchObject({ success: false, errorReason: "insufficient_funds" });
    const dust = { ...requirements, amount: "9999" };
    const below = (await post("verify", await body({ value: "9999" }, dust))).body;
    expect(below).toMatchObject({ isValid: false, invalidReason: "invalid_payment_requirements" });
    expect(below.invalidMessage).toMatch(/X402_MIN_AMOUNT/);
    const cheaper = await post("verify", await body({ value: "9999" }));
    expect(cheaper.body).toMatchObject({ isValid: false, invalidReason: "invalid_exact_evm_payload_authorization_value_mismatch" });
    const mainnet = { ...requirements, network: "eip155:8453" };
    expect((await post("verify", await body({}, mainnet))).body).toMatchObject({ isValid: false, invalidReason: "invalid_network" });
    const v1 = { ...(await body()), x402Version: 1 };
    expect(await post("verify", v1)).toMatchObject({ status: 400, body: { isValid: false, invalidReason: "invalid_x402_version" } });
    const broken = await body();
    (broken.paymentPayload.payload.authorization as { value: string }).value = "ten";
    const malformed = await post("settle", broken);
    expect(malformed).toMatchObject({ status: 400, body: { success: false, errorReason: "invalid_payload", transaction: "", network: NETWORK } });
    expect(malformed.body.errorMessage).toContain("paymentPayload.payload.authorization.value");
    // The live key's mode has no devnet: its x402 address is another, and the network is not its.
    const live = await fetch(`${app.url}/x402/verify`, {
      method: "POST",
      headers: { authorization: `Bearer ${app.liveKey}`, "content-type": "application/json" },
      body: JSON.stringify(await body()),
    });
    expect(await live.json()).toMatchObject({ isValid: false, invalidReason: "invalid_network" });
    expect({ stored: await stored(), relayed: await relayed() }).toEqual(before);
  });

  it("one payment pays for one request: settle calls carrying it at once get one success between them", async () => {
    const payer = Wallet.createRandom();
    await chain.mint(payer.address, usdc("1"));
    const b = await facilitatorBody(payer);
    const answers = await Promise.all([post("settle", b), post("settle", b), post("settle", b)]);
    const bodies = answers.map((a) => a.body);
    expect(bodies.filter((a) => a.success)).toHaveLength(1);
    const tx = bodies.find((a) => a.success).transaction;
    for (const a of bodies.filter((x) => !x.success)) expect(a).toMatchObject({ errorReason: "invalid_exact_evm_nonce_already_used", transaction: tx });
    expect(await app.db.prisma.x402Payment.count({ where: { fromAddress: payer.address } })).toBe(1);
    expect(await app.db.prisma.relayerTransaction.count({ where: { txHashes: { has: tx } } })).toBe(1);
  });

  it("a payment the token refuses when its turn comes is failed unsent, and settle says why", async () => {
    const payer = Wallet.createRandom();
    await chain.mint(payer.address, usdc("1"));
    const before = await relayed();
    await runner!.stop();
    const settling = post("settle", await facilitatorBody(payer));
    await waitFor("the payment stored", async () => (await app.db.prisma.x402Payment.count({ where: { fromAddress: payer.address } })) === 1);
    await (await chain.usdc.getFunction("blacklist")(payer.address)).wait();
    startRunner();
    const answered = (await settling).body;
    expect(answered).toMatchObject({ success: false, errorReason: "invalid_transaction_state", transaction: "", network: NETWORK });
    expect(answered.errorMessage).toMatch(/refuses it now/);
    expect(await relayed()).toBe(before);
  });

  it("a settled payment a deep reorg takes away is reversed in the ledger", async () => {
    const url = await resourceServer("20000");
    const buyer = await payingClient("1");
    const before = await anchorLedger();
    const held = await chain.balance(x402.payTo);
    producing = false;
    const snapshot = await chain.provider.send("evm_snapshot", []);
    producing = true;
    const paid = await buyer.pay(url);
    expect(paid.status).toBe(200);
    const tx = decodePaymentResponseHeader(paid.headers.get("payment-response")!).transaction;
    await waitFor("the payment in the ledger", async () => (await anchorLedger()).some((b) => b.txHash === tx));

    // While no worker watches, the chain drops every block since the snapshot; on the new fork the
    // payer is blacklisted, so the relayer's stored transaction cannot bring the payment back.
    producing = false;
    await runner!.stop();
    expect(await chain.provider.send("evm_revert", [snapshot])).toBe(true);
    await (await chain.usdc.getFunction("blacklist")(buyer.address)).wait();
    await chain.mine(20);
    startRunner();
    producing = true;

    const rows = await waitFor("the reversal", async () => {
      const all = (await anchorLedger()).filter((b) => !before.some((o) => o.id === b.id));
      return all.some((b) => b.type === "reversal") ? all : undefined;
    });
    expect(rows.map((b) => `${b.type} ${b.amount}`).sort()).toEqual(["payment 20000", "reversal -20000"]);
    expect(await chain.balance(x402.payTo)).toBe(held);
    const anchor = await app.db.prisma.charge.findFirstOrThrow({ where: { kind: "x402" } });
    expect(anchor.amountReceived?.toString()).toBe(held.toString());
  }, 90_000);

  it("once the x402 address holds the payout minimum it is paid out to the merchant's wallet less the fee, and reconciles with the chain", async () => {
    const url = await resourceServer("1000000");
    const buyer = await payingClient("2", "1000000");
    const wallet = await chain.balance(WALLET);
    const held = (await chain.balance(x402.payTo)) + 1_000_000n;
    const paid = await buyer.pay(url);
    expect(paid.status).toBe(200);
    // All it holds (this payment and the earlier tests' cents): 1% to the fee recipient, the rest to the wallet.
    await waitFor("the payout", async () => (await chain.balance(x402.payTo)) === 0n && (await chain.balance(WALLET)) > wallet);
    expect((await chain.balance(WALLET)) - wallet).toBe(held - held / 100n);
    await waitFor("the payout in the ledger", async () => (await anchorLedger()).some((b) => b.type === "payout"));
    const rpc = new ChainRpc(devnet.chainId, [chain.anvil.url]);
    try {
      expect((await reconcileChain(app.db.prisma, rpc, devnet)).differences).toEqual([]);
    } finally {
      rpc.destroy();
    }
  }, 60_000);
});
