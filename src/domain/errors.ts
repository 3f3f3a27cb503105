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
  | "permission_denied"
  | "session_mode_changed"
  | "reauthentication_required"
  | "resource_missing"
  | "password_reset_invalid"
  | "invitation_invalid"
  | "user_exists"
  | "last_owner"
  | "customer_email_exists"
  | "customer_has_subscriptions"
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
  | "sweep_unchanged"
  | "relayer_budget_exhausted"
  | "authorization_invalid"
  | "invoice_not_editable"
  | "invoice_not_payable"
  | "invoice_not_sendable"
  | "refund_not_sendable"
  | "payment_link_inactive"
  | "plan_inactive"
  | "subscription_not_cancelable"
  | "idempotency_key_in_use"
  | "idempotency_key_reused"
  | "rate_limited"
  | "test_mode_only"
  | "webhook_endpoint_missing"
  | "subscription_overflow"
  | "internal_error";

/** What each code means and what to do about it, as the API reference (/docs) lists them. */
export const ERROR_MEANINGS: Record<ErrorCode, string> = {
  body_invalid_json:
    "The body is not a JSON object sent as application/json in UTF-8 (an array, a string or `null` is not an object), or it has a `__proto__` key. An empty body is no body.",
  parameter_missing: "A required parameter is missing: `param` names it.",
  parameter_invalid: "A parameter is present but wrong (type, format, range): `param` names it and the message says why.",
  parameter_unknown: "The body or query has a field the route does not take: `param` names it.",
  test_mode_only: "This works in test mode only: use a test key (sk_test_…).",
  settlement_wallet_missing:
    "No settlement wallet is set for this mode (`param` names it: liveWallet or testWallet), so a buyer's payment would have nowhere to go: set one in the dashboard's Settings first. Live charges, invoices and payment links all need one.",
  chain_unsupported:
    "The chain is not enabled for this mode: in live mode, no mainnet is enabled yet (the operator sets CHAIN_<id>_RPC_URL and CHAIN_<id>_FACTORY); for a test helper, this process runs no local devnet.",
  idempotency_key_reused: "This Idempotency-Key was used with another request: use a new key for a new request.",
  webhook_endpoint_missing: "No enabled webhook endpoint of this mode wants this event: add one first.",
  api_key_missing: "No API key was sent: send X-API-Key (or Authorization: Bearer sk_…).",
  api_key_invalid: "The API key is unknown, revoked or malformed.",
  api_key_ip_not_allowed: "The API key's IP allowlist does not include the caller's address.",
  jwt_invalid: "The customer JWT is missing, expired, badly signed, names an unknown kid or lacks a required claim.",
  session_invalid: "The dashboard session is missing or expired: sign in again.",
  sign_in_failed: "The email or password (or two-factor code) is wrong, or sign-in is locked for a while.",
  totp_required: "The account has two-factor authentication: send the code too.",
  csrf_token_invalid: "The dashboard request's CSRF token is missing or wrong.",
  session_required: "Only a dashboard session may do this, not an API key.",
  permission_denied: "The signed-in user's role may not do this: the message names the roles that may.",
  session_mode_changed: "The dashboard switched mode while the request was made: reload.",
  reauthentication_required:
    "Changing a settlement wallet, creating API keys or users and turning two-factor off need your password again (and a two-factor code when it is on): give it as `password` with the action, or re-authenticate with POST /dashboard/session/reauthenticate, which counts for 5 minutes.",
  password_reset_invalid: "The password reset link is unknown, already used or expired (1 hour): ask for a new one.",
  invitation_invalid: "The invitation link is unknown, already used, revoked or expired (7 days): ask for a new invitation.",
  user_exists: "The email already has a dashboard account.",
  last_owner: "The merchant's last owner cannot lose the role or be removed: make another user an owner first.",
  resource_missing: "No such record for this merchant and mode (404); a 400 when a body or query field names it.",
  customer_email_exists: "Another customer of this mode has this email (compared case-insensitively).",
  customer_has_subscriptions:
    "The customer has subscriptions, which keep its billing history: it cannot be deleted (cancel what still runs; the record stays).",
  duplicate_order_id: "An open charge (neither EXPIRED nor CANCELLED) already has this orderId.",
  charge_not_cancellable: "Only a PENDING charge can be cancelled.",
  charge_payment_confirming: "Money to this charge is on its way (seen, not yet confirmed, or being relayed): retry once it arrives.",
  chain_already_selected: "The buyer already picked a chain for this charge.",
  charge_not_payable: "The charge cannot take this step: it is not PENDING or it expired, or (the pay test helper) nothing is due on it.",
  charge_not_refundable: "The charge has no confirmed money left to refund (on the chain named by `chainId`, when `param` is chainId).",
  refund_not_cancellable: "A COMPLETED refund cannot be cancelled.",
  refund_not_payable: "The refund is not waiting for a payment.",
  refund_payment_on_its_way: "An authorization paying this refund may still be spent on chain: wait until it is used or expires.",
  sweep_not_possible: "Nothing can be swept from this charge's address now.",
  sweep_unchanged:
    "This token's last sweep from this address moved nothing, and the address holds the same amount of it as then: the same sweep would only cost gas again. Ask again once the balance has changed.",
  relayer_budget_exhausted:
    "The relayer gas this merchant may spend today on this chain for sweeps and payments without gas (RELAYER_GAS_BUDGET_PER_MERCHANT) is spent: the message says when it resets (00:00 UTC), and Retry-After how many seconds that is.",
  invoice_not_editable: "The invoice's status does not allow this change (only a DRAFT is edited or deleted).",
  invoice_not_payable: "The invoice cannot be paid: it is not OPEN or UNCOLLECTIBLE, or nothing is due.",
  invoice_not_sendable: "The invoice cannot be emailed: it is a DRAFT (finalize it first), or its customer has no email.",
  refund_not_sendable: "The refund's claim link cannot be emailed: the refund is not waiting for an address, or its charge has no customer email.",
  payment_link_inactive: "The payment link was retired (active: false).",
  plan_inactive: "The plan was retired (active: false): new subscriptions cannot use it; existing ones go on.",
  subscription_not_cancelable: "The subscription has already ended (CANCELED or INCOMPLETE_EXPIRED).",
  authorization_invalid: "The EIP-3009 authorization was refused: the message says which check failed.",
  refund_exceeds_refundable: "The amount is more than what is left to refund of the charge's money on the refund's chain.",
  idempotency_key_in_use: "A request with this Idempotency-Key is still being answered: retry later.",
  rate_limited: "Too many requests in this minute: wait Retry-After seconds.",
  subscription_overflow: "Too many live subscriptions or streams are open: close some first.",
  internal_error: "Something failed on the server (logged with the requestId): retry later, or report the requestId.",
};

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
