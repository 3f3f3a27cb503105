// The named schemas of /v1/openapi.json (its components.schemas): every resource an answer or a
// webhook carries, registered under its name so that the document refers to it by $ref wherever it
// appears. The schemas are the domain's own, which shape the answers; this module only names them,
// and adds the few answer shapes that exist for the document alone.
import { z } from "zod";
import { BalanceResource, BalanceTransactionResource } from "../../domain/balance-transactions.js";
import { ChargeAuthorizationResource } from "../../domain/charge-authorizations.js";
import { ChargeResource } from "../../domain/charges/resource.js";
import { CustomerResource, CustomerWithStats } from "../../domain/customers.js";
import { EmailResource } from "../../domain/emails.js";
import { DeliveryResource } from "../../domain/events.js";
import { InvoiceResource } from "../../domain/invoices.js";
import { MetadataShape } from "../../domain/metadata.js";
import { PaymentResource } from "../../domain/payment-schema.js";
import { AddressResource } from "../../domain/postal-address.js";
import { PaymentLinkResource } from "../../domain/payment-links.js";
import { PublicCharge } from "../../domain/payment-session.js";
import { RefundResource } from "../../domain/refunds.js";
import { SettlementResource } from "../../domain/settlements.js";
import { PlanResource, SubscriptionResource } from "../../domain/subscriptions.js";
import { WebhookEndpointResource } from "../../domain/webhook-endpoints.js";
import { X402Resource } from "../../domain/x402/account.js";
import { X402PaymentResource } from "../../domain/x402/payments.js";

/** The named schemas, each with its name in components.schemas. */
export const NAMES = new Map<z.ZodType, string>();

/** Gives `schema` the name `id` in components.schemas; returns it. */
export function named<S extends z.ZodType>(id: string, schema: S): S {
  if ([...NAMES.values()].includes(id)) throw new Error(`two schemas are named ${id}`);
  NAMES.set(schema, id);
  return schema;
}

named("Metadata", MetadataShape);
named("Address", AddressResource);
named("Payment", PaymentResource);
named("Settlement", SettlementResource);
named("Charge", ChargeResource);
named("PublicCharge", PublicCharge);
named("ChargeAuthorization", ChargeAuthorizationResource);
named("Customer", CustomerResource);
named("CustomerWithStats", CustomerWithStats);
named("Refund", RefundResource);
named("Invoice", InvoiceResource);
named("PaymentLink", PaymentLinkResource);
named("BalanceTransaction", BalanceTransactionResource);
named("Balance", BalanceResource);
named("WebhookDelivery", DeliveryResource);
named("Email", EmailResource);
named("Plan", PlanResource);
named("Subscription", SubscriptionResource);
named("X402", X402Resource);
named("X402Payment", X402PaymentResource);

/** A webhook endpoint as lists and reads show it: its secret is never shown again. */
export const WebhookEndpoint = named("WebhookEndpoint", WebhookEndpointResource.omit({ secret: true }));
/** The answer that creates or rotates an endpoint's secret, the one place it is shown. */
export const WebhookEndpointWithSecret = named("WebhookEndpointWithSecret", WebhookEndpointResource.required({ secret: true }));

/** A deletion's answer. */
function deletedOf<O extends string>(object: O) {
  return z.object({ id: z.string(), object: z.literal(object), deleted: z.literal(true) });
}
export const DeletedCustomer = named("DeletedCustomer", deletedOf("customer"));
export const DeletedInvoice = named("DeletedInvoice", deletedOf("invoice"));
export const DeletedWebhookEndpoint = named("DeletedWebhookEndpoint", deletedOf("webhook_endpoint"));
