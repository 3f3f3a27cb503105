// `@stablegate/sdk` (also `stablegate/sdk` from the repository's package): a typed client of the
// REST API for merchants' backends. Its types are generated from GET /v1/openapi.json
// (src/generated/openapi.ts), so they follow the API. It adds what every integration otherwise
// writes by hand: an Idempotency-Key on every write, kept across retries; retries of 429 and 5xx
// answers and network failures, waiting as Retry-After says; errors that carry the API's code, param
// and requestId; lists that iterate over every page; and webhook verification that returns the
// typed event. It imports nothing of the server: its package (src/sdk/package.json) ships only
// these files and the generated types, and depends on nothing but Node.
import type { components, operations, webhooks } from "../generated/openapi.js";
import { verifySignature } from "./webhook-signature.js";

export { WebhookVerificationError } from "./webhook-signature.js";

/** The API version these types describe, sent as Stablegate-Version: a newer service answers this one's shapes. */
export const API_VERSION = "2026-11-24";

type Json<R> = R extends { content: { "application/json": infer B } } ? B : never;
/** The success answer of an operation. */
type Answer<Op extends keyof operations> = operations[Op]["responses"] extends infer R
  ? 201 extends keyof R
    ? Json<R[201]>
    : 200 extends keyof R
      ? Json<R[200]>
      : never
  : never;
/** The JSON body an operation takes. */
type Body<Op extends keyof operations> = operations[Op] extends { requestBody?: { content: { "application/json": infer B } } } ? B : never;
/** The query an operation takes. */
type Query<Op extends keyof operations> = operations[Op]["parameters"] extends { query?: infer Q } ? NonNullable<Q> : never;

export type Customer = Answer<"createCustomer">;
/** A customer retrieved with `{ expand: "stats" }`: with its invoiceCount, chargeCount and totalSpent. */
export type CustomerWithStats = components["schemas"]["CustomerWithStats"];
export type Charge = Answer<"getCharge">;
export type Event = Answer<"listEvents">["data"][number];
export type EventWithDeliveries = Answer<"getEvent">;
export type WebhookEndpoint = Answer<"getWebhookEndpoint">;
/** An endpoint as created or rotated: with its `whsec_…` signing secret, shown this once. */
export type WebhookEndpointWithSecret = Answer<"createWebhookEndpoint">;
export type Refund = Answer<"getRefund">;
export type Invoice = Answer<"getInvoice">;
export type PaymentLink = Answer<"getPaymentLink">;
export type Plan = Answer<"getPlan">;
export type Subscription = Answer<"getSubscription">;
export type BalanceTransaction = Answer<"getBalanceTransaction">;
export type Balance = Answer<"getBalance">;
export type Email = Answer<"getEmail">;
/** The body of a webhook of the OpenAPI document's `webhooks` section. */
type Delivered<W> = W extends { post: { requestBody?: { content: { "application/json": infer B } } } } ? B : never;
/** Every event a webhook can carry, one member per type: narrow it on `type` to read its `data`. */
export type WebhookEvent = { [K in keyof webhooks]: Delivered<webhooks[K]> }[keyof webhooks];
export type WebhookEventType = WebhookEvent["type"];

/** The codes of the API's error answers. */
export type ApiErrorCode = components["schemas"]["Error"]["code"];
/** The API's error codes, and `network_error`; open to codes a newer service may add. */
export type ErrorCode = ApiErrorCode | "network_error" | (string & {});

/** An error answer of the API, or a failure to reach it. */
export class StablegateError extends Error {
  override name = "StablegateError";

  constructor(
    message: string,
    /** The HTTP status; 0 when no answer came. */
    readonly status: number,
    /** The API's stable code, e.g. duplicate_order_id; `network_error` when no answer came. */
    readonly code: ErrorCode,
    /** The parameter at fault, if one is. */
    readonly param: string | null,
    /** Quote it when you ask for help: it finds the request in the service's log. */
    readonly requestId: string | null,
    /** Seconds the API asked to wait before trying again (429, 503). */
    readonly retryAfter: number | null,
    /** The code's entry in the API reference. */
    readonly docUrl: string | null = null,
  ) {
    super(message);
  }
}

