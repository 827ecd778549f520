import type { Queryable } from '../../lib/db.ts';

/** A new account's row. The API key is sealed for the row's id, which is taken first for it. */
export type NewAccount = {
  email: string;
  passwordHash: string | null;
  name: string;
  company: string | null;
  emailVerified: boolean;
  apiKeyHash: Buffer;
  sealApiKey(accountId: number): string;
};

/** Inserts the account; undefined when the address is taken (by a concurrent registration, say). */
export async function insertAccountRow(tx: Queryable, now: Date, account: NewAccount): Promise<number | undefined> {
  const [{ id }] = await tx.query<{ id: number }>(`SELECT nextval(pg_get_serial_sequence('accounts', 'id'))::int AS id`);
  const [created] = await tx.query<{ id: number }>(
    `INSERT INTO accounts (id, email, password_hash, name, company, email_verified, api_key_hash, api_key_sealed, created_at, updated_at)
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $9) ON CONFLICT (email) DO NOTHING RETURNING id`,
    [id, account.email, account.passwordHash, account.name, account.company, account.emailVerified, account.apiKeyHash, account.sealApiKey(id), now],
  );
  return created?.id;
}
