import { z } from 'zod';
import { strictInput } from '../../lib/validation.ts';

export const PAYMENT_STATUSES = ['pending', 'paid', 'failed', 'expired', 'refunded'] as const;
export type PaymentStatus = (typeof PAYMENT_STATUSES)[number];

const siteName = z.string().trim().min(1, 'must not be empty').max(100, 'must be at most 100 characters');
// The Stripe signing secret (whsec_...). Surrounding whitespace is a copy-paste accident.
const paymentWebhookSecret = z.string().trim().min(8, 'must be at least 8 characters').max(500, 'must be at most 500 characters');

export const createSiteInput = strictInput({ name: siteName, paymentWebhookSecret });

export const siteKeyInput = strictInput({ siteKey: z.string().min(1).max(200) });

/**
 * A new name, a new signing secret, or both. While Stripe rolls a secret it signs with the
 * old and the new one, so replacing ours within that window loses no delivery. Asking for
 * neither is refused: a misspelt field would otherwise be a silent no-op.
 */
export const updateSiteInput = siteKeyInput
  .extend({ name: siteName.optional(), paymentWebhookSecret: paymentWebhookSecret.optional() })
  .refine((input) => input.name !== undefined || input.paymentWebhookSecret !== undefined, 'must give name, paymentWebhookSecret or both');

export const createSiteOutput = z.object({ siteKey: z.string(), webhookUrl: z.string() });

const siteOutput = z.object({ siteKey: z.string(), name: z.string(), webhookUrl: z.string(), createdAt: z.string() });

export const siteListOutput = z.object({ items: z.array(siteOutput) });

export const updateSiteOutput = siteOutput;

export const paymentListOutput = z.object({
  items: z.array(
    z.object({
      reference: z.string(),
      status: z.enum(PAYMENT_STATUSES),
      amount: z.number().int().nullable(),
      currency: z.string().nullable(),
      updatedAt: z.string(),
    }),
  ),
});

export type CreateSiteInput = z.infer<typeof createSiteInput>;
export type UpdateSiteInput = z.infer<typeof updateSiteInput>;
