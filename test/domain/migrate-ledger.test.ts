// The ledger migration (20261203000000_ledger_and_clones_v2) on a version 1 database: tables as the
// earlier migrations left them, filled with raw SQL the way the version 1 code filled them (money
// fields counted by its rules), then migrated. What it must give: one chain transfer per payment,
// settlement side and refund transfer, one immutable ledger row per confirmed one, every money field
// the sum of its rows and equal to what the merchant saw before, and a database the app's own domain
// code keeps working on (deriveMoney changes nothing; SEEN transfers are confirmed; an unpicked
// charge picks a chain as version 2).
import { cpSync, mkdtempSync, readdirSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { getAddress } from "ethers";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ChainSet, enableChain } from "../../src/chain/chains.js";
import { factoryV2Address, predictCloneV2 } from "../../src/chain/clones.js";
import type { Database } from "../../src/db/client.js";
import { MIGRATIONS_DIR, migrate } from "../../src/db/migrate.js";
import { selectChain } from "../../src/domain/chain-selection.js";
import { factKey } from "../../src/domain/chain-transfers.js";
import { deriveMoney } from "../../src/domain/ledger.js";
import { confirmChainMoney } from "../../src/domain/payments.js";
import { freshDatabase, SETTINGS, WALLET } from "../helpers/harness.js";

const LEDGER = "20261203000000_ledger_and_clones_v2";
/** The migration that turned flushes into settlements: charges paid out before it have no settlement rows. */
const CHAIN_TRUTH = "20261124000000_chain_truth";
const CHAIN = 84532;
const FEE_RECIPIENT = "0x3C44CdDdB6a900fa2b585dd299e03d12FA4293BC";
const ZERO = "0x0000000000000000000000000000000000000000";

/** A copy of the migrations directory with only the migrations named before `upTo`. */
function migrationsBefore(upTo: string): string {
  const dir = mkdtempSync(join(tmpdir(), "sg-ledger-mig-"));
  for (const name of readdirSync(MIGRATIONS_DIR)) {
    if (/^\d{14}_/.test(name) && name < upTo) cpSync(join(MIGRATIONS_DIR, name), join(dir, name), { recursive: true });
  }
  return dir;
}
const BEFORE_CHAIN_TRUTH = migrationsBefore(CHAIN_TRUTH);
const VERSION_1 = migrationsBefore(LEDGER);
/** What migrating a version 1 database applies: the ledger migration, then every later one. */
const FROM_LEDGER = readdirSync(MIGRATIONS_DIR)
  .filter((name) => /^\d{14}_/.test(name) && name >= LEDGER)
  .sort();

const addr = (hex: string) => getAddress(`0x${hex.repeat(40 / hex.length)}`);
const txh = (n: number) => `0x${n.toString(16).padStart(4, "0")}${"ab".repeat(30)}`;
const blockHash = (n: number) => `0x${n.toString(16).padStart(64, "b")}`;
/** 2026-12-01 10:00 UTC plus `minutes`, as the version 1 code wrote times (toISOString). */
const at = (minutes: number) => new Date(Date.UTC(2026, 11, 1, 10, minutes)).toISOString();

const W = WALLET;
const BUYER = { 1: addr("b1"), 2: addr("b2"), 3: addr("b3"), 4: addr("b4"), 6: addr("b6"), 7: addr("b7"), 8: addr("b8"), f: addr("bf") };

/** SQL literal of a value (objects as JSON). */
function lit(v: unknown): string {
  if (v === null || v === undefined) return "NULL";
  if (typeof v === "number" || typeof v === "bigint" || typeof v === "boolean") return String(v);
  if (typeof v === "object") return lit(JSON.stringify(v));
  return `'${String(v).replace(/'/g, "''")}'`;
}
function insert(table: string, row: Record<string, unknown>): string {
  const keys = Object.keys(row).filter((k) => row[k] !== undefined);
  return `INSERT INTO "${table}" (${keys.map((k) => `"${k}"`).join(", ")}) VALUES (${keys.map((k) => lit(row[k])).join(", ")});`;
}

// Version 1 data, as its code wrote it.
interface OldCharge {
  id: string;
  status: "PENDING" | "RECEIVED" | "COMPLETED" | "EXPIRED" | "CANCELLED";
  amount: bigint;
  feeBps?: number;
  clone: string | null;
  invoiceId?: string;
  expiresAt: string;
  flushId?: string;
}
interface OldPayment {
  id: string;
  chargeId: string;
  tx: string;
  log: number;
  block: number;
  from: string;
  amount: bigint;
  status: "SEEN" | "CONFIRMED";
  late?: boolean;
  confirmedAt?: string;
}
interface OldSettlement {
  id: string;
  chargeId: string;
  tx: string;
  log: number;
  block: number;
  net: bigint;
  fee: bigint;
  status: "SEEN" | "CONFIRMED";
  confirmedAt?: string;
}
interface OldRefund {
  id: string;
  chargeId: string;
  amount: bigint;
  status: "AWAITING_PAYMENT" | "COMPLETED";
  address: string;
  afterBlock: number;
  tx?: { hash: string; log: number; block: number };
  completedAt?: string;
  authorization?: { nonce: string; txId: string };
}

