// The subscription checkout and manage pages over plain HTTP, against anvil with Circle's USDC: the
// words the buyer reads, what the service asks the wallet to sign, the signed authorization stored as
// the engine expects it, every refusal naming its field and changing nothing, ERC-1271 payers, the
// pages of ended or started subscriptions, and the manage page's token and cancel forms.
import { getAddress, MaxUint256, Wallet } from "ethers";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ChainSet, type EnabledChain } from "../../src/chain/chains.js";
import { loadPermission, permissionHash, revokeCalldata, subscriptionSalt, UNTIL_REVOKED } from "../../src/chain/subscriptions.js";
import { Prisma, type Subscription } from "../../src/generated/prisma/client.js";
import { checkoutChains, periodWords } from "../../src/domain/subscription-checkout.js";
import { writeDevnetInfo } from "../../src/chain/devnet.js";
import { subscribeFromDevnet } from "../../src/cli/devnet-subscribe.js";
import { loadConfig } from "../../src/config.js";
import { startTestChain, type TestChain, testWalletDevnet } from "../helpers/chain.js";
import { POLLING, startApp, type TestApp, WALLET } from "../helpers/harness.js";
import { newSubscriptionRow } from "../helpers/subscription-rows.js";

let chain: TestChain;
let app: TestApp;
let devnet: EnabledChain;

beforeAll(async () => {
  chain = await startTestChain();
  devnet = await chain.enabled(1);
  app = await startApp(POLLING, { chains: new ChainSet([devnet]) });
}, 60_000);
afterAll(async () => {
  await app?.stop();
  await chain?.stop();
});

const page = (path: string, init?: RequestInit) => fetch(`${app.url}${path}`, { redirect: "manual", ...init });
const json = async (path: string, init?: RequestInit) => {
  const res = await page(path, init);
  return { status: res.status, body: (await res.json()) as any };
};
const post = (path: string, body: unknown) => json(path, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify(body) });
const form = (path: string, fields: Record<string, string>) =>
  page(path, { method: "POST", headers: { "content-type": "application/x-www-form-urlencoded" }, body: new URLSearchParams(fields).toString() });
const chainTime = async () => BigInt((await chain.provider.getBlock("latest"))!.timestamp);
type Signer = Pick<Wallet, "address" | "signTypedData">;
const row = (id: string) => app.db.prisma.subscription.findUniqueOrThrow({ where: { id } });

/** What the page asks `payer` to sign, and both signatures by `signer` (the payer unless told). */
async function signed(sub: Subscription, payer: Signer | string, signer: Signer = payer as Signer) {
  const address = typeof payer === "string" ? payer : payer.address;
  const ask = await json(`/pay/subscribe/${sub.id}/authorization?chainId=31337&payer=${address}`);
  expect(ask.status, JSON.stringify(ask.body)).toBe(200);
  const { permit, permission } = ask.body;
  const permitSignature = await signer.signTypedData(permit.domain, permit.types, permit.message);
  const signature = await signer.signTypedData(permission.domain, permission.types, permission.message);
  const body = {
    chainId: 31337,
    payer: address,
    permission: permission.message,
    signature,
    permit: { value: permit.message.value, deadline: permit.message.deadline, signature: permitSignature },
  };
  return { ask: ask.body, body };
}

