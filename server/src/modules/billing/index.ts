// The billing module's face: what the billing provider's webhook (server/src/webhooks) uses.
export { applySubscriptionChange, subscriptionChangeLocks, type SubscriptionChange } from './billing.service.ts';
export { billingSubscriptionsTable } from './billing.model.ts';