export interface StablegateOptions {
  /** sk_test_… or sk_live_…. */
  apiKey: string;
  /** Where the service is, e.g. https://pay.example.com. */
  baseUrl: string;
  /** Retries of a 429, a 5xx or a network failure (default 2). Writes are retried with the same Idempotency-Key. */
  maxRetries?: number;
  /** Per attempt (default 30 s). */
  timeoutMs?: number;
  /** Longest wait between attempts, whatever Retry-After says (default 60 s). */
  maxRetryDelayMs?: number;
  /** The Stablegate-Version to ask for (default API_VERSION, the one these types describe). */
  apiVersion?: string;
  fetch?: typeof fetch;
}

/** Per call: your own Idempotency-Key (otherwise one is made for each call). */
export interface CallOptions {
  idempotencyKey?: string;
}

/**
 * customers.retrieve: the customer, or with `{ expand: "stats" }` the customer with its stats, typed
 * by which one was asked for (the API's answer is one or the other, never a surprise).
 */
export interface RetrieveCustomer {
  (id: string, query: { expand: "stats" }): Promise<CustomerWithStats>;
  (id: string, query?: { expand?: never }): Promise<Customer>;
  (id: string, query?: { expand?: "stats" | undefined }): Promise<Customer | CustomerWithStats>;
}

/** A list call: await it for the first page, or iterate it for every item of every page. */
export interface List<T, P> extends PromiseLike<P>, AsyncIterable<T> {}

/** A client of one merchant's API key. */
export class Stablegate {
  private readonly baseUrl: string;
  private readonly fetch: typeof fetch;

  constructor(private readonly options: StablegateOptions) {
    if (!options.apiKey) throw new TypeError("apiKey is required (sk_test_… or sk_live_…)");
    this.baseUrl = options.baseUrl.replace(/\/+$/, "");
    this.fetch = options.fetch ?? globalThis.fetch;
  }

  readonly customers = {
    create: (body: Body<"createCustomer">, o?: CallOptions) => this.call<Customer>("POST", "/v1/customers", { body, ...o }),
    retrieve: ((id: string, query?: { expand?: "stats" }) =>
      this.call<Customer | CustomerWithStats>("GET", `/v1/customers/${seg(id)}`, { query })) as RetrieveCustomer,
    update: (id: string, body: Body<"updateCustomer">, o?: CallOptions) => this.call<Customer>("PATCH", `/v1/customers/${seg(id)}`, { body, ...o }),
    delete: (id: string, o?: CallOptions) => this.call<Answer<"deleteCustomer">>("DELETE", `/v1/customers/${seg(id)}`, o),
    list: (query: Query<"listCustomers"> = {}) => this.keysetList<Customer, Answer<"listCustomers">>("/v1/customers", query),
  };

  readonly charges = {
    create: (body: Body<"createCharge">, o?: CallOptions) => this.call<Charge>("POST", "/v1/charges", { body, ...o }),
    retrieve: (id: string) => this.call<Charge>("GET", `/v1/charges/${seg(id)}`),
    retrieveByOrderId: (orderId: string) => this.call<Charge>("GET", `/v1/charges/order/${seg(orderId)}`),
    cancel: (id: string, o?: CallOptions) => this.call<Charge>("DELETE", `/v1/charges/${seg(id)}`, o),
    /**
     * Awaited: the page asked for, by number (`page`, which the API keeps for charges) or by cursor.
     * Iterated: from that page on by cursor, so a charge created meanwhile neither repeats nor hides one.
     */
    list: ({ page, ...query }: Query<"listCharges"> = {}) =>
      this.keysetList<Charge, Answer<"listCharges">>("/v1/charges", query, page === undefined ? {} : { page }),
    /** Every charge the filters match (not one page), as CSV text with a header row, for a spreadsheet. */
    csv: (query: Query<"exportCharges"> = {}) => this.text("/v1/charges/export.csv", query),
  };

  readonly events = {
    retrieve: (id: string) => this.call<EventWithDeliveries>("GET", `/v1/events/${seg(id)}`),
    resend: (id: string, o?: CallOptions) => this.call<EventWithDeliveries>("POST", `/v1/events/${seg(id)}/resend`, o),
    list: (query: Query<"listEvents"> = {}) => this.keysetList<Event, Answer<"listEvents">>("/v1/events", query),
  };

