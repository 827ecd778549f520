import { z } from 'zod';
import type { AccountRow } from './accounts.model.ts';

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

/**
 * `created_at` as text, once per row: the auth cache hands `/me` the same frozen row on every
 * request, and formatting the date was most of what making its answer cost. Keyed by the row,
 * an entry goes when its row does.
 */
const createdAtTexts = new WeakMap<AccountRow, string>();

function createdAtText(account: AccountRow): string {
  let text = createdAtTexts.get(account);
  if (text === undefined) createdAtTexts.set(account, (text = account.created_at.toISOString()));
  return text;
}

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
    created_at: createdAtText(account),
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
