// A subscription's spend permission read back from its JSON column (subscriptions.permission), as
// chain/subscriptions.ts storePermission wrote it: addresses, and the numbers as decimal strings.
import { z } from "zod";
import { loadPermission, type Permission } from "../chain/subscriptions.js";
import { jsonColumn } from "./json-columns.js";

const address = z.string().regex(/^0x[0-9a-fA-F]{40}$/);
// Written as decimal strings; a number (feeBps) is read as well.
const whole = z.union([z.string().regex(/^\d+$/), z.number().int().nonnegative()]);

const StoredPermission = z.object({
  payer: address,
  merchant: address,
  token: address,
  spender: address,
  amount: whole,
  feeBps: whole,
  period: whole,
  start: whole,
  end: whole,
  salt: whole,
});

/** The permission stored on a subscription that has one; StoredJsonError when the column holds anything else. */
export function storedPermission(value: unknown): Permission {
  return loadPermission(jsonColumn(StoredPermission, value, "subscriptions.permission"));
}
