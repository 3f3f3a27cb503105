// The SDK (`stablegate/sdk`) against the real service on an anvil devnet with its chain runner: a
// customer and a charge paid to COMPLETED, lists walked page by page, the API's errors as typed
// errors, retries that wait as Retry-After says and keep one Idempotency-Key, and received webhooks
// (a real one and a mock) verified into their typed events.
import { execFile } from "node:child_process";
import { mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { createServer } from "node:http";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { parseUnits } from "ethers";
import { pino } from "pino";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ChainSet, type EnabledChain } from "../../src/chain/chains.js";
import { startChainRunner } from "../../src/jobs/chain-runner.js";
import { startWebhookDispatcher } from "../../src/jobs/webhook-dispatcher.js";
import type { Periodic } from "../../src/lib/periodic.js";
import { API_VERSION, type Balance, type BalanceTransaction, type Charge, Stablegate, StablegateError, WebhookVerificationError } from "../../src/sdk/index.js";
import { startTestChain, type TestChain, waitFor } from "../helpers/chain.js";
import { POLLING, SETTINGS, startApp, type TestApp } from "../helpers/harness.js";
import { startReceiver } from "../helpers/receiver.js";

const logger = pino({ level: "silent" });
let chain: TestChain;
let devnet: EnabledChain;
let app: TestApp;
let runner: Periodic;
let producer: NodeJS.Timeout;
let sdk: Stablegate;

beforeAll(async () => {
  chain = await startTestChain();
  devnet = await chain.enabled(1);
  app = await startApp(POLLING, { chains: new ChainSet([devnet]) });
  runner = startChainRunner(app.db, devnet, logger, { intervalMs: 50, settings: { ...SETTINGS, feed: app.live }, bumpAfterMs: 60_000 });
  producer = setInterval(() => void chain.mine().catch(() => {}), 100);
  sdk = new Stablegate({ apiKey: app.testKey, baseUrl: app.url });
}, 60_000);
afterAll(async () => {
  clearInterval(producer);
  await runner?.stop();
  await app?.stop();
  await chain?.stop();
});

