// The hosted pages' scripts and stylesheet (src/pay/assets, served as they are: no build step), each
// read and compressed once when the service starts (http/compression.ts). wallets.js is the wallet
// chooser the pages' scripts import (ES modules), so that every page finds and names wallets alike;
// money.js is the service's own money module (src/lib/money.js, the file the server runs), so that
// the pages parse and print amounts exactly as the domain does, from one copy; eip3009.js, likewise,
// is the typed data the service verifies gasless payments against (src/lib/eip3009.js).
import { readFileSync } from "node:fs";
import type { FastifyInstance } from "fastify";
import { CompressedAsset } from "../http/compression.js";
import { OPEN, type PayContext } from "./context.js";

const ASSETS = new URL("../../src/pay/assets/", import.meta.url);

const SCRIPT = "text/javascript; charset=utf-8";

/** Each asset's name (under assets/), type and file. */
export const PAY_ASSETS: Record<string, { type: string; file: URL }> = {
  "pay.js": { type: SCRIPT, file: new URL("pay.js", ASSETS) },
  "subscribe.js": { type: SCRIPT, file: new URL("subscribe.js", ASSETS) },
  "wallets.js": { type: SCRIPT, file: new URL("wallets.js", ASSETS) },
  "money.js": { type: SCRIPT, file: new URL("../../src/lib/money.js", import.meta.url) },
  "eip3009.js": { type: SCRIPT, file: new URL("../../src/lib/eip3009.js", import.meta.url) },
  "pay.css": { type: "text/css; charset=utf-8", file: new URL("pay.css", ASSETS) },
};

/** Registers `<basePath>/assets/<name>` for each of PAY_ASSETS. */
export function assetRoutes(scope: FastifyInstance, { basePath }: PayContext): void {
  for (const [name, { type, file }] of Object.entries(PAY_ASSETS)) {
    const asset = new CompressedAsset(readFileSync(file), type);
    // Not versioned in the URL: a short cache, so that a release reaches buyers within minutes.
    scope.get(`${basePath}/assets/${name}`, OPEN, async (req, reply) => asset.send(req, reply.header("Cache-Control", "public, max-age=300")));
  }
}
