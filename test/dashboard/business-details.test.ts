// The seller's business details (legal name, address, tax id, logo): set over GraphQL by a dashboard
// session in either mode and read back the same in both, each invalid field refused by name; printed on
// the hosted invoice page and in the PDF of invoices of both modes, frozen at finalization except the logo.
import { randomBytes } from "node:crypto";
import { deflateSync } from "node:zlib";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { OPERATOR } from "../../src/domain/confirmation.js";
import { createUser } from "../../src/domain/users.js";
import { liveChains, POLLING, startApp, type TestApp } from "../helpers/harness.js";
import { pdfText } from "../helpers/pdf.js";
import { dataUrl, png } from "../helpers/png.js";

const PASSWORD = "correct horse battery";
const DETAILS = `businessDetails { legalName taxId logo address { line1 line2 city state postalCode country } }`;
const UPDATE = `mutation($input: BusinessDetailsInput!) { updateBusinessDetails(input: $input) { name ${DETAILS} } }`;
const ADDRESS = { line1: "Kiln Lane 1", line2: "Unit 4", city: "Stoke", state: null, postalCode: "ST1 1AA", country: "gb" };
const LOGO = png({ width: 60, height: 20 });

let app: TestApp;
let email: string;
beforeAll(async () => {
  app = await startApp(POLLING, { chains: liveChains() });
  email = (
    await createUser(app.db.prisma, app.merchant.merchant.id, { email: `seller-${randomBytes(4).toString("hex")}@example.com`, password: PASSWORD }, OPERATOR)
  ).email;
}, 60_000);
afterAll(() => app?.stop());

/** A signed-in dashboard's GraphQL, in `mode`. */
async function session(mode: "test" | "live") {
  const res = await app.call("POST", "/dashboard/session", { key: null, body: { email, password: PASSWORD, mode } });
  expect(res.status, res.text).toBe(201);
  const headers = { cookie: res.headers.get("set-cookie")!.split(";")[0]!, "x-csrf-token": res.body.csrfToken };
  return async (query: string, variables?: Record<string, unknown>) =>
    (await app.call("POST", "/graphql", { key: null, body: { query, variables }, headers })).body;
}

/** A finalized invoice of `key`'s mode for a customer with an address. */
async function finalizedInvoice(key: string) {
  const customer = await app.call("POST", "/v1/customers", {
    key,
    body: {
      email: `buyer-${randomBytes(3).toString("hex")}@example.com`,
      name: "Jane Buyer",
      address: { line1: "Hauptstraße 1", city: "Berlin", postalCode: "10115", country: "DE" },
    },
  });
  const draft = await app.call("POST", "/v1/invoices", {
    key,
    body: { customerId: customer.body.id, lineItems: [{ description: "Mugs", quantity: 2, unitAmount: "5.00" }] },
  });
  const finalized = await app.call("POST", `/v1/invoices/${draft.body.id}/finalize`, { key });
  expect(finalized.status, finalized.text).toBe(200);
  return finalized.body.id as string;
}

async function hostedPage(id: string): Promise<string> {
  const res = await fetch(`${app.url}/pay/invoices/${id}`);
  expect(res.status).toBe(200);
  return res.text();
}

async function pdf(id: string): Promise<{ text: string; hasImage: boolean }> {
  const res = await fetch(`${app.url}/pay/invoices/${id}/pdf`);
  expect(res.headers.get("content-type")).toBe("application/pdf");
  const bytes = Buffer.from(await res.arrayBuffer());
  return { text: await pdfText(bytes), hasImage: bytes.includes("/Subtype /Image") };
}

