// The service's icon: every page the service draws links /favicon.svg, and /favicon.ico answers with
// the same SVG for the browsers and tools that ask for that name anyway, so no page ever asks for an
// icon that is not there. Written here rather than read from a file: the image ships dist/ alone.
import type { FastifyInstance } from "fastify";
import { CompressedAsset } from "./compression.js";

/** Where the pages link the icon. */
export const FAVICON_PATH = "/favicon.svg";

/** The `<link>` of the icon, for a page's head. */
export const FAVICON_LINK = `<link rel="icon" href="${FAVICON_PATH}" type="image/svg+xml">`;

/** The icon: a white arch on the brand's blue. */
const ICON =
  '<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 32 32"><rect width="32" height="32" rx="7" fill="#1a237e"/><path d="M9 24V13a7 7 0 0 1 14 0v11M9 17h14" fill="none" stroke="#fff" stroke-width="3" stroke-linecap="round"/></svg>';

/** Registers /favicon.svg and /favicon.ico, cached for a week (the icon changes with a release at most). */
export function faviconRoutes(app: FastifyInstance): void {
  const icon = new CompressedAsset(Buffer.from(ICON), "image/svg+xml");
  const open = { config: { group: "read", auth: "public" } } as const;
  for (const path of [FAVICON_PATH, "/favicon.ico"]) {
    app.get(path, open, async (req, reply) =>
      icon.send(req, reply.header("Cache-Control", "public, max-age=604800").header("X-Content-Type-Options", "nosniff")),
    );
  }
}
