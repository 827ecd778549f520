// The sites module's face: what the payment provider's webhook (server/src/webhooks) uses. Its
// procedures (sites.router.ts) are mounted by server/src/router.ts.
export { applyPaymentChanges, paymentChangeLocks, type PaymentChange } from './sites.payments.ts';
export type { PaymentStatus } from './sites.schemas.ts';
export { siteWebhookSecret } from './sites.service.ts';
export { paymentsTable, sitesTable } from './sites.model.ts';
