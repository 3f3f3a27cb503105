// The request contract of paying a test charge from the devnet's wallet: the body of POST
// /v1/test_helpers/charges/:id/pay. The door parses a request with it (parseInput) and hands the
// domain the typed result.
import { z } from "zod";
import { amountInput } from "./validation.js";

/** The body of POST /v1/test_helpers/charges/:id/pay. */
export const testPaySchema = z.strictObject(
  {
    amount: amountInput("25.00").optional(),
    late: z.boolean({ error: "must be true or false" }).optional(),
  },
  { error: "must be a JSON object" },
);

/** A test payment, parsed (testPaySchema). */
export type TestPayRequest = z.output<typeof testPaySchema>;
