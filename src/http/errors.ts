// The one mapping from any thrown value to the API's flat error body (.docs/api.md "Errors"), and the one
// table from an error code to its HTTP status.
import { maxHeaderSize, STATUS_CODES } from "node:http";
import { z } from "zod";
import { AppError, type ErrorCode } from "../domain/errors.js";

/** The JSON body of every error response (.docs/api.md "Errors"). */
export const ErrorBody = z.object({
  statusCode: z.number().int(),
  error: z.string(),
  code: z.string().describe("Stable and machine-readable: act on this, not on the message."),
  message: z.string(),
  param: z.string().nullable().describe("The parameter at fault (a body path such as address.line1), if one is."),
  requestId: z.string(),
  docUrl: z.string().describe("The code's entry in the API reference on /docs."),
});
export type ErrorBody = z.infer<typeof ErrorBody>;

const BODY_LIMIT_KB = 100;

/** The status each code is answered with; a missing record named by a parameter is a 400 instead. */
export const STATUS_OF_CODE: Record<ErrorCode, number> = {
  body_invalid_json: 400,
  parameter_missing: 400,
  parameter_invalid: 400,
  parameter_unknown: 400,
  test_mode_only: 400,
  settlement_wallet_missing: 400,
  chain_unsupported: 400,
  idempotency_key_reused: 400,
  webhook_endpoint_missing: 400,
  api_key_missing: 401,
  api_key_invalid: 401,
  api_key_ip_not_allowed: 401,
  jwt_invalid: 401,
  session_invalid: 401,
  sign_in_failed: 401,
  totp_required: 401,
  csrf_token_invalid: 403,
  session_required: 403,
  permission_denied: 403,
  session_mode_changed: 409,
  reauthentication_required: 403,
  password_reset_invalid: 400,
  invitation_invalid: 400,
  resource_missing: 404,
  customer_email_exists: 409,
  customer_has_subscriptions: 409,
  user_exists: 409,
  last_owner: 409,
  duplicate_order_id: 409,
  charge_not_cancellable: 409,
  charge_payment_confirming: 409,
  chain_already_selected: 409,
  charge_not_payable: 409,
  charge_not_refundable: 409,
  refund_not_cancellable: 409,
  refund_not_payable: 409,
  refund_payment_on_its_way: 409,
  sweep_not_possible: 409,
  sweep_unchanged: 409,
  relayer_budget_exhausted: 429,
  invoice_not_editable: 409,
  invoice_not_payable: 409,
  invoice_not_sendable: 409,
  refund_not_sendable: 409,
  payment_link_inactive: 410,
  plan_inactive: 409,
  subscription_not_cancelable: 409,
  authorization_invalid: 400,
  refund_exceeds_refundable: 400,
  idempotency_key_in_use: 409,
  rate_limited: 429,
  subscription_overflow: 429,
  internal_error: 500,
};

/** An error of the HTTP exchange itself, whose status says more than its code's (408, 417, 431, 503). */
export class HttpError extends AppError {
  constructor(
    readonly status: number,
    code: ErrorCode,
    message: string,
    param: string | null = null,
  ) {
    super(code, message, param);
  }
}

/** The HTTP status `e` is answered with. */
export function statusOf(e: AppError): number {
  if (e instanceof HttpError) return e.status;
  return e.reference ? 400 : STATUS_OF_CODE[e.code];
}

/** Converts framework and unexpected errors to AppErrors; unknown failures become a bare 500. */
export function toAppError(err: unknown): AppError {
  if (err instanceof AppError) return err;
  const e = err as { code?: string; statusCode?: number; message?: string };
  switch (e.code) {
    case "FST_ERR_CTP_BODY_TOO_LARGE":
      return new AppError("parameter_invalid", `The request body is larger than ${BODY_LIMIT_KB} KB`);
    case "FST_ERR_CTP_INVALID_JSON_BODY":
      // onProtoPoisoning/onConstructorPoisoning end up here too, without saying so.
      return new AppError("body_invalid_json", "The request body is not valid JSON, or has a __proto__ or constructor.prototype key (refused)");
    case "FST_ERR_BAD_URL":
      return new AppError("parameter_invalid", "The request URL is malformed: check its percent-encoding");
    // The rest come from Node's HTTP parser, before there is a request (server.ts answerUnparsedRequest).
    case "HPE_HEADER_OVERFLOW":
      return new HttpError(431, "parameter_invalid", `The request line and headers are larger than ${maxHeaderSize / 1024} KB`);
    case "ERR_HTTP_REQUEST_TIMEOUT":
      return new HttpError(408, "parameter_invalid", "The request did not arrive in time");
  }
  if (e.code?.startsWith("HPE_")) {
    return new AppError("parameter_invalid", "The request is not valid HTTP/1.1: check its method, request line, headers and body framing");
  }
  if (e.statusCode === 400 && err instanceof SyntaxError) {
    return new AppError("body_invalid_json", `The request body is not valid JSON: ${e.message}`);
  }
  if (e.statusCode && e.statusCode >= 400 && e.statusCode < 500) {
    return new AppError("parameter_invalid", "The request could not be read: check its headers and body");
  }
  return new AppError("internal_error", "An internal error occurred. It has been logged; retry later or contact the operator with the request id.");
}

/** The id of `code`'s entry on /docs, which error bodies' docUrl points to. */
export function errorAnchor(code: ErrorCode): string {
  return `error-${code}`;
}

/** The body for `err` on the request `requestId`; `publicUrl` is where /docs is served ("": this server). */
export function errorBody(err: AppError, requestId: string, publicUrl: string): ErrorBody {
  const statusCode = statusOf(err);
  const docUrl = `${publicUrl}/docs#${errorAnchor(err.code)}`;
  return { statusCode, error: STATUS_CODES[statusCode] ?? "Error", code: err.code, message: err.message, param: err.param, requestId, docUrl };
}

export const BODY_LIMIT_BYTES = BODY_LIMIT_KB * 1024;
