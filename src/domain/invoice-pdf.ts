// An invoice as a PDF: A4, pdfkit's built-in Helvetica (no font file to ship, and the text stays
// extractable), laid out top to bottom so that nothing a buyer typed, however long, can push text off
// a page: long strings wrap and flow onto new pages, and so do long tables.
import PDFDocument from "pdfkit";
import type { PostalAddress } from "./postal-address.js";

/** What an invoice document shows; amounts are already formatted decimal strings such as "12.50". */
export interface InvoiceDocument {
  /** "INV-000001"; null only for a draft. */
  number: string | null;
  status: "DRAFT" | "OPEN" | "PAID" | "VOID" | "UNCOLLECTIBLE";
  /** False: every page carries a visible "TEST MODE" mark. */
  livemode: boolean;
  merchantName: string;
  /** The seller's business details, printed under its name. */
  seller: { legalName: string | null; address: PostalAddress | null; taxId: string | null };
  /** A PNG or JPEG already in hand (never a URL: nothing is fetched while drawing). */
  logo: { type: "image/png" | "image/jpeg"; data: Uint8Array } | null;
  customer: {
    name: string;
    email: string;
    companyName: string | null;
    taxId: string | null;
    address: PostalAddress | null;
  } | null;
  /** 1 to 100 lines. */
  lineItems: { description: string; quantity: number; unitAmount: string; amount: string }[];
  subtotal: string;
  total: string;
  amountPaid: string;
  amountDue: string;
  currency: "USDC";
  createdAt: Date;
  finalizedAt: Date | null;
  dueDate: Date | null;
  paidAt: Date | null;
  memo: string | null;
  hostedInvoiceUrl: string | null;
}

const STATUS: Record<InvoiceDocument["status"], string> = {
  DRAFT: "Draft",
  OPEN: "Open",
  PAID: "Paid",
  VOID: "Void",
  UNCOLLECTIBLE: "Uncollectible",
};

const MARGIN = 50;
const WIDTH = 595.28 - 2 * MARGIN; // A4 is 595.28 pt wide
const RIGHT = MARGIN + WIDTH;
const REGULAR = "Helvetica";
const BOLD = "Helvetica-Bold";
const MUTED = "#555555";
const TEXT = "#111111";

// Table columns: the description takes what the three right-aligned numbers leave.
const QTY = { x: 310, width: 45 };
const UNIT = { x: 360, width: 85 };
const AMOUNT = { x: 450, width: RIGHT - 450 };
const DESCRIPTION = { x: MARGIN, width: QTY.x - 5 - MARGIN };
// Labels of the dates and totals, whose values line up with the amounts.
const LABEL = { x: 300, width: AMOUNT.x - 5 - 300 };
// The box a logo is fitted into, above the title.
const LOGO = { width: 160, height: 48 };

// The 27 characters WinAnsiEncoding has in 0x80–0x9F; with Latin-1 (0x20–0x7E, 0xA0–0xFF) they
// are everything the standard fonts can draw.
const WIN_ANSI_EXTRAS = new Set("€‚ƒ„…†‡ˆ‰Š‹ŒŽ‘’“”•–—˜™š›œžŸ");
const LINE_BREAKS = /\r\n|[\n\r\v\f\u0085\u2028\u2029]/g;
const INVISIBLE = /[\p{Cc}\p{Cf}]/gu;

/** Text the standard PDF fonts can draw: whitespace controls become spaces, other control and format characters (bidi overrides, zero-width joiners) are dropped, and what WinAnsi lacks becomes "?". */
export function winAnsiSafe(text: string): string {
  let out = "";
  // NFC first, so that a letter typed as base + combining accent stays one Latin-1 letter.
  for (const char of oneLine(text).normalize("NFC")) {
    const code = char.codePointAt(0) ?? 0;
    const latin1 = (code >= 0x20 && code <= 0x7e) || (code >= 0xa0 && code <= 0xff);
    out += latin1 || WIN_ANSI_EXTRAS.has(char) ? char : "?";
  }
  return out;
}

// For metadata too, whose strings are written as UTF-16 and so keep what the page text cannot.
function oneLine(text: string): string {
  return text.replace(LINE_BREAKS, " ").replace(/\t/g, " ").replace(INVISIBLE, "");
}