describe("checkout page", () => {
  it("says what is billed in words, offers the mode's chains and a wallet chooser, escapes text, runs only its own script", async () => {
    const sub = await newSubscriptionRow(app, { name: "Pro <b>plan</b>" });
    const res = await page(`/pay/subscribe/${sub.id}`);
    expect(res.status).toBe(200);
    const csp = res.headers.get("content-security-policy")!;
    expect(csp).toContain("script-src 'self'");
    expect(csp).toContain("frame-ancestors 'none'");
    const html = await res.text();
    expect(html).toContain("Test Shop");
    expect(html).toContain("Pro &#60;b&#62;plan&#60;/b&#62;");
    expect(html).toContain("25.00 USDC every month (30 days)");
    expect(html).toContain("Up to 25.00 USDC every month (30 days), until you cancel.");
    expect(html).toContain('value="31337"');
    expect(html).toContain('<fieldset id="wallets"');
    expect(html).toContain("USDC permit");
    expect(html).toContain("/pay/assets/subscribe.js");
    expect([...html.matchAll(/<script(?![^>]*type="application\/json")(?![^>]*src=)[^>]*>/g)]).toEqual([]);
    const script = await page("/pay/assets/subscribe.js");
    expect(script.headers.get("content-type")).toMatch(/^text\/javascript/);
  });

  it("words a trial and other periods", async () => {
    const sub = await newSubscriptionRow(app, { trialDays: 14, amount: 9_500_000n, interval: "week", intervalCount: 2 });
    const html = await (await page(`/pay/subscribe/${sub.id}`)).text();
    expect(html).toContain("Free for 14 days, then up to 9.50 USDC every 2 weeks (14 days), until you cancel.");
  });

  it("offers a chain whose relayer key this process lacks by the relayer address the worker recorded, and none without it", async () => {
    const keyless = new ChainSet([{ ...devnet, relayerKey: "" }]);
    const test = { livemode: false, amount: 25_000_000n };
    expect(await checkoutChains(app.db.prisma, keyless, test)).toEqual([]);
    const relayer = new Wallet(devnet.relayerKey).address;
    await app.db.prisma.chainStatus.upsert({
      where: { chainId: 31337 },
      create: { chainId: 31337, relayerAddress: relayer.toLowerCase(), relayerBalance: "1", relayerMinBalance: "0", checkedAt: new Date() },
      update: { relayerAddress: relayer.toLowerCase() },
    });
    expect((await checkoutChains(app.db.prisma, keyless, test)).map((c) => [c.chain.chainId, c.spender])).toEqual([[31337, relayer]]);
    expect(await checkoutChains(app.db.prisma, keyless, { ...test, livemode: true })).toEqual([]);
    // Below the chain's payout minimum a renewal's gas would cost more than it brings: not offered.
    expect(await checkoutChains(app.db.prisma, keyless, { ...test, amount: devnet.payoutMinAmount - 1n })).toEqual([]);
    // Nor a chain the worker found without SubscriptionsV1.
    await app.db.prisma.chainStatus.update({ where: { chainId: 31337 }, data: { subscriptionsDeployed: false } });
    expect(await checkoutChains(app.db.prisma, keyless, test)).toEqual([]);
    await app.db.prisma.chainStatus.update({ where: { chainId: 31337 }, data: { subscriptionsDeployed: null } });
    expect(periodWords("day", 1, 86_400)).toBe("day");
    expect(periodWords("day", 2, 2 * 86_400)).toBe("2 days");
    expect(periodWords("year", 1, 365 * 86_400)).toBe("year (365 days)");
  });

  it("shows a clear page for an expired, canceled or already authorized subscription, and 404 for an unknown one", async () => {
    const expired = await newSubscriptionRow(app);
    await app.db.prisma.subscription.update({ where: { id: expired.id }, data: { expiresAt: new Date(Date.now() - 1000) } });
    expect(await (await page(`/pay/subscribe/${expired.id}`)).text()).toContain("This checkout has expired");
    const canceled = await newSubscriptionRow(app);
    await app.db.prisma.subscription.update({ where: { id: canceled.id }, data: { status: "CANCELED", canceledAt: new Date(), cancelReason: "requested" } });
    expect(await (await page(`/pay/subscribe/${canceled.id}`)).text()).toContain("This subscription was canceled");
    const active = await newSubscriptionRow(app);
    await app.db.prisma.subscription.update({ where: { id: active.id }, data: { status: "ACTIVE" } });
    const html = await (await page(`/pay/subscribe/${active.id}`)).text();
    expect(html).toContain("This subscription is already authorized");
    expect(html).not.toContain("subscribe.js");
    const missing = await page("/pay/subscribe/sub_doesnotexist");
    expect(missing.status).toBe(404);
    expect(await missing.text()).toContain("Subscription not found");
  });
});

