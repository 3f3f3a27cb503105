// The hosted payment page over plain HTTP (no browser, no JavaScript): what it shows, its forms,
// its headers, its QR code (decoded here), and the test wallet.
import { request } from "node:http";
import { brotliDecompressSync } from "node:zlib";
import jsQR from "jsqr";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestChain, type TestChain, testWalletDevnet } from "../helpers/chain.js";
import { loadConfig } from "../../src/config.js";
import { liveChains, POLLING, startApp, startSecondInstance, type TestApp } from "../helpers/harness.js";

let chain: TestChain;
let app: TestApp;
let usdc: string;

beforeAll(async () => {
  chain = await startTestChain();
  const devnet = await chain.enabled(1);
  usdc = await chain.usdc.getAddress();
  app = await startApp(POLLING, { chains: liveChains([devnet]), devnet: await testWalletDevnet(chain) });
}, 60_000);
afterAll(async () => {
  await app?.stop();
  await chain?.stop();
});

let seq = 0;
const newCharge = async (body: Record<string, unknown> = {}, key = app.testKey) => {
  const res = await app.call("POST", "/v1/charges", { key, body: { orderId: `page-${++seq}`, amount: "25", description: "Two <b>mugs</b>", ...body } });
  expect(res.status, res.text).toBe(201);
  return res.body;
};
const page = (path: string, init?: RequestInit) => fetch(`${app.url}${path}`, { redirect: "manual", ...init });
const form = (path: string, fields: Record<string, string>) =>
  page(path, { method: "POST", headers: { "content-type": "application/x-www-form-urlencoded" }, body: new URLSearchParams(fields).toString() });