  readonly webhookEndpoints = {
    create: (body: Body<"createWebhookEndpoint">, o?: CallOptions) => this.call<WebhookEndpointWithSecret>("POST", "/v1/webhook_endpoints", { body, ...o }),
    retrieve: (id: string) => this.call<WebhookEndpoint>("GET", `/v1/webhook_endpoints/${seg(id)}`),
    update: (id: string, body: Body<"updateWebhookEndpoint">, o?: CallOptions) =>
      this.call<WebhookEndpoint>("PATCH", `/v1/webhook_endpoints/${seg(id)}`, { body, ...o }),
    delete: (id: string, o?: CallOptions) => this.call<Answer<"deleteWebhookEndpoint">>("DELETE", `/v1/webhook_endpoints/${seg(id)}`, o),
    rotateSecret: (id: string, body: Body<"rotateWebhookEndpointSecret"> = {}, o?: CallOptions) =>
      this.call<WebhookEndpointWithSecret>("POST", `/v1/webhook_endpoints/${seg(id)}/rotate_secret`, { body, ...o }),
    list: (query: Query<"listWebhookEndpoints"> = {}) => this.keysetList<WebhookEndpoint, Answer<"listWebhookEndpoints">>("/v1/webhook_endpoints", query),
  };

  readonly refunds = {
    /** Refunds a charge with confirmed money (all that is left unless `amount` says less); your settlement wallet pays it. */
    create: (chargeId: string, body: Body<"createRefund"> = {}, o?: CallOptions) =>
      this.call<Refund>("POST", `/v1/charges/${seg(chargeId)}/refunds`, { body, ...o }),
    retrieve: (id: string) => this.call<Refund>("GET", `/v1/refunds/${seg(id)}`),
    cancel: (id: string, o?: CallOptions) => this.call<Refund>("POST", `/v1/refunds/${seg(id)}/cancel`, o),
    /** Emails the claim link of a refund waiting for its address to the buyer. */
    send: (id: string, o?: CallOptions) => this.call<Refund>("POST", `/v1/refunds/${seg(id)}/send`, o),
    list: (query: Query<"listRefunds"> = {}) => this.keysetList<Refund, Answer<"listRefunds">>("/v1/refunds", query),
  };

  readonly invoices = {
    create: (body: Body<"createInvoice">, o?: CallOptions) => this.call<Invoice>("POST", "/v1/invoices", { body, ...o }),
    retrieve: (id: string) => this.call<Invoice>("GET", `/v1/invoices/${seg(id)}`),
    update: (id: string, body: Body<"updateInvoice">, o?: CallOptions) => this.call<Invoice>("PATCH", `/v1/invoices/${seg(id)}`, { body, ...o }),
    delete: (id: string, o?: CallOptions) => this.call<Answer<"deleteInvoice">>("DELETE", `/v1/invoices/${seg(id)}`, o),
    finalize: (id: string, o?: CallOptions) => this.call<Invoice>("POST", `/v1/invoices/${seg(id)}/finalize`, o),
    void: (id: string, o?: CallOptions) => this.call<Invoice>("POST", `/v1/invoices/${seg(id)}/void`, o),
    markUncollectible: (id: string, o?: CallOptions) => this.call<Invoice>("POST", `/v1/invoices/${seg(id)}/mark_uncollectible`, o),
    /** Emails a finalized invoice to its customer, with its PDF attached. */
    send: (id: string, o?: CallOptions) => this.call<Invoice>("POST", `/v1/invoices/${seg(id)}/send`, o),
    /** The invoice's PDF, as bytes. */
    pdf: (id: string) => this.call<Uint8Array>("GET", `/v1/invoices/${seg(id)}/pdf`, { bytes: true }),
    list: (query: Query<"listInvoices"> = {}) => this.keysetList<Invoice, Answer<"listInvoices">>("/v1/invoices", query),
  };

  readonly paymentLinks = {
    create: (body: Body<"createPaymentLink">, o?: CallOptions) => this.call<PaymentLink>("POST", "/v1/payment_links", { body, ...o }),
    retrieve: (id: string) => this.call<PaymentLink>("GET", `/v1/payment_links/${seg(id)}`),
    /** Everything but the amount; `{ active: false }` retires the link. */
    update: (id: string, body: Body<"updatePaymentLink">, o?: CallOptions) => this.call<PaymentLink>("PATCH", `/v1/payment_links/${seg(id)}`, { body, ...o }),
    list: (query: Query<"listPaymentLinks"> = {}) => this.keysetList<PaymentLink, Answer<"listPaymentLinks">>("/v1/payment_links", query),
  };

