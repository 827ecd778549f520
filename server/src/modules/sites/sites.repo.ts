import type { Queryable } from '../../lib/db.ts';
import { sealedColumn } from '../../lib/sealed-column.ts';
import { LIST_LIMIT } from '../lists.ts';
import type { PaymentRecord, SiteRecord } from './sites.model.ts';

// Every statement on sites and payments (sites.model.ts). The statements of webhook
// deliveries keep a name, so each connection prepares them once.

export type SiteRow = Pick<SiteRecord, 'site_key' | 'name' | 'created_at'>;

export async function insertSite(tx: Queryable, site: Omit<SiteRecord, 'id'>): Promise<void> {
  await tx.query('INSERT INTO sites (site_key, account_id, name, secret_sealed, created_at) VALUES ($1, $2, $3, $4, $5)', [
    site.site_key,
    site.account_id,
    site.name,
    site.secret_sealed,
    site.created_at,
  ]);
}

export function sitesOf(db: Queryable, accountId: number): Promise<SiteRow[]> {
  return db.query<SiteRow>('SELECT site_key, name, created_at FROM sites WHERE account_id = $1 ORDER BY created_at, id', [accountId]);
}

/** Renames the account's site or replaces its secret (null: keep); undefined for no such site. */
export async function updateSiteRow(tx: Queryable, siteKey: string, accountId: number, change: { name: string | null; sealed: string | null }): Promise<SiteRow | undefined> {
  const [site] = await tx.query<SiteRow>(
    `UPDATE sites SET name = COALESCE($3, name), secret_sealed = COALESCE($4, secret_sealed)
     WHERE site_key = $1 AND account_id = $2 RETURNING site_key, name, created_at`,
    [siteKey, accountId, change.name, change.sealed],
  );
  return site;
}

/** Deletes the account's site (its payments go by cascade); false for no such site. */
export async function deleteSiteRow(tx: Queryable, siteKey: string, accountId: number): Promise<boolean> {
  return (await tx.query('DELETE FROM sites WHERE site_key = $1 AND account_id = $2 RETURNING id', [siteKey, accountId])).length > 0;
}

/** The id of the account's site. */
export async function siteIdOf(db: Queryable, siteKey: string, accountId: number): Promise<number | undefined> {
  const [site] = await db.query<{ id: number }>('SELECT id FROM sites WHERE site_key = $1 AND account_id = $2', [siteKey, accountId]);
  return site?.id;
}

/** The sites of these keys, for a chunk of deliveries that takes its locks up front. */
export function sitesOfDeliveries(tx: Queryable, siteKeys: string[]): Promise<Array<Pick<SiteRecord, 'site_key' | 'id' | 'account_id'>>> {
  return tx.query('SELECT site_key, id, account_id FROM sites WHERE site_key = ANY($1::text[])', [siteKeys]);
}

const SITE_SECRET = { name: 'site_webhook_secret', text: 'SELECT secret_sealed, account_id FROM sites WHERE site_key = $1' };

export async function siteSecretRow(db: Queryable, siteKey: string): Promise<Pick<SiteRecord, 'secret_sealed' | 'account_id'> | undefined> {
  const [site] = await db.query<Pick<SiteRecord, 'secret_sealed' | 'account_id'>>(SITE_SECRET, [siteKey]);
  return site;
}

export type ListedPayment = Pick<PaymentRecord, 'reference' | 'status' | 'amount' | 'currency' | 'updated_at'>;

export function latestPayments(db: Queryable, siteId: number): Promise<ListedPayment[]> {
  return db.query<ListedPayment>(
    `SELECT reference, status, amount, currency, updated_at FROM payments
     WHERE site_id = $1 ORDER BY updated_at DESC, reference LIMIT ${LIST_LIMIT}`,
    [siteId],
  );
}

export type PaymentRow = Pick<PaymentRecord, 'site_id' | 'reference' | 'checkout_session' | 'status' | 'amount' | 'currency' | 'last_event_at'>;

/**
 * One probe of a unique index per key, in two lateral lookups: by reference (the primary
 * key) and by checkout session. A table never analyzed (a new deployment's first burst, or
 * a server without autovacuum) has no statistics, and PostgreSQL then guesses that a site
 * holds a two-hundredth of the payments. The lookup of all the keys at once that this
 * replaces (`site_id = ANY(…) AND reference = ANY(…)`, planned with the values at each call)
 * then read every payment of the site and filtered them by key: 3.1 ms a chunk in the bench,
 * at up to 37,000 payments, where the probes take 0.16 ms. A probe of a unique index finds at
 * most one row, which no other plan beats whatever the statistics say, so the statement can
 * be prepared: its generic plan probes too.
 */
