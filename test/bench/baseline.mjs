// Baseline for the benchmark: raw node:http + pg running the same SQL the service runs for the
// benchmarked customer and charge endpoints, answering the same resources, with no framework, auth or
// validation. A create writes
// its record, its event and the event's webhook deliveries in one statement, as the service must
// (the outbox: a change commits with its event or not at all); a charge's, guarded by the merchant's
// remembered terms, as the service's is. Its statements are prepared once per connection, as the
// service's hot ones are (src/db/prepared.ts).
import { randomBytes } from "node:crypto";
import http from "node:http";
import pg from "pg";

const pool = new pg.Pool({ connectionString: process.env.DATABASE_URL, max: 10 });
// BENCH_BASELINE_PREPARED=false: the baseline sends each statement unnamed (parsed and planned on
// every call) instead of preparing it once per connection as the service does.
const PREPARED = process.env.BENCH_BASELINE_PREPARED !== "false";
const names = new Map();
const query = (text, values) => {
  if (!PREPARED) return pool.query(text, values);
  if (!names.has(text)) names.set(text, `baseline_${names.size}`);
  return pool.query({ name: names.get(text), text, values });
};
const merchantId = process.env.MERCHANT_ID;
const iso = (d) => d?.toISOString() ?? null;
// Amounts as the service shows them, in bigint arithmetic (never floats).
const units = (v) => {
  if (v === null) return null;
  const n = BigInt(v);
  return `${n / 1_000_000n}.${(n % 1_000_000n).toString().padStart(6, "0").replace(/0+$/, "").padEnd(2, "0")}`;
};
const baseUnits = (s) => {
  const [whole, frac = ""] = s.split(".");
  return BigInt(whole) * 1_000_000n + BigInt(frac.padEnd(6, "0"));
};

/** The merchant's fee and wallet, read once (POST charges). */
let terms;

const customer = (r) => ({
  id: r.id,
  object: "customer",
  livemode: r.livemode,
  email: r.email,
  name: r.name,
  phone: r.phone,
  address: r.address,
  companyName: r.company_name,
  taxId: r.tax_id,
  description: r.description,
  metadata: r.metadata,
  created: Math.floor(r.created_at.getTime() / 1000),
  updated: Math.floor(r.updated_at.getTime() / 1000),
});

const charge = (r) => ({
  id: r.id,
  object: "charge",
  livemode: r.livemode,
  orderId: r.order_id,
  amount: units(r.amount),
  amountReceived: units(r.amount_received),
  amountRefunded: units(r.amount_refunded ?? 0),
  feeAmount: units(r.fee_amount),
  netAmount: units(r.net_amount),
  currency: r.currency,
  status: r.status,
  cloneAddress: r.clone_address,
  chainId: r.chain_id,
  paymentUrl: `http://localhost/pay/${r.id}`,
  explorerUrl: null,
  feeBps: r.fee_bps,
  flushTxHash: r.flush_tx_hash,
  expiresAt: iso(r.expires_at),
  createdAt: iso(r.created_at),
  completedAt: iso(r.completed_at),
  deployedAt: iso(r.deployed_at),
  customerId: r.customer_id,
  description: r.description,
  metadata: r.metadata,
  successUrl: r.success_url,
  cancelUrl: r.cancel_url,
  settlements: (r.settlements ?? []).map((x) => ({ ...x, amount: units(BigInt(x.netAmount) + BigInt(x.feeAmount)) })),
  payoutBlockedReason: r.payout_blocked_reason ?? null,
  needsReview: (r.review_reason ?? null) !== null,
  reviewReason: r.review_reason ?? null,
  strayAssets: r.stray_assets ?? [],
  invoiceId: r.invoice_id ?? null,
  paymentLinkId: r.payment_link_id ?? null,
});

/** The WITH-clause parts that append one event and its deliveries, as the service writes them. */
const EVENT_WRITES = `
  new_events AS (
    INSERT INTO events (id, merchant_id, livemode, type, data, created_at)
    SELECT id, merchant_id, livemode, type, data, created_at FROM jsonb_to_recordset($EVENTS::jsonb)
      AS x(id text, merchant_id text, livemode boolean, type text, data jsonb, created_at timestamptz)
    $ONLY_IF
    RETURNING id, merchant_id, livemode, type
  ),
  new_deliveries AS (
    INSERT INTO webhook_deliveries (event_id, endpoint_id)
    SELECT e.id, w.id FROM new_events e JOIN webhook_endpoints w
      ON w.merchant_id = e.merchant_id AND w.livemode = e.livemode AND w.disabled_at IS NULL
     AND (cardinality(w.event_types) = 0 OR e.type = ANY(w.event_types))
  )`;