const charges: OldCharge[] = [
  // (1) Paid, paid out, partly refunded (its refund paid by an authorization the service relayed).
  { id: "chrg_completed", status: "COMPLETED", amount: 10_000_000n, clone: addr("c1"), expiresAt: at(15) },
  // (2) A confirmed partial payment and the rest seen, waiting for confirmations.
  { id: "chrg_partial", status: "PENDING", amount: 10_000_000n, clone: addr("c2"), expiresAt: at(90) },
  // (3) Expired underpaid (two identical transfers in one transaction), a late payment, all paid out.
  { id: "chrg_underpaid", status: "EXPIRED", amount: 10_000_000n, clone: addr("c3"), expiresAt: at(35) },
  // (4) Pays an invoice; paid again, late (version 1 counted that on the invoice too).
  { id: "chrg_invoice", status: "COMPLETED", amount: 7_000_000n, clone: addr("c4"), invoiceId: "inv_paid", expiresAt: at(55) },
  // (5) No chain picked: no clone.
  { id: "chrg_unpicked", status: "PENDING", amount: 2_500_000n, clone: null, expiresAt: at(120) },
  // (6) Paid out; its refund's transfer is seen, not confirmed.
  { id: "chrg_refunding", status: "COMPLETED", amount: 5_000_000n, clone: addr("c6"), expiresAt: at(65) },
  // (7) A merchant without fee: paid out with a zero fee.
  { id: "chrg_nofee", status: "COMPLETED", amount: 2_000_000n, feeBps: 0, clone: addr("c7"), expiresAt: at(75) },
  // (8) Paid; its payout is seen, not confirmed (a flush in flight at the upgrade).
  { id: "chrg_paying_out", status: "RECEIVED", amount: 3_000_000n, clone: addr("c8"), expiresAt: at(85), flushId: "rtx_flush8" },
  // (9) A voided invoice's charge (cancelled by the void), paid afterwards: version 1 counted it on the invoice.
  { id: "chrg_void", status: "CANCELLED", amount: 2_000_000n, clone: addr("c9"), invoiceId: "inv_void", expiresAt: at(95) },
];
const payments: OldPayment[] = [
  { id: "pay_c1", chargeId: "chrg_completed", tx: txh(1), log: 3, block: 100, from: BUYER[1], amount: 10_000_000n, status: "CONFIRMED", confirmedAt: at(2) },
  { id: "pay_c2a", chargeId: "chrg_partial", tx: txh(4), log: 0, block: 120, from: BUYER[2], amount: 4_000_000n, status: "CONFIRMED", confirmedAt: at(20) },
  { id: "pay_c2b", chargeId: "chrg_partial", tx: txh(5), log: 0, block: 125, from: BUYER[2], amount: 6_000_000n, status: "SEEN" },
  { id: "pay_c3a", chargeId: "chrg_underpaid", tx: txh(6), log: 0, block: 130, from: BUYER[3], amount: 1_000_000n, status: "CONFIRMED", confirmedAt: at(30) },
  { id: "pay_c3b", chargeId: "chrg_underpaid", tx: txh(6), log: 1, block: 130, from: BUYER[3], amount: 1_000_000n, status: "CONFIRMED", confirmedAt: at(30) },
  {
    id: "pay_c3c",
    chargeId: "chrg_underpaid",
    tx: txh(7),
    log: 0,
    block: 140,
    from: BUYER[3],
    amount: 1_000_000n,
    status: "CONFIRMED",
    late: true,
    confirmedAt: at(40),
  },
  { id: "pay_c4", chargeId: "chrg_invoice", tx: txh(9), log: 0, block: 150, from: BUYER[4], amount: 7_000_000n, status: "CONFIRMED", confirmedAt: at(50) },
  // The buyer paid the invoice's charge twice: the second payment came after it completed (late).
  {
    id: "pay_c4_again",
    chargeId: "chrg_invoice",
    tx: txh(18),
    log: 0,
    block: 154,
    from: BUYER[4],
    amount: 1_000_000n,
    status: "CONFIRMED",
    late: true,
    confirmedAt: at(54),
  },
  { id: "pay_c6", chargeId: "chrg_refunding", tx: txh(11), log: 0, block: 160, from: BUYER[6], amount: 5_000_000n, status: "CONFIRMED", confirmedAt: at(60) },
  { id: "pay_c7", chargeId: "chrg_nofee", tx: txh(14), log: 0, block: 172, from: BUYER[7], amount: 2_000_000n, status: "CONFIRMED", confirmedAt: at(70) },
  { id: "pay_c8", chargeId: "chrg_paying_out", tx: txh(16), log: 0, block: 176, from: BUYER[8], amount: 3_000_000n, status: "CONFIRMED", confirmedAt: at(80) },
  {
    id: "pay_c9",
    chargeId: "chrg_void",
    tx: txh(22),
    log: 0,
    block: 180,
    from: BUYER[8],
    amount: 2_000_000n,
    status: "CONFIRMED",
    late: true,
    confirmedAt: at(92),
  },
];
const settlements: OldSettlement[] = [
  { id: "stl_c1", chargeId: "chrg_completed", tx: txh(2), log: 1, block: 102, net: 9_900_000n, fee: 100_000n, status: "CONFIRMED", confirmedAt: at(5) },
  { id: "stl_c3", chargeId: "chrg_underpaid", tx: txh(8), log: 2, block: 142, net: 2_970_000n, fee: 30_000n, status: "CONFIRMED", confirmedAt: at(42) },
  { id: "stl_c4", chargeId: "chrg_invoice", tx: txh(10), log: 1, block: 152, net: 6_930_000n, fee: 70_000n, status: "CONFIRMED", confirmedAt: at(52) },
  { id: "stl_c6", chargeId: "chrg_refunding", tx: txh(12), log: 1, block: 162, net: 4_950_000n, fee: 50_000n, status: "CONFIRMED", confirmedAt: at(62) },
  { id: "stl_c7", chargeId: "chrg_nofee", tx: txh(15), log: 1, block: 174, net: 2_000_000n, fee: 0n, status: "CONFIRMED", confirmedAt: at(74) },
  { id: "stl_c8", chargeId: "chrg_paying_out", tx: txh(17), log: 1, block: 178, net: 2_970_000n, fee: 30_000n, status: "SEEN" },
];
const refunds: OldRefund[] = [
  {
    id: "ref_completed",
    chargeId: "chrg_completed",
    amount: 3_000_000n,
    status: "COMPLETED",
    address: BUYER[1],
    afterBlock: 103,
    tx: { hash: txh(3), log: 0, block: 110 },
    completedAt: at(12),
    authorization: { nonce: `0x${"a1".repeat(32)}`, txId: "rtx_refund1" },
  },
  {
    id: "ref_seen",
    chargeId: "chrg_refunding",
    amount: 1_000_000n,
    status: "AWAITING_PAYMENT",
    address: BUYER[6],
    afterBlock: 163,
    tx: { hash: txh(13), log: 4, block: 170 },
  },
];

const sum = (xs: bigint[]) => xs.reduce((a, b) => a + b, 0n);