describe("authorization", () => {
  it("builds the permission and the permit the shared behaviour names", async () => {
    const sub = await newSubscriptionRow(app);
    const payer = Wallet.createRandom();
    const before = await chainTime();
    const { ask } = await signed(sub, payer);
    const m = ask.permission.message;
    expect(ask.permission.domain).toEqual({
      name: "Stablegate Subscriptions",
      version: "1",
      chainId: 31337,
      verifyingContract: getAddress(devnet.subscriptions),
    });
    expect(m).toEqual({
      payer: payer.address,
      merchant: WALLET,
      token: getAddress(devnet.usdc),
      spender: new Wallet(devnet.relayerKey).address,
      amount: "25000000",
      feeBps: 100,
      period: String(30 * 86_400),
      start: String(before),
      end: UNTIL_REVOKED.toString(),
      salt: subscriptionSalt(sub.id).toString(),
    });
    expect(ask.permit.domain).toMatchObject({ name: "USD Coin", version: "2", chainId: 31337, verifyingContract: getAddress(devnet.usdc) });
    expect(ask.permit.message).toEqual({
      owner: payer.address,
      spender: devnet.subscriptions,
      value: MaxUint256.toString(),
      nonce: "0",
      deadline: String(before + 3600n),
    });
    expect(ask.words.permission).toContain("25.00 USDC per period");
  });

  it("stores the signed permission and permit as the engine reads them; the status stays INCOMPLETE; a second one is refused", async () => {
    const sub = await newSubscriptionRow(app);
    const payer = Wallet.createRandom();
    const { body } = await signed(sub, payer);
    const before = Date.now();
    const res = await post(`/pay/subscribe/${sub.id}/authorize`, body);
    expect(res.status, JSON.stringify(res.body)).toBe(202);
    const stored = await row(sub.id);
    const permission = loadPermission(stored.permission as never);
    expect(stored).toMatchObject({
      status: "INCOMPLETE",
      chainId: 31337,
      payer: payer.address,
      settlementWallet: WALLET,
      spender: new Wallet(devnet.relayerKey).address,
      contractAddress: getAddress(devnet.subscriptions),
      permissionHash: permissionHash(permission),
      permissionSignature: body.signature,
      permit: body.permit,
      trialEnd: null,
    });
    expect(stored.nextPullAt!.getTime()).toBeGreaterThanOrEqual(before - 1000);
    expect(await app.db.prisma.event.count({ where: { type: { startsWith: "subscription." } } })).toBe(0);
    const again = await post(`/pay/subscribe/${sub.id}/authorize`, body);
    expect(again.status).toBe(400);
    expect(again.body.param).toBe("id");
    const status = await json(`/pay/subscribe/${sub.id}/status`);
    expect(status.body).toEqual({ status: "INCOMPLETE", authorized: true, failure: null });
  });

  it("with a trial, starts the permission at the trial's end and stores it", async () => {
    const sub = await newSubscriptionRow(app, { trialDays: 14 });
    const payer = Wallet.createRandom();
    const now = await chainTime();
    const { ask, body } = await signed(sub, payer);
    expect(BigInt(ask.permission.message.start)).toBe(now + 14n * 86_400n);
    expect((await post(`/pay/subscribe/${sub.id}/authorize`, body)).status).toBe(202);
    expect((await row(sub.id)).trialEnd!.getTime()).toBe(Number(now + 14n * 86_400n) * 1000);
  });

  it("takes a new authorization after a failed relay, without a permit (an allowance already given): the last permit is not kept", async () => {
    const sub = await newSubscriptionRow(app);
    const { body } = await signed(sub, Wallet.createRandom());
    expect((await post(`/pay/subscribe/${sub.id}/authorize`, body)).status).toBe(202);
    // The engine's failed relay: the permission cleared, the checkout open again.
    await app.db.prisma.subscription.update({ where: { id: sub.id }, data: { permission: Prisma.DbNull, permissionHash: null, permissionSignature: null } });
    const retry = await signed(sub, Wallet.createRandom());
    expect((await post(`/pay/subscribe/${sub.id}/authorize`, { ...retry.body, permit: null })).status).toBe(202);
    expect(await row(sub.id)).toMatchObject({ payer: retry.body.payer, permit: null });
  });

  it("refuses, naming the field and changing nothing: another field, a stale start, another signer, a bad permit, an unknown chain, bad input", async () => {
    const sub = await newSubscriptionRow(app);
    const payer = Wallet.createRandom();
    const { body } = await signed(sub, payer);
    const refused = async (b: unknown, param: string, code = "parameter_invalid") => {
      const res = await post(`/pay/subscribe/${sub.id}/authorize`, b);
      expect(res.status, JSON.stringify(res.body)).toBe(400);
      expect(res.body).toMatchObject({ code, param });
    };
    const other = Wallet.createRandom().address;
    for (const field of ["merchant", "spender", "token"]) await refused({ ...body, permission: { ...body.permission, [field]: other } }, `permission.${field}`);
    await refused({ ...body, permission: { ...body.permission, amount: "25000001" } }, "permission.amount");
    await refused({ ...body, permission: { ...body.permission, feeBps: 0 } }, "permission.feeBps");
    await refused({ ...body, permission: { ...body.permission, end: "2000000000" } }, "permission.end");
    await refused({ ...body, permission: { ...body.permission, salt: "1" } }, "permission.salt");
    await refused({ ...body, permission: { ...body.permission, start: String(BigInt(body.permission.start) - 601n) } }, "permission.start");
    await refused({ ...body, payer: other, permission: { ...body.permission, payer: other } }, "signature");
    const stranger = await signed(sub, payer, Wallet.createRandom());
    await refused({ ...body, signature: stranger.body.signature }, "signature");
    await refused({ ...body, permit: stranger.body.permit }, "permit.signature");
    await refused({ ...body, permit: { ...body.permit, value: "1" } }, "permit.value");
    await refused({ ...body, chainId: 1 }, "chainId", "chain_unsupported");
    await refused({ ...body, signature: "nope" }, "signature");
    await refused({ ...body, extra: 1 }, "extra", "parameter_unknown");
    const stored = await row(sub.id);
    expect(stored.permission).toBeNull();
    expect(stored.payer).toBeNull();
    expect(stored.nextPullAt).toBeNull();
    // And the authorization call names its query fields.
    const bad = await json(`/pay/subscribe/${sub.id}/authorization?chainId=31337&payer=0x1234`);
    expect(bad).toMatchObject({ status: 400, body: { param: "payer" } });
  });

  it("takes no more authorizations once three of its checkout transactions reverted on chain (relayer gas spent for nothing)", async () => {
    const sub = await newSubscriptionRow(app);
    const { body } = await signed(sub, Wallet.createRandom());
    const failed = (n: number) => ({
      id: `spull_reverted${n}`,
      subscriptionId: sub.id,
      chainId: 31337,
      periodIndex: 0,
      amount: sub.amount,
      checkout: true,
      status: "FAILED" as const,
    });
    // Refusals found by the simulation cost nothing and do not count.
    await app.db.prisma.subscriptionPull.createMany({ data: [1, 2, 3].map((n) => ({ ...failed(n), id: `spull_simulated${n}` })) });
    await app.db.prisma.subscriptionPull.createMany({ data: [1, 2].map((n) => ({ ...failed(n), txId: `rtx_reverted${n}` })) });
    expect((await json(`/pay/subscribe/${sub.id}/authorization?chainId=31337&payer=${body.payer}`)).status).toBe(200);
    await app.db.prisma.subscriptionPull.create({ data: { ...failed(3), txId: "rtx_reverted3" } });
    const refused = await post(`/pay/subscribe/${sub.id}/authorize`, body);
    expect(refused).toMatchObject({ status: 400, body: { code: "parameter_invalid", param: "id" } });
    expect(refused.body.message).toContain("failed on chain 3 times");
    expect((await row(sub.id)).permission).toBeNull();
  });

  it("refuses an expired checkout and a canceled subscription", async () => {
    const sub = await newSubscriptionRow(app);
    const { body } = await signed(sub, Wallet.createRandom());
    await app.db.prisma.subscription.update({ where: { id: sub.id }, data: { expiresAt: new Date(Date.now() - 1) } });
    expect(await post(`/pay/subscribe/${sub.id}/authorize`, body)).toMatchObject({ status: 400, body: { param: "id" } });
    await app.db.prisma.subscription.update({ where: { id: sub.id }, data: { status: "CANCELED", expiresAt: new Date(Date.now() + 60_000) } });
    expect(await post(`/pay/subscribe/${sub.id}/authorize`, body)).toMatchObject({ status: 400, body: { param: "id" } });
  });

  it("asks a contract wallet (ERC-1271) whether the signature is its own", async () => {
    const accepts = Wallet.createRandom().address;
    const refuses = Wallet.createRandom().address;
    // Runtime code answering every isValidSignature with the magic value 0x1626ba7e, or with 0xffffffff.
    const answering = (word: string) => `0x63${word}60e01b60005260206000f3`;
    await chain.provider.send("anvil_setCode", [accepts, answering("1626ba7e")]);
    await chain.provider.send("anvil_setCode", [refuses, answering("ffffffff")]);
    const signer = Wallet.createRandom();
    for (const [payer, status] of [
      [accepts, 202],
      [refuses, 400],
    ] as const) {
      const sub = await newSubscriptionRow(app);
      const { body } = await signed(sub, payer, signer);
      const res = await post(`/pay/subscribe/${sub.id}/authorize`, body);
      expect(res.status, JSON.stringify(res.body)).toBe(status);
    }
  });

  it("shows the last relay's failure on an INCOMPLETE checkout whose permission the engine cleared", async () => {
    const sub = await newSubscriptionRow(app);
    await app.db.prisma.subscriptionPull.create({
      data: {
        id: `spull_${sub.id.slice(4)}`,
        subscriptionId: sub.id,
        chainId: 31337,
        periodIndex: 0,
        amount: sub.amount,
        checkout: true,
        status: "FAILED",
        reason: "insufficient_balance",
      },
    });
    const html = await (await page(`/pay/subscribe/${sub.id}`)).text();
    expect(html).toContain("Your wallet did not hold enough USDC for the first payment");
    expect((await json(`/pay/subscribe/${sub.id}/status`)).body).toMatchObject({ authorized: false, failure: expect.stringContaining("enough USDC") });
  });
});

