import type { RequestInfo } from '../../trpc/context.ts';
import type { Deps } from '../../deps.ts';
import { AppError } from '../../errors/errors.ts';
import { randomToken, type SealedPlace } from '../../lib/crypto.ts';
import { recordEvent } from '../activity/index.ts';
import { LIST_LIMIT } from '../lists.ts';
import type { CreateSiteInput, PaymentStatus, UpdateSiteInput } from './sites.schemas.ts';

/** Where a site's sealed signing secret lives: it opens only there. */
const siteSecretPlace = (siteKey: string): SealedPlace => ({ column: 'sites.secret_sealed', row: siteKey });

function webhookUrl(deps: Deps, siteKey: string): string {
  return `${deps.config.publicUrl}/webhook/payment/${siteKey}`;
}

/** The site key is public (it is in the webhook URL); the signing secret is what proves a delivery. */
export async function createSite(deps: Deps, accountId: number, input: CreateSiteInput, request: RequestInfo) {
  const siteKey = `site_${randomToken(18)}`;
  await deps.db.transaction(async (tx) => {
    await tx.query(
      'INSERT INTO sites (site_key, account_id, name, secret_sealed, created_at) VALUES ($1, $2, $3, $4, $5)',
      [siteKey, accountId, input.name, deps.secretBox.seal(input.paymentWebhookSecret, siteSecretPlace(siteKey)), deps.clock.now()],
    );
    await recordEvent(tx, deps.clock, 'site.created', { accountId }, request, { site_key: siteKey });
  });
  return { siteKey, webhookUrl: webhookUrl(deps, siteKey) };
}

type SiteRow = { site_key: string; name: string; created_at: Date };

const siteItem = (deps: Deps, row: SiteRow) => ({
  siteKey: row.site_key,
  name: row.name,
  webhookUrl: webhookUrl(deps, row.site_key),
  createdAt: row.created_at.toISOString(),
});

export async function listSites(deps: Deps, accountId: number) {
  const rows = await deps.db.query<SiteRow>('SELECT site_key, name, created_at FROM sites WHERE account_id = $1 ORDER BY created_at, id', [accountId]);
  return { items: rows.map((row) => siteItem(deps, row)) };
}

/**
 * Renames the site or replaces its signing secret. Deliveries are checked against the new
 * secret from the commit on, on every instance: the sites trigger (migration 0008) tells the
 * others to drop their copy, and this one drops its own at once.
 */
export async function updateSite(deps: Deps, accountId: number, input: UpdateSiteInput, request: RequestInfo) {
  const sealed = input.paymentWebhookSecret === undefined ? null : deps.secretBox.seal(input.paymentWebhookSecret, siteSecretPlace(input.siteKey));
  const row = await deps.db.transaction(async (tx) => {
    const [site] = await tx.query<SiteRow>(
      `UPDATE sites SET name = COALESCE($3, name), secret_sealed = COALESCE($4, secret_sealed)
       WHERE site_key = $1 AND account_id = $2 RETURNING site_key, name, created_at`,
      [input.siteKey, accountId, input.name ?? null, sealed],
    );
    if (!site) throw new AppError('NOT_FOUND', 'No such site.');
    const changed = [input.name !== undefined && 'name', sealed !== null && 'payment_webhook_secret'].filter(Boolean);
    await recordEvent(tx, deps.clock, 'site.updated', { accountId }, request, { site_key: site.site_key, changed });
    return site;
  });
  deps.webhookSecrets.evictGroup(accountId);
  return siteItem(deps, row);
}

/**
 * Deletes the site and its payments. Its webhook URL answers 404 from then on (Stripe stops
 * after its retries), and deliveries already kept are marked ignored when they are processed.
 */
export async function deleteSite(deps: Deps, accountId: number, siteKey: string, request: RequestInfo) {
  await deps.db.transaction(async (tx) => {
    const [site] = await tx.query('DELETE FROM sites WHERE site_key = $1 AND account_id = $2 RETURNING id', [siteKey, accountId]);
    if (!site) throw new AppError('NOT_FOUND', 'No such site.');
    await recordEvent(tx, deps.clock, 'site.deleted', { accountId }, request, { site_key: siteKey });
  });
  deps.webhookSecrets.evictGroup(accountId);
  return { success: true as const };
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