/** Version 1's charge row: its money fields as version 1 counted them (confirmed payments and settlements, completed refunds). */
function chargeRow(c: OldCharge, ps = payments, ss = settlements, rs = refunds): Record<string, unknown> {
  const paid = ps.filter((p) => p.chargeId === c.id && p.status === "CONFIRMED");
  const out = ss.filter((s) => s.chargeId === c.id && s.status === "CONFIRMED");
  const refunded = rs.filter((r) => r.chargeId === c.id && r.status === "COMPLETED");
  const net = sum(out.map((s) => s.net));
  const fee = sum(out.map((s) => s.fee));
  return {
    id: c.id,
    merchant_id: "mer_v1",
    livemode: false,
    order_id: `order-${c.id}`,
    amount: c.amount,
    amount_received: paid.length > 0 ? sum(paid.map((p) => p.amount)) : null,
    fee_amount: out.length > 0 ? fee : null,
    net_amount: out.length > 0 ? net : null,
    settled_amount: net + fee,
    amount_refunded: sum(refunded.map((r) => r.amount)),
    status: c.status,
    fee_bps: c.feeBps ?? 100,
    settlement_wallet: W,
    chain_id: c.clone ? CHAIN : null,
    clone_address: c.clone,
    confirmations: c.clone ? 1 : null,
    flush_tx_hash: out[0]?.tx ?? null,
    flush_id: c.flushId,
    settlements: out.map((s) => ({
      txHash: s.tx,
      logIndex: s.log,
      blockNumber: s.block,
      netAmount: String(s.net),
      feeAmount: String(s.fee),
      confirmedAt: s.confirmedAt,
    })),
    invoice_id: c.invoiceId,
    expires_at: c.expiresAt,
    created_at: at(0),
    updated_at: at(1),
    completed_at: c.status === "COMPLETED" ? out[out.length - 1]!.confirmedAt : null,
    deployed_at: c.clone ? at(1) : null,
  };
}

function paymentRow(p: OldPayment): Record<string, unknown> {
  return {
    id: p.id,
    charge_id: p.chargeId,
    chain_id: CHAIN,
    tx_hash: p.tx,
    log_index: p.log,
    block_number: p.block,
    block_hash: blockHash(p.block),
    from_address: p.from,
    amount: p.amount,
    status: p.status,
    late: p.late ?? false,
    created_at: at(1),
    confirmed_at: p.confirmedAt ?? null,
  };
}

function settlementRow(s: OldSettlement): Record<string, unknown> {
  return {
    id: s.id,
    charge_id: s.chargeId,
    chain_id: CHAIN,
    tx_hash: s.tx,
    log_index: s.log,
    block_number: s.block,
    block_hash: blockHash(s.block),
    net_amount: s.net,
    fee_amount: s.fee,
    status: s.status,
    created_at: at(1),
    confirmed_at: s.confirmedAt ?? null,
  };
}

function refundRow(r: OldRefund, from = W): Record<string, unknown> {
  return {
    id: r.id,
    merchant_id: "mer_v1",
    livemode: false,
    charge_id: r.chargeId,
    amount: r.amount,
    status: r.status,
    chain_id: CHAIN,
    from_address: from,
    address: r.address,
    after_block: r.afterBlock,
    tx_hash: r.tx?.hash ?? null,
    log_index: r.tx?.log ?? null,
    block_number: r.tx?.block ?? null,
    created_at: at(10),
    updated_at: r.completedAt ?? at(11),
    completed_at: r.completedAt ?? null,
    authorization: r.authorization && {
      from,
      to: r.address,
      value: String(r.amount),
      validAfter: "0",
      validBefore: "1796126400",
      nonce: r.authorization.nonce,
      signature: `0x${"5e".repeat(65)}`,
    },
    authorization_tx_id: r.authorization?.txId ?? null,
    authorization_error: null,
  };
}

/** A relayer transaction of version 1 (kind DEPLOY, FLUSH or AUTHORIZATION). */
function relayerTxRow(id: string, kind: string, status: string, tx: string, block: number, nonce: number): Record<string, unknown> {
  return {
    id,
    chain_id: CHAIN,
    kind,
    status,
    nonce,
    raw_tx: "0x02",
    tx_hashes: `{${tx}}`,
    tx_hash: tx,
    block_number: block,
    block_hash: blockHash(block),
    created_at: at(1),
    updated_at: at(2),
  };
}

/** Runs a script of statements on `db`. */
const run = (db: Database, script: string) => db.sql.withLock(0x7e57_1ed9, (conn) => conn.exec(script));

// A charge paid out before chain_truth: its flush is a relayer transaction and chain_truth made it the
// first entry of the charge's settlements, but there is no settlements row for it.
const FLUSHED = { id: "chrg_flushed", clone: addr("cf"), payTx: txh(20), flushTx: txh(21), received: 5_000_000n, net: 4_950_000n, fee: 50_000n };
const BEFORE_CHAIN_TRUTH_DATA = [
  insert("merchants", { id: "mer_v1", name: "Old Shop", fee_bps: 100, test_wallet: W, live_wallet: W }),
  insert("flushes", {
    id: "flush_f",
    chain_id: CHAIN,
    status: "CONFIRMED",
    nonce: 0,
    raw_tx: "0x02",
    tx_hashes: `{${FLUSHED.flushTx}}`,
    tx_hash: FLUSHED.flushTx,
    block_number: 52,
    block_hash: blockHash(52),
    created_at: "2026-11-23T09:00:00.000Z",
    updated_at: "2026-11-23T09:05:00.000Z",
  }),
  insert("charges", {
    id: FLUSHED.id,
    merchant_id: "mer_v1",
    livemode: false,
    order_id: "order-flushed",
    amount: FLUSHED.received,
    amount_received: FLUSHED.received,
    fee_amount: FLUSHED.fee,
    net_amount: FLUSHED.net,
    settled_amount: FLUSHED.received,
    status: "COMPLETED",
    fee_bps: 100,
    settlement_wallet: W,
    chain_id: CHAIN,
    clone_address: FLUSHED.clone,
    confirmations: 1,
    flush_tx_hash: FLUSHED.flushTx,
    expires_at: "2026-11-23T09:15:00.000Z",
    created_at: "2026-11-23T08:59:00.000Z",
    completed_at: "2026-11-23T09:05:00.000Z",
    deployed_at: "2026-11-23T08:59:30.000Z",
  }),
  insert("payments", {
    id: "pay_flushed",
    charge_id: FLUSHED.id,
    chain_id: CHAIN,
    tx_hash: FLUSHED.payTx,
    log_index: 0,
    block_number: 50,
    block_hash: blockHash(50),
    from_address: BUYER.f,
    amount: FLUSHED.received,
    status: "CONFIRMED",
    confirmed_at: "2026-11-23T09:02:00.000Z",
  }),
  insert("clone_deployments", { charge_id: FLUSHED.id, chain_id: CHAIN, status: "MINED" }),
].join("\n");

