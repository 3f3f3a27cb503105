// Merchant metadata: a flat object of at most 50 keys (.docs/api.md "REST conventions").
import { z } from "zod";
import { jsonColumn } from "./json-columns.js";

/** Stored metadata as the API shows it. */
export const MetadataShape = z.record(z.string(), z.union([z.string(), z.number(), z.boolean()]));
export type Metadata = z.infer<typeof MetadataShape>;
const StoredMetadata = MetadataShape.nullable();

/** A metadata column (`what`, e.g. "customers.metadata") read back: null or the flat object it stores. */
export function storedMetadata(value: unknown, what: string): Metadata | null {
  return jsonColumn(StoredMetadata, value, what);
}

const MAX_KEYS = 50;

const value = z.union([z.string().max(500), z.number().finite(), z.boolean(), z.null()], {
  error: "values must be strings of at most 500 characters, numbers or booleans (no nesting)",
});

/** Metadata as sent by a caller: a `null` value removes that key, `null` as a whole clears all. */
export const metadataInput = z
  .record(z.string().min(1, "keys must be 1-40 characters").max(40, "keys must be 1-40 characters"), value, {
    error: "must be an object of key-value pairs",
  })
  .refine((m) => Object.keys(m).length <= MAX_KEYS, `must have at most ${MAX_KEYS} keys`)
  .nullable();

export type MetadataInput = z.output<typeof metadataInput>;

/** Applies `patch` to `current`: keys merge, a null value deletes its key, null clears everything. */
export function mergeMetadata(current: Metadata | null, patch: MetadataInput | undefined): Metadata | null {
  if (patch === undefined) return current;
  if (patch === null) return null;
  const merged: Metadata = { ...(current ?? {}) };
  for (const [k, v] of Object.entries(patch)) {
    if (v === null) delete merged[k];
    else merged[k] = v;
  }
  return Object.keys(merged).length > 0 ? merged : null;
}

/** True when a merged result still respects the key limit. */
export function metadataWithinLimits(m: Metadata | null): boolean {
  return m === null || Object.keys(m).length <= MAX_KEYS;
}
