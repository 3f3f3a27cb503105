// The hosted pages' scripts and stylesheet (src/pay/assets, served as they are: no build step), each
// read and compressed once when the service starts (http/compression.ts). wallets.js is the wallet
// chooser the pages' scripts import (ES modules), so that every page finds and names wallets alike.
import { readFileSync } from "node:fs";
import type { FastifyInstance } from "fastify";
import { CompressedAsset } from "../http/compression.js";
import { OPEN, type PayContext } from "./context.js";

const ASSETS = new URL("../../src/pay/assets/", import.meta.url);

const SCRIPT = "text/javascript; charset=utf-8";

/** Each asset's file name and type. */
export const PAY_ASSETS: Record<string, string> = {
  "pay.js": SCRIPT,
  "subscribe.js": SCRIPT,
  "wallets.js": SCRIPT,
  "pay.css": "text/css; charset=utf-8",
};

/** Registers `<basePath>/assets/<name>` for each of PAY_ASSETS. */
export function assetRoutes(scope: FastifyInstance, { basePath }: PayContext): void {
  for (const [name, type] of Object.entries(PAY_ASSETS)) {
    const asset = new CompressedAsset(readFileSync(new URL(name, ASSETS)), type);
    // Not versioned in the URL: a short cache, so that a release reaches buyers within minutes.
    scope.get(`${basePath}/assets/${name}`, OPEN, async (req, reply) => asset.send(req, reply.header("Cache-Control", "public, max-age=300")));
  }
}
