import type { AnyWebhookProvider } from './provider.ts';
import { billing } from './providers/billing.ts';
import { messengerone } from './providers/messengerone.ts';
import { messengertwo } from './providers/messengertwo.ts';
import { operator } from './providers/operator.ts';
import { payment } from './providers/payment.ts';

/**
 * The five webhook endpoints, the one list of them: the gateway mounts their routes, intake
 * verifies and keeps their deliveries, the worker applies them. A new provider is a file in
 * providers/ and a line here.
 */
export const PROVIDERS: readonly AnyWebhookProvider[] = [billing, payment, operator, messengerone, messengertwo];

const BY_NAME = new Map<string, AnyWebhookProvider>(PROVIDERS.map((provider) => [provider.name, provider]));

export function providerNamed(name: string): AnyWebhookProvider | undefined {
  return BY_NAME.get(name);
}