  readonly plans = {
    create: (body: Body<"createPlan">, o?: CallOptions) => this.call<Plan>("POST", "/v1/plans", { body, ...o }),
    retrieve: (id: string) => this.call<Plan>("GET", `/v1/plans/${seg(id)}`),
    /** The name, metadata, or `{ active: false }` to retire it; the amount and period never change. */
    update: (id: string, body: Body<"updatePlan">, o?: CallOptions) => this.call<Plan>("PATCH", `/v1/plans/${seg(id)}`, { body, ...o }),
    list: (query: Query<"listPlans"> = {}) => this.keysetList<Plan, Answer<"listPlans">>("/v1/plans", query),
  };

  readonly subscriptions = {
    /** INCOMPLETE until the buyer authorizes it at its `checkoutUrl`. */
    create: (body: Body<"createSubscription">, o?: CallOptions) => this.call<Subscription>("POST", "/v1/subscriptions", { body, ...o }),
    retrieve: (id: string) => this.call<Subscription>("GET", `/v1/subscriptions/${seg(id)}`),
    /** Metadata, or `{ cancelAtPeriodEnd }` to schedule (or take back) its end. */
    update: (id: string, body: Body<"updateSubscription">, o?: CallOptions) => this.call<Subscription>("PATCH", `/v1/subscriptions/${seg(id)}`, { body, ...o }),
    /** Now, or at the current period's end with `{ atPeriodEnd: true }`. */
    cancel: (id: string, body: Body<"cancelSubscription"> = {}, o?: CallOptions) =>
      this.call<Subscription>("POST", `/v1/subscriptions/${seg(id)}/cancel`, { body, ...o }),
    list: (query: Query<"listSubscriptions"> = {}) => this.keysetList<Subscription, Answer<"listSubscriptions">>("/v1/subscriptions", query),
  };

  readonly balanceTransactions = {
    retrieve: (id: string) => this.call<BalanceTransaction>("GET", `/v1/balance_transactions/${seg(id)}`),
    list: (query: Query<"listBalanceTransactions"> = {}) =>
      this.keysetList<BalanceTransaction, Answer<"listBalanceTransactions">>("/v1/balance_transactions", query),
    /** Every row the filters match (not one page), as CSV text with a header row, for a spreadsheet. */
    csv: (query: Query<"exportBalanceTransactions"> = {}) => this.text("/v1/balance_transactions/export.csv", query),
  };

  readonly emails = {
    retrieve: (id: string) => this.call<Email>("GET", `/v1/emails/${seg(id)}`),
    /** Emails written for the key's merchant and mode, newest first: by recipient (`to`), `type` or `status`. */
    list: (query: Query<"listEmails"> = {}) => this.keysetList<Email, Answer<"listEmails">>("/v1/emails", query),
  };

  readonly balance = {
    /** Your money in the key's mode, per chain: held in charges' addresses, on its way, paid out, fees and refunds. */
    retrieve: () => this.call<Balance>("GET", "/v1/balance"),
  };

  readonly webhooks = {
    /**
     * The event a webhook request carries, once its Standard Webhooks signature checks out against
     * the endpoint's `whsec_…` secret; throws WebhookVerificationError otherwise. Pass the raw body.
     */
    verify(body: string, headers: Record<string, string | string[] | undefined>, secret: string): WebhookEvent {
      verifySignature(body, headers, secret);
      return JSON.parse(body) as WebhookEvent;
    },
    /** Test mode: records a mock event of `type` with sample data and delivers it to your endpoints like a real one. */
    sendTest: (body: Body<"sendTestWebhook">, o?: CallOptions) => this.call<Answer<"sendTestWebhook">>("POST", "/v1/webhooks/test", { body, ...o }),
  };

  /**
   * A list by cursor; `first` is what only the first page is asked with (a charges page number). A
   * query with `endingBefore` goes on towards newer records, each page before the last one's first.
   */
  private keysetList<T extends { id: string }, P extends { data: T[]; hasMore: boolean }>(
    path: string,
    query: { endingBefore?: string | undefined },
    first: object = {},
  ): List<T, P> {
    const towardsNewer = query.endingBefore !== undefined;
    const page = (cursor?: string) =>
      this.call<P>("GET", path, {
        query: { ...query, ...(cursor === undefined ? first : towardsNewer ? { endingBefore: cursor } : { startingAfter: cursor }) },
      });
    return listOf(page(), async function* (firstPage) {
      for (let p = firstPage; ; p = await page(towardsNewer ? p.data[0]!.id : p.data.at(-1)!.id)) {
        yield* p.data;
        if (!p.hasMore || p.data.length === 0) return;
      }
    });
  }

