// Every email's look: one HTML part and one plain-text part from the same blocks, in the sender's
// name. Invariants:
// - every piece of text given here (names, memos, metadata, amounts) is escaped; nothing given is
//   ever HTML, and no link is drawn but the `action`'s, which must be http(s);
// - no remote image and no tracking: the only image is the merchant's logo, referenced as the inline
//   attachment `cid:logo` (LOGO_CID) that the sender attaches from the merchant's row;
// - the text part says everything the HTML part does, links written out.
import { escapeHtml } from "../lib/html.js";

/** The inline attachment's content id the HTML's logo refers to. */
export const LOGO_CID = "logo";

/** Whose email it is: the merchant (customer-facing, team) or the service itself (operator alerts). */
export interface EmailBrand {
  name: string;
  /** Whether the merchant has a logo to show inline. */
  logo: boolean;
}

/** What an email says, in blocks the layout draws alike in HTML and text. */
export interface EmailContent {
  /** The first line, also the inbox preview. */
  heading: string;
  paragraphs: string[];
  /** Label and value pairs (amount, order, chain, transaction). */
  facts?: [label: string, value: string][];
  /** The one button: its label and an http(s) URL. */
  action?: { label: string; url: string };
  /** Small print under everything (why the reader got it, how to stop receipts). */
  footer?: string[];
}

/** A rendered email: what the outbox keeps and the sender sends. */
export interface RenderedEmail {
  html: string;
  text: string;
}

/** A URL safe to draw as a link: http(s) only (no javascript:, data: or mailto: smuggled in by a setting). */
function safeUrl(url: string): string {
  const parsed = new URL(url);
  if (parsed.protocol !== "https:" && parsed.protocol !== "http:") throw new Error(`email links must be http(s), not ${parsed.protocol}`);
  return parsed.toString();
}

const FONT = "font-family:-apple-system,BlinkMacSystemFont,'Segoe UI',Roboto,Helvetica,Arial,sans-serif";

/** The HTML and text parts of `content` in `brand`'s name. */
export function renderEmail(brand: EmailBrand, content: EmailContent): RenderedEmail {
  const e = escapeHtml;
  const action = content.action && { label: content.action.label, url: safeUrl(content.action.url) };
  const facts = content.facts ?? [];
  const footer = content.footer ?? [];
  const html = [
    '<!doctype html><html><head><meta charset="utf-8"><meta name="viewport" content="width=device-width"><meta name="color-scheme" content="light">',
    `<title>${e(content.heading)}</title></head>`,
    `<body style="margin:0;padding:24px;background:#f5f6f8;${FONT};color:#1a1d24">`,
    '<table role="presentation" width="100%" cellpadding="0" cellspacing="0"><tr><td align="center">',
    '<table role="presentation" width="100%" cellpadding="0" cellspacing="0" style="max-width:560px;background:#ffffff;border-radius:8px;padding:32px">',
    "<tr><td>",
    brand.logo
      ? `<img src="cid:${LOGO_CID}" alt="${e(brand.name)}" style="max-height:48px;max-width:200px;display:block;margin-bottom:16px">`
      : `<p style="margin:0 0 16px;font-size:14px;font-weight:600;color:#5a6170">${e(brand.name)}</p>`,
    `<h1 style="margin:0 0 16px;font-size:20px;line-height:1.3">${e(content.heading)}</h1>`,
    ...content.paragraphs.map((p) => `<p style="margin:0 0 12px;font-size:15px;line-height:1.5">${e(p)}</p>`),
    facts.length > 0
      ? `<table role="presentation" cellpadding="0" cellspacing="0" style="margin:8px 0 16px;font-size:14px">${facts
          .map(([k, v]) => `<tr><td style="padding:4px 16px 4px 0;color:#5a6170">${e(k)}</td><td style="padding:4px 0;word-break:break-all">${e(v)}</td></tr>`)
          .join("")}</table>`
      : "",
    action
      ? `<p style="margin:24px 0"><a href="${e(action.url)}" style="display:inline-block;background:#1a56db;color:#ffffff;text-decoration:none;padding:12px 20px;border-radius:6px;font-weight:600">${e(action.label)}</a></p>` +
        `<p style="margin:0 0 12px;font-size:12px;color:#5a6170;word-break:break-all">${e(action.url)}</p>`
      : "",
    ...footer.map((f) => `<p style="margin:16px 0 0;font-size:12px;line-height:1.5;color:#5a6170">${e(f)}</p>`),
    "</td></tr></table></td></tr></table></body></html>",
  ].join("");
  const text = [
    brand.name,
    "",
    content.heading,
    "",
    ...content.paragraphs.flatMap((p) => [p, ""]),
    ...(facts.length > 0 ? [...facts.map(([k, v]) => `${k}: ${v}`), ""] : []),
    ...(action ? [`${action.label}: ${action.url}`, ""] : []),
    ...footer.flatMap((f) => ["--", f]),
  ]
    .join("\n")
    .trimEnd();
  return { html, text: `${text}\n` };
}
