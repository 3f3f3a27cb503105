// The invoice PDF, read back as text the way a reader would copy it: what it says (the seller's
// business details and logo too), that long invoices flow over pages, and that whatever a buyer typed
// draws as plain WinAnsi text.
import { describe, expect, it } from "vitest";
import { inspectImage } from "../../src/domain/images.js";
import { type InvoiceDocument, renderInvoicePdf, winAnsiSafe } from "../../src/domain/invoice-pdf.js";
import { pdfText } from "../helpers/pdf.js";
import { png } from "../helpers/png.js";

const invoice = (overrides: Partial<InvoiceDocument> = {}): InvoiceDocument => ({
  number: "INV-000042",
  status: "PAID",
  livemode: true,
  merchantName: "Acme Mugs",
  seller: { legalName: null, address: null, taxId: null },
  logo: null,
  customer: {
    name: "Jane Doe",
    email: "jane@example.com",
    companyName: "Doe Trading GmbH",
    taxId: "DE123456789",
    address: { line1: "Hauptstraße 1", line2: "Hinterhaus", city: "Berlin", state: null, postalCode: "10115", country: "DE" },
  },
  lineItems: [
    { description: "Two mugs", quantity: 2, unitAmount: "5.00", amount: "10.00" },
    { description: "Shipping", quantity: 1, unitAmount: "2.50", amount: "2.50" },
  ],
  subtotal: "12.50",
  total: "12.50",
  amountPaid: "10.00",
  amountDue: "2.50",
  currency: "USDC",
  createdAt: new Date("2025-03-01T10:00:00Z"),
  finalizedAt: new Date("2025-03-02T10:00:00Z"),
  dueDate: new Date("2025-04-01T10:00:00Z"),
  paidAt: new Date("2025-03-05T10:00:00Z"),
  memo: "Thank you for your order.",
  hostedInvoiceUrl: "https://pay.example.com/invoices/inv_1",
  ...overrides,
});

const CONTROL = /[\p{Cc}\p{Cf}]/u;