const VERSION_1_DATA = [
  insert("relayer_transactions", relayerTxRow("rtx_refund1", "AUTHORIZATION", "CONFIRMED", txh(3), 110, 1)),
  insert("relayer_transactions", relayerTxRow("rtx_gasless", "AUTHORIZATION", "CONFIRMED", txh(4), 120, 2)),
  insert("relayer_transactions", relayerTxRow("rtx_flush8", "FLUSH", "MINED", txh(17), 178, 3)),
  insert("invoices", {
    id: "inv_paid",
    merchant_id: "mer_v1",
    livemode: false,
    number: "INV-0001",
    status: "PAID",
    total: 7_000_000n,
    amount_paid: 8_000_000n,
    line_items: [{ description: "Consulting", quantity: 1, unitAmount: "7000000" }],
    finalized_at: at(45),
    paid_at: at(50),
  }),
  insert("invoices", {
    id: "inv_void",
    merchant_id: "mer_v1",
    livemode: false,
    number: "INV-0002",
    status: "VOID",
    total: 2_000_000n,
    amount_paid: 2_000_000n,
    line_items: [{ description: "Cancelled work", quantity: 1, unitAmount: "2000000" }],
    finalized_at: at(88),
  }),
  ...charges.map((c) => insert("charges", chargeRow(c))),
  ...charges.filter((c) => c.clone).map((c) => insert("clone_deployments", { charge_id: c.id, chain_id: CHAIN, status: "MINED" })),
  ...payments.map((p) => insert("payments", paymentRow(p))),
  ...settlements.map((s) => insert("settlements", settlementRow(s))),
  ...refunds.map((r) => insert("refunds", refundRow(r))),
  // The gasless payment that paid chrg_partial's first part.
  insert("charge_authorizations", {
    id: "cauth_partial",
    charge_id: "chrg_partial",
    chain_id: CHAIN,
    from_address: BUYER[2],
    value: 4_000_000n,
    valid_after: 0,
    valid_before: 1796126400,
    nonce: `0x${"c2".repeat(32)}`,
    signature: `0x${"5f".repeat(65)}`,
    status: "MINED",
    tx_id: "rtx_gasless",
    gas_estimate: 90_000,
    gas_used: 81_234,
    created_at: at(18),
    updated_at: at(20),
  }),
].join("\n");

interface MoneyRow {
  id: string;
  amount_received: string | null;
  fee_amount: string | null;
  net_amount: string | null;
  settled_amount: string;
  amount_refunded: string;
  settlements: string;
}
const MONEY = `id, amount_received::text, fee_amount::text, net_amount::text, settled_amount::text, amount_refunded::text, settlements::text`;
const readMoney = async (db: Database) =>
  new Map((await db.prisma.$queryRawUnsafe<MoneyRow[]>(`SELECT ${MONEY} FROM charges ORDER BY id`)).map((r) => [r.id, r]));
const money = (r: MoneyRow) => ({
  amountReceived: r.amount_received,
  feeAmount: r.fee_amount,
  netAmount: r.net_amount,
  settledAmount: r.settled_amount,
  amountRefunded: r.amount_refunded,
});

interface LedgerRow {
  id: string;
  type: string;
  amount: string;
  charge_id: string;
  chain_id: number;
  invoice_id: string | null;
}
const readLedger = (db: Database) =>
  db.prisma.$queryRawUnsafe<LedgerRow[]>(`SELECT id, type::text, amount::text, charge_id, chain_id, invoice_id FROM balance_transactions ORDER BY id`);

/** A charge's money fields as its ledger rows say (domain/ledger.ts: null only where no such money ever moved). */
function fromLedger(rows: readonly LedgerRow[]) {
  const of = (type: string) => rows.filter((r) => r.type === type).map((r) => BigInt(r.amount));
  const payments = of("payment");
  const out = [...of("payout"), ...of("fee")];
  const fees = -sum(of("fee"));
  const payouts = -sum(of("payout"));
  return {
    amountReceived: payments.length > 0 ? String(sum(payments)) : null,
    feeAmount: out.length > 0 ? String(fees) : null,
    netAmount: out.length > 0 ? String(payouts) : null,
    settledAmount: String(fees + payouts),
    amountRefunded: String(-sum(of("refund"))),
  };
}

/** Settlements entries as the app reads them (StoredSettlement), whatever else an entry carries. */
const storedSettlements = (json: string) =>
  (JSON.parse(json) as Record<string, unknown>[]).map((e) => ({
    txHash: e.txHash,
    chainId: e.chainId,
    blockNumber: e.blockNumber,
    netAmount: e.netAmount,
    feeAmount: e.feeAmount,
    confirmedAt: new Date(e.confirmedAt as string).toISOString(),
  }));

