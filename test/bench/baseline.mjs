// Baseline for the benchmark: raw node:http + pg running the same SQL the service runs for
// GET /v1/customers/:id and POST /v1/customers, with no framework, auth or validation.
import { randomBytes } from "node:crypto";
import http from "node:http";
import pg from "pg";

const pool = new pg.Pool({ connectionString: process.env.DATABASE_URL, max: 10 });
const merchantId = process.env.MERCHANT_ID;

const shape = (r) => ({
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

const server = http.createServer(async (req, res) => {
  try {
    if (req.method === "GET") {
      const id = req.url.split("/").pop();
      const { rows } = await pool.query("SELECT * FROM customers WHERE id = $1 AND merchant_id = $2 AND livemode = $3 LIMIT 1", [id, merchantId, false]);
      res.writeHead(rows[0] ? 200 : 404, { "content-type": "application/json" }).end(JSON.stringify(rows[0] ? shape(rows[0]) : {}));
      return;
    }
    let body = "";
    for await (const chunk of req) body += chunk;
    const input = JSON.parse(body);
    const { rows } = await pool.query(
      "INSERT INTO customers (id, merchant_id, livemode, email, name, updated_at) VALUES ($1, $2, $3, $4, $5, now()) RETURNING *",
      [`cus_${randomBytes(12).toString("hex")}`, merchantId, false, input.email, input.name],
    );
    res.writeHead(201, { "content-type": "application/json" }).end(JSON.stringify(shape(rows[0])));
  } catch (e) {
    res.writeHead(500).end(String(e));
  }
});
server.listen(0, "127.0.0.1", () => process.send?.({ port: server.address().port }));
