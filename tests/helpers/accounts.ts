import * as assert from 'uvu/assert';
import { nextMail, type Account } from './auth.ts';
import { callerOf } from './caller.ts';
import type { HttpResult, TestService } from './service.ts';
import { linkToken } from './smtp.ts';

// An account as the database holds it and as its owner sees it, for the suites that check what a
// change wrote (the profile, the address, the activity), and the mailed links (an e-mail change,
// a reset) that the suites of each change and of a takeover start from.

/** How many of the account's sessions are live (not revoked; expiry is the clock's business). */
export async function liveSessions(service: TestService, accountId: number): Promise<number> {
  const [row] = await service.deps.db.query<{ count: number }>('SELECT count(*)::int AS count FROM sessions WHERE account_id = $1 AND revoked_at IS NULL', [accountId]);
  return row.count;
}

/** What is stored of the profile, and when the row last changed. */
export async function storedProfile(service: TestService, account: Account) {
  const [row] = await service.deps.db.query<{ name: string; company: string | null; updated_at: Date }>('SELECT name, company, updated_at FROM accounts WHERE id = $1', [account.user.id]);
  return { name: row.name, company: row.company, updated_at: row.updated_at.toISOString() };
}

/** The `changed` list of each profile.updated event of the account, oldest first. */
export async function profileEvents(service: TestService, account: Account): Promise<string[][]> {
  const rows = await service.deps.db.query<{ data: { changed: string[] } }>(
    "SELECT data FROM audit_events WHERE account_id = $1 AND event = 'profile.updated' ORDER BY id",
    [account.user.id],
  );
  return rows.map((row) => row.data.changed);
}

export async function emailOf(service: TestService, accountId: number): Promise<string | undefined> {
  const [row] = await service.deps.db.query<{ email: string }>('SELECT email FROM accounts WHERE id = $1', [accountId]);
  return row?.email;
}

/** An e-mail change's confirmation link in a mail's text. */
export const CONFIRM_LINK = /\/confirm-email\?token=/;

/** Asks (auth.changeEmail) to move `account` to `newEmail` and returns the token of the link mailed there. */
export async function changeToken(service: TestService, account: Account, newEmail: string): Promise<string> {
  const seen = service.smtp.mailsTo(newEmail).length;
  const answer = await callerOf(service, { bearer: account.token }).auth.changeEmail({ new_email: newEmail, password: account.password });
  assert.is(answer.success, true);
  return linkToken(await nextMail(service, newEmail, seen, CONFIRM_LINK), '/confirm-email');
}

/** A reset link in a mail's text. */
export const RESET_LINK = /\/reset-password\?token=/;

/** Asks (auth.forgotPassword, from `ip` when given) for a reset link to `email` and returns the token the mail carries. */
export async function resetToken(service: TestService, email: string, ip?: string): Promise<string> {
  const seen = service.smtp.mailsTo(email).length;
  const answer = await callerOf(service, {}, ip ? { ip } : {}).auth.forgotPassword({ email });
  assert.is(answer.success, true);
  return linkToken(await nextMail(service, email, seen, RESET_LINK), '/reset-password');
}

/** One line of an account's activity as auth.listActivity answers it. */
export type ActivityItem = { event: string; at: string; ip: string | null; user_agent: string | null };

/** The items of an activity answer (over REST, or a call's answerOf), checked for the exact shape of the answer and of every item. */
export function activityItems(result: HttpResult): ActivityItem[] {
  assert.is(result.status, 200, result.text);
  assert.equal(Object.keys(result.body).sort(), ['items', 'success']);
  assert.is(result.body.success, true);
  assert.ok(Array.isArray(result.body.items));
  assert.ok(result.body.items.length <= 100, `at most 100 items, got ${result.body.items.length}`);
  for (const item of result.body.items) assert.equal(Object.keys(item).sort(), ['at', 'event', 'ip', 'user_agent']);
  return result.body.items;
}

/**
 * An intruder with `owner`'s phished password, on a session of its own, asks to move the account
 * to its address `to`; returns the token of the link mailed there.
 */
export async function intruderAsksForChange(service: TestService, owner: Account, to: string): Promise<string> {
  const { token } = await callerOf(service).auth.login({ email: owner.email, password: owner.password });
  return changeToken(service, { ...owner, token }, to);
}
