// The facilitator's request bodies (x402 protocol version 2, scheme `exact` on EVM): `POST /x402/verify`
// and `POST /x402/settle` both take {x402Version, paymentPayload, paymentRequirements}. Fields the
// specification leaves open (extensions, mimeType, outputSchema, …) pass through unread.
import { z } from "zod";
import { pageParams } from "../paging.js";
import { evmAddress } from "../validation.js";

/** The query of the settlements' list (GET /v1/x402/payments, GraphQL's connection): a keyset page. */
export const paymentListSchema = z.strictObject(pageParams);

/** The protocol version this facilitator speaks. */
export const X402_VERSION = 2;

/** A reason the specification names for a refused payment (its §9), or one of the reference facilitator's where it names none. */
export type X402Reason =
  | "insufficient_funds"
  | "invalid_exact_evm_payload_authorization_valid_after"
  | "invalid_exact_evm_payload_authorization_valid_before"
  | "invalid_exact_evm_payload_authorization_value_mismatch"
  | "invalid_exact_evm_payload_signature"
  | "invalid_exact_evm_payload_recipient_mismatch"
  | "invalid_exact_evm_nonce_already_used"
  | "invalid_network"
  | "invalid_payload"
  | "invalid_payment_requirements"
  | "unsupported_scheme"
  | "invalid_x402_version"
  | "invalid_transaction_state"
  | "settlement_pending"
  | "unexpected_settle_error";

const uint = z
  .string()
  .regex(/^\d{1,78}$/, "must be a non-negative integer in a string")
  .transform((v) => BigInt(v));

/** What a route asks to be paid (PaymentRequirements): the server's terms, which the authorization must meet exactly. */
const requirementsSchema = z.looseObject({
  scheme: z.string(),
  network: z.string(),
  amount: uint,
  asset: evmAddress(),
  payTo: evmAddress(),
  maxTimeoutSeconds: z.number().int().positive(),
  extra: z.looseObject({ name: z.string().optional(), version: z.string().optional() }).optional(),
});
export type PaymentRequirements = z.output<typeof requirementsSchema>;

/** The signed EIP-3009 authorization of the `exact` scheme's payload. */
const exactPayloadSchema = z.looseObject({
  signature: z.string().regex(/^0x[0-9a-fA-F]{130}$/, "must be a 65-byte signature in hex (an externally owned account's)"),
  authorization: z.looseObject({
    from: evmAddress(),
    to: evmAddress(),
    value: uint,
    validAfter: uint,
    validBefore: uint,
    nonce: z
      .string()
      .regex(/^0x[0-9a-fA-F]{64}$/, "must be 32 bytes in hex")
      .transform((n) => n.toLowerCase()),
  }),
});

const paymentPayloadSchema = z.looseObject({
  x402Version: z.literal(X402_VERSION),
  resource: z
    .looseObject({ url: z.string().max(2048).optional(), description: z.string().max(1000).optional(), mimeType: z.string().max(200).optional() })
    .optional(),
  accepted: requirementsSchema,
  payload: exactPayloadSchema,
});

/** A verify or settle request, parsed. */
export const facilitatorRequestSchema = z.looseObject({
  x402Version: z.literal(X402_VERSION),
  paymentPayload: paymentPayloadSchema,
  paymentRequirements: requirementsSchema,
});
export type FacilitatorRequest = z.output<typeof facilitatorRequestSchema>;

/** A refusal: the reason the specification names and a sentence naming the field. */
export interface X402Refusal {
  reason: X402Reason;
  message: string;
}

/** The parsed request, or why it cannot be read (the first problem, naming its field). */
export function parseFacilitatorRequest(body: unknown): { request: FacilitatorRequest } | { refusal: X402Refusal } {
  const version = (body as { x402Version?: unknown; paymentPayload?: { x402Version?: unknown } } | null | undefined) ?? {};
  for (const [field, value] of [
    ["x402Version", version.x402Version],
    ["paymentPayload.x402Version", version.paymentPayload?.x402Version],
  ] as const) {
    if (value !== undefined && value !== X402_VERSION) {
      return {
        refusal: {
          reason: "invalid_x402_version",
          message: `${field} ${JSON.stringify(value)} is not supported: this facilitator speaks x402 version ${X402_VERSION}`,
        },
      };
    }
  }
  const parsed = facilitatorRequestSchema.safeParse(body);
  if (parsed.success) return { request: parsed.data };
  const issue = parsed.error.issues[0]!;
  const field = issue.path.join(".") || "body";
  const reason: X402Reason = issue.path[0] === "paymentRequirements" ? "invalid_payment_requirements" : "invalid_payload";
  return { refusal: { reason, message: `${field}: ${issue.message}` } };
}
