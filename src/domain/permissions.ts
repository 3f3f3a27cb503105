// Team roles (.docs/dashboard.md "Roles"): what each person signed in to a merchant's dashboard may do.
// The table is written once, here: every mutation a dashboard session can reach names the capability
// it needs (MUTATION_CAPABILITIES), and the GraphQL schema refuses to build with a mutation the table
// does not name, so a new door cannot forget its rule. API keys are the merchant's own and are not
// people: roles bind sessions only.
//
// Invariants beyond the table (domain/team.ts): a merchant always has an owner; nobody changes their
// own role; only owners make, invite or remove owners.
import { AppError } from "./errors.js";

/** The roles, most powerful first. */
export const ROLES = ["owner", "admin", "developer", "support", "viewer"] as const;
export type Role = (typeof ROLES)[number];

/** What a role is for, as the dashboard shows it next to the role's name. */
export const ROLE_DESCRIPTIONS: Record<Role, string> = {
  owner: "Everything, including making and removing other owners.",
  admin: "Everything but owners: the team, settlement wallets, settings, keys, webhooks and money.",
  developer: "API keys, webhooks and building with the API: charges, customers, invoices, links and plans; no refunds, wallets or team.",
  support: "Helping customers: charges, customers, invoices, refunds and subscriptions; no keys, webhooks, wallets or team.",
  viewer: "Reads everything but secrets; changes nothing but their own account.",
};

/**
 * The capabilities and the roles that have each. Reading the merchant's data is every role's; what is
 * named here is what a role may change, and the few reads that are secrets or about people.
 */
export const CAPABILITIES = {
  /** Inviting, removing and changing the roles of teammates (owners: domain/team.ts). */
  team: ["owner", "admin"],
  /** Settlement wallets, business details, email settings: where the money goes and what customers see. */
  settings: ["owner", "admin"],
  /** API keys, JWT secrets, webhook endpoints and their secrets, test events. */
  developers: ["owner", "admin", "developer"],
  /** Sending money or deciding about it: refunds, sweeps, marking a charge reviewed. */
  money: ["owner", "admin", "support"],
  /** Billing objects: charges, customers, invoices, payment links, plans, subscriptions. */
  billing: ["owner", "admin", "developer", "support"],
  /** The security history: who signed in from where, and who changed what. */
  security: ["owner", "admin"],
  /** One's own account: password, two-factor sign-in, sessions. */
  account: ["owner", "admin", "developer", "support", "viewer"],
} as const satisfies Record<string, readonly Role[]>;
export type Capability = keyof typeof CAPABILITIES;

/**
 * Every GraphQL mutation and the capability a dashboard session needs for it; "public" for those the
 * hosted page makes without any credential.
 */
export const MUTATION_CAPABILITIES: Record<string, Capability | "public"> = {
  // Billing objects.
  createCharge: "billing",
  cancelCharge: "billing",
  createCustomer: "billing",
  updateCustomer: "billing",
  deleteCustomer: "billing",
  createInvoice: "billing",
  updateInvoice: "billing",
  deleteInvoice: "billing",
  finalizeInvoice: "billing",
  sendInvoice: "billing",
  voidInvoice: "billing",
  markInvoiceUncollectible: "billing",
  createPaymentLink: "billing",
  updatePaymentLink: "billing",
  createPlan: "billing",
  updatePlan: "billing",
  createSubscription: "billing",
  updateSubscription: "billing",
  cancelSubscription: "billing",
  // Money.
  createRefund: "money",
  cancelRefund: "money",
  sendRefundClaim: "money",
  sweepCharge: "money",
  markChargeReviewed: "money",
  // Developers.
  createApiKey: "developers",
  rollApiKey: "developers",
  revokeApiKey: "developers",
  createJwtSecret: "developers",
  revokeJwtSecret: "developers",
  createWebhookEndpoint: "developers",
  updateWebhookEndpoint: "developers",
  deleteWebhookEndpoint: "developers",
  rotateWebhookEndpointSecret: "developers",
  sendTestWebhook: "developers",
  resendEvent: "developers",
  // Settings.
  updateMerchantSettings: "settings",
  updateBusinessDetails: "settings",
  // The team.
  inviteUser: "team",
  revokeInvitation: "team",
  deleteUser: "team",
  setUserRole: "team",
  // One's own account.
  changePassword: "account",
  signOutEverywhere: "account",
  startTotpEnrollment: "account",
  confirmTotp: "account",
  disableTotp: "account",
  regenerateRecoveryCodes: "account",
  // The hosted page's, with no credential at all.
  selectPaymentChain: "public",
  payChargeWithAuthorization: "public",
};

/** Whether `role` has `capability`. */
export function can(role: Role, capability: Capability): boolean {
  return (CAPABILITIES[capability] as readonly Role[]).includes(role);
}

/** The capabilities `role` has: what the dashboard shows as possible (the server still checks each). */
export function capabilitiesOf(role: Role): Capability[] {
  return (Object.keys(CAPABILITIES) as Capability[]).filter((capability) => can(role, capability));
}

/** Throws 403 `permission_denied`, naming the roles that may, unless `role` has `capability`. */
export function authorize(role: Role, capability: Capability): void {
  if (can(role, capability)) return;
  const allowed = CAPABILITIES[capability].map((r) => `${r}s`);
  const list = allowed.length > 1 ? `${allowed.slice(0, -1).join(", ")} and ${allowed[allowed.length - 1]}` : allowed[0];
  throw new AppError("permission_denied", `Your role (${role}) may not do this: only ${list} may. Ask an owner or admin of your team.`);
}

/** The role `value` names, or null. */
export function parseRole(value: unknown): Role | null {
  return typeof value === "string" && (ROLES as readonly string[]).includes(value) ? (value as Role) : null;
}
