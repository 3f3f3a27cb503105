// The service's icon (favicon.svg, committed next to this file): every page the service draws links
// /favicon.svg, and /favicon.ico answers with the same SVG for the browsers and tools that ask for
// that name anyway, so no page ever asks for an icon that is not there.
import { readFileSync } from "node:fs";
import type { FastifyInstance } from "fastify";
import { CompressedAsset } from "./compression.js";

/** Where the pages link the icon. */
export const FAVICON_PATH = "/favicon.svg";

/** The `<link>` of the icon, for a page's head. */
export const FAVICON_LINK = `<link rel="icon" href="${FAVICON_PATH}" type="image/svg+xml">`;

/** Registers /favicon.svg and /favicon.ico, cached for a week (the icon changes with a release at most). */
export function faviconRoutes(app: FastifyInstance): void {
  const icon = new CompressedAsset(readFileSync(new URL("../../src/http/favicon.svg", import.meta.url)), "image/svg+xml");
  const open = { config: { group: "read", auth: "public" } } as const;
  for (const path of [FAVICON_PATH, "/favicon.ico"]) {
    app.get(path, open, async (req, reply) =>
      icon.send(req, reply.header("Cache-Control", "public, max-age=604800").header("X-Content-Type-Options", "nosniff")),
    );
  }
}
