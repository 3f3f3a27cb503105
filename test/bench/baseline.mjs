// Baseline for the benchmark: raw node:http + pg running the same SQL the service runs for the
// benchmarked customer and charge endpoints, with no framework, auth or validation.
import { randomBytes } from "node:crypto";
import http from "node:http";
import pg from "pg";

const pool = new pg.Pool({ connectionString: process.env.DATABASE_URL, max: 10 });
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
});

async function readJson(req) {
  let body = "";
  for await (const chunk of req) body += chunk;
  return JSON.parse(body);
}

const routes = {
  async "GET customers"(id) {
    const { rows } = await pool.query("SELECT * FROM customers WHERE id = $1 AND merchant_id = $2 AND livemode = $3", [id, merchantId, false]);
    return [rows[0] ? 200 : 404, rows[0] ? customer(rows[0]) : {}];
  },
  async "POST customers"(_id, req) {
    const input = await readJson(req);
    const { rows } = await pool.query(
      "INSERT INTO customers (id, merchant_id, livemode, email, name, updated_at) VALUES ($1, $2, $3, $4, $5, now()) RETURNING *",
      [`cus_${randomBytes(12).toString("hex")}`, merchantId, false, input.email, input.name],
    );
    return [201, customer(rows[0])];
  },
  async "GET charges"(id) {
    const { rows } = await pool.query("SELECT * FROM charges WHERE id = $1 AND merchant_id = $2 AND livemode = $3", [id, merchantId, false]);
    return [rows[0] ? 200 : 404, rows[0] ? charge(rows[0]) : {}];
  },
  async "POST charges"(_id, req) {
    const input = await readJson(req);
    const merchant = (await pool.query("SELECT fee_bps, test_wallet FROM merchants WHERE id = $1", [merchantId])).rows[0];
    const { rows } = await pool.query(
      `INSERT INTO charges (id, merchant_id, livemode, order_id, amount, fee_bps, settlement_wallet, expires_at, updated_at)
       VALUES ($1, $2, $3, $4, $5, $6, $7, now() + interval '30 minutes', now()) RETURNING *`,
      [`chrg_${randomBytes(12).toString("hex")}`, merchantId, false, input.orderId, baseUnits(input.amount), merchant.fee_bps, merchant.test_wallet],
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