describe("the ledger migration on a version 1 database", () => {
  let db: Database;
  let drop: () => Promise<void>;
  /** The charges' money fields just before the ledger migration. */
  let before: Map<string, MoneyRow>;
  let applied: string[];

  beforeAll(async () => {
    ({ db, drop } = await freshDatabase(undefined, BEFORE_CHAIN_TRUTH));
    await run(db, BEFORE_CHAIN_TRUTH_DATA);
    await migrate(db, VERSION_1);
    await run(db, VERSION_1_DATA);
    before = await readMoney(db);
    applied = await migrate(db);
  });
  afterAll(async () => {
    await drop?.();
  });

  it("applies the ledger migration (then the later ones), on top of the version 1 data", () => {
    expect(applied).toEqual(FROM_LEDGER);
    expect(applied[0]).toBe(LEDGER);
    expect(before.size).toBe(charges.length + 1);
  });

  it("charges that picked a chain are version 1 at their clone's address; the unpicked one is version 2 with no address yet", async () => {
    const rows = await db.prisma.$queryRawUnsafe<{ id: string; contract_version: number; deposit_address: string | null; clone_address: string | null }[]>(
      `SELECT id, contract_version, deposit_address, clone_address FROM charges ORDER BY id`,
    );
    for (const r of rows) {
      const picked = r.id !== "chrg_unpicked";
      expect.soft(r, r.id).toEqual({
        id: r.id,
        contract_version: picked ? 1 : 2,
        deposit_address: picked ? r.clone_address : null,
        clone_address: picked ? expect.stringMatching(/^0x[0-9a-fA-F]{40}$/) : null,
      });
    }
    expect(rows).toHaveLength(charges.length + 1);
  });

  it("clones: one per picked charge and chain, version 1, at the charge's address, compared with the chain at once", async () => {
    const rows = await db.prisma.$queryRawUnsafe<{ charge_id: string; chain_id: number; address: string; version: number; checked: boolean }[]>(
      `SELECT charge_id, chain_id, address, version, balance_checked_at IS NOT NULL AS checked FROM clones ORDER BY charge_id`,
    );
    const picked = [...charges.filter((c) => c.clone).map((c) => ({ id: c.id, clone: c.clone! })), { id: FLUSHED.id, clone: FLUSHED.clone }];
    expect(rows).toEqual(
      picked.sort((a, b) => a.id.localeCompare(b.id)).map((c) => ({ charge_id: c.id, chain_id: CHAIN, address: c.clone, version: 1, checked: true })),
    );
  });

  it("chain transfers: one per payment, settlement side and refund transfer, with its kind, status, amount and fact key", async () => {
    const cloneOf = new Map(charges.map((c) => [c.id, c.clone!]));
    const occurrences = new Map<string, number>();
    const expected = [
      ...payments.map((p) => {
        const base = `${p.tx}|${p.from}|${p.amount}`;
        const n = occurrences.get(base) ?? 0;
        occurrences.set(base, n + 1);
        const to = cloneOf.get(p.chargeId)!;
        return {
          id: p.id,
          kind: "PAYMENT",
          status: p.status,
          amount: String(p.amount),
          charge_id: p.chargeId,
          refund_id: null,
          tx_hash: p.tx,
          block_number: p.block,
          from_address: p.from,
          to_address: to,
          fact_key: factKey({ txHash: p.tx, from: p.from, to, amount: p.amount }, n),
          late: p.late ?? false,
        };
      }),
      ...settlements.flatMap((s) => {
        const clone = cloneOf.get(s.chargeId)!;
        const side = { status: s.status, charge_id: s.chargeId, refund_id: null, tx_hash: s.tx, block_number: s.block, from_address: clone, late: false };
        return [
          {
            ...side,
            id: `${s.id}_net`,
            kind: "PAYOUT",
            amount: String(s.net),
            to_address: W,
            fact_key: factKey({ txHash: s.tx, from: clone, to: W, amount: s.net }, 0),
          },
          // A zero fee moved nothing: no transfer.
          ...(s.fee > 0n ? [{ ...side, id: `${s.id}_fee`, kind: "FEE", amount: String(s.fee), to_address: ZERO, fact_key: `settlement:${s.id}:fee` }] : []),
        ];
      }),
      ...refunds.map((r) => ({
        id: expect.stringMatching(/^xfer_/),
        kind: "REFUND",
        status: r.status === "COMPLETED" ? "CONFIRMED" : "SEEN",
        amount: String(r.amount),
        charge_id: r.chargeId,
        refund_id: r.id,
        tx_hash: r.tx!.hash,
        block_number: r.tx!.block,
        from_address: W,
        to_address: r.address,
        fact_key: factKey({ txHash: r.tx!.hash, from: W, to: r.address, amount: r.amount }, 0),
        late: false,
      })),
    ];
    const rows = await db.prisma.$queryRawUnsafe<Record<string, unknown>[]>(
      `SELECT id, kind::text, status::text, amount::text, charge_id, refund_id, tx_hash, block_number::int, from_address, to_address, fact_key, late
       FROM chain_transfers WHERE charge_id <> '${FLUSHED.id}'`,
    );
    const order = (a: Record<string, unknown>, b: Record<string, unknown>) =>
      `${a.charge_id}|${a.kind}|${a.tx_hash}|${a.fact_key}`.localeCompare(`${b.charge_id}|${b.kind}|${b.tx_hash}|${b.fact_key}`);
    expect(rows.sort(order)).toEqual(expected.sort(order));
    // The two identical transfers of one transaction are two facts, numbered in log order.
    expect(rows.filter((r) => r.charge_id === "chrg_underpaid" && r.tx_hash === txh(6)).map((r) => [r.id, String(r.fact_key).slice(-2)])).toEqual([
      ["pay_c3a", ":0"],
      ["pay_c3b", ":1"],
    ]);
    const [count] = await db.prisma.$queryRawUnsafe<{ n: number; facts: number }[]>(
      `SELECT count(*)::int AS n, count(DISTINCT (chain_id, kind, fact_key))::int AS facts FROM chain_transfers`,
    );
    expect(count!.facts).toBe(count!.n);
  });

  it("a charge paid out before chain_truth keeps its payout and fee as confirmed transfers", async () => {
    // Its flush is in its settlements (chain_truth put it there) and in its net, fee and settled
    // amounts, but version 1 never had a settlements row for it.
    const rows = await db.prisma.$queryRawUnsafe<{ kind: string; status: string; amount: string; tx_hash: string }[]>(
      `SELECT kind::text, status::text, amount::text, tx_hash FROM chain_transfers WHERE charge_id = '${FLUSHED.id}' ORDER BY kind::text`,
    );
    expect(rows).toEqual([
      { kind: "FEE", status: "CONFIRMED", amount: String(FLUSHED.fee), tx_hash: FLUSHED.flushTx },
      { kind: "PAYMENT", status: "CONFIRMED", amount: String(FLUSHED.received), tx_hash: FLUSHED.payTx },
      { kind: "PAYOUT", status: "CONFIRMED", amount: String(FLUSHED.net), tx_hash: FLUSHED.flushTx },
    ]);
  });

  it("ledger: one row per confirmed transfer, of its type and sign, none for a seen one; rows cannot be changed or deleted", async () => {
    const rows = await db.prisma.$queryRawUnsafe<Record<string, unknown>[]>(
      `SELECT t.id AS transfer, t.kind::text, t.status::text, t.amount::text AS transferred, c.invoice_id AS charge_invoice, t.late,
              b.type::text, b.amount::text, b.merchant_id, b.livemode, b.charge_id = t.charge_id AS same_charge,
              b.refund_id IS NOT DISTINCT FROM t.refund_id AS same_refund, b.invoice_id, b.chain_id = t.chain_id AND b.tx_hash = t.tx_hash
                AND b.block_number = t.block_number AS same_place
       FROM chain_transfers t JOIN charges c ON c.id = t.charge_id LEFT JOIN balance_transactions b ON b.transfer_id = t.id ORDER BY t.id`,
    );
    const TYPE: Record<string, string> = { PAYMENT: "payment", PAYOUT: "payout", FEE: "fee", REFUND: "refund" };
    for (const r of rows) {
      if (r.status === "SEEN") {
        expect.soft(r.type, `${r.transfer} is only seen`).toBeNull();
        continue;
      }
      expect.soft(r, String(r.transfer)).toEqual({
        ...r,
        type: TYPE[r.kind as string],
        amount: r.kind === "PAYMENT" ? r.transferred : `-${r.transferred}`,
        merchant_id: "mer_v1",
        livemode: false,
        same_charge: true,
        same_refund: true,
        // The history keeps what version 1 counted on an invoice (late money too), but a void one took none.
        invoice_id: r.kind === "PAYMENT" && r.charge_invoice !== "inv_void" ? r.charge_invoice : null,
        same_place: true,
      });
    }
    const confirmed = payments.filter((p) => p.status === "CONFIRMED").length + 1; /* pay_flushed */
    const paidOut = settlements.filter((s) => s.status === "CONFIRMED").reduce((n, s) => n + 1 + (s.fee > 0n ? 1 : 0), 0);
    const refunded = refunds.filter((r) => r.status === "COMPLETED").length;
    expect
      .soft(rows.filter((r) => r.status === "SEEN").map((r) => r.transfer))
      .toEqual(["pay_c2b", "stl_c8_fee", "stl_c8_net", expect.stringMatching(/^xfer_/)]);
    const ledger = await readLedger(db);
    // (+2: the payout and fee of the charge paid out before chain_truth.)
    expect.soft(ledger).toHaveLength(confirmed + paidOut + refunded + 2);
    expect(ledger.filter((r) => r.invoice_id === "inv_paid").map((r) => [r.charge_id, r.type, r.amount])).toEqual([
      ["chrg_invoice", "payment", "7000000"],
      ["chrg_invoice", "payment", "1000000"],
    ]);
    expect(ledger.filter((r) => r.invoice_id === "inv_void")).toEqual([]);

    const one = ledger[0]!;
    await expect(db.prisma.$executeRawUnsafe(`UPDATE balance_transactions SET amount = 0 WHERE id = '${one.id}'`)).rejects.toThrow(/immutable/);
    await expect(db.prisma.$executeRawUnsafe(`DELETE FROM balance_transactions WHERE id = '${one.id}'`)).rejects.toThrow(/immutable/);
    expect(await readLedger(db)).toEqual(ledger);
  });

  it("money: every field is the sum of its ledger rows, and what the merchant saw before the upgrade", async () => {
    const after = await readMoney(db);
    const ledger = await readLedger(db);
    for (const [id, row] of after) {
      const rows = ledger.filter((r) => r.charge_id === id);
      expect.soft(money(row), `${id}: the sums of its rows`).toEqual(fromLedger(rows));
      expect.soft(money(row), `${id}: as before`).toEqual(money(before.get(id)!));
    }
    // A clone holds what was paid into it less what was paid out of it (the fee included).
    const clones = await db.prisma.$queryRawUnsafe<{ charge_id: string; chain_id: number; held: string }[]>(
      `SELECT charge_id, chain_id, held::text FROM clones ORDER BY charge_id`,
    );
    for (const k of clones) {
      const rows = ledger.filter((r) => r.charge_id === k.charge_id && r.chain_id === k.chain_id && r.type !== "refund");
      expect.soft(k.held, `${k.charge_id}: held, from its rows`).toBe(String(sum(rows.map((r) => BigInt(r.amount)))));
      const b = money(before.get(k.charge_id)!);
      const was = BigInt(b.amountReceived ?? 0) - BigInt(b.settledAmount);
      expect.soft(k.held, `${k.charge_id}: held, as before (received - settled)`).toBe(String(was));
    }
    expect(Object.fromEntries(clones.map((k) => [k.charge_id, k.held]))).toMatchObject({
      chrg_partial: "4000000",
      chrg_paying_out: "3000000",
      chrg_completed: "0",
      chrg_invoice: "1000000",
    });
    const [invoice] = await db.prisma.$queryRawUnsafe<{ amount_paid: string; status: string }[]>(
      `SELECT amount_paid::text, status::text FROM invoices WHERE id = 'inv_paid'`,
    );
    const invoiceRows = ledger.filter((r) => r.invoice_id === "inv_paid");
    expect(invoice).toEqual({ amount_paid: String(sum(invoiceRows.map((r) => BigInt(r.amount)))), status: "PAID" });
    // Version 1 counted the late payment on the invoice too (8 USDC): the history keeps it, so an invoice
    // PAID then is paid in full now. From now on only money received on time counts (domain/payments.ts).
    expect(invoice!.amount_paid).toBe("8000000");
    const [voided] = await db.prisma.$queryRawUnsafe<{ amount_paid: string }[]>(`SELECT amount_paid::text FROM invoices WHERE id = 'inv_void'`);
    expect(voided!.amount_paid).toBe("0");
  });

  it("settlements: each entry names its chain, and nothing else of it changes", async () => {
    const after = await readMoney(db);
    for (const [id, row] of after) {
      const was = JSON.parse(before.get(id)!.settlements) as Record<string, unknown>[];
      expect.soft(JSON.parse(row.settlements), id).toEqual(was.map((e) => ({ ...e, chainId: CHAIN })));
    }
    expect(JSON.parse(after.get("chrg_completed")!.settlements)).toHaveLength(1);
    expect(JSON.parse(after.get(FLUSHED.id)!.settlements)).toMatchObject([{ txHash: FLUSHED.flushTx, chainId: CHAIN, netAmount: String(FLUSHED.net) }]);
  });

  it("authorizations: the gasless payment's row is used; the refund's is used and holds no place for its wallet", async () => {
    const rows = await db.prisma.$queryRawUnsafe<Record<string, unknown>[]>(
      `SELECT id, purpose::text, charge_id, refund_id, chain_id, from_address, to_address, value::text, status::text, tx_id,
              ended_at IS NOT NULL AS ended, end_reason FROM authorizations ORDER BY purpose, id`,
    );
    expect.soft(rows).toEqual([
      {
        id: "cauth_partial",
        purpose: "PAYMENT",
        charge_id: "chrg_partial",
        refund_id: null,
        chain_id: CHAIN,
        from_address: BUYER[2],
        to_address: addr("c2"),
        value: "4000000",
        status: "MINED",
        tx_id: "rtx_gasless",
        ended: true,
        end_reason: "used",
      },
      {
        id: expect.stringMatching(/^auth_/),
        purpose: "REFUND",
        charge_id: "chrg_completed",
        refund_id: "ref_completed",
        chain_id: CHAIN,
        from_address: W,
        to_address: BUYER[1],
        value: "3000000",
        // Its relayer transaction was mined and confirmed long ago: it is no longer on its way.
        status: "MINED",
        tx_id: "rtx_refund1",
        ended: true,
        end_reason: "used",
      },
    ]);
    // The merchant's wallet can sign for its next refund on that chain (one being relayed per payer).
    const rollback = new Error("rollback");
    const stored = db.prisma.$transaction(async (tx) => {
      await tx.$executeRawUnsafe(
        `INSERT INTO refunds (id, merchant_id, livemode, charge_id, amount, status, chain_id, from_address, address, after_block)
         VALUES ('ref_next', 'mer_v1', false, 'chrg_completed', 500000, 'AWAITING_PAYMENT', ${CHAIN}, '${W}', '${BUYER[1]}', 200)`,
      );
      await tx.$executeRawUnsafe(
        `INSERT INTO authorizations (id, purpose, charge_id, refund_id, chain_id, from_address, to_address, value, valid_after, valid_before, nonce, signature, status)
         VALUES ('auth_next', 'REFUND', 'chrg_completed', 'ref_next', ${CHAIN}, '${W}', '${BUYER[1]}', 500000, 0, 1796126400, '0x${"a9".repeat(32)}', '0x${"5e".repeat(65)}', 'RELAYING')`,
      );
      throw rollback;
    });
    await expect(stored).rejects.toBe(rollback);
  });

  it("deriveMoney, the app's own derivation, changes nothing on the migrated charges, clones and invoice", async () => {
    const clones = `SELECT charge_id, chain_id, held::text FROM clones ORDER BY charge_id, chain_id`;
    const invoices = `SELECT id, amount_paid::text FROM invoices ORDER BY id`;
    const was = { charges: await readMoney(db), clones: await db.prisma.$queryRawUnsafe(clones), invoices: await db.prisma.$queryRawUnsafe(invoices) };
    await db.prisma.$transaction((tx) => deriveMoney(tx, [...was.charges.keys()]));
    const now = { charges: await readMoney(db), clones: await db.prisma.$queryRawUnsafe(clones), invoices: await db.prisma.$queryRawUnsafe(invoices) };
    for (const [id, row] of now.charges) {
      const old = was.charges.get(id)!;
      expect.soft(money(row), id).toEqual(money(old));
      // Entries compared as the app reads them (the migrated ones also keep version 1's logIndex).
      expect.soft(storedSettlements(row.settlements), `${id} settlements`).toEqual(storedSettlements(old.settlements));
    }
    expect.soft(now.clones).toEqual(was.clones);
    expect(now.invoices).toEqual(was.invoices);
  });

  it("the app confirms the migrated seen transfers, and the unpicked charge picks a chain as version 2", async () => {
    const factory = factoryV2Address(FEE_RECIPIENT);
    const chains = new ChainSet([
      enableChain({
        chainId: CHAIN,
        rpcUrls: ["http://127.0.0.1:9"],
        factory,
        feeRecipient: FEE_RECIPIENT,
        maxFeePerGas: 1n,
        stuckAfterSeconds: 600,
        watchTokens: [],
        confirmations: 3,
        relayerKey: `0x${"11".repeat(32)}`,
        relayerMinBalance: 0n,
      }),
    ]);
    const view = await selectChain(db.prisma, chains, SETTINGS, "chrg_unpicked", { chainId: CHAIN }, new Date(at(30)));
    const address = predictCloneV2({ factory, chargeId: "chrg_unpicked", wallet: W, feeBps: 100 });
    expect(JSON.stringify(view)).toContain(address);
    const picked = await db.prisma.$queryRawUnsafe<Record<string, unknown>[]>(
      `SELECT c.contract_version, c.deposit_address, c.clone_address, k.version, k.address, k.held::text
       FROM charges c JOIN clones k ON k.charge_id = c.id WHERE c.id = 'chrg_unpicked'`,
    );
    expect(picked).toEqual([{ contract_version: 2, deposit_address: address, clone_address: address, version: 2, address, held: "0" }]);

    const changed = await confirmChainMoney(db.prisma, SETTINGS, { chainId: CHAIN, confirmations: 3 }, 200n, new Date(at(100)));
    expect(changed.map((c) => c.id).sort()).toEqual(["chrg_partial", "chrg_paying_out", "chrg_refunding"]);
    const rows = await db.prisma.$queryRawUnsafe<Record<string, unknown>[]>(
      `SELECT c.id, c.status::text, c.amount_received::text, c.fee_amount::text, c.net_amount::text, c.amount_refunded::text, k.held::text,
              jsonb_array_length(c.settlements) AS settlements
       FROM charges c JOIN clones k ON k.charge_id = c.id WHERE c.id IN ('chrg_partial', 'chrg_paying_out', 'chrg_refunding') ORDER BY c.id`,
    );
    expect(rows).toEqual([
      {
        id: "chrg_partial",
        status: "RECEIVED",
        amount_received: "10000000",
        fee_amount: null,
        net_amount: null,
        amount_refunded: "0",
        held: "10000000",
        settlements: 0,
      },
      {
        id: "chrg_paying_out",
        status: "COMPLETED",
        amount_received: "3000000",
        fee_amount: "30000",
        net_amount: "2970000",
        amount_refunded: "0",
        held: "0",
        settlements: 1,
      },
      {
        id: "chrg_refunding",
        status: "COMPLETED",
        amount_received: "5000000",
        fee_amount: "50000",
        net_amount: "4950000",
        amount_refunded: "1000000",
        held: "0",
        settlements: 1,
      },
    ]);
    const [refund] = await db.prisma.$queryRawUnsafe<{ status: string }[]>(`SELECT status::text FROM refunds WHERE id = 'ref_seen'`);
    expect(refund!.status).toBe("COMPLETED");
    const ledger = await readLedger(db);
    const after = await readMoney(db);
    for (const id of ["chrg_partial", "chrg_paying_out", "chrg_refunding"]) {
      expect(money(after.get(id)!), id).toEqual(fromLedger(ledger.filter((r) => r.charge_id === id)));
    }
  });
});

