// One error type for every door: REST maps it to a status and body, GraphQL to extensions.code.
import { STATUS_CODES } from "node:http";

/** Every machine-readable error code the API can return (API.md "Errors"). */
export type ErrorCode =
  | "body_invalid_json"
  | "parameter_missing"
  | "parameter_invalid"
  | "parameter_unknown"
  | "api_key_missing"
  | "api_key_invalid"
  | "jwt_invalid"
  | "resource_missing"
  | "customer_email_exists"
  | "duplicate_order_id"
  | "charge_not_cancellable"
  | "charge_payment_confirming"
  | "settlement_wallet_missing"
  | "chain_unsupported"
  | "chain_already_selected"
  | "charge_not_payable"
  | "idempotency_key_in_use"
  | "idempotency_key_reused"
  | "rate_limited"
  | "test_mode_only"
  | "webhook_endpoint_missing"
  | "subscription_overflow"
  | "internal_error";

/** A failure the caller can act on: HTTP status, stable code, message and the offending parameter. */
export class AppError extends Error {
  override name = "AppError";
  constructor(
    readonly status: number,
    readonly code: ErrorCode,
    message: string,
    readonly param: string | null = null,
    /** Extra response headers, e.g. Retry-After. */
    readonly headers: Record<string, string> = {},
  ) {
    // An answer to the caller, not a fault of ours: where it was raised helps no one, and under a
    // flood of refused requests capturing the stack is a cost worth skipping.
    const depth = Error.stackTraceLimit;
    Error.stackTraceLimit = 0;
    super(message);
    Error.stackTraceLimit = depth;
  }

  /** The reason phrase of `status` ("Not Found"). */
  get error(): string {
    return STATUS_CODES[this.status] ?? "Error";
  }
}

/** 400 for a request parameter that is present but wrong. */
export function invalidParam(param: string | null, message: string): AppError {
  return new AppError(400, "parameter_invalid", message, param);
}

/** 404 for a record that does not exist for this merchant and mode. */
export function notFound(kind: string, id: string, param: string | null = "id"): AppError {
  return new AppError(404, "resource_missing", `No such ${kind}: '${id}'`, param);
}

/** True for errors the API shows as they are; anything else is masked as internal_error. */
export function isAppError(e: unknown): e is AppError {
  return e instanceof AppError;
}