describe("renderInvoicePdf", () => {
  it("shows the number, the customer, every line and the totals", async () => {
    const buf = await renderInvoicePdf(invoice());
    expect(buf.subarray(0, 5).toString("latin1")).toBe("%PDF-");
    const text = await pdfText(buf);
    const lines = text.split("\n");
    expect(lines).toContain("Invoice INV-000042");
    expect(lines).toContain("Paid");
    expect(lines).toContain("Acme Mugs");
    for (const line of ["Jane Doe", "Doe Trading GmbH", "Tax ID: DE123456789", "Hauptstraße 1", "Berlin 10115", "jane@example.com"]) {
      expect(lines).toContain(line);
    }
    expect(lines).toContain("Issued 2025-03-02");
    expect(lines).toContain("Due 2025-04-01");
    expect(lines).toContain("Description Qty Unit price Amount");
    expect(lines).toContain("Two mugs 2 5.00 10.00");
    expect(lines).toContain("Shipping 1 2.50 2.50");
    expect(lines).toContain("Subtotal 12.50 USDC");
    expect(lines).toContain("Total 12.50 USDC");
    expect(lines).toContain("Amount paid 10.00 USDC");
    expect(lines).toContain("Amount due 2.50 USDC");
    expect(lines).toContain("Thank you for your order.");
    expect(lines).toContain("Pay online: https://pay.example.com/invoices/inv_1");
    expect(text).not.toContain("TEST MODE");
  });

  it("prints the seller's legal name, address and tax id under its name, and draws its logo", async () => {
    const seller = {
      legalName: "Acme Mugs Ltd",
      address: { line1: "1 Kiln Lane", line2: null, city: "Stoke", state: null, postalCode: "ST1 1AA", country: "GB" },
      taxId: "GB999999973",
    };
    const plain = await renderInvoicePdf(invoice({ seller }));
    const lines = (await pdfText(plain)).split("\n");
    const at = lines.indexOf("Acme Mugs");
    expect(lines.slice(at, at + 6)).toEqual(["Acme Mugs", "Acme Mugs Ltd", "1 Kiln Lane", "Stoke ST1 1AA", "GB", "Tax ID: GB999999973"]);
    expect(lines.indexOf("Bill to")).toBe(at + 6);
    expect(plain.includes("/Subtype /Image")).toBe(false);

    const logo = png({ width: 120, height: 40 });
    const withLogo = await renderInvoicePdf(invoice({ seller, logo: { type: "image/png", data: logo } }));
    expect(withLogo.includes("/Subtype /Image")).toBe(true);
    expect(await pdfText(withLogo)).toContain("Acme Mugs Ltd\n1 Kiln Lane");
    // The same legal name as the trading name is not said twice.
    const same = await pdfText(await renderInvoicePdf(invoice({ seller: { ...seller, legalName: "Acme Mugs" } })));
    expect(same).toContain("Acme Mugs\n1 Kiln Lane");
  });

  it.each([
    ["RGBA", { colourType: 6 }],
    ["RGB", { colourType: 2 }],
    ["grey", { colourType: 0 }],
    ["grey with alpha", { colourType: 4 }],
    ["palette", { colourType: 3 }],
    ["interlaced RGBA", { colourType: 6, interlaced: true }],
    ["interlaced palette", { colourType: 3, interlaced: true }],
  ] as const)("draws a %s PNG logo that the upload check accepted", async (_kind, options) => {
    const data = png({ width: 37, height: 13, ...options });
    expect(inspectImage(data)).toMatchObject({ type: "image/png" });
    const buf = await renderInvoicePdf(invoice({ logo: { type: "image/png", data } }));
    expect(buf.includes("/Subtype /Image")).toBe(true);
    expect(await pdfText(buf)).toContain("Amount due 2.50 USDC");
  });

  it("leaves out a logo it cannot read rather than fail the invoice", async () => {
    const notReally = Buffer.from([0xff, 0xd8, 0xff, 0xd9]);
    const buf = await renderInvoicePdf(invoice({ logo: { type: "image/jpeg", data: notReally } }));
    expect(buf.includes("/Subtype /Image")).toBe(false);
    expect(await pdfText(buf)).toContain("Invoice INV-000042");
  });

  it("marks a test-mode draft as such, without a customer", async () => {
    const text = await pdfText(
      await renderInvoicePdf(invoice({ number: null, status: "DRAFT", livemode: false, customer: null, finalizedAt: null, paidAt: null })),
    );
    expect(text).toContain("Invoice (draft)\nDraft\n");
    expect(text).toContain("Issued 2025-03-01");
    expect(text).toContain("TEST MODE");
    expect(text).not.toContain("Bill to");
  });

  it("flows 100 lines over several pages, each one whole", async () => {
    const lineItems = Array.from({ length: 100 }, (_, i) => ({
      description: `Item ${i + 1}: ${"a long description that has to wrap ".repeat((i % 3) + 1).trim()}`,
      quantity: i + 1,
      unitAmount: "1.000001",
      amount: `${i + 1}.00`,
    }));
    const text = await pdfText(await renderInvoicePdf(invoice({ lineItems, subtotal: "5050.00", total: "5050.00", amountPaid: "0.00", amountDue: "5050.00" })));
    expect(text.split("\f").length).toBeGreaterThan(1);
    // Wrapped descriptions come back as several lines; joined, each is whole and in order.
    const flat = text.replace(/\n/g, " ");
    let from = 0;
    for (const item of lineItems) {
      const at = flat.indexOf(`${item.description} ${item.quantity} 1.000001 ${item.amount}`, from);
      expect(at, item.description).toBeGreaterThanOrEqual(from);
      from = at;
    }
    expect(text).toContain("Amount due 5050.00 USDC");
  });

  it("draws hostile text as plain characters", async () => {
    const hostile = "Evil\u0000\u0007\u001b[31m\u202Egnp.exe\u200B\r\nCorp 😀 中文 \uD800 e\u0301 € – ™";
    const buf = await renderInvoicePdf(
      invoice({
        merchantName: hostile,
        customer: { name: hostile, email: hostile, companyName: hostile, taxId: hostile, address: null },
        lineItems: [{ description: hostile.repeat(300), quantity: 1, unitAmount: "1.00", amount: "1.00" }],
        memo: `${hostile}\n${hostile}`,
      }),
    );
    const text = await pdfText(buf);
    expect(text.replace(/[\n\f]/g, "")).not.toMatch(CONTROL);
    expect(text).toContain("Evil[31mgnp.exe Corp ? ?? ? é € – ™");
    expect(text).toContain("Amount due 2.50 USDC");
  });
});

describe("winAnsiSafe", () => {
  it("keeps Latin-1 and the WinAnsi extras, and nothing else", () => {
    expect(winAnsiSafe("Ünïcödé ß ÿ ¿ € ‚ ƒ „ … † ‡ ˆ ‰ Š ‹ Œ Ž ‘ ’ “ ” • – — ˜ ™ š › œ ž Ÿ")).toBe(
      "Ünïcödé ß ÿ ¿ € ‚ ƒ „ … † ‡ ˆ ‰ Š ‹ Œ Ž ‘ ’ “ ” • – — ˜ ™ š › œ ž Ÿ",
    );
    expect(winAnsiSafe("a\u0080b\u009fc\u00add")).toBe("abcd");
    expect(winAnsiSafe("tab\tnew\nline\u2028end")).toBe("tab new line end");
    expect(winAnsiSafe("\u202Eabc\u200D😀 Ω ı")).toBe("abc? ? ?");
  });
});