describe("the ledger migration on version 1 data that its unique indexes could refuse", () => {
  const dbs: { drop(): Promise<void> }[] = [];
  afterAll(async () => {
    for (const d of dbs) await d.drop();
  });

  /** A version 1 database with a merchant, two charges (A and B) paid and paid out, and `refunded`. */
  async function version1(refunded: OldRefund[], extra: string[] = []): Promise<Database> {
    const fresh = await freshDatabase(undefined, VERSION_1);
    dbs.push(fresh);
    const rows = ["a", "b"].flatMap((k, i) => {
      const c: OldCharge = { id: `chrg_${k}`, status: "COMPLETED", amount: 2_000_000n, clone: addr(`d${i}`), expiresAt: at(15) };
      const p: OldPayment = {
        id: `pay_${k}`,
        chargeId: c.id,
        tx: txh(40 + i),
        log: 0,
        block: 10 + i,
        from: BUYER[1],
        amount: c.amount,
        status: "CONFIRMED",
        confirmedAt: at(2),
      };
      const s: OldSettlement = {
        id: `stl_${k}`,
        chargeId: c.id,
        tx: txh(50 + i),
        log: 1,
        block: 20 + i,
        net: 1_980_000n,
        fee: 20_000n,
        status: "CONFIRMED",
        confirmedAt: at(5),
      };
      return [insert("charges", chargeRow(c, [p], [s], refunded)), insert("payments", paymentRow(p)), insert("settlements", settlementRow(s))];
    });
    const merchant = insert("merchants", { id: "mer_v1", name: "Old Shop", fee_bps: 100, test_wallet: W });
    await run(fresh.db, [merchant, ...rows, ...extra, ...refunded.map((r) => insert("refunds", refundRow(r)))].join("\n"));
    return fresh.db;
  }

  it("two refunds the service relayed authorizations for, from one wallet on one chain", async () => {
    const refunded = ["a", "b"].map((k, i): OldRefund => ({
      id: `ref_${k}`,
      chargeId: `chrg_${k}`,
      amount: 500_000n,
      status: "COMPLETED",
      address: BUYER[1],
      afterBlock: 30,
      tx: { hash: txh(60 + i), log: 0, block: 31 + i },
      completedAt: at(20 + i),
      authorization: { nonce: `0x${(i + 1).toString(16).padStart(64, "e")}`, txId: `rtx_${k}` },
    }));
    const database = await version1(
      refunded,
      refunded.map((r, i) => insert("relayer_transactions", relayerTxRow(r.authorization!.txId, "AUTHORIZATION", "CONFIRMED", r.tx!.hash, r.tx!.block, i))),
    );
    await expect(migrate(database)).resolves.toEqual(FROM_LEDGER);
    const rows = await database.prisma.$queryRawUnsafe<{ refund_id: string; status: string; end_reason: string }[]>(
      `SELECT refund_id, status::text, end_reason FROM authorizations ORDER BY refund_id`,
    );
    expect(rows).toEqual([
      { refund_id: "ref_a", status: "MINED", end_reason: "used" },
      { refund_id: "ref_b", status: "MINED", end_reason: "used" },
    ]);
  });

  /** Two refunds of one wallet waiting for payment, each with an authorization `sent` (or not yet). */
  const waitingRefunds = (sent: boolean): OldRefund[] =>
    ["a", "b"].map((k, i) => ({
      id: `ref_${k}`,
      chargeId: `chrg_${k}`,
      amount: 500_000n,
      status: "AWAITING_PAYMENT",
      address: BUYER[1],
      afterBlock: 30,
      authorization: { nonce: `0x${(i + 1).toString(16).padStart(64, "d")}`, txId: sent ? `rtx_${k}` : "" },
    }));

  it("two refund authorizations of one wallet not sent yet: one waits to be sent, the other is refused (to be given again)", async () => {
    const refunded = waitingRefunds(false).map((r) => ({ ...r, authorization: { ...r.authorization!, txId: null as unknown as string } }));
    const database = await version1(refunded);
    await expect(migrate(database)).resolves.toEqual(FROM_LEDGER);
    const rows = await database.prisma.$queryRawUnsafe<{ status: string; ended: boolean; error: string | null }[]>(
      `SELECT status::text, ended_at IS NOT NULL AS ended, error FROM authorizations ORDER BY status::text DESC`,
    );
    expect(rows).toEqual([
      { status: "RELAYING", ended: false, error: null },
      { status: "FAILED", ended: true, error: "not sent before the upgrade; give it again" },
    ]);
  });

  it("two refund authorizations of one wallet already sent and not mined: the upgrade stops, names them, and changes nothing", async () => {
    const refunded = waitingRefunds(true);
    const database = await version1(
      refunded,
      refunded.map((r, i) =>
        insert("relayer_transactions", {
          ...relayerTxRow(r.authorization!.txId, "AUTHORIZATION", "SENT", txh(80 + i), 0, i),
          tx_hash: null,
          block_number: null,
          block_hash: null,
        }),
      ),
    );
    const failed = await migrate(database).then(
      () => null,
      (e: Error) => e.message,
    );
    expect(failed).toMatch(
      /failed: two relayed authorizations from 0x\w+ on chain \d+ are still waiting to be mined: run the previous version until they are, then upgrade$/,
    );
    const [left] = await database.prisma.$queryRawUnsafe<{ n: bigint }[]>(
      `SELECT count(*) AS n FROM information_schema.tables WHERE table_name = 'balance_transactions'`,
    );
    expect(left!.n).toBe(0n);
  });

  it("two refunds paid by identical transfers of one transaction (a batch from the merchant's wallet)", async () => {
    const batch = txh(70);
    const refunded = ["a", "b"].map((k, i): OldRefund => ({
      id: `ref_${k}`,
      chargeId: `chrg_${k}`,
      amount: 500_000n,
      status: "COMPLETED",
      address: BUYER[1],
      afterBlock: 30,
      tx: { hash: batch, log: i, block: 35 },
      completedAt: at(25),
    }));
    const database = await version1(refunded);
    await expect(migrate(database)).resolves.toEqual(FROM_LEDGER);
    const keys = await database.prisma.$queryRawUnsafe<{ refund_id: string; fact_key: string }[]>(
      `SELECT refund_id, fact_key FROM chain_transfers WHERE kind = 'REFUND' ORDER BY refund_id`,
    );
    expect(keys).toEqual(refunded.map((r, i) => ({ refund_id: r.id, fact_key: factKey({ txHash: batch, from: W, to: r.address, amount: r.amount }, i) })));
  });
});
