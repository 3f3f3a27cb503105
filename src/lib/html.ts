// Escaping for HTML made on the server: the hosted pages, the QR codes' SVG and the emails.

/** Escapes text for HTML content and attribute values. */
export function escapeHtml(s: string): string {
  return s.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
}
