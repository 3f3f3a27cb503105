// The hosted payment door: the payment, invoice, payment-link and refund-claim pages.
export { payRoutes as mountPay, type PayDeps } from "./routes.js";
