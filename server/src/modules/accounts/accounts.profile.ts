import { z } from 'zod';
import type { Queryable } from '../../lib/db.ts';

/** An account as the other modules see it: what authenticates, signs in and is shown. */
export type AccountRow = {
  id: number;
  email: string;
  name: string;
  company: string | null;
  plan: string;
  role: 'user' | 'admin';
  email_verified: boolean;
  api_key_sealed: string;
  created_at: Date;
};

/** The columns of an AccountRow, on `accounts a`. */
export const ACCOUNT_COLUMNS = 'a.id, a.email, a.name, a.company, a.plan, a.role, a.email_verified, a.api_key_sealed, a.created_at';

export const userSchema = z.object({
  id: z.number().int(),
  email: z.string(),
  name: z.string(),
  company: z.string().nullable(),
  plan: z.string(),
  role: z.enum(['user', 'admin']),
  api_key: z.string(),
  email_verified: z.boolean(),
  created_at: z.string(),
});

export type User = z.infer<typeof userSchema>;

export function toUser(account: AccountRow, apiKey: string): User {
  return {
    id: account.id,
    email: account.email,
    name: account.name,
    company: account.company,
    plan: account.plan,
    role: account.role,
    api_key: apiKey,
    email_verified: account.email_verified,
    created_at: account.created_at.toISOString(),
  };
}

/** The user object without the API key: what an administrator is shown of an account. */
export function toAccountSummary(account: AccountRow): Omit<User, 'api_key'> {
  const { api_key: _apiKey, ...summary } = toUser(account, '');
  return summary;
}

/** The calling account (an AuthContext of sessions/), as /me shows it. */
export function me(caller: { account: AccountRow; apiKey: string }): User {
  return toUser(caller.account, caller.apiKey);
}

export async function accountById(db: Queryable, accountId: number): Promise<AccountRow | undefined> {
  const [account] = await db.query<AccountRow>(`SELECT ${ACCOUNT_COLUMNS} FROM accounts a WHERE a.id = $1`, [accountId]);
  return account;
}

/** The account that has this address, if any: whom a mail to it would name. */
export async function accountByEmail(db: Queryable, email: string): Promise<{ id: number; name: string } | undefined> {
  const [account] = await db.query<{ id: number; name: string }>('SELECT id, name FROM accounts WHERE email = $1', [email]);
  return account;
}
