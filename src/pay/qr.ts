// QR codes as inline SVG, drawn on the server (lib/qr-svg.ts): readable without JavaScript, no image
// request. And the escaping of the hosted pages' HTML.
export { escapeHtml } from "../lib/html.js";
export { qrSvg } from "../lib/qr-svg.js";