/** The invoice as a PDF (A4, text extractable). */
export async function renderInvoicePdf(doc: InvoiceDocument): Promise<Buffer> {
  const title = doc.number === null ? "Invoice (draft)" : `Invoice ${oneLine(doc.number)}`;
  const pdf = new PDFDocument({
    size: "A4",
    margin: MARGIN,
    bufferPages: true,
    info: { Title: title, Author: oneLine(doc.merchantName), CreationDate: doc.createdAt },
  });
  const chunks: Buffer[] = [];
  pdf.on("data", (chunk: Buffer) => chunks.push(chunk));
  const ended = new Promise<Buffer>((resolve, reject) => {
    pdf.on("end", () => resolve(Buffer.concat(chunks)));
    pdf.on("error", reject);
  });

  logo(pdf, doc);
  header(pdf, doc, title);
  billTo(pdf, doc);
  lineItems(pdf, doc);
  totals(pdf, doc);
  footer(pdf, doc);
  if (!doc.livemode) testModeMarks(pdf);

  pdf.end();
  return ended;
}

type Pdf = PDFKit.PDFDocument;

function logo(pdf: Pdf, doc: InvoiceDocument): void {
  if (!doc.logo) return;
  try {
    pdf.image(Buffer.from(doc.logo.data), MARGIN, pdf.y, { fit: [LOGO.width, LOGO.height] });
  } catch {
    // Checked when uploaded (domain/images.ts); should pdfkit still refuse it, the invoice goes without.
    return;
  }
  pdf.y += LOGO.height + 12;
}

function header(pdf: Pdf, doc: InvoiceDocument, title: string): void {
  const top = pdf.y;
  pdf
    .font(BOLD)
    .fontSize(20)
    .fillColor(TEXT)
    .text(winAnsiSafe(title), MARGIN, top, { width: WIDTH / 2 });
  pdf
    .font(REGULAR)
    .fontSize(12)
    .fillColor(MUTED)
    .text(STATUS[doc.status], { width: WIDTH / 2 });
  const left = pdf.y;

  // The dates are ours and short, so they can sit beside the title without risk of overlapping it.
  const dates: [string, Date | null][] = [
    ["Issued", doc.finalizedAt ?? doc.createdAt],
    ["Due", doc.dueDate],
    ["Paid", doc.paidAt],
  ];
  pdf.fontSize(10);
  pdf.y = top;
  for (const [label, date] of dates) {
    if (date) labelled(pdf, label, formatDate(date), LABEL, AMOUNT, REGULAR);
  }

  pdf.y = Math.max(left, pdf.y) + 16;
  pdf.font(BOLD).fontSize(12).fillColor(TEXT).text(winAnsiSafe(doc.merchantName), MARGIN, pdf.y, { width: WIDTH });
  const { seller } = doc;
  // The legal name only where it says more than the name above it.
  const legalName = seller.legalName !== doc.merchantName ? seller.legalName : null;
  pdf.font(REGULAR).fontSize(10);
  textLines(pdf, [legalName, ...addressLines(seller.address), seller.taxId ? `Tax ID: ${seller.taxId}` : null]);
  pdf.moveDown(1);
}

function billTo(pdf: Pdf, doc: InvoiceDocument): void {
  const { customer } = doc;
  if (!customer) return;
  pdf.font(BOLD).fontSize(10).fillColor(MUTED).text("Bill to", MARGIN, pdf.y, { width: WIDTH });
  pdf.font(REGULAR).fillColor(TEXT);
  textLines(pdf, [customer.name, customer.companyName, customer.taxId ? `Tax ID: ${customer.taxId}` : null, ...addressLines(customer.address), customer.email]);
  pdf.moveDown(1.5);
}

function addressLines(address: PostalAddress | null): (string | null)[] {
  if (!address) return [];
  return [address.line1, address.line2, [address.city, address.state, address.postalCode].filter(Boolean).join(" "), address.country];
}

// One line each, in the full width; empty ones are left out.
function textLines(pdf: Pdf, lines: (string | null | undefined)[]): void {
  for (const line of lines) {
    const text = line ? winAnsiSafe(line).trim() : "";
    if (text) pdf.text(text, MARGIN, pdf.y, { width: WIDTH });
  }
}

function lineItems(pdf: Pdf, doc: InvoiceDocument): void {
  pdf.font(BOLD).fontSize(10).fillColor(MUTED);
  row(pdf, ["Description", "Qty", "Unit price", "Amount"]);
  rule(pdf);
  pdf.font(REGULAR).fillColor(TEXT);
  for (const item of doc.lineItems) {
    row(pdf, [winAnsiSafe(item.description), String(item.quantity), winAnsiSafe(item.unitAmount), winAnsiSafe(item.amount)]);
    pdf.y += 4;
  }
  rule(pdf);
}