  /** A text answer (a CSV export), decoded as UTF-8. */
  private async text(path: string, query: object): Promise<string> {
    return new TextDecoder().decode(await this.call<Uint8Array>("GET", path, { query, bytes: true }));
  }

  private async call<T>(
    method: string,
    path: string,
    o: { body?: unknown; query?: object | undefined; idempotencyKey?: string; bytes?: boolean } = {},
  ): Promise<T> {
    const url = new URL(this.baseUrl + path);
    for (const [k, v] of Object.entries(o.query ?? {})) if (v !== undefined && v !== null) url.searchParams.set(k, String(v));
    const headers: Record<string, string> = {
      "X-API-Key": this.options.apiKey,
      "Stablegate-Version": this.options.apiVersion ?? API_VERSION,
      Accept: o.bytes ? "*/*" : "application/json",
    };
    // One key for every attempt of this call: a retry of a write that did land is answered, not repeated.
    if (method !== "GET") headers["Idempotency-Key"] = o.idempotencyKey ?? crypto.randomUUID();
    if (o.body !== undefined) headers["Content-Type"] = "application/json";
    const body = o.body === undefined ? undefined : JSON.stringify(o.body);
    const maxRetries = this.options.maxRetries ?? 2;
    for (let attempt = 0; ; attempt++) {
      const error = await this.attempt<T>(method, url, headers, body, o.bytes ?? false);
      if (!(error instanceof StablegateError)) return error;
      const retryable = error.status === 0 || error.status === 429 || error.status >= 500;
      if (!retryable || attempt >= maxRetries) throw error;
      const backoff = 500 * 2 ** attempt * (0.5 + Math.random() / 2);
      await new Promise((r) => setTimeout(r, Math.min(error.retryAfter !== null ? error.retryAfter * 1000 : backoff, this.options.maxRetryDelayMs ?? 60_000)));
    }
  }

  /** One request: the parsed answer (or its bytes), or the error to throw or retry. */
  private async attempt<T>(method: string, url: URL, headers: Record<string, string>, body: string | undefined, bytes: boolean): Promise<T | StablegateError> {
    let res: Response;
    try {
      res = await this.fetch(url, { method, headers, body, signal: AbortSignal.timeout(this.options.timeoutMs ?? 30_000) });
    } catch (e) {
      return new StablegateError(`could not reach ${url.origin}: ${(e as Error).message}`, 0, "network_error", null, null, null);
    }
    if (res.ok && bytes) return new Uint8Array(await res.arrayBuffer()) as T;
    const text = await res.text();
    let parsed: Record<string, unknown> | null = null;
    try {
      parsed = JSON.parse(text);
    } catch {}
    if (res.ok && parsed) return parsed as T;
    const retryAfter = res.headers.get("retry-after");
    return new StablegateError(
      typeof parsed?.message === "string" ? parsed.message : `${res.status} ${res.statusText}`,
      res.status,
      typeof parsed?.code === "string" ? parsed.code : "internal_error",
      typeof parsed?.param === "string" ? parsed.param : null,
      typeof parsed?.requestId === "string" ? parsed.requestId : res.headers.get("x-request-id"),
      retryAfter !== null && /^\d+$/.test(retryAfter) ? Number(retryAfter) : null,
      typeof parsed?.docUrl === "string" ? parsed.docUrl : null,
    );
  }
}

/** A path segment, encoded. */
function seg(value: string): string {
  return encodeURIComponent(value);
}

/** A list that is its first page when awaited, and every item of every page when iterated. */
function listOf<T, P>(first: Promise<P>, rest: (first: P) => AsyncGenerator<T>): List<T, P> {
  // Not awaited here: a caller that only iterates must not meet an unhandled rejection twice.
  first.catch(() => {});
  return {
    then: (onFulfilled, onRejected) => first.then(onFulfilled, onRejected),
    async *[Symbol.asyncIterator]() {
      yield* rest(await first);
    },
  };
}