const SELECT_PAYMENTS = {
  name: 'payments_lock_by_key',
  text: `SELECT p.* FROM unnest($1::integer[], $2::text[]) AS k(site_id, key),
           LATERAL (SELECT site_id, reference, checkout_session, status, amount, currency, last_event_at FROM payments
                    WHERE site_id = k.site_id AND reference = k.key FOR UPDATE) AS p
         UNION ALL
         SELECT p.* FROM unnest($1::integer[], $2::text[]) AS k(site_id, key),
           LATERAL (SELECT site_id, reference, checkout_session, status, amount, currency, last_event_at FROM payments
                    WHERE site_id = k.site_id AND checkout_session = k.key FOR UPDATE) AS p`,
};

/**
 * The payments that these keys name, each key looked up in its own site as its reference or
 * its checkout session, locked. A row that two keys find is returned once.
 */
export async function lockPayments(tx: Queryable, keys: Array<{ siteId: number; key: string }>): Promise<PaymentRow[]> {
  const rows = await tx.query<PaymentRow>(SELECT_PAYMENTS, [keys.map((k) => k.siteId), keys.map((k) => k.key)]);
  const unique = new Map(rows.map((row) => [`${row.site_id}\u0000${row.reference}`, row]));
  return [...unique.values()];
}

export async function deletePayments(tx: Queryable, payments: Array<Pick<PaymentRecord, 'site_id' | 'reference'>>): Promise<void> {
  if (!payments.length) return;
  await tx.query(
    'DELETE FROM payments p USING unnest($1::integer[], $2::text[]) AS d(site_id, reference) WHERE p.site_id = d.site_id AND p.reference = d.reference',
    [payments.map((p) => p.site_id), payments.map((p) => p.reference)],
  );
}

const UPSERT_PAYMENTS = {
  name: 'payments_upsert',
  text: `INSERT INTO payments (site_id, reference, checkout_session, status, amount, currency, last_event_at, updated_at)
         SELECT site_id, reference, checkout_session, status, amount, currency, last_event_at, $8
         FROM unnest($1::integer[], $2::text[], $3::text[], $4::text[], $5::bigint[], $6::text[], $7::timestamptz[])
           AS p(site_id, reference, checkout_session, status, amount, currency, last_event_at)
         ON CONFLICT (site_id, reference) DO UPDATE SET checkout_session = EXCLUDED.checkout_session,
           status = EXCLUDED.status, amount = EXCLUDED.amount, currency = EXCLUDED.currency,
           last_event_at = EXCLUDED.last_event_at, updated_at = EXCLUDED.updated_at`,
};

export type PaymentWrite = Omit<PaymentRecord, 'amount' | 'updated_at'> & { amount: number | null };

/** Writes each payment (a new one or the new state of a known one), one statement for all; no two may share a key. */
export async function upsertPayments(tx: Queryable, payments: PaymentWrite[], updatedAt: Date): Promise<void> {
  if (!payments.length) return;
  await tx.query(UPSERT_PAYMENTS, [
    payments.map((p) => p.site_id),
    payments.map((p) => p.reference),
    payments.map((p) => p.checkout_session),
    payments.map((p) => p.status),
    payments.map((p) => p.amount),
    payments.map((p) => p.currency),
    payments.map((p) => p.last_event_at),
    updatedAt,
  ]);
}

/** The sites' sealed webhook secrets, for the jobs that cross tables. */
export const sealedSiteSecrets = sealedColumn('sites.secret_sealed', {
  sample: 'SELECT site_key AS key, secret_sealed AS value FROM sites LIMIT 1',
  countNotLike: 'SELECT count(*) AS count FROM sites WHERE secret_sealed NOT LIKE $1',
  pageNotLike: 'SELECT site_key AS key, secret_sealed AS value FROM sites WHERE secret_sealed NOT LIKE $1 AND ($2::text IS NULL OR site_key > $2) ORDER BY site_key LIMIT $3',
  reseal: 'UPDATE sites SET secret_sealed = $2 WHERE site_key = $1 AND secret_sealed = $3',
});
