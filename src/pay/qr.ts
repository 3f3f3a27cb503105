// QR codes as inline SVG, drawn on the server (lib/qr-svg.ts): readable without JavaScript, no image
// request. And the escaping of the hosted pages' HTML.
export { qrSvg } from "../lib/qr-svg.js";

/** Escapes text for HTML content and attribute values. */
export function escapeHtml(s: string): string {
  return s.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
}
