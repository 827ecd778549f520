import type { Deps } from '../../deps.ts';
import { AppError } from '../../errors.ts';
import { randomToken, type SealedPlace } from '../../lib/crypto.ts';
import { LIST_LIMIT } from '../lists.ts';
import type { CreateSiteInput, PaymentStatus } from './sites.schemas.ts';

/** Where a site's sealed signing secret lives: it opens only there. */
const siteSecretPlace = (siteKey: string): SealedPlace => ({ column: 'sites.secret_sealed', row: siteKey });

function webhookUrl(deps: Deps, siteKey: string): string {
  return `${deps.config.publicUrl}/webhook/payment/${siteKey}`;
}

/** The site key is public (it is in the webhook URL); the signing secret is what proves a delivery. */
export async function createSite(deps: Deps, accountId: number, input: CreateSiteInput) {
  const siteKey = `site_${randomToken(18)}`;
  await deps.db.query(
    'INSERT INTO sites (site_key, account_id, name, secret_sealed, created_at) VALUES ($1, $2, $3, $4, $5)',
    [siteKey, accountId, input.name, deps.secretBox.seal(input.paymentWebhookSecret, siteSecretPlace(siteKey)), deps.clock.now()],
  );
  return { siteKey, webhookUrl: webhookUrl(deps, siteKey) };
}

export async function listSites(deps: Deps, accountId: number) {
  const rows = await deps.db.query<{ site_key: string; name: string; created_at: Date }>(
    'SELECT site_key, name, created_at FROM sites WHERE account_id = $1 ORDER BY created_at, id',
    [accountId],
  );
  return {
    items: rows.map((row) => ({
      siteKey: row.site_key,
      name: row.name,
      webhookUrl: webhookUrl(deps, row.site_key),
      createdAt: row.created_at.toISOString(),
    })),
  };
}

type PaymentRow = { reference: string; status: PaymentStatus; amount: string | null; currency: string | null; updated_at: Date };

/** Another account's site answers exactly like a site that does not exist. */
export async function listPayments(deps: Deps, accountId: number, siteKey: string) {
  const [site] = await deps.db.query<{ id: number }>('SELECT id FROM sites WHERE site_key = $1 AND account_id = $2', [siteKey, accountId]);
  if (!site) throw new AppError('NOT_FOUND', 'No such site.');
  const rows = await deps.db.query<PaymentRow>(
    `SELECT reference, status, amount, currency, updated_at FROM payments
     WHERE site_id = $1 ORDER BY updated_at DESC, reference LIMIT ${LIST_LIMIT}`,
    [site.id],
  );
  return {
    items: rows.map((row) => ({
      reference: row.reference,
      status: row.status,
      amount: row.amount === null ? null : Number(row.amount),
      currency: row.currency,
      updatedAt: row.updated_at.toISOString(),
    })),
  };
}

const SITE_SECRET = { name: 'site_webhook_secret', text: 'SELECT secret_sealed, account_id FROM sites WHERE site_key = $1' };

/** The signing secret a payment delivery to the site is checked against, and its owner; undefined for no such site. */
export async function siteWebhookSecret(deps: Deps, siteKey: string): Promise<{ secret: string; accountId: number } | undefined> {
  const [site] = await deps.db.query<{ secret_sealed: string; account_id: number }>(SITE_SECRET, [siteKey]);
  return site && { secret: deps.secretBox.open(site.secret_sealed, siteSecretPlace(siteKey)), accountId: site.account_id };
}