describe("business details", () => {
  it("are set by a session in one mode and read the same in the other; an API key may not", async () => {
    const test = await session("test");
    const set = await test(UPDATE, { input: { legalName: "  Test Shop Ltd ", address: ADDRESS, taxId: "GB999999973", logo: dataUrl(LOGO) } });
    expect(set.errors).toBeUndefined();
    expect(set.data.updateBusinessDetails).toEqual({
      name: "Test Shop",
      businessDetails: {
        legalName: "Test Shop Ltd",
        taxId: "GB999999973",
        logo: dataUrl(LOGO),
        address: { ...ADDRESS, country: "GB" },
      },
    });
    const live = await session("live");
    expect((await live(`{ viewer { mode merchant { name ${DETAILS} } } }`)).data.viewer).toEqual({ mode: "LIVE", merchant: set.data.updateBusinessDetails });

    const byKey = await app.gql(UPDATE, { input: { taxId: "X" } });
    expect(byKey.errors?.[0].extensions.code).toBe("session_required");
    const byLiveKey = await app.gql(UPDATE, { input: { taxId: "X" } }, app.liveKey);
    expect(byLiveKey.errors?.[0].extensions.code).toBe("session_required");
    expect((await live(`{ viewer { merchant { businessDetails { taxId } } } }`)).data.viewer.merchant.businessDetails.taxId).toBe("GB999999973");
  });

  it("change only what is given; null or blank text clears, null removes the logo", async () => {
    const gql = await session("live");
    await gql(UPDATE, { input: { legalName: "Keep Ltd", taxId: "T-1", address: ADDRESS, logo: dataUrl(LOGO) } });
    const partial = await gql(UPDATE, { input: { taxId: "T-2" } });
    expect(partial.data.updateBusinessDetails.businessDetails).toMatchObject({ legalName: "Keep Ltd", taxId: "T-2", logo: dataUrl(LOGO) });
    const cleared = await gql(UPDATE, { input: { legalName: "   ", taxId: null, address: null, logo: null } });
    expect(cleared.data.updateBusinessDetails.businessDetails).toEqual({ legalName: null, taxId: null, logo: null, address: null });
    const row = await app.db.prisma.merchant.findUniqueOrThrow({ where: { id: app.merchant.merchant.id } });
    expect([row.logo, row.logoType, row.businessAddress]).toEqual([null, null, null]);
  });

  it.each([
    ["legalName", { legalName: "x".repeat(201) }, "Invalid legalName: must be at most 200 characters"],
    ["taxId", { taxId: "x".repeat(101) }, "Invalid taxId: must be at most 100 characters"],
    ["address.country", { address: { country: "XX" } }, "Invalid address.country: must be a two-letter ISO 3166-1 country code"],
    ["address.line1", { address: { line1: "x".repeat(201) } }, "Invalid address.line1: must be at most 200 characters"],
    ["logo", { logo: "https://example.com/logo.png" }, "Invalid logo: must be a base64 data: URL of a PNG or JPEG image (data:image/png;base64,…)"],
    ["logo", { logo: "data:image/svg+xml;base64,PHN2Zy8+" }, "Invalid logo: must be a base64 data: URL of a PNG or JPEG image (data:image/png;base64,…)"],
    ["logo", { logo: dataUrl(Buffer.from("GIF89a;")) }, "Invalid logo: is not a PNG or JPEG image (its bytes are neither)"],
    [
      "logo",
      { logo: dataUrl(png({ width: 8, height: 8, idat: deflateSync(Buffer.alloc(3)) })) },
      "Invalid logo: is not a PNG or JPEG image (its bytes are neither)",
    ],
    [
      "logo",
      { logo: dataUrl(png({ width: 4096, height: 8, idat: deflateSync(Buffer.alloc(1)) })) },
      "Invalid logo: must be at most 2048×2048 pixels (this one is 4096×8)",
    ],
    ["logo", { logo: dataUrl(Buffer.concat([LOGO, Buffer.alloc(65 * 1024)])) }, "Invalid logo: must be at most 64 KB (this one is 66 KB)"],
  ] as [string, Record<string, unknown>, string][])("refuse an invalid %s by name, changing nothing", async (param, input, message) => {
    const gql = await session("test");
    await gql(UPDATE, { input: { legalName: "Before Ltd" } });
    // Valid fields beside the invalid one change nothing either.
    const res = await gql(UPDATE, { input: { legalName: "After Ltd", ...input } });
    expect(res.errors?.[0]).toMatchObject({ message, extensions: { code: "parameter_invalid", param } });
    expect((await gql(`{ viewer { merchant { businessDetails { legalName } } } }`)).data.viewer.merchant.businessDetails.legalName).toBe("Before Ltd");
  });
});

describe("invoices", () => {
  it("show the seller's details and logo, and the customer's address, on the hosted page and in the PDF of both modes", async () => {
    const gql = await session("test");
    await gql(UPDATE, { input: { legalName: "Test Shop Ltd", address: ADDRESS, taxId: "GB999999973", logo: dataUrl(LOGO) } });
    for (const key of [app.testKey, app.liveKey]) {
      const id = await finalizedInvoice(key);
      const html = await hostedPage(id);
      expect(html).toContain(`<img class="logo" src="${dataUrl(LOGO)}" alt="">`);
      expect(html).toContain(
        `<h2 id="from">From</h2><p class="seller">Test Shop Ltd<br>Kiln Lane 1<br>Unit 4<br>ST1 1AA Stoke<br>GB<br>Tax ID: GB999999973</p>`,
      );
      expect(html).toContain(`<p class="bill-to">Jane Buyer<br>Hauptstraße 1<br>10115 Berlin<br>DE<br>`);
      const { text, hasImage } = await pdf(id);
      expect(text).toContain(
        "Test Shop\nTest Shop Ltd\nKiln Lane 1\nUnit 4\nStoke ST1 1AA\nGB\nTax ID: GB999999973\nBill to\nJane Buyer\nHauptstraße 1\nBerlin 10115\nDE",
      );
      expect(hasImage).toBe(true);
    }
  });

  it("keep the details they were finalized with; the logo is the current one", async () => {
    const gql = await session("test");
    await gql(UPDATE, { input: { legalName: "Old Name Ltd", address: ADDRESS, taxId: "OLD-1", logo: dataUrl(LOGO) } });
    const issued = await finalizedInvoice(app.testKey);
    const newLogo = png({ width: 30, height: 30, colourType: 2 });
    await gql(UPDATE, { input: { legalName: "New Name Ltd", address: { city: "Leeds", country: "GB" }, taxId: "NEW-2", logo: dataUrl(newLogo) } });

    const old = await hostedPage(issued);
    expect(old).toContain("Old Name Ltd<br>Kiln Lane 1");
    expect(old).toContain("Tax ID: OLD-1");
    expect(old).not.toContain("NEW-2");
    expect(old).toContain(dataUrl(newLogo));
    expect((await pdf(issued)).text).toContain("Old Name Ltd\nKiln Lane 1");

    const fresh = await hostedPage(await finalizedInvoice(app.testKey));
    expect(fresh).toContain(`<p class="seller">New Name Ltd<br>Leeds<br>GB<br>Tax ID: NEW-2</p>`);

    // Without details the trading name stands alone and no logo is drawn.
    await gql(UPDATE, { input: { legalName: null, address: null, taxId: null, logo: null } });
    const bare = await finalizedInvoice(app.testKey);
    expect(await hostedPage(bare)).toContain(`<p class="seller">Test Shop</p>`);
    expect(await hostedPage(bare)).not.toContain(`class="logo"`);
    expect((await pdf(bare)).hasImage).toBe(false);
  });
});
