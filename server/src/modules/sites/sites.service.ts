import type { RequestInfo } from '../../lib/request.ts';
import type { Deps } from '../../deps.ts';
import { AppError } from '../../errors/errors.ts';
import { randomToken, type SealedPlace } from '../../lib/crypto.ts';
import { recordEvent } from '../activity/index.ts';
import * as repo from './sites.repo.ts';
import type { CreateSiteInput, UpdateSiteInput } from './sites.schemas.ts';

/** Where a site's sealed signing secret lives: it opens only there. */
const siteSecretPlace = (siteKey: string): SealedPlace => ({ column: 'sites.secret_sealed', row: siteKey });

function webhookUrl(deps: Deps, siteKey: string): string {
  return `${deps.config.publicUrl}/webhook/payment/${siteKey}`;
}

/** The site key is public (it is in the webhook URL); the signing secret is what proves a delivery. */
export async function createSite(deps: Deps, accountId: number, input: CreateSiteInput, request: RequestInfo) {
  const siteKey = `site_${randomToken(18)}`;
  await deps.db.transaction(async (tx) => {
    await repo.insertSite(tx, {
      site_key: siteKey,
      account_id: accountId,
      name: input.name,
      secret_sealed: deps.secretBox.seal(input.paymentWebhookSecret, siteSecretPlace(siteKey)),
      created_at: deps.clock.now(),
    });
    await recordEvent(tx, deps.clock, 'site.created', { accountId }, request, { site_key: siteKey });
  });
  return { siteKey, webhookUrl: webhookUrl(deps, siteKey) };
}

const siteItem = (deps: Deps, row: repo.SiteRow) => ({
  siteKey: row.site_key,
  name: row.name,
  webhookUrl: webhookUrl(deps, row.site_key),
  createdAt: row.created_at.toISOString(),
});

export async function listSites(deps: Deps, accountId: number) {
  const rows = await repo.sitesOf(deps.db, accountId);
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
    const site = await repo.updateSiteRow(tx, input.siteKey, accountId, { name: input.name ?? null, sealed });
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
    if (!(await repo.deleteSiteRow(tx, siteKey, accountId))) throw new AppError('NOT_FOUND', 'No such site.');
    await recordEvent(tx, deps.clock, 'site.deleted', { accountId }, request, { site_key: siteKey });
  });
  deps.webhookSecrets.evictGroup(accountId);
  return { success: true as const };
}

/** Another account's site answers exactly like a site that does not exist. */
export async function listPayments(deps: Deps, accountId: number, siteKey: string) {
  const siteId = await repo.siteIdOf(deps.db, siteKey, accountId);
  if (siteId === undefined) throw new AppError('NOT_FOUND', 'No such site.');
  const rows = await repo.latestPayments(deps.db, siteId);
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

/** The signing secret a payment delivery to the site is checked against, and its owner; undefined for no such site. */
export async function siteWebhookSecret(deps: Deps, siteKey: string): Promise<{ secret: string; accountId: number } | undefined> {
  const site = await repo.siteSecretRow(deps.db, siteKey);
  return site && { secret: deps.secretBox.open(site.secret_sealed, siteSecretPlace(siteKey)), accountId: site.account_id };
}