describe("npx stablegate devnet subscribe", () => {
  it("signs the permit and the permission with the devnet's test wallet and authorizes the subscription", async () => {
    const dataDir = mkdtempSync(join(tmpdir(), "sg-devnet-subscribe-"));
    const info = await testWalletDevnet(chain);
    writeDevnetInfo(dataDir, info);
    const config = loadConfig({ NODE_ENV: "test", DATA_DIR: dataDir, PUBLIC_URL: app.url });
    const sub = await newSubscriptionRow(app);
    const said = await subscribeFromDevnet(config, sub.id);
    const payer = new Wallet(info.payerKey).address;
    expect(said).toContain(`Authorized ${sub.id} from the devnet's test wallet ${payer}`);
    expect(said).toContain("manageUrl");
    expect(await row(sub.id)).toMatchObject({ status: "INCOMPLETE", payer, chainId: 31337 });
    await expect(subscribeFromDevnet(config, sub.id)).rejects.toThrow(/already authorized/);
    rmSync(dataDir, { recursive: true, force: true });
  });
});

describe("manage page", () => {
  /** An authorized subscription, ACTIVE in its first period. */
  async function activeSubscription() {
    const sub = await newSubscriptionRow(app);
    const { body } = await signed(sub, Wallet.createRandom());
    expect((await post(`/pay/subscribe/${sub.id}/authorize`, body)).status).toBe(202);
    const start = new Date();
    return app.db.prisma.subscription.update({
      where: { id: sub.id },
      data: { status: "ACTIVE", currentPeriodStart: start, currentPeriodEnd: new Date(start.getTime() + 30 * 86_400_000), periodIndex: 0 },
    });
  }

  it("is a 404 page with a wrong token, and shows status, plan, next charge, payer and revoke with the right one", async () => {
    const sub = await activeSubscription();
    expect((await page(`/pay/subscribe/${sub.id}/manage?token=${sub.manageToken}x`)).status).toBe(404);
    expect((await page(`/pay/subscribe/${sub.id}/manage`)).status).toBe(404);
    const res = await page(`/pay/subscribe/${sub.id}/manage?token=${sub.manageToken}`);
    expect(res.status).toBe(200);
    const html = await res.text();
    expect(html).toContain("Active");
    expect(html).toContain("Pro plan: 25.00 USDC every month (30 days)");
    expect(html).toContain(`${sub.currentPeriodEnd!.toISOString().slice(0, 10)}: 25.00 USDC`);
    expect(html).toContain(sub.payer!);
    expect(html).toContain("No invoices yet.");
    // A period's invoice: its number, period, amount and status, linked to its hosted page.
    const draft = (
      await app.call("POST", "/v1/invoices", { body: { customerId: sub.customerId, lineItems: [{ description: "Pro plan", quantity: 1, unitAmount: "25" }] } })
    ).body;
    const invoice = (await app.call("POST", `/v1/invoices/${draft.id}/finalize`)).body;
    await app.db.prisma.invoice.update({
      where: { id: invoice.id },
      data: {
        subscriptionId: sub.id,
        billingReason: "subscription_create",
        periodIndex: 0,
        periodStart: sub.currentPeriodStart,
        periodEnd: sub.currentPeriodEnd,
      },
    });
    const listed = await (await page(`/pay/subscribe/${sub.id}/manage?token=${sub.manageToken}`)).text();
    expect(listed).toContain(`<a href="/pay/invoices/${invoice.id}">${invoice.number}</a>`);
    expect(listed).toContain(`${sub.currentPeriodStart!.toISOString().slice(0, 10)} – ${sub.currentPeriodEnd!.toISOString().slice(0, 10)}`);
    expect(listed).toContain("<td>25.00 USDC</td><td>Due</td>");
    expect(html).toContain(JSON.stringify(revokeCalldata(loadPermission(sub.permission as never))).slice(1, -1));
  });

  it("cancels at the period's end, then now, as the customer", async () => {
    const sub = await activeSubscription();
    const cancel = `/pay/subscribe/${sub.id}/manage/cancel`;
    expect((await form(cancel, { token: "wrong", at: "now" })).status).toBe(404);
    const bad = await form(cancel, { token: sub.manageToken, at: "tomorrow" });
    expect(bad.status).toBe(400);
    expect(await bad.text()).toContain('<p class="merchant">Test Shop</p>'); // the error page in the seller's name
    expect((await row(sub.id)).status).toBe("ACTIVE");
    const later = await form(cancel, { token: sub.manageToken, at: "period_end" });
    expect(later.status).toBe(303);
    expect(later.headers.get("location")).toBe(`/pay/subscribe/${sub.id}/manage?token=${encodeURIComponent(sub.manageToken)}&done=period_end`);
    expect(await row(sub.id)).toMatchObject({ status: "ACTIVE", cancelAtPeriodEnd: true });
    const shown = await (await page(later.headers.get("location")!)).text();
    expect(shown).toContain("will end at the end of this period");
    expect((await form(cancel, { token: sub.manageToken, at: "now" })).status).toBe(303);
    expect(await row(sub.id)).toMatchObject({ status: "CANCELED", cancelReason: "customer", nextPullAt: null });
    const again = await form(cancel, { token: sub.manageToken, at: "now" });
    expect(again.status).toBe(409);
    expect(await again.text()).toContain("Canceled");
  });
});