describe("stablegate/sdk", () => {
  it("creates a customer and a charge; the buyer pays on the devnet and the charge completes", async () => {
    const customer = await sdk.customers.create({ email: "sdk@example.com", name: "SDK Buyer", metadata: { plan: "pro" } });
    expect(customer).toMatchObject({ id: expect.stringMatching(/^cus_/), object: "customer", metadata: { plan: "pro" } });
    const charge: Charge = await sdk.charges.create({ orderId: "sdk-1", amount: "12.50", customerId: customer.id });
    expect(charge).toMatchObject({ status: "PENDING", amount: "12.50", customerId: customer.id });
    expect(await sdk.charges.retrieveByOrderId("sdk-1")).toEqual(charge);

    // The buyer's side (the hosted page): pick the chain, then pay the address (deployed by its payout).
    const picked = await app.call("POST", `/v1/public/charges/${charge.id}/chain`, { body: { chainId: devnet.chainId }, key: null });
    const buyer = chain.wallet(3);
    await chain.mint(buyer.address, parseUnits("12.50", 6));
    await chain.pay(buyer, picked.body.cloneAddress, parseUnits("12.50", 6));
    const done = await waitFor("COMPLETED", async () => {
      const c = await sdk.charges.retrieve(charge.id);
      return c.status === "COMPLETED" ? c : undefined;
    });
    expect(done).toMatchObject({ amountReceived: "12.50", netAmount: "12.375", feeAmount: "0.125" });
    expect(done.settlements).toHaveLength(1);
    expect(done.deployedAt).not.toBeNull();
    // Typed as the customer with its stats (no cast), and the plain retrieve as the customer without.
    const stats = await sdk.customers.retrieve(customer.id, { expand: "stats" });
    expect([stats.chargeCount, stats.invoiceCount, stats.totalSpent]).toEqual([1, 0, "12.50"]);
    expect(await sdk.customers.retrieve(customer.id)).not.toHaveProperty("chargeCount");
    const exported = (await sdk.charges.csv({ customerId: customer.id })).split("\r\n");
    expect([exported[0]!.split(",")[0], exported[1]!.split(",")[0], exported.length]).toEqual(["id", charge.id, 3]);
  });

  it("awaits a list for its first page and iterates it for every item of every page", async () => {
    const merchant = await app.newMerchant();
    const own = new Stablegate({ apiKey: merchant.apiKeys.test.secret, baseUrl: app.url });
    for (let i = 0; i < 23; i++) await own.customers.create({ email: `page-${i}@example.com`, name: `Page ${i}` });
    const first = await own.customers.list({ limit: 10 });
    expect(first).toMatchObject({ object: "list", hasMore: true });
    expect(first.data).toHaveLength(10);
    const all: string[] = [];
    for await (const c of own.customers.list({ limit: 10 })) all.push(c.email);
    expect(all).toHaveLength(23);
    expect(new Set(all).size).toBe(23);
    expect(all[0]).toBe("page-22@example.com");

    for (let i = 0; i < 7; i++) await own.charges.create({ orderId: `page-${i}`, amount: "1.00" });
    const charges: string[] = [];
    for await (const c of own.charges.list({ limit: 3 })) charges.push(c.orderId);
    expect(charges).toEqual(["page-6", "page-5", "page-4", "page-3", "page-2", "page-1", "page-0"]);

    // From a cursor towards newer records: each page is the one before the previous page's first.
    const oldest = (await own.charges.list({ limit: 100 })).data.at(-1)!;
    expect(oldest.orderId).toBe("page-0");
    const newer: string[] = [];
    for await (const c of own.charges.list({ limit: 2, endingBefore: oldest.id })) newer.push(c.orderId);
    expect(newer).toEqual(["page-2", "page-1", "page-4", "page-3", "page-6", "page-5"]);
  });

  it("drafts, finalizes and downloads an invoice, makes and retires a payment link, and lists refunds", async () => {
    const customer = await sdk.customers.create({ email: "sdk-invoice@example.com", name: "Invoice Buyer" });
    const draft = await sdk.invoices.create({ customerId: customer.id, lineItems: [{ description: "Plan", quantity: 3, unitAmount: "4.10" }] });
    expect(draft).toMatchObject({ status: "DRAFT", total: "12.30" });
    expect(await sdk.invoices.update(draft.id, { memo: "Thanks" })).toMatchObject({ memo: "Thanks" });
    const open = await sdk.invoices.finalize(draft.id);
    expect(open).toMatchObject({ status: "OPEN", number: "INV-000001" });
    const pdf = await sdk.invoices.pdf(draft.id);
    expect(new TextDecoder().decode(pdf.slice(0, 5))).toBe("%PDF-");
    const ids: string[] = [];
    for await (const i of sdk.invoices.list({ status: "OPEN" })) ids.push(i.id);
    expect(ids).toContain(draft.id);
    const refused = await sdk.invoices.delete(draft.id).catch((e: StablegateError) => e);
    expect(refused).toMatchObject({ status: 409, code: "invoice_not_editable" });
    expect(await sdk.invoices.void(draft.id)).toMatchObject({ status: "VOID" });

    const link = await sdk.paymentLinks.create({ name: "Tip jar", amount: "2.00" });
    expect(link).toMatchObject({ object: "payment_link", active: true });
    expect(await sdk.paymentLinks.update(link.id, { active: false })).toMatchObject({ active: false });
    expect((await sdk.refunds.list()).data).toEqual([]);
  });

  it("makes and retires a plan, subscribes a customer, lists, schedules the end and cancels", async () => {
    const customer = await sdk.customers.create({ email: "sdk-sub@example.com", name: "Subscriber" });
    const plan = await sdk.plans.create({ name: "SDK monthly", amount: "12.00", interval: "month", trialDays: 7 });
    expect(plan).toMatchObject({ object: "plan", amount: "12.00", interval: "month", intervalCount: 1, trialDays: 7, active: true });
    const sub = await sdk.subscriptions.create({ customerId: customer.id, planId: plan.id, metadata: { seat: "1" } });
    expect(sub).toMatchObject({ object: "subscription", status: "INCOMPLETE", amount: "12.00", customerId: customer.id, planId: plan.id });
    expect(sub.checkoutUrl).toMatch(new RegExp(`/subscribe/${sub.id}$`));
    expect(await sdk.subscriptions.retrieve(sub.id)).toEqual(sub);
    const listed: string[] = [];
    for await (const s of sdk.subscriptions.list({ customerId: customer.id, status: "INCOMPLETE" })) listed.push(s.id);
    expect(listed).toEqual([sub.id]);
    expect(await sdk.subscriptions.update(sub.id, { metadata: { seat: "2" } })).toMatchObject({ metadata: { seat: "2" } });
    expect(await sdk.subscriptions.cancel(sub.id)).toMatchObject({ status: "CANCELED", cancelReason: "requested" });
    expect(await sdk.subscriptions.cancel(sub.id).catch((e: StablegateError) => e)).toMatchObject({ status: 409, code: "subscription_not_cancelable" });
    expect(await sdk.plans.update(plan.id, { active: false })).toMatchObject({ active: false });
    expect((await sdk.plans.list({ active: false })).data.map((p) => p.id)).toContain(plan.id);
    const inactive = await sdk.subscriptions.create({ customerId: customer.id, planId: plan.id }).catch((e: StablegateError) => e);
    expect(inactive).toMatchObject({ status: 409, code: "plan_inactive", param: "planId" });
  });

  it("reads the ledger: balance transactions page by page, one by id, as CSV, and the balance", async () => {
    const merchant = await app.newMerchant();
    const own = new Stablegate({ apiKey: merchant.apiKeys.test.secret, baseUrl: app.url });
    const charge = await own.charges.create({ orderId: "sdk-ledger", amount: "8.00" });
    const picked = await app.call("POST", `/v1/public/charges/${charge.id}/chain`, { body: { chainId: devnet.chainId }, key: null });
    const buyer = chain.wallet(4);
    await chain.mint(buyer.address, parseUnits("8.00", 6));
    await chain.pay(buyer, picked.body.cloneAddress, parseUnits("8.00", 6));
    await waitFor("COMPLETED", async () => (await own.charges.retrieve(charge.id)).status === "COMPLETED");

    const first: BalanceTransaction[] = [];
    for await (const b of own.balanceTransactions.list({ limit: 1 })) first.push(b);
    expect(first.map((b) => [b.type, b.amount]).sort()).toEqual([
      ["fee", "-0.08"],
      ["payment", "8.00"],
      ["payout", "-7.92"],
    ]);
    const rest = await app.call("GET", "/v1/balance_transactions", { key: merchant.apiKeys.test.secret });
    expect(first).toEqual(rest.body.data);
    const page = await own.balanceTransactions.list({ limit: 2 });
    expect(page).toMatchObject({ object: "list", hasMore: true });
    expect(page.data).toEqual(first.slice(0, 2));
    const fees = await own.balanceTransactions.list({ type: "fee", chargeId: charge.id });
    expect(fees.data).toEqual(first.filter((b) => b.type === "fee"));
    expect(await own.balanceTransactions.retrieve(first[0]!.id)).toEqual(first[0]);
    const missing = await own.balanceTransactions.retrieve(`btx_${"0".repeat(24)}`).catch((e: StablegateError) => e);
    expect(missing).toMatchObject({ status: 404, code: "resource_missing" });
    const bad = await own.balanceTransactions.list({ createdGte: "yesterday" }).then(
      () => null,
      (e: StablegateError) => e,
    );
    expect(bad).toMatchObject({ status: 400, code: "parameter_invalid", param: "createdGte" });

    const csv = (await own.balanceTransactions.csv({ chargeId: charge.id })).split("\r\n");
    expect(csv[0]).toMatch(/^id,type,amount,/);
    expect(csv.slice(1, -1).map((line) => line.split(",")[0])).toEqual(first.map((b) => b.id));
    expect(csv.at(-1)).toBe("");
    const payoutsCsv = await own.balanceTransactions.csv({ type: "payout" });
    expect(payoutsCsv.trim().split("\r\n")).toHaveLength(2);

    const balance: Balance = await own.balance.retrieve();
    expect(balance).toEqual((await app.call("GET", "/v1/balance", { key: merchant.apiKeys.test.secret })).body);
    expect(balance).toMatchObject({
      object: "balance",
      livemode: false,
      held: [],
      onItsWay: [],
      paidOut: [{ chainId: devnet.chainId, amount: "7.92" }],
      fees: [{ chainId: devnet.chainId, amount: "0.08" }],
      refunded: [],
    });
  });

  it("throws the API's errors as typed errors with code, param and request id", async () => {
    await sdk.charges.create({ orderId: "sdk-dup", amount: "1.00" });
    const dup = await sdk.charges.create({ orderId: "sdk-dup", amount: "1.00" }).catch((e: unknown) => e);
    expect(dup).toBeInstanceOf(StablegateError);
    expect(dup).toMatchObject({
      status: 409,
      code: "duplicate_order_id",
      param: "orderId",
      requestId: expect.stringMatching(/^req_/),
      docUrl: expect.stringMatching(/\/docs#error-duplicate_order_id$/),
    });
    const bad = await sdk.customers.create({ email: "not an email", name: "X" }).catch((e: StablegateError) => e);
    expect(bad).toMatchObject({ status: 400, code: "parameter_invalid", param: "email" });
    const missing = await sdk.charges.retrieve("chrg_nothere").catch((e: StablegateError) => e);
    expect(missing).toMatchObject({ status: 404, code: "resource_missing" });
  });

  it("is refused with 429 rate_limited once the key's budget is spent, carrying Retry-After", async () => {
    const limited = await startApp({ RATE_LIMIT_CREATE: "2" });
    try {
      const client = new Stablegate({ apiKey: limited.testKey, baseUrl: limited.url, maxRetries: 0 });
      await client.customers.create({ email: "a@example.com", name: "A" });
      await client.customers.create({ email: "b@example.com", name: "B" });
      const refused = await client.customers.create({ email: "c@example.com", name: "C" }).catch((e: StablegateError) => e);
      expect(refused).toMatchObject({ status: 429, code: "rate_limited" });
      expect((refused as StablegateError).retryAfter).toBeGreaterThan(0);
    } finally {
      await limited.stop();
    }
  });

  it("retries 429 and 5xx answers after Retry-After, with the same Idempotency-Key and Stablegate-Version", async () => {
    const seen: { key: string | undefined; version: string | undefined; at: number }[] = [];
    const answers = [
      [429, { "Retry-After": "1" }],
      [503, {}],
      [201, {}],
    ] as const;
    const server = createServer((req, res) => {
      seen.push({
        key: req.headers["idempotency-key"] as string | undefined,
        version: req.headers["stablegate-version"] as string | undefined,
        at: Date.now(),
      });
      const [status, headers] = answers[seen.length - 1]!;
      const body =
        status === 201
          ? { id: "cus_retried", object: "customer" }
          : { statusCode: status, code: status === 429 ? "rate_limited" : "internal_error", message: "later", param: null, requestId: "req_x" };
      res.writeHead(status, { "content-type": "application/json", ...headers }).end(JSON.stringify(body));
    });
    await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
    try {
      const { port } = server.address() as { port: number };
      const client = new Stablegate({ apiKey: "sk_test_x", baseUrl: `http://127.0.0.1:${port}` });
      const created = await client.customers.create({ email: "r@example.com", name: "R" });
      expect(created.id).toBe("cus_retried");
      expect(seen).toHaveLength(3);
      expect(new Set(seen.map((s) => s.key)).size).toBe(1);
      expect(seen[0]!.key).toMatch(/^[0-9a-f-]{36}$/);
      expect(seen.map((s) => s.version)).toEqual([API_VERSION, API_VERSION, API_VERSION]);
      expect(seen[1]!.at - seen[0]!.at).toBeGreaterThanOrEqual(950);
      // Out of retries: the last error is thrown.
      seen.length = 0;
      const giveUp = new Stablegate({ apiKey: "sk_test_x", baseUrl: `http://127.0.0.1:${port}`, maxRetries: 0 });
      await expect(giveUp.customers.create({ email: "r@example.com", name: "R" })).rejects.toMatchObject({ status: 429, retryAfter: 1 });
    } finally {
      server.close();
    }
  });

  it("verifies a received webhook into its typed event, and refuses a changed body or another secret", async () => {
    const merchant = await app.newMerchant();
    const own = new Stablegate({ apiKey: merchant.apiKeys.test.secret, baseUrl: app.url });
    const receiver = await startReceiver();
    const endpoint = await own.webhookEndpoints.create({ url: receiver.url, events: ["customer.created", "charge.completed"] });
    const dispatcher = startWebhookDispatcher(app.db.prisma, logger, { intervalMs: 20 });
    try {
      const customer = await own.customers.create({ email: "hooked@example.com", name: "Hooked" });
      const [got] = await receiver.waitForCount(1);
      const event = own.webhooks.verify(got!.body, got!.headers, endpoint.secret);
      expect(event).toMatchObject({ type: "customer.created", data: { id: customer.id } });
      // The union narrows on `type`: this branch's `data` is a customer.
      if (event.type !== "customer.created") throw new Error(event.type);
      expect(event.data.email).toBe("hooked@example.com");

      // A mock of an event no test-mode payment could produce here, delivered and verified the same way.
      const mock = await own.webhooks.sendTest({ type: "charge.completed" });
      const [, completed] = await receiver.waitForCount(2);
      const paid = own.webhooks.verify(completed!.body, completed!.headers, endpoint.secret);
      expect(paid).toMatchObject({ id: mock.id, type: "charge.completed" });
      if (paid.type !== "charge.completed") throw new Error(paid.type);
      expect(paid.data.status).toBe("COMPLETED");

      expect(() => own.webhooks.verify(got!.body.replace("Hooked", "Hacked"), got!.headers, endpoint.secret)).toThrow(WebhookVerificationError);
      const rotated = await own.webhookEndpoints.rotateSecret(endpoint.id, { overlapHours: 0 });
      expect(() => own.webhooks.verify(got!.body, got!.headers, rotated.secret)).toThrow(/no signature matches/);
      expect(() => own.webhooks.verify(got!.body, { ...got!.headers, "webhook-timestamp": "1000000000" }, endpoint.secret)).toThrow(/too old/);
    } finally {
      await dispatcher.stop();
      await receiver.close();
    }
  });

  it("is importable as stablegate/sdk from the built package", async () => {
    const { stdout } = await promisify(execFile)(process.execPath, [
      "--input-type=module",
      "-e",
      "const m = await import('stablegate/sdk'); console.log(typeof m.Stablegate, typeof m.StablegateError);",
    ]);
    expect(stdout.trim()).toBe("function function");
  });

  it("gives a TypeScript project its types: a wrong amount or status does not compile", async () => {
    const dir = mkdtempSync(join(tmpdir(), "sg-sdk-consumer-"));
    try {
      mkdirSync(join(dir, "node_modules"));
      symlinkSync(process.cwd(), join(dir, "node_modules", "stablegate"));
      // An ES module project: it gets the ES module build, which the tests' global setup compiles.
      writeFileSync(join(dir, "package.json"), JSON.stringify({ type: "module" }));
      writeFileSync(
        join(dir, "consumer.ts"),
        `import { Stablegate, StablegateError, type Charge } from "stablegate/sdk";
const sg = new Stablegate({ apiKey: "sk_test_x", baseUrl: "http://127.0.0.1:1" });
export async function run(): Promise<string> {
  const charge: Charge = await sg.charges.create({ orderId: "o-1", amount: "25.00", metadata: { sku: "mug" } });
  // @ts-expect-error amounts are strings
  await sg.charges.create({ orderId: "o-2", amount: 25 });
  // @ts-expect-error no such status
  if (charge.status === "PAID") return "";
  for await (const c of sg.customers.list({ limit: 10 })) void c.email;
  for await (const b of sg.balanceTransactions.list({ type: "fee", createdGte: "2026-01-01T00:00:00Z" })) void b.amount.startsWith("-");
  // @ts-expect-error no such ledger type
  await sg.balanceTransactions.list({ type: "chargeback" });
  const held: string | undefined = (await sg.balance.retrieve()).held[0]?.amount;
  void held;
  void (await sg.balanceTransactions.csv({ chargeId: charge.id })).length;
  // @ts-expect-error an export has every row: no cursor
  await sg.balanceTransactions.csv({ startingAfter: "btx_1" });
  const page = await sg.charges.list({ limit: 10 });
  const firstId: string | undefined = page.data[0]?.id;
  void firstId;
  const withStats = await sg.customers.retrieve("cus_1", { expand: "stats" });
  const count: number = withStats.chargeCount;
  void count;
  // @ts-expect-error a customer retrieved without expand has no stats
  void (await sg.customers.retrieve("cus_1")).chargeCount;
  // @ts-expect-error stats is the one expandable field
  await sg.customers.retrieve("cus_1", { expand: "charges" });
  try { await sg.charges.cancel(charge.id); } catch (e) { if (e instanceof StablegateError) return e.code; }
  return charge.paymentUrl;
}
export function onWebhook(body: string, headers: Record<string, string>, secret: string): string | null {
  const event = sg.webhooks.verify(body, headers, secret);
  if (event.type === "charge.completed") return event.data.amountReceived;
  // @ts-expect-error no such event type
  if (event.type === "charge.paid") return null;
  return event.type;
}
`,
      );
      const compilerOptions = {
        module: "nodenext",
        moduleResolution: "nodenext",
        target: "es2022",
        strict: true,
        noEmit: true,
        lib: ["es2023", "dom"],
        types: [],
      };
      writeFileSync(join(dir, "tsconfig.json"), JSON.stringify({ compilerOptions, files: ["consumer.ts"] }));
      const tsc = join(process.cwd(), "node_modules/typescript/bin/tsc");
      const result = await promisify(execFile)(process.execPath, [tsc, "-p", dir]).catch((e: { stdout: string }) => e);
      expect((result as { stdout: string }).stdout).toBe("");
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