// One table row. A row that does not fit what is left of the page starts on the next one; a
// description longer than a whole page starts right away and flows on over as many pages as it needs.
// The description is drawn first so that text extraction reads a row left to right.
function row(pdf: Pdf, [description, qty, unit, amount]: [string, string, string, string]): void {
  const numbers: [string, { x: number; width: number }][] = [
    [qty, QTY],
    [unit, UNIT],
    [amount, AMOUNT],
  ];
  const height = Math.max(
    pdf.heightOfString(description, { width: DESCRIPTION.width }),
    ...numbers.map(([text, column]) => pdf.heightOfString(text, { width: column.width })),
  );
  const needed = height <= pdf.page.maxY() - pdf.page.margins.top ? height : pdf.currentLineHeight(true);
  if (pdf.y + needed > pdf.page.maxY()) pdf.addPage();

  const top = pdf.y;
  const first = currentPage(pdf);
  pdf.text(description, DESCRIPTION.x, top, { width: DESCRIPTION.width });
  const last = currentPage(pdf);
  let bottom = pdf.y;
  if (last !== first) pdf.switchToPage(first);
  for (const [text, column] of numbers) {
    pdf.text(text, column.x, top, { width: column.width, align: "right" });
    if (last === first) bottom = Math.max(bottom, pdf.y);
  }
  if (last !== first) pdf.switchToPage(last);
  pdf.x = MARGIN;
  pdf.y = bottom;
}

// Pages are only ever added at the end, so the page being drawn on is the last buffered one.
function currentPage(pdf: Pdf): number {
  const { start, count } = pdf.bufferedPageRange();
  return start + count - 1;
}

function rule(pdf: Pdf): void {
  pdf.moveTo(MARGIN, pdf.y).lineTo(RIGHT, pdf.y).lineWidth(0.5).strokeColor("#999999").stroke();
  pdf.y += 6;
}

function totals(pdf: Pdf, doc: InvoiceDocument): void {
  const rows: [string, string, string][] = [
    ["Subtotal", doc.subtotal, REGULAR],
    ["Total", doc.total, REGULAR],
    ["Amount paid", doc.amountPaid, REGULAR],
    ["Amount due", doc.amountDue, BOLD],
  ];
  pdf.fontSize(10);
  // Kept together on one page: a total alone at the top of a page reads as a different invoice.
  const height = rows.length * (pdf.currentLineHeight(true) + 2);
  if (pdf.y + height > pdf.page.maxY()) pdf.addPage();
  for (const [label, amount, font] of rows) {
    labelled(pdf, label, `${winAnsiSafe(amount)} ${doc.currency}`, LABEL, AMOUNT, font);
    pdf.y += 2;
  }
  pdf.moveDown(1.5);
}

function footer(pdf: Pdf, doc: InvoiceDocument): void {
  pdf.font(REGULAR).fontSize(10).fillColor(TEXT);
  if (doc.memo) {
    // The memo keeps its paragraphs; each one is made safe on its own.
    const memo = doc.memo.split(LINE_BREAKS).map(winAnsiSafe).join("\n").trim();
    if (memo) pdf.text(memo, MARGIN, pdf.y, { width: WIDTH }).moveDown(1);
  }
  if (doc.hostedInvoiceUrl) {
    const url = winAnsiSafe(doc.hostedInvoiceUrl);
    pdf.text(`Pay online: ${url}`, MARGIN, pdf.y, { width: WIDTH, link: url });
  }
}

// A label and a right-aligned value on one line; leaves the cursor below the taller of the two.
function labelled(pdf: Pdf, label: string, value: string, left: { x: number; width: number }, right: { x: number; width: number }, font: string): void {
  const top = pdf.y;
  pdf.font(font).fillColor(MUTED).text(label, left.x, top, { width: left.width });
  const below = pdf.y;
  pdf.fillColor(TEXT).text(value, right.x, top, { width: right.width, align: "right" });
  pdf.x = MARGIN;
  pdf.y = Math.max(below, pdf.y);
}

// In the top margin of every page, so that no page of a test invoice can pass for a real one.
function testModeMarks(pdf: Pdf): void {
  const { start, count } = pdf.bufferedPageRange();
  for (let i = start; i < start + count; i++) {
    pdf.switchToPage(i);
    pdf.font(BOLD).fontSize(10).fillColor("#b45309").text("TEST MODE: not a real invoice", MARGIN, 22, { width: WIDTH, align: "right" });
  }
}

function formatDate(date: Date): string {
  return date.toISOString().slice(0, 10);
}