describe("hosted page", () => {
  it("shows the merchant, amount, expiry and a chain picker, safely, with strict headers and no key", async () => {
    const charge = await newCharge();
    const res = await page(`/pay/${charge.id}`);
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toMatch(/^text\/html/);
    expect(res.headers.get("cache-control")).toBe("no-store");
    expect(res.headers.get("x-frame-options")).toBe("DENY");
    const csp = res.headers.get("content-security-policy")!;
    expect(csp).toContain("script-src 'self'");
    expect(csp).toContain("frame-ancestors 'none'");
    expect(csp).not.toContain("unsafe-inline");
    const html = await res.text();
    expect(html).toContain("Test Shop");
    expect(html).toContain("TEST MODE");
    expect(html).toContain("Two &#60;b&#62;mugs&#60;/b&#62;"); // escaped, never markup
    expect(html).toContain('<span id="amount">25.00</span> USDC');
    expect(html).toContain(`datetime="${charge.expiresAt}"`);
    expect(html).toMatch(/<form method="post" action="\/pay\/chrg_\w+\/chain\?page_token=chrg_\w+\.\d+\.[\w-]+"/);
    expect(html).toContain('value="31337"');
    expect(html).not.toMatch(/sk_(test|live)_/);
    // Every script is a file of ours; the only inline <script> is a JSON data block.
    expect([...html.matchAll(/<script(?![^>]*type="application\/json")(?![^>]*src=)[^>]*>/g)]).toEqual([]);
  });

  it("after a pick (plain form POST): network, address, exact amount, warning and a QR of the EIP-681 URI", async () => {
    const charge = await newCharge({ amount: "12.5" });
    const picked = await form(`/pay/${charge.id}/chain`, { chainId: "31337" });
    expect(picked.status).toBe(303);
    expect(picked.headers.get("location")).toBe(`/pay/${charge.id}`);
    const clone = (await app.call("GET", `/v1/charges/${charge.id}`)).body.cloneAddress;
    const html = await (await page(`/pay/${charge.id}`)).text();
    expect(html).toContain(`<code id="address" class="address">${clone}</code>`);
    expect(html).toContain('<code id="exact-amount">12.50</code> USDC');
    expect(html).toContain('<dd id="network">Local devnet</dd>');
    expect(html).toMatch(/Send only <strong>native USDC<\/strong> on <strong>Local devnet<\/strong>/);
    expect(decodeQr(html)).toBe(`ethereum:${usdc}@31337/transfer?address=${clone}&uint256=12500000`);
    // Picking again changes nothing: back to the page, same address.
    expect((await form(`/pay/${charge.id}/chain`, { chainId: "31337" })).status).toBe(303);
    expect((await app.call("GET", `/v1/charges/${charge.id}`)).body.cloneAddress).toBe(clone);
    // A chain that is not offered is refused, and nothing changes.
    const other = await newCharge();
    const bad = await form(`/pay/${other.id}/chain`, { chainId: "8453" });
    expect(bad.status).toBe(400);
    expect(await bad.text()).toContain("<h1>This network is not available</h1>");
    expect((await app.call("GET", `/v1/charges/${other.id}`)).body.chainId).toBeNull();
  });

  it("explains the payment window before the pick and the deadline the pick sets; the way back to the shop while pending", async () => {
    const charge = await newCharge({ cancelUrl: "https://shop.example/cart?order=7" });
    const before = await (await page(`/pay/${charge.id}`)).text();
    expect(before).toContain('<div id="deadline" data-phase="pick">');
    expect(before).toContain(`Choose a network before <time id="expires" datetime="${charge.expiresAt}">`);
    expect(before).toContain("Once you pick a network you have <strong>15 minutes</strong> to pay, counted from your pick.");
    expect(before).toContain('<p class="window-change" id="window-change" role="status"></p>');
    const back = '<a id="back-to-shop" href="https://shop.example/cart?order=7"><span aria-hidden="true">← </span>Back to Test Shop</a>';
    expect(before).toContain(back);
    expect((await app.call("GET", `/v1/public/charges/${charge.id}`, { key: null })).body.paymentWindowMinutes).toBe(15);

    const pickedAt = Date.now();
    await form(`/pay/${charge.id}/chain`, { chainId: "31337" });
    const { expiresAt } = (await app.call("GET", `/v1/charges/${charge.id}`)).body;
    // The rule the page states: the deadline is the pick plus the payment window.
    expect(Math.abs(Date.parse(expiresAt) - (pickedAt + 15 * 60_000))).toBeLessThan(5_000);
    const after = await (await page(`/pay/${charge.id}`)).text();
    expect(after).toContain('<div id="deadline" data-phase="pay">');
    expect(after).toContain(`Pay before <time id="expires" datetime="${expiresAt}">`);
    expect(after).toContain("You have 15 minutes to pay from the moment the network was picked.");
    expect(after).toContain(back);

    // No cancelUrl, no link back; a charge no longer pending shows no deadline.
    const plain = await newCharge();
    expect(await (await page(`/pay/${plain.id}`)).text()).not.toContain("back-to-shop");
    await app.db.prisma.charge.update({ where: { id: charge.id }, data: { status: "CANCELLED" } });
    const cancelled = await (await page(`/pay/${charge.id}`)).text();
    expect(cancelled).not.toContain('id="deadline"');
    expect(cancelled).toContain(back);
  });

  it("sends the page, its scripts and stylesheet compressed to a browser that takes it, and links the service's icon", async () => {
    const charge = await newCharge();
    const path = `/pay/${charge.id}`;
    const br = await raw(path, "gzip, deflate, br");
    expect(br.headers["content-encoding"]).toBe("br");
    expect(br.headers.vary).toBe("Accept-Encoding");
    const html = brotliDecompressSync(br.body).toString();
    expect(html).toContain('<link rel="icon" href="/favicon.svg" type="image/svg+xml">');
    expect(html).toContain('<script type="module" src="/pay/assets/pay.js"></script>');
    expect((await raw(path, "gzip")).headers["content-encoding"]).toBe("gzip");
    const plain = await raw(path);
    expect(plain.headers["content-encoding"]).toBeUndefined();
    expect(plain.body.length).toBeGreaterThan(br.body.length * 2);
    for (const asset of ["pay.js", "wallets.js", "money.js", "eip3009.js", "subscribe.js", "pay.css"]) {
      const res = await raw(`/pay/assets/${asset}`, "br, gzip");
      expect(res.headers["content-encoding"], asset).toBe("br");
      expect(res.headers["cache-control"]).toBe("public, max-age=300");
      expect(brotliDecompressSync(res.body).equals((await raw(`/pay/assets/${asset}`)).body)).toBe(true);
    }
    // The icon every page links is there.
    for (const icon of ["/favicon.svg", "/favicon.ico"]) expect((await raw(icon)).status).toBe(200);
  });

  it("pays a test charge from the test wallet, and refuses it for a live charge", async () => {
    const charge = await newCharge({ amount: "3" });
    await form(`/pay/${charge.id}/chain`, { chainId: "31337" });
    const clone = (await app.call("GET", `/v1/charges/${charge.id}`)).body.cloneAddress;
    expect(await (await page(`/pay/${charge.id}`)).text()).toContain("Pay with test wallet (TEST MODE)");
    const paid = await form(`/pay/${charge.id}/test-payment`, {});
    expect(paid.status).toBe(303);
    expect(await chain.balance(clone)).toBe(3_000_000n);

    // Both clicks of a double click: one pays, the other is refused; nothing is paid twice.
    const twice = await newCharge({ amount: "2" });
    await form(`/pay/${twice.id}/chain`, { chainId: "31337" });
    const twiceClone = (await app.call("GET", `/v1/charges/${twice.id}`)).body.cloneAddress;
    const statuses = (await Promise.all([form(`/pay/${twice.id}/test-payment`, {}), form(`/pay/${twice.id}/test-payment`, {})])).map((r) => r.status);
    expect(statuses.sort()).toEqual([303, 409]);
    expect(await chain.balance(twiceClone)).toBe(2_000_000n);

    const live = await newCharge({}, app.liveKey);
    expect(await (await page(`/pay/${live.id}`)).text()).not.toContain("TEST MODE");
    expect((await form(`/pay/${live.id}/test-payment`, {})).status).toBe(409);
  });

  it("answers an unknown or malformed id with a 404 page", async () => {
    for (const id of ["chrg_000000000000000000000000", "nope", "%3Cscript%3E"]) {
      const res = await page(`/pay/${id}`);
      expect(res.status).toBe(404);
      expect(res.headers.get("content-type")).toMatch(/^text\/html/);
      const html = await res.text();
      expect(html).toContain("Payment not found");
      expect(html).not.toContain("<script>");
    }
  });

  it("may be framed only by the origins PAYMENT_FRAME_ANCESTORS names", async () => {
    const charge = await newCharge();
    const framed = await startSecondInstance(app, { PAYMENT_FRAME_ANCESTORS: "https://shop.example https://www.shop.example" });
    try {
      const res = await fetch(`${framed.url}/pay/${charge.id}`);
      expect(res.headers.get("content-security-policy")).toContain("frame-ancestors https://shop.example https://www.shop.example");
      expect(res.headers.get("x-frame-options")).toBeNull();
    } finally {
      await framed.stop();
    }
    expect(() => loadConfig({ PAYMENT_FRAME_ANCESTORS: "shop.example" })).toThrow(/PAYMENT_FRAME_ANCESTORS: must be origins/);
  });

  it("serves its scripts and stylesheet", async () => {
    const scripts = ["pay.js", "subscribe.js", "wallets.js", "money.js", "eip3009.js"];
    for (const name of scripts) {
      const js = await page(`/pay/assets/${name}`);
      expect(js.status).toBe(200);
      expect(js.headers.get("content-type")).toMatch(/^text\/javascript/);
      // Every module a script imports is served beside it (a missing one breaks the page in the browser only).
      for (const [, imported] of (await js.text()).matchAll(/^import .* from "\.\/([\w-]+\.js)";$/gm))
        expect(scripts, `${name} imports ${imported}`).toContain(imported);
    }
    const css = await page("/pay/assets/pay.css");
    expect(css.headers.get("content-type")).toMatch(/^text\/css/);
  });
});