const eventRow = (type, data, at) =>
  JSON.stringify([{ id: `evt_${randomBytes(12).toString("hex")}`, merchant_id: merchantId, livemode: false, type, data, created_at: at.toISOString() }]);

async function readJson(req) {
  let body = "";
  for await (const chunk of req) body += chunk;
  return JSON.parse(body);
}

const routes = {
  async "GET customers"(id) {
    const { rows } = await query("SELECT * FROM customers WHERE id = $1 AND merchant_id = $2 AND livemode = $3", [id, merchantId, false]);
    return [rows[0] ? 200 : 404, rows[0] ? customer(rows[0]) : {}];
  },
  async "POST customers"(_id, req) {
    const input = await readJson(req);
    const at = new Date();
    const row = { id: `cus_${randomBytes(12).toString("hex")}`, livemode: false, email: input.email, name: input.name, created_at: at, updated_at: at };
    const { rows } = await query(
      `WITH inserted AS (
         INSERT INTO customers (id, merchant_id, livemode, email, name, created_at, updated_at) VALUES ($1, $2, $3, $4, $5, $6, $6) RETURNING *
       ), ${EVENT_WRITES.replace("$EVENTS", "$7").replace("$ONLY_IF", "")}
       SELECT * FROM inserted`,
      [row.id, merchantId, false, input.email, input.name, at, eventRow("customer.created", customer(row), at)],
    );
    return [201, customer(rows[0])];
  },
  async "GET charges"(id) {
    const { rows } = await query("SELECT * FROM charges WHERE id = $1 AND merchant_id = $2 AND livemode = $3", [id, merchantId, false]);
    return [rows[0] ? 200 : 404, rows[0] ? charge(rows[0]) : {}];
  },
  async "POST charges"(_id, req) {
    const input = await readJson(req);
    // As the service does: the merchant's terms are remembered, and the insert holds only while they still do.
    terms ??= (await query("SELECT fee_bps, test_wallet FROM merchants WHERE id = $1", [merchantId])).rows[0];
    const at = new Date();
    const row = {
      id: `chrg_${randomBytes(12).toString("hex")}`,
      livemode: false,
      order_id: input.orderId,
      amount: baseUnits(input.amount),
      amount_received: null,
      fee_amount: null,
      net_amount: null,
      currency: "USDC",
      status: "PENDING",
      fee_bps: terms.fee_bps,
      expires_at: new Date(at.getTime() + 30 * 60_000),
      created_at: at,
    };
    const { rows } = await query(
      `WITH inserted AS (
         INSERT INTO charges (id, merchant_id, livemode, order_id, amount, fee_bps, settlement_wallet, expires_at, created_at, updated_at)
         SELECT $1::text, $2::text, $3::boolean, $4::text, $5::bigint, $6::int, $7::text, $8::timestamptz, $9::timestamptz, $9::timestamptz
         WHERE EXISTS (SELECT 1 FROM merchants WHERE id = $2 AND fee_bps = $6 AND test_wallet = $7) RETURNING *
       ), ${EVENT_WRITES.replace("$EVENTS", "$10").replace("$ONLY_IF", "WHERE EXISTS (SELECT 1 FROM inserted)")}
       SELECT * FROM inserted`,
      [row.id, merchantId, false, row.order_id, row.amount, row.fee_bps, terms.test_wallet, row.expires_at, at, eventRow("charge.pending", charge(row), at)],
    );
    return [201, charge(rows[0])];
  },
};

const server = http.createServer(async (req, res) => {
  try {
    const [, , resource, id] = req.url.split("/");
    const [status, body] = await routes[`${req.method} ${resource}`](id, req);
    res.writeHead(status, { "content-type": "application/json" }).end(JSON.stringify(body));
  } catch (e) {
    res.writeHead(500).end(String(e));
  }
});
server.listen(0, "127.0.0.1", () => process.send?.({ port: server.address().port }));
