// One error type for every door: the domain says what went wrong (a code); REST maps the code to a
// status and body, GraphQL to extensions.code.

/** Every machine-readable error code the API can return (.docs/api.md "Errors"). */
export type ErrorCode =
  | "body_invalid_json"
  | "parameter_missing"
  | "parameter_invalid"
  | "parameter_unknown"
  | "api_key_missing"
  | "api_key_invalid"
  | "api_key_ip_not_allowed"
  | "jwt_invalid"
  | "session_invalid"
  | "sign_in_failed"
  | "totp_required"
  | "csrf_token_invalid"
  | "session_required"
  | "session_mode_changed"
  | "reauthentication_required"
  | "resource_missing"
  | "customer_email_exists"
  | "duplicate_order_id"
  | "charge_not_cancellable"
  | "charge_payment_confirming"
  | "settlement_wallet_missing"
  | "chain_unsupported"
  | "chain_already_selected"
  | "charge_not_payable"
  | "charge_not_refundable"
  | "refund_exceeds_refundable"
  | "refund_not_cancellable"
  | "refund_not_payable"
  | "refund_payment_on_its_way"
  | "sweep_not_possible"
  | "authorization_invalid"
  | "invoice_not_editable"
  | "invoice_not_payable"
  | "payment_link_inactive"
  | "idempotency_key_in_use"
  | "idempotency_key_reused"
  | "rate_limited"
  | "test_mode_only"
  | "webhook_endpoint_missing"
  | "subscription_overflow"
  | "internal_error";

/** A failure the caller can act on: stable code, message and the offending parameter. Which HTTP
 * status or GraphQL extension a code becomes is each door's business (http/errors.ts). */
export class AppError extends Error {
  override name = "AppError";
  /** Extra response headers, e.g. Retry-After. */
  readonly headers: Record<string, string>;
  /** A parameter names a record that does not exist (a bad input), not the record asked for. */
  readonly reference: boolean;

  constructor(
    readonly code: ErrorCode,
    message: string,
    readonly param: string | null = null,
    options: { headers?: Record<string, string>; reference?: boolean } = {},
  ) {
    // An answer to the caller, not a fault of ours: where it was raised helps no one, and under a
    // flood of refused requests capturing the stack is a cost worth skipping.
    const depth = Error.stackTraceLimit;
    Error.stackTraceLimit = 0;
    super(message);
    Error.stackTraceLimit = depth;
    this.headers = options.headers ?? {};
    this.reference = options.reference ?? false;
  }
}

/** A request parameter that is present but wrong. */
export function invalidParam(param: string | null, message: string): AppError {
  return new AppError("parameter_invalid", message, param);
}

/** The record asked for does not exist for this merchant and mode. */
export function notFound(kind: string, id: string, param: string | null = "id"): AppError {
  return new AppError("resource_missing", `No such ${kind}: '${id}'`, param);
}

/** `param` names a record that does not exist for this merchant and mode. */
export function unknownReference(kind: string, id: string, param: string): AppError {
  return new AppError("resource_missing", `No such ${kind}: '${id}'`, param, { reference: true });
}

/** True for errors the API shows as they are; anything else is masked as internal_error. */
export function isAppError(e: unknown): e is AppError {
  return e instanceof AppError;
}