/** A GET with exactly this Accept-Encoding (fetch would send its own and decode the answer): the bytes as sent. */
function raw(path: string, acceptEncoding?: string): Promise<{ status: number; headers: Record<string, string | string[] | undefined>; body: Buffer }> {
  return new Promise((resolve, reject) => {
    const req = request(`${app.url}${path}`, { headers: acceptEncoding ? { "accept-encoding": acceptEncoding } : {} }, (res) => {
      const chunks: Buffer[] = [];
      res.on("data", (c: Buffer) => chunks.push(c));
      res.on("end", () => resolve({ status: res.statusCode!, headers: res.headers, body: Buffer.concat(chunks) }));
    });
    req.on("error", reject);
    req.end();
  });
}

// jsqr is CommonJS: its function is the default export under Node's interop, or the module itself.
const decode = ((jsQR as unknown as { default?: unknown }).default ?? jsQR) as (d: Uint8ClampedArray, w: number, h: number) => { data: string } | null;

/** Decodes the page's QR code: rasterises the SVG's modules and reads them with jsQR. */
function decodeQr(html: string): string | null {
  const svg = /<svg[^>]*viewBox="0 0 (\d+) \1"[^>]*>.*?<path d="([^"]+)"/.exec(html);
  expect(svg).not.toBeNull();
  const size = Number(svg![1]);
  const path = svg![2]!;
  const scale = 4;
  const width = size * scale;
  const pixels = new Uint8ClampedArray(width * width * 4).fill(255);
  for (const [, x, y] of path.matchAll(/M(\d+) (\d+)h1v1h-1z/g)) {
    for (let dy = 0; dy < scale; dy++)
      for (let dx = 0; dx < scale; dx++) {
        const i = ((Number(y) * scale + dy) * width + Number(x) * scale + dx) * 4;
        pixels[i] = pixels[i + 1] = pixels[i + 2] = 0;
      }
  }
  return decode(pixels, width, width)?.data ?? null;
}
