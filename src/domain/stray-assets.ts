// Other tokens and the native coin found at a charge's address (charges.stray_assets), as stored:
// written by reconcile.ts, shown on the charge, swept by sweeps.ts.
import { z } from "zod";
import { jsonColumn } from "./json-columns.js";

/** A stray asset as a charge stores it (charges.stray_assets): the amount in base units, as a decimal string. */
const StoredStrayAsset = z.object({ chainId: z.number().int(), token: z.string(), amount: z.string().regex(/^\d+$/) });
export type StoredStrayAsset = z.infer<typeof StoredStrayAsset>;
const StoredStrayAssets = z.array(StoredStrayAsset);

/** A charge's stored stray assets, every chain's. */
export function storedStrayAssets(value: unknown): StoredStrayAsset[] {
  return jsonColumn(StoredStrayAssets, value, "charges.stray_assets");
}
