// Assembles the executable schema from the type files.
import { lexicographicSortSchema, printSchema } from "graphql";
import { builder } from "./builder.js";
import { guardMutations } from "./permissions.js";
import "./types/Amount.js";
import "./types/DateTime.js";
import "./types/Metadata.js";
import "./types/Address.js";
import "./types/Country.js";
import "./types/CustomerStats.js";
import "./types/Settlement.js";
import "./types/Customer.js";
import "./types/Charge.js";
import "./types/Payment.js";
import "./types/Refund.js";
import "./types/BalanceTransaction.js";
import "./types/Payout.js";
import "./types/LedgerSummary.js";
import "./types/Sweep.js";
import "./types/Invoice.js";
import "./types/PaymentLink.js";
import "./types/Plan.js";
import "./types/Subscription.js";
import "./types/ChargeStats.js";
import "./types/LiveReadiness.js";
import "./types/PaymentSession.js";
import "./types/ChargeAuthorization.js";
import "./types/Event.js";
import "./types/SecurityEvent.js";
import "./types/WebhookEndpoint.js";
import "./types/X402.js";
import "./types/Mode.js";
import "./types/User.js";
import "./types/Invitation.js";
import "./types/Viewer.js";
import "./types/BusinessDetails.js";
import "./types/ApiKey.js";
import "./types/JwtSecret.js";
import "./types/Email.js";

/** The GraphQL schema served at /graphql, each mutation checked against the signed-in role. */
export const schema = guardMutations(builder.toSchema());

/** The SDL committed as schema.graphql. */
export function printedSchema(): string {
  return `${printSchema(lexicographicSortSchema(schema))}\n`;
}
