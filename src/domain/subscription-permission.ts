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

const digits = z.string().regex(/^\d+$/);
// As the checkout stores it (subscription-checkout.ts): the numbers as decimal strings.
const StoredPermit = z.object({ value: digits, deadline: digits, signature: z.string() });

/** A USDC permit as the subscribe() call takes it. */
export interface Permit {
  value: bigint;
  deadline: bigint;
  signature: string;
}

/** The permission stored on a subscription that has one; StoredJsonError when the column holds anything else. */
export function storedPermission(value: unknown): Permission {
  return loadPermission(jsonColumn(StoredPermission, value, "subscriptions.permission"));
}

/** The USDC permit stored on a checkout (subscriptions.permit), null when the buyer gave none; StoredJsonError when the column holds anything else. */
export function storedPermit(value: unknown): Permit | null {
  if (value === null) return null;
  const p = jsonColumn(StoredPermit, value, "subscriptions.permit");
  return { value: BigInt(p.value), deadline: BigInt(p.deadline), signature: p.signature };
}
