// QR codes as SVG, drawn on the server from qrcode-generator's module matrix: the markup holds only
// numbers and attributes of ours (a label, escaped), never the encoded text, so a page may show it
// inline or as an image. The hosted payment page and the dashboard's two-factor setup use it.
import { escapeHtml } from "./html.js";
import qrcode from "qrcode-generator";

/** The light margin, in modules, that scanners expect around a code. */
const QUIET_ZONE = 4;

/** An SVG QR code of `text` (error correction M, 4-module quiet zone); with `label`, an image labelled for screen readers. */
export function qrSvg(text: string, label?: string): string {
  const qr = qrcode(0, "M");
  qr.addData(text, "Byte");
  qr.make();
  const n = qr.getModuleCount();
  let path = "";
  for (let row = 0; row < n; row++) {
    for (let col = 0; col < n; col++) if (qr.isDark(row, col)) path += `M${col + QUIET_ZONE} ${row + QUIET_ZONE}h1v1h-1z`;
  }
  const size = n + 2 * QUIET_ZONE;
  const labelled = label === undefined ? "" : ` role="img" aria-label="${escapeHtml(label)}"`;
  return (
    `<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 ${size} ${size}"${labelled} shape-rendering="crispEdges">` +
    `<rect width="${size}" height="${size}" fill="#fff"/><path d="${path}" fill="#000"/></svg>`
  );
}
